"""One function per claim of CLAIMS.md: which runs test it, and how.

Each claim becomes one or more tests on the tidy `runs` table, on the runs of the experiments
that claim it (picked through analysis, which asks experiments.runs_for); the tests of one host
form one family whose p-values are Holm-corrected together; a claim is reproduced when every one
of its tests is. The margins below define "holds the split" and "constant" for the thesis's
words; they were fixed when the claims were encoded and are never tuned to the data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from statsmodels.stats.weightstats import DescrStatsW, ttost_ind

from journalbench import analysis, stats
from journalbench.agent.arms import (
    CONTAINER_ARMS,
    JOURNAL_ACCOUNTED,
    PER_CONTAINER_JOURNAL,
    SHARED_JOURNAL,
)

ALPHA = 0.05
SHARE_MARGIN = 0.10  # a split "holds" when the share is within target +- 0.10
STABLE_RATIO = 1.20  # a throughput is "constant" when two conditions are within x1.2 of each other

THESIS = {
    "C1": "one instance: containers beat the VM in all four fio base workloads (Fig 3.5)",
    "C2": "two instances 70/30: containers beat the VM (70% instance) (Fig 3.6)",
    "C3": "two sequential writers 70/30: every platform holds the split (Fig 3.7)",
    "C4": "30%-weight 64 KiB writer gets more bandwidth than 70%-weight 16 KiB writer (Fig 3.4)",
    "C5": "MySQL, two instances: VM beats LXC by 22%, OpenVZ by 25% (Fig 4.1)",
    "C6": "MySQL 70/30: VM holds the split, containers swing 0-55% (Fig 4.2)",
    "C7": "MySQL fsync/s: VM 27, LXC 14, OpenVZ 12 (Sec 4.2.1)",
    "C8": "high-fsync victim: container throughput falls as the neighbour fsyncs more; "
          "VM constant ~2.5 MB/s (Fig 4.3)",
    "C9": "high-fsync victim fsync latency beside no/low/high: LXC 33.8/38.9/44.1 ms, "
          "KVM ~18.5 ms (Table 4.1)",
    "C10": "low-fsync 70% container: ~held beside no-fsync, falls to 30-50% beside high-fsync; "
           "jbd2 share 10% -> 28% (Fig 4.6, 4.7)",
    "C11": "MySQL at 70% beside no/low/high: VM ~425 req/s; container fsync 72-160 ms "
           "(Fig 4.8, Table 4.2)",
    "C12": "MySQL at 30%: VM ~220 req/s; container fsync 86-172 ms (Fig 4.9, Table 4.3)",
    "C13": "MySQL container at 70% beside no-fsync gets ~20% of the disk, jbd2 ~20% "
           "(Fig 4.10-4.15)",
    "C14": "VM beats LXC and OpenVZ in MySQL by up to 2x and 2.4x (Sec 4.3)",
    "C15": "per-container journaling: no cost alone, beats shared in consolidation; "
           "high-fsync fsync 80 -> 58 ms (Fig 5.2)",
    "C16": "MySQL: per-container up to 1.3x over shared; journal-accounted up to 3.4x "
           "(Fig 5.3, 5.4)",
    "C17": "both high-fsync 70/30: per-container swings 35-65%; with accounting 70/30 holds; "
           "fsync 45 ms (70%) / 86 ms (30%) (Fig 5.5, Table 5.3)",
    "C18": "high-fsync victim with accounting: stable ~2.7 MB/s whatever the neighbour (Fig 5.6)",
    "C19": "MySQL at 70% with accounting holds ~70% beside every neighbour (Fig 5.7-5.10)",
    "C20": "MySQL beside MySQL: journal-accounted splits 70/30 like the VM (Fig 5.11, 5.12)",
    "C21": "Redis alone: containers beat the VM (Fig 5.14)",
    "C22": "Redis beside no/low/high-fsync: VM ~1300 ops/s constant; containers fall "
           "(Fig 5.15, Table 5.4)",
    "C23": "Redis: per-container journaling up to 1.5x over shared (Fig 5.16)",
}

NEEDS_VM = "needs the vm arm (not implemented yet)"
NEEDS_DB = "needs MariaDB + sysbench (not implemented yet)"
NEEDS_REDIS = "needs Redis + YCSB (not implemented yet)"
PENDING = {
    "C1": NEEDS_VM, "C2": NEEDS_VM, "C5": f"{NEEDS_DB}; {NEEDS_VM}", "C6": NEEDS_DB,
    "C7": NEEDS_DB, "C11": NEEDS_DB, "C12": NEEDS_DB, "C13": NEEDS_DB,
    "C14": f"{NEEDS_DB}; {NEEDS_VM}", "C16": NEEDS_DB, "C19": NEEDS_DB, "C20": NEEDS_DB,
    "C21": NEEDS_REDIS, "C22": NEEDS_REDIS, "C23": NEEDS_REDIS,
}
# Claims that also speak of the VM: their container half is tested here, the VM half waits.
VM_HALF = {"C3", "C8", "C9", "C15", "C18"}


@dataclass
class Test:
    claim: str
    label: str  # what is compared, for the reader
    kind: str  # "greater": a > b; "equivalent": a/b within STABLE_RATIO; "share": a ~ target
    a: np.ndarray
    b: np.ndarray = field(default_factory=lambda: np.array([]))
    target: float = np.nan
    unit: str = ""

    def p_value(self) -> float:
        if self.kind == "greater":
            return stats.welch(self.a, self.b)[1]
        if self.kind == "equivalent":
            log_a, log_b = np.log(self.a), np.log(self.b)
            return float(ttost_ind(log_a, log_b, -np.log(STABLE_RATIO), np.log(STABLE_RATIO),
                                   usevar="unequal")[0])
        return float(DescrStatsW(self.a).ttost_mean(self.target - SHARE_MARGIN,
                                                      self.target + SHARE_MARGIN)[0])

    def direction_ok(self) -> bool:
        if self.kind == "greater":
            return bool(np.median(self.a) > np.median(self.b))
        return True  # equivalence tests have no direction: the p-value decides

    def describe(self) -> str:
        def fmt(values: np.ndarray) -> str:
            return f"{np.median(values):.3g}{self.unit}"

        if self.kind == "share":
            return f"{self.label}: median {fmt(self.a)} (target {self.target:.2f}, n={self.a.size})"
        ratio = np.median(self.a) / np.median(self.b)
        return (f"{self.label}: {fmt(self.a)} vs {fmt(self.b)} "
                f"(x{ratio:.2f}, n={self.a.size}/{self.b.size})")

    def enough_data(self) -> bool:
        if self.kind == "share":
            return self.a.size >= 2
        return self.a.size >= 2 and self.b.size >= 2


def pick(runs: pd.DataFrame, column: str, **where: object) -> np.ndarray:
    """Values of `column` on the rows matching every `where` (None matches a null)."""
    mask = pd.Series(True, index=runs.index)
    for key, value in where.items():
        mask &= runs[key].isna() if value is None else runs[key] == value
    return runs.loc[mask, column].dropna().to_numpy(dtype=float)


def c3(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    rows = analysis.split(runs, experiments)
    return [Test("C3", f"{arm}: 70% writer's share beside a 30% writer (no-fsync pair)", "share",
                 pick(rows, "achieved_share", arm=arm), target=0.7)
            for arm in CONTAINER_ARMS]


def c4(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    arm = SHARED_JOURNAL
    pairs = analysis.io_size(runs[runs["arm"] == arm], experiments)
    return [Test("C4", f"{arm}: MB/s of the 30% 64 KiB writer vs the 70% 16 KiB writer",
                 "greater", pick(pairs, "throughput_mb_s", tenant="neighbour", bs="64k"),
                 pick(pairs, "throughput_mb_s", tenant="victim", bs="16k"), unit=" MB/s")]


def victim(rows: pd.DataFrame, column: str, arm: str, preset: str, beside: str) -> np.ndarray:
    """The 70% tenant's values, from rows already picked for the claim (analysis.by_beside)."""
    return pick(rows, column, arm=arm, tenant="victim", preset=preset, beside=beside)


def c8(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    arm = SHARED_JOURNAL
    rows = analysis.by_beside(runs, experiments, "C8")
    return [Test("C8", f"{arm}: high-fsync victim MB/s beside no-fsync vs beside high-fsync",
                 "greater", victim(rows, "throughput_mb_s", arm, "high-fsync", "no-fsync"),
                 victim(rows, "throughput_mb_s", arm, "high-fsync", "high-fsync"), unit=" MB/s")]


def c9(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    arm = SHARED_JOURNAL
    rows = analysis.by_beside(runs, experiments, "C9")
    return [Test("C9", f"{arm}: high-fsync victim fsync latency beside high- vs no-fsync",
                 "greater", victim(rows, "fsync_lat_mean_ms", arm, "high-fsync", "high-fsync"),
                 victim(rows, "fsync_lat_mean_ms", arm, "high-fsync", "no-fsync"), unit=" ms")]


def c10(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    arm = SHARED_JOURNAL
    rows = analysis.by_beside(runs, experiments, "C10")
    return [
        Test("C10", f"{arm}: low-fsync 70% tenant's share beside no- vs high-fsync", "greater",
             victim(rows, "achieved_share", arm, "low-fsync", "no-fsync"),
             victim(rows, "achieved_share", arm, "low-fsync", "high-fsync")),
        Test("C10", f"{arm}: jbd2's share of the disk beside high- vs no-fsync", "greater",
             victim(rows, "shared_jbd2_share", arm, "low-fsync", "high-fsync"),
             victim(rows, "shared_jbd2_share", arm, "low-fsync", "no-fsync")),
    ]


def c15(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    shared, per = SHARED_JOURNAL, PER_CONTAINER_JOURNAL
    rows = analysis.sequential_writers(runs, experiments)

    def writer(arm: str, case: str, column: str = "throughput_mb_s") -> np.ndarray:
        return pick(rows, column, arm=arm, case=case)

    return [
        Test("C15", "sequential write alone: per-container vs shared MB/s", "equivalent",
             writer(per, "alone"), writer(shared, "alone"), unit=" MB/s"),
        Test("C15", "70% writer beside a no-fsync writer: per-container vs shared MB/s",
             "greater", writer(per, "beside no-fsync"), writer(shared, "beside no-fsync"),
             unit=" MB/s"),
        Test("C15", "high-fsync pair: victim fsync latency shared vs per-container", "greater",
             writer(shared, "beside high-fsync", "fsync_lat_mean_ms"),
             writer(per, "beside high-fsync", "fsync_lat_mean_ms"), unit=" ms"),
    ]


def c17(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    accounted, per = JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL
    pairs = analysis.high_fsync_pair(runs, experiments)

    def tenant(arm: str, name: str, column: str) -> np.ndarray:
        return pick(pairs, column, arm=arm, tenant=name)

    return [
        Test("C17", f"{accounted}: 70% high-fsync tenant's share beside a 30% one", "share",
             tenant(accounted, "victim", "achieved_share"), target=0.7),
        Test("C17", "70% high-fsync tenant's share: journal-accounted vs per-container",
             "greater", tenant(accounted, "victim", "achieved_share"),
             tenant(per, "victim", "achieved_share")),
        Test("C17", f"{accounted}: fsync latency of the 30% vs the 70% tenant", "greater",
             tenant(accounted, "neighbour", "fsync_lat_mean_ms"),
             tenant(accounted, "victim", "fsync_lat_mean_ms"), unit=" ms"),
    ]


def c18(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Test]:
    arm = JOURNAL_ACCOUNTED
    rows = analysis.by_beside(runs, experiments, "C18")
    return [Test("C18", f"{arm}: high-fsync victim MB/s beside high- vs no-fsync", "equivalent",
                 victim(rows, "throughput_mb_s", arm, "high-fsync", "high-fsync"),
                 victim(rows, "throughput_mb_s", arm, "high-fsync", "no-fsync"), unit=" MB/s")]


# each takes (runs, experiments) and picks its runs through analysis (by experiment)
CLAIM_TESTS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], list[Test]]] = {
    "C3": c3, "C4": c4, "C8": c8, "C9": c9, "C10": c10, "C15": c15, "C17": c17, "C18": c18,
}


def test_table(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """Every test of every measurable claim on one host's runs, Holm-corrected together."""
    rows = []
    for claim, build in CLAIM_TESTS.items():
        for test in build(runs, experiments):
            row = {"claim": claim, "test": test.label, "kind": test.kind}
            if test.enough_data():
                row.update(ours=test.describe(), p=test.p_value(),
                           direction_ok=test.direction_ok())
            else:
                row.update(ours="no runs for this condition in the campaign", p=np.nan,
                           direction_ok=None)
            rows.append(row)
    table = pd.DataFrame(rows)
    tested = table["p"].notna()
    table["p_holm"] = np.nan
    if tested.any():
        table.loc[tested, "p_holm"] = stats.holm(table.loc[tested, "p"], ALPHA)[1]
    table["outcome"] = [test_outcome(r) for r in table.itertuples()]
    return table


def test_outcome(row: object) -> str:
    if np.isnan(row.p_holm):
        return "not measured"
    if row.kind == "greater" and not row.direction_ok:
        return "opposite direction"
    return "supported" if row.p_holm < ALPHA else "not significant"


def claim_verdict(claim: str, tests: pd.DataFrame) -> tuple[str, str]:
    """(verdict, note) of one claim from its tests."""
    note = PENDING.get(claim, "")
    if claim in VM_HALF:
        note = f"container half tested; the VM half {NEEDS_VM}"
    if tests.empty:
        return "not measured yet", note
    outcomes = set(tests["outcome"])
    if outcomes == {"not measured"}:
        return "not measured yet", "no runs for this claim in the campaign"
    if outcomes == {"supported"}:
        return "reproduced", note
    failed = sorted(outcomes - {"supported"})
    return "not reproduced", "; ".join(filter(None, [", ".join(failed), note]))


def host_tests(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """test_table of each host (a host is one family), stacked, with a `host` column."""
    tables = [test_table(host_runs, experiments).assign(host=host)
              for host, host_runs in runs.groupby("host")]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
        columns=["claim", "test", "kind", "ours", "p", "direction_ok", "p_holm", "outcome",
                 "host"])


def verdicts(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """One row per claim and host: thesis figure, ours, tests and p (Holm), verdict."""
    rows = []
    all_tests = host_tests(runs, experiments)
    for host, host_runs in runs.groupby("host"):
        tests = all_tests[all_tests["host"] == host]
        fsync = host_runs["device_fsync_lat_ms"].median()
        for claim, thesis in THESIS.items():
            mine = tests[tests["claim"] == claim]
            verdict, note = claim_verdict(claim, mine)
            rows.append({
                "claim": claim, "thesis": thesis,
                "ours": " | ".join(mine["ours"]) if not mine.empty else "",
                "test": " | ".join(test_names(mine)),
                "p_holm": " | ".join(f"{p:.3g}" for p in mine["p_holm"].dropna()),
                "verdict": verdict, "note": note, "host": host,
                "device_fsync_ms": round(float(fsync), 3),
            })
    return pd.DataFrame(rows)


def test_names(tests: pd.DataFrame) -> list[str]:
    names = {"greater": "Welch t (a > b)", "equivalent": f"TOST ratio within x{STABLE_RATIO}",
             "share": f"TOST share within +-{SHARE_MARGIN}"}
    return [names[k] for k in tests["kind"]]
