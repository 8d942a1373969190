"""What the thesis could not ask: which of its findings depend on the cgroup version and on the
I/O controller? The same claims judged on three testbeds side by side: thesis-hdd (cgroup v1,
BFQ: this machine, its kernel and loop device), and the thesis-v2 campaign on a cgroup-v2 host
(the nested host: a guest's kernel under TCG, its disk over NBD) under BFQ and under iocost,
each its own family of the ledger. v1 against v2 differs in the host as well as the version;
only v2/bfq against v2/iocost varies one thing, the controller (the ledger's rule measured
uses that contrast alone: judge/claims/contrasts.py). Per check: its
effect with its interval and its outcome on each testbed, and the test below of "the testbed
changes this effect".

The test, fixed before thesis-v2's first run (the device-class study's, extended to shares):
for each check measured on the baseline testbed (v1/bfq) and on another, the change of its
effect with a 95% interval and a two-sided p, each effect's standard error read off its own 95%
interval (a normal approximation of the check's t interval): a ratio effect (effect 1 = none)
compared on the log scale (the change is a ratio of ratios), a share effect on its own scale
(the change is a difference of shares). Holm over every comparison of the study; `depends`
where the Holm p is below 0.05. No new margin: the verdicts are the ledger's."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from journalbench.judge.claims.checks import CONTAINER, SHARE_KINDS
from journalbench.judge.claims.contrasts import change
from journalbench.judge.claims.verdicts import MEASURED, parts_text
from journalbench.report.device_class import numbered

# the claims thesis-v2 measures: the fio claims on the container arms. MariaDB's and Redis's
# were to join where their tenants on the v2 host are not CPU-bound; measured, both are
# (workflow/campaigns/thesis-v2.yaml gives the numbers)
CLAIMS = ("C3", "C4", "C8", "C9", "C10", "C15", "C17", "C18", "C24")
BASELINE = "v1/bfq"
TESTBEDS = (BASELINE, "v2/bfq", "v2/iocost")  # the order of the table's columns
COLUMNS = ["claim", "check", "test", "kind", "from", "to", "effect_from", "low_from",
           "high_from", "effect_to", "low_to", "high_to", "scale", "change", "low", "high",
           "p", "p_holm", "depends"]


def testbed_of(cgroup_version: object, io_control: object) -> str:
    """"v2/iocost": the cgroup version a family's runs had and the I/O control that enforced
    its weights."""
    version = "?" if pd.isna(cgroup_version) else int(cgroup_version)
    return f"v{version}/{io_control}"


KEYS = ["campaign", "host", "device_profile", "io_control"]  # a family, as far as it matters here


def testbeds(runs: pd.DataFrame) -> pd.DataFrame:
    """Per family (campaign, host, device profile, io_control): its testbed. A family whose
    runs had more than one cgroup version is an error: it would pool two testbeds."""
    versions = runs.groupby(KEYS, observed=True)["cgroup_version"].unique()
    mixed = versions[versions.map(len) > 1]
    if not mixed.empty:
        raise ValueError(f"family {dict(zip(KEYS, mixed.index[0], strict=True))}: runs on "
                         f"cgroup versions {sorted(mixed.iloc[0])}; a family is one testbed")
    return pd.DataFrame([{**dict(zip(KEYS, key, strict=True)),
                          "testbed": testbed_of(found[0], key[-1])}
                         for key, found in versions.items()])


def with_testbed(rows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`rows` of the tests table with their family's testbed (families without runs dropped)."""
    return rows.merge(testbeds(runs), on=KEYS, how="inner")


def effects(tests: pd.DataFrame, runs: pd.DataFrame,
            claims: Iterable[str] = CLAIMS) -> pd.DataFrame:
    """The measured checks of `claims`, a row per check and testbed (the tests tables of the
    campaigns compared, concatenated), with the check's number within its claim."""
    rows = tests[tests["claim"].isin(list(claims)) & (tests["status"] == MEASURED)]
    rows = numbered(with_testbed(rows, runs)).reset_index(drop=True)
    present = set(rows["testbed"])  # in TESTBEDS' order: every figure's x axis alike
    return rows.assign(testbed=pd.Categorical(rows["testbed"],
                                              [t for t in TESTBEDS if t in present]))


def verdicts(tests: pd.DataFrame, runs: pd.DataFrame,
             claims: Iterable[str] = CLAIMS) -> pd.DataFrame:
    """A row per claim, a column per testbed: the claim's verdict there (the ledger's) and the
    outcomes of its container checks, counted; `changes`: whether those outcomes differ
    between the testbeds. The container half is what every testbed measures: thesis-v2 has no
    vm arm (its VM halves are thesis-hdd's, on this machine), so its ledger finds the vm half
    missing, which alone would change a claim's verdict from v1 to v2."""
    rows = with_testbed(tests[tests["claim"].isin(list(claims))], runs)
    beds = [t for t in TESTBEDS if t in set(rows["testbed"])]
    table = []
    for claim, mine in rows.groupby("claim"):
        row: dict[str, object] = {"claim": claim}
        found = set()
        for bed in beds:
            here = mine[mine["testbed"] == bed]
            containers = here[here["part"] == CONTAINER].sort_values("test")
            found.add(tuple(containers["part_outcome"]))
            counted = parts_text([{"outcome": o} for o in containers["part_outcome"]])
            row[bed] = f"{here['outcome'].iloc[0]} (containers: {counted or 'none'})"
        row["changes"] = len(found) > 1
        table.append(row)
    return (pd.DataFrame(table, columns=["claim", *beds, "changes"])
            .sort_values("claim", key=lambda c: c.str[1:].astype(int)).reset_index(drop=True))


def dependence(effects: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """The pre-registered test (module doc): each check measured on `baseline` and another
    testbed, its change there, Holm over every comparison."""
    from journalbench.judge.stats import holm

    rows = []
    for (claim, check), group in effects.groupby(["claim", "check"], sort=False):
        base = group[group["testbed"] == baseline]
        if base.empty:
            continue
        first = base.iloc[0]
        for bed in (t for t in TESTBEDS if t != baseline):
            other = group[group["testbed"] == bed]
            if other.empty:
                continue
            other = other.iloc[0]
            share = first["kind"] in SHARE_KINDS
            rows.append({"claim": claim, "check": check, "test": first["test"],
                         "kind": first["kind"], "from": baseline, "to": bed,
                         "effect_from": first["effect"], "low_from": first["low"],
                         "high_from": first["high"], "effect_to": other["effect"],
                         "low_to": other["low"], "high_to": other["high"],
                         "scale": "difference" if share else "ratio",
                         **change(first, other, share)})
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("p_holm", "depends")])
    if table.empty:
        return table.reindex(columns=COLUMNS)
    rejected, adjusted = holm(table["p"].fillna(1.0).to_numpy())
    return table.assign(p_holm=adjusted, depends=rejected)[COLUMNS]
