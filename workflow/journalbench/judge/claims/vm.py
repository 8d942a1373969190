"""The VM halves of C1, C2, C3, C8, C9, C15 and C18: the VM constant whatever the neighbour,
containers beating the VM alone and in pairs, the VM holding 70/30. Every check involving the
VM needs KVM or no CPU-bound tenant-run (preconditions.VM_CPU); the journal claims also need
the device's journal regime. Without vm runs the checks have no values and the ledger says
what is missing."""

from __future__ import annotations

import pandas as pd

from journalbench.judge import selection
from journalbench.judge.claims import checks
from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.fio import where
from journalbench.judge.claims.preconditions import JOURNAL_REGIME, VM_CPU
from journalbench.judge.claims.registry import checks_of
from journalbench.vocabulary import JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL, SHARED_JOURNAL, VM

MISSING = "no vm runs of this condition in the campaign"
VM_PART = {"needs": (VM_CPU,), "part": "vm", "missing": MISSING}
VM_JOURNAL = {"needs": (VM_CPU, JOURNAL_REGIME), "part": "vm", "missing": MISSING}


def base_checks(claim: str, rows: pd.DataFrame, what: str, where_shown: str) -> list[Check]:
    return [checks.ratio(claim, f"{workload} {what}: {SHARED_JOURNAL} over vm MB/s",
                         where(rows, base_workload=workload, arm=SHARED_JOURNAL),
                         where(rows, base_workload=workload, arm=VM), "throughput_mb_s",
                         thesis=f"> x1 (containers beat the VM, {where_shown}; no number in "
                         "the text)", unit=" MB/s", **VM_PART)
            for workload in selection.BASE_WORKLOADS]


@checks_of("C1")
def c1(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    return base_checks("C1", selection.base_alone(runs, experiments), "alone",
                       "Fig 3.5, p. 32")


@checks_of("C2")
def c2(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    return base_checks("C2", selection.base_paired(runs, experiments), "at 70% of a pair",
                       "Fig 3.6, p. 32")


@checks_of("C3")
def c3(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.split(runs, experiments), arm=VM)
    return [checks.share("C3", "vm: the 70% writer's share beside a 30% writer", rows,
                         "achieved_share", 0.7,
                         thesis="holds 70/30 (Fig 3.7: ~70% / ~30%, p. 33)", **VM_PART)]


def stable(claim: str, rows: pd.DataFrame, column: str, what: str, unit: str,
           thesis: str, neighbours: tuple[str, ...]) -> list[Check]:
    """The VM victim's `column` beside each neighbour within x1.2 of beside a no-fsync one."""
    vm = where(rows, arm=VM)
    return [checks.equivalent(claim, f"vm: the high-fsync victim's {what} beside a {beside} "
                              "over beside a no-fsync neighbour", where(vm, beside=beside),
                              where(vm, beside="no-fsync"), column, thesis=thesis, unit=unit,
                              **VM_JOURNAL)
            for beside in neighbours]


@checks_of("C8")
def c8(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C8"), preset="high-fsync")
    high = where(rows, beside="high-fsync")
    return [*stable("C8", rows, "throughput_mb_s", "MB/s", " MB/s",
                    "x1 (KVM ~2.5 MB/s constant, p. 40)", ("low-fsync", "high-fsync")),
            checks.ratio("C8", f"beside a high-fsync neighbour: vm over {SHARED_JOURNAL} "
                         "victim MB/s", where(high, arm=VM), where(high, arm=SHARED_JOURNAL),
                         "throughput_mb_s", thesis="> x1 (the VM wins, p. 39: KVM ~2.5 MB/s; no "
                         "container MB/s in the text)", unit=" MB/s",
                         **VM_JOURNAL)]


@checks_of("C9")
def c9(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C9"), preset="high-fsync")
    high = where(rows, beside="high-fsync")
    return [*stable("C9", rows, "fsync_lat_mean_ms", "mean fsync latency", " ms",
                    "x0.98 (Table 4.1, p. 43: KVM 18.58/18.94/18.27 ms)", ("high-fsync",)),
            checks.ratio("C9", f"beside a high-fsync neighbour: vm over {SHARED_JOURNAL} "
                         "victim fsync latency", where(high, arm=VM),
                         where(high, arm=SHARED_JOURNAL), "fsync_lat_mean_ms", -1,
                         interest=44.09 / 18.27, thesis="x0.41 (Table 4.1, p. 43: KVM 18.27 vs "
                         "LXC 44.09 ms; OpenVZ 50.41, x0.36)",
                         unit=" ms", **VM_JOURNAL)]


@checks_of("C15")
def c15(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.sequential_writers(runs, experiments), case="beside high-fsync")
    return [checks.ratio("C15", f"high-fsync pair: vm over {PER_CONTAINER_JOURNAL} victim MB/s",
                         where(rows, arm=VM), where(rows, arm=PER_CONTAINER_JOURNAL),
                         "throughput_mb_s", thesis="> x1 (per-container below the VM, p. 63; no "
                         "MB/s in the text)",
                         unit=" MB/s", **VM_JOURNAL)]


@checks_of("C18")
def c18(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C18"), preset="high-fsync")
    return [checks.ratio("C18", f"beside a {beside} neighbour: {JOURNAL_ACCOUNTED} over vm "
                         "victim MB/s", where(rows, beside=beside, arm=JOURNAL_ACCOUNTED),
                         where(rows, beside=beside, arm=VM), "throughput_mb_s",
                         thesis="> x1 (above the VM in every case, p. 68: accounting ~2.7 "
                         "MB/s; KVM ~2.5 in Fig 4.3's runs, p. 40)", unit=" MB/s",
                         **VM_JOURNAL)
            for beside in ("no-fsync", "low-fsync", "high-fsync")]
