"""What the thesis could not ask: which of its findings depend on the cgroup version and on the
I/O controller? The same claims judged on one machine booted three ways, side by side, and on
the host testbed:

- **v1/bfq, v2/bfq, v2/iocost**: the campaign thesis-nested on the nested host (one guest
  kernel, its disks and device path; the guest booted as a cgroup-v1 or a cgroup-v2 host),
  each its own family of the ledger. v1/bfq -> v2/bfq varies the cgroup version alone (and
  with it what write-back is charged to); v2/bfq -> v2/iocost the controller alone.
- **host v1/bfq**: thesis-hdd, this machine (its kernel, a loop device behind the same HDD
  model, 20 s windows against 60). host v1/bfq -> v1/bfq varies the host, kernel, device path
  and window together: shown, never called one factor, and outside the Holm family.

The old thesis-v2 (the nested host as v2 only, 20 s windows, iocost's QoS chosen on C3's own
condition) is not a testbed here: it is judged as its own campaign, labelled for what it was.

The test of "this factor changes the effect", fixed before thesis-v2's first run (the
device-class study's, extended to shares) and applied here to the one-factor contrasts: for
each check measured on both testbeds of a contrast, the change of its effect with a 95%
interval and a two-sided p, each effect's standard error read off its own 95% interval (a
normal approximation of the check's t interval): a ratio effect (1 = none) compared on the log
scale (the change is a ratio of ratios), a share effect on its own scale (a difference of
shares). Holm over every comparison of the one-factor contrasts; `depends` where the Holm p
is below 0.05. No new margin: the verdicts are the ledger's.

Three questions no claim asks, from the study's own conditions (each value a mean over runs
with a Welch 95% interval; a ratio's on the log scale):

- journal_own_cgroup: the 70% high-fsync victim's share on per-container-journal (its jbd2
  in the root, which iocost never throttles), journal-cgroup (in a group of its own at its
  tenant's weight) and journal-accounted (in its tenant's), beside C24's and C17's
  neighbours: what the journal's own cgroup changes for C24's contrast;
- writeback: the victim's MB/s beside a 30% neighbour writing through the page cache over
  beside the same neighbour writing direct, per testbed and arm, and how that ratio moves
  from v1 (write-back charged to no tenant) to v2 (charged to the neighbour);
- validation: iocost's calibration on random 4 KiB readers at 80/20 (no claim's workload):
  the 80% reader's share and what the pair reads together against the 80% reader alone."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from journalbench import runfolder
from journalbench.judge.claims.checks import CONTAINER, SHARE_KINDS
from journalbench.judge.claims.contrasts import change
from journalbench.judge.claims.verdicts import MEASURED, parts_text
from journalbench.report.device_class import numbered
from journalbench.vocabulary import (
    ARMS as ARM_ORDER,
)
from journalbench.vocabulary import (
    JOURNAL_ACCOUNTED,
    JOURNAL_CGROUP,
    PER_CONTAINER_JOURNAL,
)

STUDY = "thesis-nested"  # the campaign of the one machine's three testbeds
HOST_CAMPAIGN = "thesis-hdd"  # the host testbed: this machine
# the claims the study measures: the fio claims on the container arms. MariaDB's and Redis's
# are CPU-bound on the nested host (workflow/campaigns/thesis-v2.yaml gives the numbers)
CLAIMS = ("C3", "C4", "C8", "C9", "C10", "C15", "C17", "C18", "C24")
HOST_BED = "host v1/bfq"
TESTBEDS = (HOST_BED, "v1/bfq", "v2/bfq", "v2/iocost")  # the columns' order


@dataclass(frozen=True)
class Contrast:
    factor: str
    first: str  # testbed
    other: str
    one_factor: bool  # varies that alone (in the Holm family, may say `depends`)


CONTRASTS = (
    Contrast("cgroup version", "v1/bfq", "v2/bfq", True),
    Contrast("I/O controller", "v2/bfq", "v2/iocost", True),
    Contrast("host, kernel, device path and window", HOST_BED, "v1/bfq", False),
)
COLUMNS = ["claim", "check", "test", "kind", "factor", "from", "to", "one_factor",
           "effect_from", "low_from", "high_from", "effect_to", "low_to", "high_to", "scale",
           "change", "low", "high", "p", "p_holm", "depends"]


def testbed_of(campaign: object, cgroup_version: object, io_control: object,
               study: str = STUDY) -> str | None:
    """"v2/iocost" for a family of the study's campaign, "host v1/bfq" for the host
    testbed's; None for any other campaign's."""
    if campaign not in (study, HOST_CAMPAIGN) or pd.isna(cgroup_version):
        return None
    bed = f"v{int(cgroup_version)}/{io_control}"
    return bed if campaign == study else f"host {bed}"


def with_testbed(rows: pd.DataFrame, study: str = STUDY) -> pd.DataFrame:
    """`rows` (with FAMILY's columns) of the study's testbeds, each with its `testbed`
    (a categorical in TESTBEDS' order, only those present); every other row dropped."""
    beds = [testbed_of(c, v, i, study) for c, v, i in
            zip(rows["campaign"], rows["cgroup_version"], rows["io_control"], strict=True)]
    rows = rows.assign(testbed=beds).dropna(subset=["testbed"])
    present = set(rows["testbed"])
    return rows.assign(testbed=pd.Categorical(rows["testbed"],
                                              [t for t in TESTBEDS if t in present]))


def effects(tests: pd.DataFrame, claims: Iterable[str] = CLAIMS,
            study: str = STUDY) -> pd.DataFrame:
    """The measured checks of `claims`, a row per check and testbed (the tests tables of the
    campaigns compared, concatenated), with the check's number within its claim."""
    rows = tests[tests["claim"].isin(list(claims)) & (tests["status"] == MEASURED)]
    return numbered(with_testbed(rows, study)).reset_index(drop=True)


def verdicts(tests: pd.DataFrame, claims: Iterable[str] = CLAIMS,
             study: str = STUDY) -> pd.DataFrame:
    """A row per claim, a column per testbed: the claim's verdict there (the ledger's) and the
    outcomes of its container checks, counted; `changes`: whether those outcomes differ
    between the nested host's three testbeds. The container half is what every testbed
    measures: the nested host runs no VM, so its ledger finds a claim's vm half missing,
    which alone would change its verdict from the host testbed's."""
    rows = with_testbed(tests[tests["claim"].isin(list(claims))], study)
    beds = [t for t in TESTBEDS if t in set(rows["testbed"])]
    table = []
    for claim, mine in rows.groupby("claim"):
        row: dict[str, object] = {"claim": claim}
        found = set()
        for bed in beds:
            here = mine[mine["testbed"] == bed]
            if here.empty:
                row[bed] = "not run"
                continue
            containers = here[here["part"] == CONTAINER].sort_values("test")
            if bed != HOST_BED:
                found.add(tuple(containers["part_outcome"]))
            counted = parts_text([{"outcome": o} for o in containers["part_outcome"]])
            row[bed] = f"{here['outcome'].iloc[0]} (containers: {counted or 'none'})"
        row["changes"] = len(found) > 1
        table.append(row)
    return (pd.DataFrame(table, columns=["claim", *beds, "changes"])
            .sort_values("claim", key=lambda c: c.str[1:].astype(int)).reset_index(drop=True))


def dependence(effects: pd.DataFrame,
               contrasts: Iterable[Contrast] = CONTRASTS) -> pd.DataFrame:
    """The pre-registered test (module doc): each check measured on both testbeds of a
    contrast, its change there; Holm over the one-factor contrasts' comparisons (the others
    get neither a Holm p nor an answer)."""
    from journalbench.judge.stats import holm

    rows = []
    for (claim, check), group in effects.groupby(["claim", "check"], sort=False):
        for contrast in contrasts:
            first = group[group["testbed"] == contrast.first]
            other = group[group["testbed"] == contrast.other]
            if first.empty or other.empty:
                continue
            first, other = first.iloc[0], other.iloc[0]
            share = first["kind"] in SHARE_KINDS
            rows.append({"claim": claim, "check": check, "test": first["test"],
                         "kind": first["kind"], "factor": contrast.factor,
                         "from": contrast.first, "to": contrast.other,
                         "one_factor": contrast.one_factor,
                         "effect_from": first["effect"], "low_from": first["low"],
                         "high_from": first["high"], "effect_to": other["effect"],
                         "low_to": other["low"], "high_to": other["high"],
                         "scale": "difference" if share else "ratio",
                         **change(first, other, share)})
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("p_holm", "depends")])
    table = table.assign(p_holm=np.nan, depends=pd.Series(pd.NA, index=table.index,
                                                          dtype="boolean"))
    tested = table.index[table["one_factor"].astype(bool)]
    if len(tested):
        rejected, adjusted = holm(table.loc[tested, "p"].fillna(1.0).to_numpy())
        table.loc[tested, "p_holm"] = adjusted
        table.loc[tested, "depends"] = rejected
    return table[COLUMNS]


# -- the study's own conditions ------------------------------------------------------------

MEAN_COLUMNS = ["testbed", "arm", "beside", "measure", "n", "effect", "low", "high", "scale"]


def interval(values: Iterable[float], ratio: bool = False) -> dict[str, float]:
    """The mean (a ratio measure: the geometric mean) with its 95% t interval; n < 2: the
    mean alone."""
    from scipy import stats as sps

    x = np.asarray([v for v in values if pd.notna(v)], dtype=float)
    if ratio:
        x = np.log(x[x > 0])
    n = int(x.size)
    if n == 0:
        return {"n": 0, "effect": np.nan, "low": np.nan, "high": np.nan}
    mean = float(x.mean())
    half = (float(sps.t.ppf(0.975, n - 1)) * float(x.std(ddof=1)) / np.sqrt(n)
            if n > 1 else np.nan)
    shown = np.exp if ratio else float
    return {"n": n, "effect": float(shown(mean)), "low": float(shown(mean - half)),
            "high": float(shown(mean + half))}


def welch_change(a: Iterable[float], b: Iterable[float], ratio: bool) -> dict[str, float]:
    """b against a: the ratio of geometric means (`ratio`) or the difference of means, its
    95% interval and two-sided p (Welch); NaN with fewer than 2 runs a side."""
    from journalbench.judge.stats import welch_t

    x, y = (np.asarray([v for v in s if pd.notna(v)], dtype=float) for s in (a, b))
    if ratio:
        x, y = np.log(x[x > 0]), np.log(y[y > 0])
    if x.size < 2 or y.size < 2:
        return {"effect": np.nan, "low": np.nan, "high": np.nan, "p": np.nan}
    stat = welch_t(y, x)
    low, high = stat.interval()
    p = 2 * min(stat.p_above(0.0), stat.p_below(0.0))
    shown = np.exp if ratio else float
    return {"effect": float(shown(stat.estimate)), "low": float(shown(low)),
            "high": float(shown(high)), "p": float(min(p, 1.0))}


def study_rows(runs: pd.DataFrame, experiments: pd.DataFrame, prefix: str,
               study: str = STUDY) -> pd.DataFrame:
    """The tenants' rows of the study's runs of the experiments whose id starts with
    `prefix` (one per testbed: "<prefix>-v1-bfq", ...), with their testbed."""
    mine = experiments[(experiments["campaign"] == study)
                       & experiments["experiment"].str.startswith(prefix + "-v")]
    rows = runs[(runs["campaign"] == study) & runs["run_id"].isin(set(mine["run_id"]))]
    return with_testbed(rows, study)


def journal_own_cgroup(runs: pd.DataFrame, experiments: pd.DataFrame,
                       study: str = STUDY) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(means, contrasts): the 70% high-fsync victim's share per testbed, arm and neighbour
    on per-container-journal, journal-cgroup and journal-accounted; and per testbed and
    neighbour, journal-cgroup minus journal-accounted (the journal controlled on both sides:
    what charging it to its tenant adds) and per-container minus journal-cgroup (what
    controlling it at all changes)."""
    rows = pd.concat([study_rows(runs, experiments, "high-fsync-victim", study),
                      study_rows(runs, experiments, "journal-own-cgroup", study)])
    arms = (PER_CONTAINER_JOURNAL, JOURNAL_CGROUP, JOURNAL_ACCOUNTED)
    rows = rows[(rows["tenant"] == "victim") & rows["arm"].isin(arms)
                & rows["beside"].isin(["no-fsync", "high-fsync"])]
    means, pairs = [], []
    for (bed, beside), group in rows.groupby(["testbed", "beside"], observed=True):
        shares = {arm: group.loc[group["arm"] == arm, "achieved_share"] for arm in arms}
        for arm in arms:
            means.append({"testbed": bed, "arm": arm, "beside": beside,
                          "measure": "victim share", "scale": "share",
                          **interval(shares[arm])})
        for a, b, what in ((JOURNAL_ACCOUNTED, JOURNAL_CGROUP,
                            "journal-cgroup minus journal-accounted"),
                           (JOURNAL_CGROUP, PER_CONTAINER_JOURNAL,
                            "per-container minus journal-cgroup")):
            pairs.append({"testbed": bed, "beside": beside, "contrast": what,
                          **welch_change(shares[a], shares[b], ratio=False)})
    return (pd.DataFrame(means, columns=MEAN_COLUMNS),
            pd.DataFrame(pairs, columns=["testbed", "beside", "contrast", "effect", "low",
                                         "high", "p"]))


def writeback(runs: pd.DataFrame, experiments: pd.DataFrame,
              study: str = STUDY) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(effects, version): per testbed, arm and victim preset, the victim's MB/s beside a
    30% buffered no-fsync neighbour over beside a direct one (a ratio of geometric means); and
    per arm and preset, that ratio's change from v1/bfq to v2/bfq (a ratio of ratios: the
    write-back factor, measured)."""
    buffered = pd.concat([study_rows(runs, experiments, "writeback-high-fsync-victim", study),
                          study_rows(runs, experiments, "writeback-low-fsync-victim", study)])
    direct = pd.concat([study_rows(runs, experiments, "high-fsync-victim", study),
                        study_rows(runs, experiments, "low-fsync-victim", study)])
    rows = pd.concat([buffered, direct[direct["beside"] == "no-fsync"]])
    rows = rows[rows["tenant"] == "victim"]
    found = []
    for (bed, arm, preset), group in rows.groupby(["testbed", "arm", "preset"], observed=True):
        b = group.loc[group["beside"] == "buffered-no-fsync", "throughput_mb_s"]
        d = group.loc[group["beside"] == "no-fsync", "throughput_mb_s"]
        if b.empty or d.empty:
            continue
        found.append({"testbed": bed, "arm": arm, "preset": preset, "n_buffered": b.size,
                      "n_direct": d.size, **welch_change(d, b, ratio=True)})
    table = pd.DataFrame(found, columns=["testbed", "arm", "preset", "n_buffered", "n_direct",
                                         "effect", "low", "high", "p"])
    version = []
    for (arm, preset), group in table.groupby(["arm", "preset"]):
        beds = group.set_index("testbed")
        if not {"v1/bfq", "v2/bfq"} <= set(beds.index) or beds[["low", "high"]].isna().any().any():
            continue
        moved = change(beds.loc["v1/bfq"], beds.loc["v2/bfq"], share=False)
        version.append({"arm": arm, "preset": preset, "v1": beds.loc["v1/bfq", "effect"],
                        "v2": beds.loc["v2/bfq", "effect"], "change": moved["change"],
                        "low": moved["low"], "high": moved["high"], "p": moved["p"]})
    return table, pd.DataFrame(version, columns=["arm", "preset", "v1", "v2", "change", "low",
                                                 "high", "p"])


def validation(runs: pd.DataFrame, experiments: pd.DataFrame,
               study: str = STUDY) -> pd.DataFrame:
    """Per testbed: the 80% random reader's share beside the 20% one (its weight's 0.8 the
    target), and what the pair reads together (MB/s, both tenants) over the 80% reader alone
    (a ratio of geometric means; a work-conserving control keeps it near 1)."""
    pair = study_rows(runs, experiments, "iocost-validation-pair", study)
    alone = study_rows(runs, experiments, "iocost-validation-alone", study)
    found = []
    for bed in [t for t in TESTBEDS if t in set(pair["testbed"]) | set(alone["testbed"])]:
        mine = pair[pair["testbed"] == bed]
        found.append({"testbed": bed, "measure": "the 80% reader's share (target 0.8)",
                      "scale": "share", **interval(
                          mine.loc[mine["tenant"] == "victim", "achieved_share"])})
        together = mine.groupby("run_id")["throughput_mb_s"].sum()
        single = alone.loc[(alone["testbed"] == bed) & (alone["tenant"] == "victim"),
                           "throughput_mb_s"]
        found.append({"testbed": bed, "measure": "the pair's MB/s over the 80% reader's "
                      "alone", "scale": "ratio", "n": int(together.size),
                      **{k: v for k, v in welch_change(single, together, ratio=True).items()
                         if k != "p"}})
    return pd.DataFrame(found, columns=["testbed", "measure", "scale", "n", "effect", "low",
                                        "high"])


def controller_trace(samples: pd.DataFrame, runs: pd.DataFrame, run_ids: Iterable[str]
                     ) -> pd.DataFrame:
    """Per second of the runs named: iocost's vrate (the device line) and each tenant's (and
    journal's own group's) usage share and seconds waited, in debt and delayed, with the run's
    testbed, arm and victim's neighbour."""
    wanted = list(run_ids)
    rows = samples[samples["run_id"].isin(wanted)]
    keep = ["run_id", "t", "kind", "source", "tenant", "cost_vrate_pct", "cost_usage_share",
            "cost_wait_s", "cost_indebt_s", "cost_indelay_s"]
    rows = rows.reindex(columns=keep)
    labels = (runs[runs["run_id"].isin(wanted) & (runs["tenant"] == "victim")]
              [["run_id", "arm", "beside", "io_control", "cgroup_version"]]
              .drop_duplicates("run_id"))
    return rows.merge(labels, on="run_id", how="left")



def calibration_of(raw: Path | str, runs: pd.DataFrame) -> tuple[pd.DataFrame, dict, dict]:
    """(sweep, qos, model) of the first iocost run of `runs` with a recorded sweep, read from
    its host.json (raw/<host>/<run>/): the device's latency against load the QoS was read
    off, the QoS set and the model measured. Empty when no iocost run recorded one."""
    raw = Path(raw)
    mine = runs[runs["io_control"] == "iocost"].drop_duplicates("run_id").sort_values("run_id")
    for host, run_id in zip(mine["host"], mine["run_id"], strict=True):
        facts = json.loads((raw / host / run_id / runfolder.HOST).read_text())
        iocost = facts.get("io_control", {}).get("iocost", {})
        sweep = iocost.get("calibration", {}).get("sweep")
        if sweep:
            return pd.DataFrame(sweep), dict(iocost["qos_set"]), dict(iocost["model_measured"])
    return pd.DataFrame(columns=["rw", "load", "iops", "p50_us", "p95_us", "p99_us"]), {}, {}


def one_run_each(runs: pd.DataFrame, experiments: pd.DataFrame, testbed: str,
                 study: str = STUDY) -> list[str]:
    """One run (the first repetition's) of each high-fsync-victim and journal-own-cgroup
    condition on `testbed`, in the arms' and neighbours' order."""
    rows = pd.concat([study_rows(runs, experiments, "high-fsync-victim", study),
                      study_rows(runs, experiments, "journal-own-cgroup", study)])
    rows = rows[(rows["testbed"] == testbed) & (rows["tenant"] == "victim")]
    rows = rows.sort_values(["repetition", "run_id"]).drop_duplicates(["arm", "beside"])
    order = {b: i for i, b in enumerate(["no-fsync", "low-fsync", "high-fsync"])}
    rows = rows.assign(_arm=[ARM_ORDER.index(a) if a in ARM_ORDER else 99 for a in rows["arm"]],
                       _beside=rows["beside"].map(order))
    return list(rows.sort_values(["_arm", "_beside"])["run_id"])


# -- the answer first ----------------------------------------------------------------------

def interval_text(effect: float, low: float, high: float, scale: str) -> str:
    """"x1.11 [1.05, 1.18]" for a ratio, "+0.036 [0.01, 0.06]" for a difference of shares."""
    if pd.isna(effect):
        return "—"
    if scale == "ratio":
        return f"x{effect:.3g} [{low:.3g}, {high:.3g}]"
    return f"{effect:+.3f} [{low:+.3f}, {high:+.3f}]"


def answer(dependence: pd.DataFrame) -> pd.DataFrame:
    """The dependence table narrowed to what a reader needs, a row per check and contrast:
    the claim and check, the factor, the change with its interval as text, Holm's p (3
    digits) and the answer (`depends`: yes, no, or "not tested" outside the Holm family)."""
    rows = dependence.assign(
        change=[interval_text(c, lo, hi, s) for c, lo, hi, s in
                zip(dependence["change"], dependence["low"], dependence["high"],
                    dependence["scale"], strict=True)],
        p_holm=dependence["p_holm"].map(lambda p: "—" if pd.isna(p) else f"{p:.3g}"),
        depends=[("yes" if d else "no") if one and pd.notna(d) else "not tested"
                 for d, one in zip(dependence["depends"], dependence["one_factor"],
                                   strict=True)])
    return rows[["claim", "check", "factor", "change", "p_holm", "depends"]].reset_index(
        drop=True)


def findings(dependence: pd.DataFrame, verdicts: pd.DataFrame | None = None,
             journal: pd.DataFrame | None = None, writeback: pd.DataFrame | None = None,
             validation: pd.DataFrame | None = None) -> list[str]:
    """What the study found, in sentences computed from its tables (Markdown): per
    one-factor contrast, how many checks it changed and which claims; the claims whose
    container outcomes differ between the nested testbeds; C24's contrast with the journal
    controlled on both sides; the write-back factor; iocost's validation."""
    said = []
    for contrast in CONTRASTS:
        mine = dependence[dependence["factor"] == contrast.factor]
        if mine.empty:
            continue
        if not contrast.one_factor:
            moved = mine[(mine["p"] < 0.05)]
            said.append(f"**{contrast.factor}** ({contrast.first} -> {contrast.other}, not "
                        f"one factor): {len(moved)} of {len(mine)} checks moved at p < 0.05 "
                        "before any correction; shown, not tested.")
            continue
        yes = mine[mine["depends"].fillna(False).astype(bool)]
        claims = ", ".join(dict.fromkeys(yes["claim"])) or "none"
        biggest = ""
        if not yes.empty:
            top = yes.loc[(yes["p_holm"]).idxmin()]
            biggest = (f"; the clearest, {top['claim']} check {top['check']}: "
                       f"{interval_text(top['change'], top['low'], top['high'], top['scale'])}")
        said.append(f"**{contrast.factor}** ({contrast.first} -> {contrast.other}): "
                    f"{len(yes)} of {len(mine)} checks depend on it after Holm (claims: "
                    f"{claims}){biggest}.")
    if verdicts is not None and "changes" in verdicts and verdicts["changes"].any():
        said.append("Container outcomes that differ between the nested host's testbeds: "
                    + ", ".join(verdicts.loc[verdicts["changes"], "claim"]) + ".")
    if journal is not None and not journal.empty:
        rows = journal[(journal["contrast"] == "journal-cgroup minus journal-accounted")
                       & (journal["beside"] == "no-fsync")].dropna(subset=["effect"])
        if not rows.empty:
            said.append("C24 with the journal controlled on both sides (journal-cgroup minus "
                        "journal-accounted, the victim's share beside a no-fsync writer): "
                        + "; ".join(f"{r['testbed']} "
                                    f"{interval_text(r['effect'], r['low'], r['high'], 'share')}"
                                    for _, r in rows.iterrows()) + ".")
    if writeback is not None and not writeback.empty:
        said.append("Write-back (the victim's MB/s beside a buffered over a direct neighbour, "
                    "v2/bfq over v1/bfq): "
                    + "; ".join(f"{r['arm']} {r['preset']} "
                                f"{interval_text(r['change'], r['low'], r['high'], 'ratio')}"
                                for _, r in writeback.iterrows()) + ".")
    if validation is not None and not validation.empty:
        shares = validation[validation["scale"] == "share"].dropna(subset=["effect"])
        if not shares.empty:
            said.append("iocost's validation (the 80% random reader's share, target 0.80): "
                        + "; ".join(f"{r['testbed']} {r['effect']:.2f}"
                                    for _, r in shares.iterrows()) + ".")
    return said
