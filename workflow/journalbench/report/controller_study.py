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

Whether a factor changes a check's effect is the ledger's one decision (judge/claims/
contrasts.py, rule contrast-welch of 2026-11-29): for each check measured on both testbeds of a
one-factor contrast, the change of its effect (a ratio effect on the log scale, a share as a
difference) as a t statistic with Welch-Satterthwaite's degrees of freedom from the two
checks' own; *depends* where it is significant after Holm over the claims of the contrast,
else *equivalent* where it lies within the check's smallest effect of interest (TOST), else
*inconclusive*. This page shows the ledger's evidence, never a test of its own. (Until
2026-11-29 it tested with normal tails off the intervals, Holm over every comparison here.)
The host contrast (not one factor) is shown with the same statistic and no decision.

What the weights were in play for is measured too (judge/claims/division.py): under the blind
QoS iocost divided nothing (its 80/20 readers split even) and held no direct-I/O tenant back,
so its checks whose claims depend on the weights are not testable there, and v2/bfq ->
v2/iocost measures BFQ against weights not enforced. `iocost_record` shows why, from iocost's
own statistics: what its linear model charged an I/O against what the device served, the
share of the device it counted the tenants as using, its vrate and the seconds it held them.

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

import argparse
import json
import sys
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
from journalbench.report.markers import Markers
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
HOST_VALIDATION = "weights-hdd"  # its weights' validation pairs (a campaign of their own)
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
           "change", "low", "high", "se", "df", "p", "p_holm", "outcome", "depends"]
# the ledger's factor of each one-factor contrast (contrasts.VARIED): its evidence rows
LEDGER_FACTOR = {"cgroup version": "writeback", "I/O controller": "weights"}


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


def dependence(effects: pd.DataFrame, evidence: pd.DataFrame,
               contrasts: Iterable[Contrast] = CONTRASTS, study: str = STUDY) -> pd.DataFrame:
    """Each check measured on both testbeds of a contrast, its change there: for a one-factor
    contrast the ledger's evidence row (its statistic, Holm p and one decision, `outcome`),
    oriented from `first` to `other`; for the host contrast the same statistic, no decision."""
    mine = evidence[evidence["campaign"] == study] if not evidence.empty else evidence
    rows = []
    for (claim, check), group in effects.groupby(["claim", "check"], sort=False):
        for contrast in contrasts:
            first = group[group["testbed"] == contrast.first]
            other = group[group["testbed"] == contrast.other]
            if first.empty or other.empty:
                continue
            first, other = first.iloc[0], other.iloc[0]
            share = first["kind"] in SHARE_KINDS
            row = {"claim": claim, "check": check, "test": first["test"],
                   "kind": first["kind"], "factor": contrast.factor,
                   "from": contrast.first, "to": contrast.other,
                   "one_factor": contrast.one_factor,
                   "effect_from": first["effect"], "low_from": first["low"],
                   "high_from": first["high"], "effect_to": other["effect"],
                   "low_to": other["low"], "high_to": other["high"],
                   "scale": "difference" if share else "ratio",
                   **{k: v for k, v in change(first, other, share).items()
                      if k in ("change", "low", "high", "p", "se", "df")},
                   "p_holm": np.nan, "outcome": "not tested"}
            if contrast.one_factor:
                row.update(ledger_decision(mine, contrast, claim, first["test"]))
            rows.append(row)
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "depends"])
    depends = table["outcome"].map({"depends": True, "equivalent": False,
                                    "inconclusive": False})
    return table.assign(depends=depends.astype("boolean"))[COLUMNS]


def ledger_decision(evidence: pd.DataFrame, contrast: Contrast, claim: str,
                    test: str) -> dict[str, object]:
    """The ledger's Holm p and decision for one check in a one-factor contrast ("not in the
    ledger" where its evidence has no row: the check was not measured on both sides there)."""
    if evidence.empty:
        return {"outcome": "not in the ledger"}
    found = evidence[(evidence["factor"] == LEDGER_FACTOR[contrast.factor])
                     & (evidence["claim"] == claim) & (evidence["test"] == test)]
    if found.empty:
        return {"outcome": "not in the ledger"}
    row = found.iloc[0]
    return {"p_holm": float(row["p_change_holm"]),
            "outcome": str(row["outcome"] or "excluded")}


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
    95% interval and two-sided p (Welch), and the statistic's `se` and `df` (on the log scale
    for a ratio: what a change between testbeds is tested with); NaN with fewer than 2 runs a
    side."""
    from journalbench.judge.stats import welch_t

    x, y = (np.asarray([v for v in s if pd.notna(v)], dtype=float) for s in (a, b))
    if ratio:
        x, y = np.log(x[x > 0]), np.log(y[y > 0])
    if x.size < 2 or y.size < 2:
        return {"effect": np.nan, "low": np.nan, "high": np.nan, "p": np.nan, "se": np.nan,
                "df": np.nan}
    stat = welch_t(y, x)
    low, high = stat.interval()
    p = 2 * min(stat.p_above(0.0), stat.p_below(0.0))
    shown = np.exp if ratio else float
    return {"effect": float(shown(stat.estimate)), "low": float(shown(low)),
            "high": float(shown(high)), "p": float(min(p, 1.0)), "se": stat.se, "df": stat.df}


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
                                         "effect", "low", "high", "p", "se", "df"])
    version = []
    for (arm, preset), group in table.groupby(["arm", "preset"]):
        beds = group.set_index("testbed")
        lacking = [bed for bed in ("v1/bfq", "v2/bfq") if bed not in beds.index
                   or pd.isna(beds.loc[bed, "se"])]
        if lacking:  # shown as not measured on both: fewer than 2 runs a side there
            version.append({"arm": arm, "preset": preset, "v1": np.nan, "v2": np.nan,
                            "change": np.nan, "low": np.nan, "high": np.nan, "p": np.nan,
                            "why": f"fewer than 2 runs a side on {' and '.join(lacking)}"})
            continue
        moved = change(beds.loc["v1/bfq"], beds.loc["v2/bfq"], share=False)
        version.append({"arm": arm, "preset": preset, "v1": beds.loc["v1/bfq", "effect"],
                        "v2": beds.loc["v2/bfq", "effect"], "change": moved["change"],
                        "low": moved["low"], "high": moved["high"], "p": moved["p"], "why": ""})
    return table, pd.DataFrame(version, columns=["arm", "preset", "v1", "v2", "change", "low",
                                                 "high", "p", "why"])


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


DIVISION_COLUMNS = ["testbed", "pair", "pattern", "sizes", "weight_share", "measure", "n",
                    "effect", "low", "high"]


def division_table(runs: pd.DataFrame, experiments: pd.DataFrame,
                   study: str = STUDY) -> pd.DataFrame:
    """What the weights divided on each testbed's validation pairs (judge/claims/division.py),
    a row per testbed, pair and measure, each a mean over runs with its 95% t interval: the
    heavier of two equal random readers at unequal weights, its share of their bytes
    (`at-all`); at equal weights, the big-request reader's share of the pair's bytes and of its
    device time (`sizes`), random and sequential. The host testbed's pairs are their own
    campaign's (HOST_VALIDATION)."""
    from journalbench.judge.claims import division

    found = division.pairs(runs, experiments)
    beds = [f"v{int(v)}/{c}" if campaign == study else
            HOST_BED if campaign == HOST_VALIDATION else None
            for campaign, v, c in zip(found["campaign"], found["cgroup_version"],
                                      found["io_control"], strict=True)]
    found = found.assign(testbed=beds).dropna(subset=["testbed"])
    rows = []
    for (bed, pair, pattern), group in found.groupby(["testbed", "pair", "pattern"], sort=False):
        measures = ({"bytes": group["share"]} if pair == "at-all" else
                    {"bytes": group["share"], "device time": group["time"]})
        for measure, values in measures.items():
            rows.append({"testbed": bed, "pair": pair, "pattern": pattern,
                         "sizes": group["sizes"].iloc[0],
                         "weight_share": float(group["weight_share"].iloc[0]),
                         "measure": measure, **interval(values)})
    table = pd.DataFrame(rows, columns=DIVISION_COLUMNS)
    order = {bed: i for i, bed in enumerate(TESTBEDS)}
    return table.sort_values(["testbed", "pair", "pattern"],
                             key=lambda c: c.map(order) if c.name == "testbed" else c,
                             kind="stable").reset_index(drop=True)


PAGE = 4096  # bytes: blk-iocost.c's IOC_PAGE_SIZE
RECORD_COLUMNS = ["experiment", "arm", "beside", "runs", "tenant_seconds", "held_seconds",
                  "vrate_median", "modelled_usage", "device_busy", "price_ms", "served_ms"]


def iocost_price_ms(model: dict, rw: str, size: float) -> float:
    """What iocost's linear model charges one I/O of `size` bytes, ms: blk-iocost.c's
    calc_lcoefs gives a page's cost from bps (1 s over the pages a second moves) and an I/O's
    base cost from seqiops or randiops less a page's; an I/O costs its base (sequential or
    random) plus its pages. `rw`: fio's ("write", "randwrite", "read", "randread")."""
    kind = "w" if "write" in rw else "r"
    bps = float(model.get(f"{kind}bps", 0))
    if not bps:
        return np.nan
    page = 1.0 / (bps / PAGE)
    iops = float(model.get(f"{kind}{'rand' if rw.startswith('rand') else 'seq'}iops", 0))
    base = max(1.0 / iops - page, 0.0) if iops else 0.0
    return 1000.0 * (base + np.ceil(size / PAGE) * page)


def iocost_record(runs: pd.DataFrame, samples: pd.DataFrame, experiments: pd.DataFrame,
                  model: dict, study: str = STUDY) -> pd.DataFrame:
    """Per condition of the study's v2/iocost runs (experiment, arm, neighbour): what iocost
    did and why, from its own statistics. `tenant_seconds` with a cost record and
    `held_seconds` among them (a tenant waited, was in debt or delayed); the device's
    `vrate_median` (%); `modelled_usage`: the share of the device iocost counted the tenants
    as using (their cost.usage summed, median over seconds) against `device_busy`, the share
    of the device's time their requests took (medians over runs); `price_ms`: what its model
    charges one of the tenants' I/Os (requests-weighted over tenants) against `served_ms`, the
    device time a request of theirs took."""
    from journalbench.agent.workloads.fio import PRESETS
    from journalbench.judge.claims.division import size_bytes

    iocost = experiments[(experiments["campaign"] == study)
                         & experiments["experiment"].str.endswith("-v2-iocost")]
    rows = runs[(runs["campaign"] == study) & runs["run_id"].isin(set(iocost["run_id"]))]
    rows = rows.merge(iocost[["run_id", "experiment"]], on="run_id")
    rows = rows.assign(experiment=rows["experiment"].str.removesuffix("-v2-iocost"))
    # a run's condition is its victim's: the neighbour's row names the victim as beside it
    victim = rows[rows["tenant"] == "victim"].set_index("run_id")["beside"]
    rows = rows.assign(beside=rows["run_id"].map(victim))
    tenants = samples[(samples["kind"] == "tenant") & samples["run_id"].isin(set(rows["run_id"]))]
    held = tenants[["cost_wait_s", "cost_indebt_s", "cost_indelay_s"]].fillna(0).gt(0).any(axis=1)
    tenants = tenants.assign(held=held, recorded=tenants["cost_wait_s"].notna())
    device = samples[(samples["kind"] == "device") & samples["run_id"].isin(set(rows["run_id"]))]
    found = []
    keys = ["experiment", "arm", "beside"]
    for key, group in rows.fillna({"beside": ""}).groupby(keys, sort=False):
        ids = set(group["run_id"])
        mine = tenants[tenants["run_id"].isin(ids)]
        usage = mine.groupby(["run_id", "t"])["cost_usage_share"].sum(min_count=1)
        busy = group.groupby("run_id")["own_time_share"].sum(min_count=1)
        price = [iocost_price_ms(model, PRESETS.get(str(p), {}).get("rw", "write"),
                                 size_bytes(bs) if pd.notna(bs) else
                                 size_bytes(PRESETS.get(str(p), {}).get("bs", "")))
                 for p, bs in zip(group["preset"], group["bs"], strict=True)]
        weights = group["own_requests"].fillna(0).to_numpy(float)
        served = (group.groupby("run_id")["own_time_s"].sum()
                  / group.groupby("run_id")["own_requests"].sum().replace(0, np.nan))
        vrate = device.loc[device["run_id"].isin(ids), "cost_vrate_pct"].dropna()
        found.append({**dict(zip(keys, key, strict=True)), "runs": len(ids),
                      "tenant_seconds": int(mine["recorded"].sum()),
                      "held_seconds": int((mine["held"] & mine["recorded"]).sum()),
                      "vrate_median": float(vrate.median()) if not vrate.empty else np.nan,
                      "modelled_usage": float(usage.median()) if usage.notna().any() else np.nan,
                      "device_busy": float(busy.median()) if busy.notna().any() else np.nan,
                      "price_ms": (float(np.average(price, weights=weights))
                                   if weights.sum() > 0 else float(np.nanmean(price))),
                      "served_ms": float(1000 * served.median()) if served.notna().any()
                      else np.nan})
    return pd.DataFrame(found, columns=RECORD_COLUMNS)


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
    """"x1.11 [1.05, 1.18]" for a ratio, "0.76 [0.66, 0.86]" for a share (`level`),
    "+0.036 [0.01, 0.06]" for a difference of shares."""
    if pd.isna(effect):
        return "—"
    if scale == "ratio":
        return f"x{effect:.3g} [{low:.3g}, {high:.3g}]"
    if scale == "level":
        return f"{effect:.2f} [{low:.2f}, {high:.2f}]"
    return f"{effect:+.3f} [{low:+.3f}, {high:+.3f}]"


def answer(dependence: pd.DataFrame) -> pd.DataFrame:
    """The dependence table narrowed to what a reader needs, a row per check and contrast:
    the claim and check, the factor, the change with its interval as text, the ledger's Holm
    p (3 digits) and its decision (`outcome`: depends, equivalent, inconclusive; "not tested"
    for the host contrast)."""
    rows = dependence.assign(
        change=[interval_text(c, lo, hi, s) for c, lo, hi, s in
                zip(dependence["change"], dependence["low"], dependence["high"],
                    dependence["scale"], strict=True)],
        p_holm=dependence["p_holm"].map(lambda p: "—" if pd.isna(p) else f"{p:.3g}"))
    return rows[["claim", "check", "factor", "change", "p_holm", "outcome"]].reset_index(
        drop=True)


def weightless(tests: pd.DataFrame, study: str = STUDY) -> pd.DataFrame:
    """The study's checks not testable because their weights were not in play (rule
    weights-in-play): claim, testbed and why."""
    rows = with_testbed(tests, study)
    mine = rows[(rows["status"] == "not testable")
                & rows["why_not"].fillna("").str.contains("divided nothing|held back none|"
                                                          "no record of acting")]
    return mine[["claim", "test", "testbed", "why_not"]].reset_index(drop=True)


def findings(dependence: pd.DataFrame, verdicts: pd.DataFrame | None = None,
             journal: pd.DataFrame | None = None, writeback: pd.DataFrame | None = None,
             validation: pd.DataFrame | None = None, record: pd.DataFrame | None = None,
             divided: pd.DataFrame | None = None,
             untestable: pd.DataFrame | None = None) -> list[str]:
    """What the study found, in sentences computed from its tables (Markdown), shortest
    first: what each testbed's weights divide (`divided`: division_table); what iocost did
    and why (`record`: iocost_record); per one-factor contrast, the ledger's decisions over
    the checks compared; the host contrast, shown; the claims whose container outcomes differ
    between the nested testbeds; C24's contrast with the journal controlled on both sides; the
    write-back factor for every arm measured."""
    said = division_findings(divided)
    said += iocost_findings(record, untestable)
    for contrast in CONTRASTS:
        mine = dependence[dependence["factor"] == contrast.factor]
        if mine.empty:
            continue
        if not contrast.one_factor:
            moved = mine[(mine["p"] < 0.05)]
            said.append(f"**{contrast.factor}** ({contrast.first} -> {contrast.other}, not "
                        f"one factor): {len(moved)} of {len(mine)} checks moved at p < 0.05 "
                        "(Welch) before any correction; shown, not tested.")
            continue
        counts = mine["outcome"].value_counts()
        yes = mine[mine["outcome"] == "depends"]
        biggest = ""
        if not yes.empty:
            top = yes.loc[(yes["p_holm"]).idxmin()]
            biggest = (f"; the clearest, {top['claim']} check {top['check']}: "
                       f"{interval_text(top['change'], top['low'], top['high'], top['scale'])}")
        what = ("its direct-I/O checks" if contrast.factor == "cgroup version" else
                "BFQ against weights not enforced, its weight-free checks")
        said.append(f"**{contrast.factor}** ({contrast.first} -> {contrast.other}; {what}), "
                    f"the ledger's decision: {counts.get('depends', 0)} of {len(mine)} depend "
                    f"on it ({', '.join(dict.fromkeys(yes['claim'])) or 'none'}), "
                    f"{counts.get('equivalent', 0)} equivalent, "
                    f"{counts.get('inconclusive', 0)} inconclusive{biggest}.")
    if verdicts is not None and "changes" in verdicts and verdicts["changes"].any():
        said.append("Container outcomes that differ between the nested host's testbeds: "
                    + ", ".join(verdicts.loc[verdicts["changes"], "claim"]) + ".")
    if journal is not None and not journal.empty:
        rows = journal[(journal["contrast"] == "journal-cgroup minus journal-accounted")
                       & (journal["beside"] == "no-fsync")].dropna(subset=["effect"])
        if not rows.empty:
            said.append("C24, the journal controlled on both sides (journal-cgroup minus "
                        "journal-accounted, the victim's share): "
                        + "; ".join(f"{r['testbed']} "
                                    f"{interval_text(r['effect'], r['low'], r['high'], 'share')}"
                                    for _, r in rows.iterrows()) + ".")
    if writeback is not None and not writeback.empty:
        said.append("**Write-back**, every arm (buffered over direct neighbour, v2/bfq over "
                    "v1/bfq; no claim's condition): "
                    + "; ".join(f"{r['arm']} {r['preset']} "
                                + (interval_text(r['change'], r['low'], r['high'], 'ratio')
                                   if pd.notna(r["change"]) else f"— ({r.get('why', '')})")
                                for _, r in writeback.iterrows()) + ".")
    return said


def threshold(weight_share: float) -> float:
    """Where weights divide at all: halfway from an even split to the weight's share (the
    judge's rule, judge/claims/division.py)."""
    from journalbench.judge.claims.division import Division

    return Division("", "", weight_share=float(weight_share)).threshold


def division_findings(divided: pd.DataFrame | None) -> list[str]:
    """What each testbed's weights divide, from its validation pairs (division_table)."""
    if divided is None or divided.empty:
        return []
    at_all = divided[divided["pair"] == "at-all"]
    said = []
    if not at_all.empty:
        said.append("**The weights' validation** (no claim's workload): the 80% of two equal "
                    "random readers got "
                    + "; ".join(f"{r['testbed']} "
                                f"{interval_text(r['effect'], r['low'], r['high'], 'level')}"
                                + ("" if r["effect"] >= threshold(r["weight_share"])
                                   else " (divided nothing)")
                                for _, r in at_all.iterrows())
                    + " of their bytes (they divide at all from 0.65).")
    sizes = divided[divided["pair"] == "sizes"]
    if not sizes.empty:
        parts = []
        for (bed, pattern), group in sizes.groupby(["testbed", "pattern"], sort=False):
            got = group.set_index("measure")
            parts.append(f"{bed} {pattern} {got.loc['device time', 'effect']:.2f} of the time, "
                         f"{got.loc['bytes', 'effect']:.2f} of the bytes")
        measured = set(sizes["testbed"])
        missing = [bed for bed in dict.fromkeys(at_all["testbed"]) if bed not in measured]
        big, small = str(sizes["sizes"].iloc[0]).split(" against ")
        said.append(f"At equal weights the {big} reader beside one of {small} got: "
                    + "; ".join(parts) + " (device time divided: 0.50 of the time)"
                    + (f"; not measured on {', '.join(missing)}" if missing else "") + ".")
    return said


def iocost_findings(record: pd.DataFrame | None,
                    untestable: pd.DataFrame | None = None) -> list[str]:
    """What iocost did under its QoS and why, from its own statistics (iocost_record)."""
    if record is None or record.empty:
        return []
    buffered = record["beside"].astype(str).str.startswith("buffered") | \
        record["experiment"].str.startswith("writeback")
    direct = record[~buffered & ~record["experiment"].str.contains("validation")]
    said = []
    if not direct.empty:
        said.append(
            "**What iocost did** (its own statistics, the claims' direct-I/O conditions): its "
            f"model charged an I/O {direct['price_ms'].min():.2g}-{direct['price_ms'].max():.2g}"
            f" ms where the device took {direct['served_ms'].min():.2g}-"
            f"{direct['served_ms'].max():.2g} ms, so it counted the tenants as using "
            f"{direct['modelled_usage'].min():.2f}-{direct['modelled_usage'].max():.2f} of the "
            f"device (their requests took {direct['device_busy'].min():.2f}-"
            f"{direct['device_busy'].max():.2f}); vrate {direct['vrate_median'].min():.0f}-"
            f"{direct['vrate_median'].max():.0f}%; a group outrunning its budget is held back: "
            f"{int(direct['held_seconds'].sum())} of {int(direct['tenant_seconds'].sum())} "
            "tenant-seconds.")
    if said and untestable is not None and not untestable.empty:
        claims = ", ".join(dict.fromkeys(untestable["claim"]))
        said[-1] += (f" So its {len(untestable)} checks whose claims depend on the weights "
                     f"({claims}) are not testable there.")
    return said


# -- the findings in docs/findings.md ----------------------------------------------------------

FINDINGS_FILE = "controller-findings.md"  # in results/<campaign>/, written by the notebook
DOCS_MARKERS = Markers("controller-findings", "the controller study's findings")


def docs_block(findings: str) -> str:
    """The findings the notebook wrote (a sentence a line) as the docs' bullet list."""
    return "\n".join(f"- {line}" for line in findings.splitlines() if line.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m journalbench.report.controller_study",
        description=f"Rewrite the controller study's findings between a doc's "
                    f"'{DOCS_MARKERS.start}' and '{DOCS_MARKERS.end}' markers from what the "
                    "controller notebook computed (after make reproduce).")
    parser.add_argument("--doc", type=Path, required=True,
                        help="the document to rewrite (docs/findings.md)")
    parser.add_argument("--results", type=Path, default=Path("results") / HOST_CAMPAIGN,
                        help=f"the results folder holding {FINDINGS_FILE}")
    args = parser.parse_args(argv)
    return DOCS_MARKERS.rewrite(
        args.doc, lambda: docs_block((args.results / FINDINGS_FILE).read_text()),
        "controller_study")


if __name__ == "__main__":
    sys.exit(main())
