"""A VM tenant's own per-second report, `guest-<tenant>.jsonl` (written inside the guest by
journalbench.agent.arms.vm.report): what the host cannot see of a guest, i.e. its vCPU's busy
fraction, its own disk bytes and its own journal thread's bytes.

The thesis compares VMs and containers; under TCG a guest can be CPU-bound where a container
is I/O-bound, so a tenant whose vCPU was busy at or above SATURATED in at least half of the
seconds is flagged `cpu_bound`.

An interval too short for the guest's clock to tick (after a stall under TCG the report
catches up with a few milliseconds-long samples) has no busy fraction (`null`): it counts for
bytes but not for the vCPU's busy mean.

The report runs on the guest's clock from a little before the workloads start; the agent
records when it started on the host's CLOCK_MONOTONIC (`started_ns`), as it does the sampler's
zero, which places the report's seconds on the sampler's clock: the same measured window
(journalbench.window) applies to both. Since 2026-11-29 each line also has the guest's
/proc/uptime at its reading (`uptime`): a MariaDB tenant's counters bound its client's run on
that clock (formats/mariadb.py), and its seconds are then those of the client's threads (the
snapshots of the server's counters before and after it, which start a mariadb client that
keeps a TCG guest's vCPU busy for about a second, and the client's own start-up fall outside:
ClientPhase).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from journalbench import window
from journalbench.formats import json_lines, problem


# the file of a tenant's output in its run folder
def guest_file(tenant: str) -> str:
    """The guest's own report, one line a second (agent/arms/vm/report.py)."""
    return f"guest-{tenant}.jsonl"


class ClientPhase(NamedTuple):
    """A measured client's run on /proc/uptime of where it ran: from `start` (the snapshot
    before it) through `work` (its threads' start: its start-up, script and connections, done)
    to `end` (the snapshot after it). A VM tenant's guest seconds are its work's (since
    2026-11-29, rule vm-db-threads); the whole run's were read before."""
    start: float
    work: float
    end: float

    @property
    def working(self) -> tuple[float, float]:
        return self.work, self.end

    @property
    def whole(self) -> tuple[float, float]:
        return self.start, self.end


SATURATED = 0.95  # a vCPU this busy in a second had no time to spare for more I/O
# A guest keeps up with its disk (its emulated CPU does not set its pace) when its vCPU was
# saturated in no second and busy at most this share of the time: a closed-loop client's
# transaction then waits for the CPU about as long as it is served, at most (an M/M/1 queue
# at utilisation rho waits rho / (1 - rho) service times: 1 at a half; docs/claims.md). The
# rule of the MySQL claims' operating point (agent/workloads/guest_point.py) and of their VM
# halves under TCG (judge/claims/preconditions.py, rule vm-db-busy).
BUSY_LIMIT = 0.5
COUNTS = ("disk_read_bytes", "disk_write_bytes", "jbd2_write_bytes")


@dataclass(frozen=True)
class GuestReport:
    seconds: int
    vcpu_busy_mean: float
    saturated_share: float  # share of seconds with the vCPU at or above SATURATED
    disk_bytes: int
    jbd2_bytes: int
    saturated_seconds: int = 0  # seconds with the vCPU at or above SATURATED

    @property
    def cpu_bound(self) -> bool:
        return self.saturated_share >= 0.5


def keeps_up(busy_mean: float, saturated_share: float) -> bool:
    """Whether a guest kept up with its disk (BUSY_LIMIT): its vCPU saturated in no second and
    at most half busy. An unmeasured guest (NaN) did not show it."""
    return saturated_share == 0 and busy_mean <= BUSY_LIMIT


def check_line(row: Any, tenant: str) -> str | None:
    if not isinstance(row, dict):
        return "not a JSON object"
    if row.get("tenant") != tenant:
        return f"'tenant' is {row.get('tenant')!r}, not {tenant!r}"
    for key in ("t", "dt"):
        value = row.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            return f"'{key}' missing or not a non-negative number"
    if "vcpu_busy" not in row:
        return "'vcpu_busy' missing"
    busy = row["vcpu_busy"]  # null: no CPU tick in the interval (a stalled guest's catch-up)
    if busy is not None and (isinstance(busy, bool) or not isinstance(busy, int | float)
                             or not 0 <= busy <= 1):
        return "'vcpu_busy' not a fraction"
    for key in COUNTS:
        value = row.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"'{key}' missing or not a non-negative integer"
    if "uptime" in row:  # since 2026-11-29
        value = row["uptime"]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            return "'uptime' not a non-negative number"
    return None


def parse_guest(path: Path | str, tenant: str, span: tuple[float, float] | None = None,
                offset_s: float = 0.0,
                client_phase: tuple[float, float] | None = None) -> GuestReport:
    """The report's seconds whose interval lies in `span` (the sampler's clock, on which a
    report second ending at `t` ends at `t + offset_s`); every second without a span. With
    `client_phase` (a MariaDB client's run on the guest's /proc/uptime clock) and lines that
    carry `uptime`, the seconds in that phase instead."""
    rows = json_lines(Path(path), lambda row: check_line(row, tenant))
    if client_phase is not None and rows and all("uptime" in r for r in rows):
        rows = [r for r in rows if window.inside(r["uptime"], r["dt"], *client_phase)]
        if not rows:
            raise problem(Path(path), f"no second inside the client's run {client_phase} "
                                      "(/proc/uptime)")
    elif span is not None:
        rows = [r for r in rows if window.inside(r["t"] + offset_s, r["dt"], *span)]
        if not rows:
            raise problem(Path(path), f"no second inside the measured window {span}")
    busy = [r["vcpu_busy"] for r in rows if r["vcpu_busy"] is not None]
    if not busy:
        raise problem(Path(path), "no interval with a vCPU tick: no busy fraction")
    return GuestReport(
        seconds=len(rows), vcpu_busy_mean=sum(busy) / len(busy),
        saturated_share=sum(b >= SATURATED for b in busy) / len(busy),
        disk_bytes=sum(r["disk_read_bytes"] + r["disk_write_bytes"] for r in rows),
        jbd2_bytes=sum(r["jbd2_write_bytes"] for r in rows),
        saturated_seconds=sum(b >= SATURATED for b in busy))
