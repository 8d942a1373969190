"""Preconditions of the testbed that a check needs, fixed with the claims (docs/claims.md).
A check whose precondition is not met is "not testable here", whatever its numbers say.

- VM_CPU: a VM's figures say something about the disk only if its vCPU was not the bottleneck:
  under KVM always; under TCG (emulated CPU) only when no tenant-run of the check was
  CPU-bound (tidy's `cpu_bound`: vCPU saturated in at least half of the seconds) and, since
  the rule `tcg` (rules.py), every guest was clearly I/O-bound (TCG_IO_BOUND). Container
  tenants run on the host's CPU and record no such flag: they count as not CPU-bound.
- HOST_CPU (every check but the databases', which leave such runs out: DB_CPU; rule
  `host-cpu`): a test host that records its own CPUs over each run (a nested host, whose vCPUs
  run every tenant) must not have had one saturated in half the run's seconds or more
  (tidy's `cpu_bound` on its container tenants), the bound a VM's vCPU is held to.
- VM_DB: a database's VM half; not testable under TCG (rule `tcg`); since the rule
  `vm-db-busy` judged under TCG where every guest of the check's runs (those left out as
  CPU-bound too) kept up with its disk: saturated in no second and at most half busy
  (formats.guest.keeps_up), as at the MySQL claims' guest operating point; busier guests leave
  it not testable, saying how busy. Since the rule `vm-db-threads` a MariaDB guest's seconds
  are those of its sysbench's threads, its client's start-up left out.
- TUNED_ON (every check; rule `tuned-on`): the testbed's I/O controller settings were not
  chosen on the check's own claim's condition; where they were, the check is no independent
  test of that claim there.
- GUEST_FSYNC: a database's fsync latency in a VM; never testable (rule `guest-fsync`).
- WEIGHTS_IN_PLAY (rule `weights-in-play`): a check whose claim depends on the weights through
  a mechanism (WEIGHT_MECHANISMS), where its tenants compete, needs weights that were in play:
  not a testbed whose validation showed them dividing nothing, nor a past-budget controller
  (iocost) that held back none of the check's tenants or kept no record (division.py).
- JOURNAL_REGIME: a journal-contention claim is about a device on which journal commits set a
  writer's pace. The thesis's high-fsync writer issued 10-15 fsync/s (p. 39) at ~18 ms in its
  VM (Table 4.1, beside a neighbour; the thesis measures no writer alone): about a fifth to a
  quarter of its time waiting in fsync. We require at least JOURNAL_BOUND of it: the
  high-fsync writer alone on its own journal (the device profile's calibration, else the
  campaign's own high-fsync-alone runs on the same host and profile) spends at least a tenth
  of its time in fsync. Below that the journal barely paces the writer and contention through
  it cannot show; a device without either measurement has an unknown regime.
- DB_CPU: a database's throughput, latency or share says something about the disk only if
  neither its server nor its client ran out of CPU. A run in which any tenant is `cpu_bound`
  (a MariaDB tenant's client + server used >= 0.9 of its one core, or a VM's vCPU was
  saturated in half the seconds) is left out of the database checks (their builders do it, see
  dbruns.py); when so few runs are left that the check cannot be computed, it is not testable
  here, naming the runs left out. Enough left: the check is judged on them and the ledger
  lists the runs left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from journalbench.formats.guest import BUSY_LIMIT, keeps_up
from journalbench.judge.claims import division, scope
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import Check, enough
from journalbench.judge.claims.mechanisms import WEIGHTS
from journalbench.vocabulary import CONTAINER_ARMS, VM

VM_CPU = "vm-cpu"
VM_DB = "vm-db"  # a database's VM half
GUEST_FSYNC = "guest-fsync"  # a VM's own fsync latency
JOURNAL_REGIME = "journal-regime"
DB_CPU = "db-cpu"
JOURNAL_BOUND = 0.10  # share of the high-fsync writer's time spent in fsync, alone
# the mechanisms through which a claim depends on the weights (mechanisms.py)
WEIGHT_MECHANISMS = ("weights-split", "weights-size", "weights-interference")
# Under TCG a guest's CPU is emulated: a VM half says something about the disk only where the
# guest was clearly waiting for its disk. Every direct-I/O fio guest of thesis-hdd was at most
# 21% busy (353 tenant-runs, median 7%), every database guest at least 40% (MariaDB median
# 81%, Redis 88%), buffered fio writers 13-90%: a quarter lies in the gap (rules.py: TCG).
TCG_IO_BOUND = 0.25
# (campaign, I/O control) -> claims whose own condition chose that control's settings, and why
TUNED_ON = {("thesis-v2", "iocost"): {
    "C3": "iocost's QoS (p95 write latency 18,519 us) was chosen on 70/30 direct 64 KiB writer "
          "pairs, C3's condition, before the campaign (2026-11-26)"}}
DESCRIPTIONS = {
    VM_CPU: "KVM, or no tenant-run of the comparison CPU-bound; under TCG, only fio halves whose "
            f"every guest was at most {TCG_IO_BOUND:.0%} busy, and a database's only where every "
            f"guest kept up (saturated in no second, at most {BUSY_LIMIT:.0%} busy)",
    JOURNAL_REGIME: f"a high-fsync writer alone spends >= {JOURNAL_BOUND:.0%} of its time in "
                    "fsync on this device (the thesis's writer: ~20-27%, in its VM)",
    DB_CPU: "database checks leave out runs with a CPU-bound tenant (a database's client + "
            "server >= 0.9 of its core, or a saturated vCPU); too few left: not testable",
}


@dataclass(frozen=True)
class Regime:
    fsync_time_share: float  # NaN when unknown
    fsync_ms: float
    fsync_per_s: float
    source: str

    def describe(self) -> str:
        if np.isnan(self.fsync_time_share):
            return "unknown (no calibration and no high-fsync-alone runs)"
        return (f"{self.fsync_time_share:.0%} of a high-fsync writer's time in fsync "
                f"({self.fsync_per_s:.0f} fsync/s at {self.fsync_ms:.3g} ms, {self.source})")


def journal_regime(runs: pd.DataFrame) -> Regime:
    """The regime of one family's device (runs of one campaign, host and device profile)."""
    calibrated = runs.dropna(subset=["ref_high_fsync_ms", "ref_high_fsync_per_s"])
    if not calibrated.empty:
        ms = float(calibrated["ref_high_fsync_ms"].median())
        per_s = float(calibrated["ref_high_fsync_per_s"].median())
        return Regime(ms * per_s / 1000, ms, per_s, "the device profile's calibration")
    alone = runs[(runs["n_tenants"] == 1) & (runs["preset"] == "high-fsync")
                 & runs["arm"].isin(CONTAINER_ARMS)].dropna(
        subset=["fsync_lat_mean_ms", "fsync_per_s"])
    if not alone.empty:
        ms = float(alone["fsync_lat_mean_ms"].median())
        per_s = float(alone["fsync_per_s"].median())
        return Regime(float((alone["fsync_lat_mean_ms"] * alone["fsync_per_s"]).median() / 1000),
                      ms, per_s, f"median of {len(alone)} high-fsync-alone runs of campaign(s) "
                      f"{', '.join(sorted(set(alone['campaign'].dropna())))}")
    return Regime(np.nan, np.nan, np.nan, "")


def tcg_unmet(check: Check) -> str:
    """Why a VM half under TCG is not judged (the TCG rule), or ""."""
    bed = check.testbed
    if "tcg" not in bed.values("virt_accel", bed.vm):
        return ""
    if VM_DB in check.needs:
        return ("a database's VM half under TCG: the emulated CPU, not the disk, sets a "
                "database guest's pace")
    if VM_CPU not in check.needs:
        return ""
    busy = check.rows.loc[bed.vm, "vcpu_busy_mean"]
    if busy.isna().any() or (busy > TCG_IO_BOUND).any():
        return (f"VM under TCG and a guest not clearly I/O-bound (vCPU busy up to "
                f"{busy.max():.0%}, above {TCG_IO_BOUND:.0%})" if busy.notna().any() else
                "VM under TCG and its guests' vCPU busy not recorded")
    return ""


def vm_db_busy_unmet(check: Check) -> str | None:
    """Why a database's VM half under TCG is not judged under the rule `vm-db-busy` as it was
    first read, over each MariaDB client's whole run (its start-up too): see
    vm_db_threads_unmet."""
    return guests_unmet(check, check.guests_client)


def vm_db_threads_unmet(check: Check) -> str | None:
    """Why a database's VM half under TCG is not judged (rules `vm-db-busy` and
    `vm-db-threads`: its guests, over their clients' threads, did not all keep up: how busy,
    how many), "" where every guest of every run of its conditions kept up; None where it is
    no database's VM half under TCG (the rule `tcg`'s reason, if any, then stands)."""
    return guests_unmet(check, check.guests)


def guests_unmet(check: Check, guests: dict[str, tuple[float, float]]) -> str | None:
    """vm-db-busy's test on one reading of the guests' seconds."""
    bed = check.testbed
    if VM_DB not in check.needs or "tcg" not in bed.values("virt_accel", bed.vm):
        return None
    unknown = [run for run, (busy, saturated) in guests.items()
               if np.isnan(busy) or np.isnan(saturated)]
    busier = [run for run, (busy, saturated) in guests.items()
              if run not in unknown and not keeps_up(busy, saturated)]
    reasons = []
    if busier:
        busy = max(guests[run][0] for run in busier)
        saturated = max(guests[run][1] for run in busier)
        reasons.append(f"in {len(busier)} of {len(guests)} runs a guest did not keep up with "
                       f"its disk (vCPU busy up to {busy:.0%}, saturated in up to "
                       f"{saturated:.0%} of its seconds; judged where at most "
                       f"{BUSY_LIMIT:.0%} busy and saturated in no second)")
    if unknown:
        reasons.append(f"{len(unknown)} of {len(guests)} runs without their guests' vCPU "
                       "recorded")
    if not guests:
        reasons.append("no guest's vCPU recorded")
    return ("a database's VM half under TCG: " + "; ".join(reasons)) if reasons else ""


def guest_fsync_unmet(check: Check) -> str:
    """Why a VM's traced fsync latency is not judged, or "": only where vm runs of the
    condition exist (without any, the check is missing: its condition was not run)."""
    if GUEST_FSYNC not in check.needs or not (check.rows["arm"] == VM).any():
        return ""
    return ("a database's fsync latency in a VM: its calls are made in the guest's own kernel, "
            "which the host does not trace")


def writeback_unmet(check: Check) -> str:
    """A writer's bytes the flushers write back, or their effect on a neighbour, mean something
    only where that write-back is charged to its cgroup (cgroup v2 with io and memory)."""
    bed = check.testbed
    if not scope.flushed(bed):
        return ""
    attributed = bed.values("writeback_attributed", ~bed.vm)
    if attributed == [1]:
        return ""
    charged = ("this host charges to no tenant (cgroup v1)" if attributed == [0]
               else "no record says this host charged to its writer")
    return ("a writer through the page cache without fsync in it, whose write-back the "
            f"kernel's flushers do and {charged}")


def host_cpu_unmet(check: Check) -> str:
    """Why a check with a run on a host whose own CPU saturated is not judged (rule
    `host-cpu`), or "". The databases' checks leave such runs out instead (DB_CPU)."""
    bed = check.testbed
    if DB_CPU in check.needs or "tool" not in bed.columns:
        return ""
    # a container's fio tenant is flagged only by its host's CPU (tidy's host_saturated)
    bound = ~bed.vm & (bed.columns["tool"] == "fio") & (bed.floats("cpu_bound") == 1)
    if not bound.any():
        return ""
    return (f"{len(bed.values('run_id', bound))} of {len(bed.values('run_id'))} runs on a host "
            "whose CPU saturated (half the seconds or more)")


def weights_unmet(check: Check) -> str:
    """Why a check whose claim depends on the weights cannot show them on its testbed (rule
    `weights-in-play`), with the numbers; "" where the weights were in play, measured or not
    (a testbed without validation pairs is judged as before, its factor the mechanism's)."""
    claim = CLAIMS.get(check.claim)
    if claim is None or claim.mechanisms.get(WEIGHTS) not in WEIGHT_MECHANISMS:
        return ""
    bed = check.testbed
    if not bed.asks(scope.FACTORS[WEIGHTS], "applies"):
        return ""
    competing = bed.floats("n_tenants") > 1
    reasons = []
    measured = bed.division
    if measured is not None and measured.divides is False:
        reasons.append(f"{measured.control} divided nothing here ({measured.source}'s "
                       f"validation: {measured.at_all_text()})")
    for control in bed.values("io_control", competing):
        if not division.past_budget(str(control)):
            continue
        record = bed.record.of(bed.values("run_id", competing)) if bed.record else \
            division.HeldBack(0, 0, np.nan)
        if not record.tenant_seconds:
            reasons.append(f"{record.text(control)}: nothing shows its weights were in play")
        elif not record.held:
            reasons.append(f"{control} held back none of the check's tenants: "
                           f"{record.text(control)}")
        elif reasons:  # beside a failed validation, what it did on this check
            reasons.append(record.text(control))
    return "; ".join(reasons)


def tuned_on_unmet(check: Check) -> str:
    """Why a check is no independent test on its testbed (rule `tuned-on`): its I/O control's
    settings were chosen on its claim's own condition (TUNED_ON); "" otherwise."""
    rows = check.rows
    if rows.empty or not {"campaign", "io_control"} <= set(rows.columns):
        return ""
    for campaign, control in sorted(set(zip(rows["campaign"], rows["io_control"],
                                            strict=True))):
        why = TUNED_ON.get((str(campaign), str(control)), {}).get(check.claim)
        if why:
            return f"no independent test: {why}"
    return ""


def unmet(check: Check, regime: Regime) -> list[str]:
    """Why the check cannot be judged on this testbed (empty when every precondition holds)."""
    reasons = []
    if VM_CPU in check.needs:
        vm = check.rows[check.rows["arm"] == VM]
        accel = sorted(set(vm["virt_accel"].dropna()))
        bound = check.rows[check.rows["cpu_bound"].fillna(0) == 1]
        if accel != ["kvm"] and not bound.empty:
            reasons.append(f"VM under {'+'.join(a.upper() for a in accel) or 'an unknown accel'}"
                           f" and {bound['run_id'].nunique()} of {check.rows['run_id'].nunique()}"
                           " runs CPU-bound (vCPU saturated in half the seconds or more)")
    if JOURNAL_REGIME in check.needs:
        share = regime.fsync_time_share
        if np.isnan(share):
            reasons.append(f"device regime {regime.describe()}")
        elif share < JOURNAL_BOUND:
            reasons.append(f"device regime: {regime.describe()}, below {JOURNAL_BOUND:.0%}")
    return reasons


def too_few_left(check: Check) -> list[str]:
    """Why a check without enough values cannot be judged: its CPU-bound runs were left out
    (empty when nothing was left out, or enough is left: then the check is judged)."""
    if DB_CPU not in check.needs or not check.excluded or enough(check):
        return []
    return [f"{len(check.excluded)} run(s) left out as CPU-bound ({' '.join(check.excluded)}), "
            "too few left"]
