"""The MySQL claims (C5-C7, C11-C14, C16, C19, C20) on the MariaDB + sysbench runs of the
campaigns' mysql experiments: the MariaDB tenant alone (`mysql-alone`), two MariaDB tenants at
70/30 (`mysql-pair`), and a MariaDB tenant at 70% or 30% beside a no-, low- or high-fsync fio
writer (`mysql-70-beside-fio`, `mysql-30-beside-fio`). The tenant under study is the MariaDB
tenant named `victim` (the 70% one of a pair). Throughput is `ops_s` (sysbench transactions/s,
each one autocommitted INSERT: the thesis's requests/s), shares are `achieved_share` (the split
the cgroup weights produced between the tenants, as in C3 and C17) or its per-second swing
(dbruns.py).

Every check leaves out the runs with a CPU-bound tenant (preconditions.DB_CPU, dbruns.Screen);
every check involving the vm arm needs KVM (VM_DB: under TCG the emulated CPU sets a database
guest's pace); the claims the thesis explains by journal contention (all but C7) need the
device's journal regime. MariaDB's fsync calls in a VM are made in the guest kernel, which the
host's tracer does not see: the VM sides of C11's and C12's fsync-latency checks are not
testable (GUEST_FSYNC), so those claims can at best be partially measured.
"""

from __future__ import annotations

import pandas as pd

from journalbench.judge.claims import checks
from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.dbruns import SWING, Screen, tenant_rows
from journalbench.judge.claims.fio import NEIGHBOURS, where
from journalbench.judge.claims.preconditions import GUEST_FSYNC, JOURNAL_REGIME, VM_CPU, VM_DB
from journalbench.judge.claims.registry import checks_of
from journalbench.judge.selection import database_tenant, ordered_beside, runs_for
from journalbench.runfolder import RUN_KEY
from journalbench.vocabulary import JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL, SHARED_JOURNAL, VM

MARIADB = "mariadb"
# its neighbours by rising fsync rate, as figures order them: another MariaDB, then fio writers
BESIDE = ["alone", MARIADB, *NEIGHBOURS]
MISSING = "no MariaDB runs of this condition in the campaign"
VM_MISSING = "no vm runs of MariaDB in this condition"
VM_FSYNC = ("no fsync latency of MariaDB in a vm (its calls are made in the guest kernel, "
            "which the host's tracer does not see)")
JOURNAL = {"needs": (JOURNAL_REGIME,), "missing": MISSING}
VM_PART = {"needs": (VM_CPU, VM_DB), "part": "vm", "missing": VM_MISSING}
VM_JOURNAL = {"needs": (VM_CPU, VM_DB, JOURNAL_REGIME), "part": "vm", "missing": VM_MISSING}
OPS = {"unit": " ops/s"}


def victims(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str) -> pd.DataFrame:
    return tenant_rows(runs, experiments, claim, MARIADB, "victim")


def pair(rows: pd.DataFrame) -> pd.DataFrame:
    """The 70% tenant of two MariaDB tenants."""
    return rows[(rows["n_tenants"] == 2) & (rows["beside"] == MARIADB)]


def beside_fio(rows: pd.DataFrame, weight: float) -> pd.DataFrame:
    """The MariaDB tenant at `weight` (0.7 or 0.3) beside a fio writer of NEIGHBOURS."""
    return rows[(rows["n_tenants"] == 2) & rows["beside"].isin(NEIGHBOURS)
                & (rows["target_share"].round(2) == weight)]


@checks_of("C5")
def c5(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    """Fig 4.1 shows "the throughput of one container/VM" of each pair (p. 36): here the 70%
    one's, as Fig 5.12 reports it; the thesis's text says nothing of one instance alone."""
    screen = Screen(runs)
    rows = pair(victims(runs, experiments, "C5"))
    return [screen(checks.ratio, "C5", f"MySQL pair: the 70% instance's ops/s, vm over "
                   f"{SHARED_JOURNAL}", where(rows, arm=VM), where(rows, arm=SHARED_JOURNAL),
                   "ops_s", interest=1 / 0.78,
                   thesis="x1.28-1.33 (p. 36: LXC 22%, OpenVZ 25% below KVM; one instance; "
                   "no req/s in the text)", **OPS, **VM_JOURNAL)]


@checks_of("C6")
def c6(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = pair(victims(runs, experiments, "C6"))
    return [
        screen(checks.share, "C6", "vm: the 70% MySQL instance's share beside a 30% one",
               where(rows, arm=VM), "achieved_share", 0.7, thesis="holds 70/30 (Fig 4.2a, p. 37)",
               **VM_JOURNAL),
        screen(checks.ratio, "C6", "the 70% MySQL instance's per-second share swing (5-95% "
               f"range): {SHARED_JOURNAL} over vm", where(rows, arm=SHARED_JOURNAL),
               where(rows, arm=VM), SWING,
               thesis="> x1 (p. 37: containers swing 0-55%, KVM ~70/30)",
               **{**VM_JOURNAL, "missing": "no vm and shared-journal runs with per-second "
                                           "samples"}),
    ]


@checks_of("C7")
def c7(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = pair(victims(runs, experiments, "C7"))
    return [screen(checks.ratio, "C7", "MySQL pair, the 70% instance's InnoDB fsyncs/s: vm "
                   f"over {SHARED_JOURNAL}", where(rows, arm=VM),
                   where(rows, arm=SHARED_JOURNAL), "db_fsyncs_per_s", interest=27 / 14,
                   thesis="x1.93 (p. 39: KVM 27 vs LXC 14 fsync/s; OpenVZ 12, x2.25)",
                   unit=" fsync/s",
                   **VM_PART)]


def vm_constant(claim: str, screen: Screen, rows: pd.DataFrame, weight: str,
                thesis: str) -> list[Check]:
    """The vm MySQL's ops/s beside a low- and a high-fsync writer within x1.2 of beside a
    no-fsync one."""
    vm = where(rows, arm=VM)
    return [screen(checks.equivalent, claim, f"vm: the {weight} MySQL's ops/s beside a {beside} "
                   "over beside a no-fsync neighbour", where(vm, beside=beside),
                   where(vm, beside="no-fsync"), "ops_s", thesis=thesis, **OPS, **VM_JOURNAL)
            for beside in NEIGHBOURS[1:]]


def fsync_above_vm(claim: str, screen: Screen, rows: pd.DataFrame, weight: str,
                   thesis: dict[str, tuple[float, str]]) -> list[Check]:
    """Per neighbour: the container MySQL's mean fsync latency over the VM's (the thesis's
    ratio, which is also the smallest effect of interest, and its figures)."""
    return [screen(checks.ratio, claim, f"beside a {beside} neighbour: the {weight} MySQL's "
                   f"mean fsync latency, {SHARED_JOURNAL} over vm",
                   where(rows, arm=SHARED_JOURNAL, beside=beside),
                   where(rows, arm=VM, beside=beside), "fsync_lat_mean_ms",
                   interest=thesis[beside][0], thesis=thesis[beside][1], unit=" ms",
                   **{**VM_JOURNAL, "missing": VM_FSYNC,
                      "needs": (*VM_JOURNAL["needs"], GUEST_FSYNC)})
            for beside in NEIGHBOURS]


def table_ratio(where: str, lxc: str, kvm: str, openvz: str) -> tuple[float, str]:
    """A thesis table's container-over-KVM fsync latency ratio: (the effect of interest, LXC's,
    the smaller; the text with both containers' figures as the table prints them, in ms)."""
    ratio = float(lxc) / float(kvm)
    return ratio, (f"x{ratio:.2f} ({where}: LXC {lxc} vs KVM {kvm} ms; OpenVZ {openvz}, "
                   f"x{float(openvz) / float(kvm):.2f})")


@checks_of("C11")
def c11(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = beside_fio(victims(runs, experiments, "C11"), 0.7)
    shared = where(rows, arm=SHARED_JOURNAL)
    low = where(shared, beside="low-fsync")
    return [
        *vm_constant("C11", screen, rows, "70%", "x1 (p. 47: KVM ~425 req/s constant)"),
        screen(checks.ratio, "C11", f"{SHARED_JOURNAL}: the 70% MySQL's ops/s beside a "
               "no-fsync over beside a low-fsync neighbour", where(shared, beside="no-fsync"),
               low, "ops_s", thesis="> x1 (drops no -> low, Fig 4.8, p. 47; no req/s in the "
               "text)", **OPS, **JOURNAL),
        screen(checks.ratio, "C11", f"{SHARED_JOURNAL}: the 70% MySQL's ops/s beside a "
               "high-fsync over beside a low-fsync neighbour",
               where(shared, beside="high-fsync"), low, "ops_s",
               thesis="> x1 (recovers low -> high, Fig 4.8, p. 48)", **OPS, **JOURNAL),
        *fsync_above_vm("C11", screen, rows, "70%", {
            "no-fsync": table_ratio("Table 4.2, p. 47", "72.51", "26.87", "120.23"),
            "low-fsync": table_ratio("Table 4.2", "85.09", "27.28", "160.65"),
            "high-fsync": table_ratio("Table 4.2", "74.08", "26.12", "96.20")}),
    ]


@checks_of("C12")
def c12(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = beside_fio(victims(runs, experiments, "C12"), 0.3)

    def arm_ratio(beside: str, a: str, b: str, thesis: str) -> Check:
        return screen(checks.ratio, "C12", f"beside a {beside} neighbour: the 30% MySQL's ops/s,"
                      f" {a} over {b}", where(rows, arm=a, beside=beside),
                      where(rows, arm=b, beside=beside), "ops_s", thesis=thesis, **OPS,
                      **VM_JOURNAL)

    return [
        *vm_constant("C12", screen, rows, "30%", "x1 (p. 49: KVM ~220 req/s constant)"),
        arm_ratio("no-fsync", VM, SHARED_JOURNAL, "> x1 (the VM wins, p. 49: KVM ~220 req/s; "
                                                  "no container req/s in the text)"),
        arm_ratio("low-fsync", VM, SHARED_JOURNAL, "> x1 (the VM wins, p. 49)"),
        arm_ratio("high-fsync", SHARED_JOURNAL, VM, "> x1 (containers win only here, p. 49)"),
        *fsync_above_vm("C12", screen, rows, "30%", {
            "no-fsync": table_ratio("Table 4.3, p. 48", "116.4", "24.52", "148.3"),
            "low-fsync": table_ratio("Table 4.3", "154.2", "24.82", "172.5"),
            "high-fsync": table_ratio("Table 4.3", "86.5", "24.44", "93.1")}),
    ]


@checks_of("C13")
def c13(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = victims(runs, experiments, "C13")
    seventy, thirty = beside_fio(rows, 0.7), beside_fio(rows, 0.3)
    shared = where(seventy, arm=SHARED_JOURNAL, beside="no-fsync")
    vm_holds = [screen(checks.share, "C13", f"vm: the {weight:.0%} MySQL's share beside a "
                       f"{beside} neighbour", where(table, arm=VM, beside=beside),
                       "achieved_share", weight, thesis=f"holds {weight:.0%} ({figure}, pp. 51-52)",
                       **VM_JOURNAL)
                for weight, table, figure in ((0.7, seventy, "Fig 4.12"), (0.3, thirty, "Fig 4.15"))
                for beside in NEIGHBOURS]
    return [
        screen(checks.level, "C13", f"{SHARED_JOURNAL}: the 70% MySQL's share beside a "
               "no-fsync neighbour, below its 0.70", shared, "achieved_share", 0.7, -1,
               thesis="~0.20 of the disk instead of 0.70 (Fig 4.10, 4.11, p. 49)", **JOURNAL),
        screen(checks.share, "C13", f"{SHARED_JOURNAL}: jbd2's share of the disk beside the "
               "70% MySQL and a no-fsync neighbour", shared, "shared_jbd2_share", 0.2,
               thesis="~0.20 (Fig 4.10, 4.11, p. 49)", **JOURNAL),
        *vm_holds,
    ]


@checks_of("C14")
def c14(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    """The VM ahead of shared-journal in every MySQL consolidation where the thesis shows it
    ahead: the pair and the 70% MySQL beside each fio writer (alone, containers are not worse:
    C5; at 30% beside a high-fsync writer they win: C12)."""
    screen = Screen(runs)
    rows = victims(runs, experiments, "C14")
    # the pair's effect of interest is C5's (the smaller of LXC's and OpenVZ's); beside a
    # writer the thesis states no ratio: the default
    cases = {"MySQL pair": (pair(rows), "x1.28 (LXC), x1.33 (OpenVZ) (Fig 4.1, p. 36)",
                            {"interest": 1 / 0.78}),
             **{f"beside a {b} neighbour": (where(beside_fio(rows, 0.7), beside=b),
                                            "> x1 (Fig 4.8, p. 47: KVM ~425 req/s)", {})
                for b in NEIGHBOURS}}
    return [screen(checks.ratio, "C14", f"{case}: the 70% MySQL's ops/s, vm over "
                   f"{SHARED_JOURNAL}", where(table, arm=VM),
                   where(table, arm=SHARED_JOURNAL), "ops_s",
                   thesis=f"{thesis}; overall up to x2 (LXC), x2.4 (OpenVZ) (p. 53)", **OPS,
                   **VM_JOURNAL, **interest)
            for case, (table, thesis, interest) in cases.items()]


# C16: each comparison of Fig 5.3 (MySQL at 70%: the thesis's maxima, pp. 63, 68) and Fig 5.4
# (at 30%: directions only, p. 64: "outperforms", p. 68: "tops the all"): (a, b, 70%, 30%)
C16_PAIRS = ((PER_CONTAINER_JOURNAL, SHARED_JOURNAL, "up to x1.3 (Fig 5.3, p. 63)",
              "> x1 (Fig 5.4, p. 64: 'outperforms')"),
             (JOURNAL_ACCOUNTED, SHARED_JOURNAL, "up to x3.4 (Fig 5.3, p. 68)",
              "> x1 (Fig 5.4, p. 68: 'tops the all')"),
             (JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL, "up to x2.6 (Fig 5.3, p. 68)",
              "> x1 (Fig 5.4, p. 68: 'tops the all')"),
             (JOURNAL_ACCOUNTED, VM, "up to x1.4 (Fig 5.3, p. 68)",
              "> x1 (Fig 5.4, p. 68: 'tops the all')"))


@checks_of("C16")
def c16(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = victims(runs, experiments, "C16")
    out = []
    for weight in (0.7, 0.3):
        table = beside_fio(rows, weight)
        for beside in NEIGHBOURS:
            for a, b, at_70, at_30 in C16_PAIRS:
                part = VM_JOURNAL if VM in (a, b) else JOURNAL
                out.append(screen(checks.ratio, "C16", f"beside a {beside} neighbour: the "
                                  f"{weight:.0%} MySQL's ops/s, {a} over {b}",
                                  where(table, arm=a, beside=beside),
                                  where(table, arm=b, beside=beside), "ops_s",
                                  thesis=at_70 if weight == 0.7 else at_30, **OPS, **part))
    return out


@checks_of("C19")
def c19(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = beside_fio(victims(runs, experiments, "C19"), 0.7)
    # the thesis's shares without accounting (Fig 5.8, pp. 68-69), and the ratio they give
    without = {"no-fsync": ("~0.25", 70 / 25, "x2.8"), "low-fsync": ("~0.30", 70 / 30, "x2.3"),
               "high-fsync": ("~0.30-0.50", 70 / 50, "x1.4-2.3")}
    out = []
    for beside in NEIGHBOURS:
        accounted = where(rows, arm=JOURNAL_ACCOUNTED, beside=beside)
        out += [
            screen(checks.share, "C19", f"{JOURNAL_ACCOUNTED}: the 70% MySQL's share beside a "
                   f"{beside} neighbour", accounted, "achieved_share", 0.7,
                   thesis="~0.70 (Fig 5.7, pp. 68-69)", **JOURNAL),
            screen(checks.ratio, "C19", f"beside a {beside} neighbour: the 70% MySQL's share, "
                   f"{JOURNAL_ACCOUNTED} over {PER_CONTAINER_JOURNAL}", accounted,
                   where(rows, arm=PER_CONTAINER_JOURNAL, beside=beside), "achieved_share",
                   interest=without[beside][1],
                   thesis=f"{without[beside][2]} (~0.70 against {without[beside][0]}, Fig 5.7, "
                   "5.8)", **JOURNAL),
        ]
    return out


@checks_of("C20")
def c20(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = pair(victims(runs, experiments, "C20"))
    return [
        screen(checks.share, "C20", f"{JOURNAL_ACCOUNTED}: the 70% MySQL instance's share "
               "beside a 30% one", where(rows, arm=JOURNAL_ACCOUNTED), "achieved_share", 0.7,
               thesis="holds 70/30 (Fig 5.11, p. 69)", **JOURNAL),
        screen(checks.share, "C20", "vm: the 70% MySQL instance's share beside a 30% one",
               where(rows, arm=VM), "achieved_share", 0.7, thesis="holds 70/30 (Fig 5.11, p. 69)",
               **VM_JOURNAL),
        screen(checks.ratio, "C20", f"MySQL pair: the 70% instance's ops/s, "
               f"{JOURNAL_ACCOUNTED} over vm", where(rows, arm=JOURNAL_ACCOUNTED),
               where(rows, arm=VM), "ops_s",
               thesis="> x1 (Fig 5.12, p. 69; no req/s in the text)", **OPS,
               **VM_JOURNAL),
    ]


# -- the rows behind the MySQL figures ------------------------------------------------------------

def tenant_at(runs: pd.DataFrame, experiments: pd.DataFrame, share: float) -> pd.DataFrame:
    """C5-C7, C11-C14, C16, C19: the MariaDB tenant whose weights promise it `share` (0.7 or
    0.3; alone it holds 0.7's weight) alone, beside another MariaDB or beside a fio writer."""
    rows = database_tenant(runs, experiments, MARIADB)
    alone = rows["beside"] == "alone"
    return ordered_beside(rows[alone | (rows["target_share"].round(2) == share)], BESIDE)


def pair_rows(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C5, C6, C20: both tenants of the runs of two MariaDB tenants."""
    rows = runs_for(runs, experiments)
    rows = rows[rows["tool"] == MARIADB]
    return rows[rows.groupby(list(RUN_KEY))["tool"].transform("size") == 2]
