"""How far a tenant's cgroup counter and its journal's may disagree before a run is called
inconsistent. A tenant's own I/O is its cgroup's minus that of the jbd2 threads sitting in
its cgroup (journal-accounted runs), and the two are counted by different counters (the
cgroup's, and tracefs or devtime.bt for the jbd2 thread) at different points of a bio's way
and read at different instants of each sample. So a tenant whose cgroup did little but its
journal's commits can come out slightly below zero. The sampler reads every counter once per
interval (its lines' `dt`, 1 s), so no bio can fall into one counter's window and not the
other's by more than one interval: the two sums disagree, for sampling alone, by at most what
the device moves in one interval, its busiest (the device line's highest rate times the
interval). Within that the run is kept, the tenant's own amount taken as 0 and the
disagreement noted (the runs table's `counter_note`); beyond it the run is unusable
(data/SCHEMA.md)."""

from __future__ import annotations

import statistics
from pathlib import Path

from journalbench.formats import problem


def busiest(device: list[tuple[float, float]]) -> tuple[float, float]:
    """(the most the device line moved of a currency in one sampling interval: its highest rate
    times the interval, the interval in s), from the device lines' (amount, seconds) of those
    of some length (currencies.summed); (0, 0) without any."""
    if not device:
        return 0.0, 0.0
    interval = statistics.median(dt for _, dt in device)
    return max(amount / dt for amount, dt in device) * interval, interval


def settle(path: Path, own: dict[str, int], what: str, tolerance: tuple[float, float],
           unit: str = "") -> dict[str, str]:
    """Each tenant's own amount below 0 (`own` is changed): within `tolerance` (busiest),
    taken as 0 and noted (tenant -> note); beyond it, ParseError naming the file."""
    notes = {}
    most, interval = tolerance
    for tenant, amount in own.items():
        if amount >= 0:
            continue
        said = (f"tenant {tenant!r}: jbd2 {what} in its cgroup exceed the cgroup's own by "
                f"{-amount:,}{unit}")
        bound = (f"the {most:,.0f}{unit} the device moved in its busiest {interval:g} s "
                 "sampling interval")
        if -amount > most:
            raise problem(path, f"{said}, more than {bound} (the most two counters read an "
                                "interval apart can disagree by): inconsistent samples")
        notes[tenant] = f"{said}, within {bound}: taken as 0"
        own[tenant] = 0
    return notes
