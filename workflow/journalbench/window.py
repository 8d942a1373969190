"""The measurement window of a run: `warmup_s` of warm-up, then `duration_s` measured.

The warm-up is added in front of the measured seconds (fio's `ramp_time` semantics), so a run
still measures `duration_s` of steady state. The raw logs keep every second; the window is
applied where they are read: fio leaves the ramp out of its own figures, and tidy keeps only
the sampler's intervals (and fsync-trace seconds) that lie in the window. Times are seconds on
the sampler's clock (io-samples.jsonl's `t`), which starts just before the workloads.

Stdlib only: the agent and the parsers both use it.
"""

from __future__ import annotations

from typing import Any

# What a campaign runs before every measured phase when it names no warmup_s: enough for
# tenants started one after another (a guest's through its relay) to be running together, for
# each fio job to be past opening its file, and for the first, partial sampler interval
# to be over; short beside the shortest runs (10 s). See data/README.md.
DEFAULT_WARMUP_S = 2
# What a run spec without `warmup_s` means: the runs made before the field existed had none.
ABSENT_WARMUP_S = 0


def warmup_of(spec: dict[str, Any]) -> int:
    return int(spec.get("warmup_s", ABSENT_WARMUP_S))


def window(started_s: float, warmup_s: int, duration_s: int,
           clock_ns: int | None = None) -> dict[str, float | int | None]:
    """host.json's `window`: when the workloads had started and the measured seconds after
    their warm-up, on the sampler's clock, whose zero is `clock_ns` on CLOCK_MONOTONIC (the
    clock of the fsync tracer's t0_ns)."""
    start = started_s + warmup_s
    return {"workloads_started_s": round(started_s, 3), "warmup_s": warmup_s,
            "duration_s": duration_s, "start_s": round(start, 3),
            "end_s": round(start + duration_s, 3), "clock_ns": clock_ns}


def monotonic_ns(recorded: dict[str, Any]) -> tuple[int, int] | None:
    """A recorded window as CLOCK_MONOTONIC nanoseconds, or None without its clock."""
    clock = recorded.get("clock_ns")
    if clock is None:
        return None
    return (int(clock + recorded["start_s"] * 1e9), int(clock + recorded["end_s"] * 1e9))


def inside(t: float, dt: float, start: float, end: float) -> bool:
    """Whether the interval (t - dt, t] belongs to the window [start, end]: its midpoint lies
    in it. An interval straddling an edge goes to the side holding most of it, so whole
    1-second samples tile the window without a tolerance to tune."""
    middle = t - dt / 2
    return start <= middle <= end
