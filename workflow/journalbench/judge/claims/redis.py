"""The Redis claims (C21-C23) on the Redis + YCSB runs of the campaigns' redis experiments: the
Redis tenant alone (`redis-alone`) and at 70% beside a buffered no-, low- or high-fsync fio
writer (`redis-70-beside-buffered`; the thesis's neighbours wrote through the page cache in
this experiment). The tenant under study is the one running Redis; throughput is `ops_s`
(YCSB's overall INSERT ops/s), fsync latency that of Redis's AOF fdatasync calls.

On the vm arm the host's YCSB client reaches Redis in the guest through a virtio-serial
tunnel (one client thread, as everywhere). Checks leave out runs with a CPU-bound tenant as the
MySQL ones do (preconditions.DB_CPU: a vm tenant whose vCPU saturated, under TCG most of them,
or a tenant whose YCSB client and redis-server together used 0.9 of a core, the CPU then
setting the pace of the one request chain; runs made before the agent recorded the client's
and server's CPU have no such flag); the consolidated checks need the device's journal regime.
"""

from __future__ import annotations

import pandas as pd

from journalbench.judge.claims import checks
from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.dbruns import Screen, tenant_rows
from journalbench.judge.claims.fio import where
from journalbench.judge.claims.preconditions import JOURNAL_REGIME, VM_CPU, VM_DB
from journalbench.judge.claims.registry import checks_of
from journalbench.judge.selection import database_tenant, ordered_beside
from journalbench.vocabulary import JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL, SHARED_JOURNAL, VM

REDIS = "redis"
NEIGHBOURS = ["buffered-no-fsync", "buffered-low-fsync", "buffered-high-fsync"]
BESIDE = ["alone", *NEIGHBOURS]  # as figures order them (Sec 5.4: buffered fio writers)
MISSING = "no Redis runs of this condition in the campaign"
VM_MISSING = "no vm runs of Redis in this condition"
JOURNAL = {"needs": (JOURNAL_REGIME,), "missing": MISSING, "unit": " ops/s"}
VM_PART = {"needs": (VM_CPU, VM_DB), "part": "vm", "missing": VM_MISSING, "unit": " ops/s"}
VM_JOURNAL = {**VM_PART, "needs": (VM_CPU, VM_DB, JOURNAL_REGIME)}


def redis_rows(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str) -> pd.DataFrame:
    return tenant_rows(runs, experiments, claim, REDIS)


def beside_fio(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[(rows["n_tenants"] == 2) & rows["beside"].isin(NEIGHBOURS)]


@checks_of("C21")
def c21(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = redis_rows(runs, experiments, "C21")
    rows = rows[rows["n_tenants"] == 1]
    return [screen(checks.ratio, "C21", f"Redis alone: {SHARED_JOURNAL} over vm ops/s",
                   where(rows, arm=SHARED_JOURNAL), where(rows, arm=VM), "ops_s",
                   thesis="> x1 (Fig 5.14, pp. 71-72; no ops/s in the text)", **VM_PART)]


@checks_of("C22")
def c22(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = beside_fio(redis_rows(runs, experiments, "C22"))
    shared, vm = where(rows, arm=SHARED_JOURNAL), where(rows, arm=VM)

    def arm_ratio(beside: str, a: str, b: str, thesis: str) -> Check:
        return screen(checks.ratio, "C22", f"beside a {beside} neighbour: Redis ops/s, {a} "
                      f"over {b}", where(rows, arm=a, beside=beside),
                      where(rows, arm=b, beside=beside), "ops_s", thesis=thesis, **VM_JOURNAL)

    return [
        screen(checks.trend, "C22", f"{SHARED_JOURNAL}: Redis ops/s beside a buffered no -> "
               "low -> high-fsync neighbour (ratio per step)", shared, "ops_s", "beside",
               NEIGHBOURS, -1, thesis="falls (Fig 5.15, p. 73; no ops/s in the text)",
               **JOURNAL),
        screen(checks.trend, "C22", f"{SHARED_JOURNAL}: Redis's mean AOF fsync latency beside "
               "a buffered no -> low -> high-fsync neighbour (ratio per step)", shared,
               "fsync_lat_mean_ms", "beside", NEIGHBOURS, 1, interest=(57.5 / 43.8) ** 0.5,
               thesis="x1.15-1.17 per step (Table 5.4, p. 76: LXC 47.6/58.5/65.7, OpenVZ "
               "43.8/51.71/57.5 ms; KVM 32.7/33.2/32.5)",
               **{**JOURNAL, "unit": " ms"}),
        *(screen(checks.equivalent, "C22", f"vm: Redis ops/s beside a {beside} over beside a "
                 "buffered-no-fsync neighbour", where(vm, beside=beside),
                 where(vm, beside=NEIGHBOURS[0]), "ops_s",
                 thesis="x1 (p. 72: KVM ~1300 ops/s constant)", **VM_JOURNAL)
          for beside in NEIGHBOURS[1:]),
        arm_ratio(NEIGHBOURS[0], SHARED_JOURNAL, VM, "> x1 (containers win only here, p. 73; "
                                                     "KVM ~1300 ops/s, p. 72)"),
        arm_ratio(NEIGHBOURS[1], VM, SHARED_JOURNAL, "> x1 (the VM wins, p. 73)"),
        arm_ratio(NEIGHBOURS[2], VM, SHARED_JOURNAL, "> x1 (the VM wins, p. 73)"),
    ]


@checks_of("C23")
def c23(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    screen = Screen(runs)
    rows = beside_fio(redis_rows(runs, experiments, "C23"))
    per = where(rows, arm=PER_CONTAINER_JOURNAL)
    worst = NEIGHBOURS[-1]  # where the shared journal costs Redis most (C22)
    return [
        screen(checks.ratio, "C23", f"beside a {worst} neighbour: Redis ops/s, "
               f"{PER_CONTAINER_JOURNAL} over {SHARED_JOURNAL}", where(per, beside=worst),
               where(rows, arm=SHARED_JOURNAL, beside=worst), "ops_s",
               thesis="up to x1.5 (Fig 5.16, p. 75: per-container ~2200 ops/s; where "
               "not stated)", **JOURNAL),
        *(screen(checks.equivalent, "C23", f"{PER_CONTAINER_JOURNAL}: Redis ops/s beside a "
                 f"{beside} over beside a buffered-no-fsync neighbour",
                 where(per, beside=beside), where(per, beside=NEIGHBOURS[0]), "ops_s",
                 thesis="x1 (p. 75: stable ~2200 ops/s)", **JOURNAL)
          for beside in NEIGHBOURS[1:]),
        *(screen(checks.equivalent, "C23", f"beside a {beside} neighbour: Redis ops/s, "
                 f"{JOURNAL_ACCOUNTED} over {PER_CONTAINER_JOURNAL}",
                 where(rows, arm=JOURNAL_ACCOUNTED, beside=beside), where(per, beside=beside),
                 "ops_s", thesis="x1 (p. 76: accounting adds \"no much improvement\")",
                 **JOURNAL)
          for beside in NEIGHBOURS),
    ]


def tenant_by_neighbour(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """The rows behind the Redis figures (C21-C23): the Redis tenant alone and beside each
    buffered fio writer."""
    return ordered_beside(database_tenant(runs, experiments, "redis"), BESIDE)
