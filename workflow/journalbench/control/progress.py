"""Where a campaign stands: how long its missing runs will take, from the lengths of its runs
and the set-up and teardown that finished runs of the same kind took."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from journalbench import runfolder, window
from journalbench.plan.campaign import PlannedRun


def run_class(spec: dict[str, Any]) -> tuple[Any, ...]:
    """What a run's set-up and teardown cost depends on: its arm, its device and what its
    tenants run (a VM's Redis loads its records through a tunnel; a buffered writer's dirty
    file is synced at the end)."""
    work = sorted((t["workload"]["tool"], t["workload"].get("preset", "")) for t in spec["tenants"])
    return (spec["arm"], spec.get("device"), tuple(work))


Overheads = dict[tuple[Any, ...] | None, list[float]]  # run class (None: every run) -> seconds


def overheads(folders: list[Path]) -> Overheads:
    """Seconds finished runs took beyond their warm-up and measured seconds (set-up, teardown,
    the workloads' own start and stop), by run class (None: every run)."""
    found: Overheads = {None: []}
    for folder in folders:
        try:
            timing = json.loads((folder / runfolder.HOST).read_text())["timing"]
            total = float(timing["total_s"])
            seconds = total - float(timing["workload_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        try:
            spec = json.loads((folder / runfolder.SPEC).read_text())
            key = run_class(spec)
            seconds = total - window.warmup_of(spec) - float(spec["duration_s"])
        except (OSError, ValueError, KeyError, TypeError):
            key = None
        found[None].append(seconds)
        if key is not None:
            found.setdefault(key, []).append(seconds)
    return found


def eta_seconds(runs_left: list[PlannedRun], done_folders: list[Path],
                other_folders: list[Path] = ()) -> float:
    """Remaining time from the run lengths plus the overhead finished runs of the same class
    had: this campaign's, else other campaigns' on the same host (code may have changed
    since), else the mean of this campaign's runs, of the others', or 10 s."""
    return estimate(runs_left, [overheads(done_folders), overheads(list(other_folders))])


def estimate(runs: list[PlannedRun], sources: list[Overheads]) -> float:
    """eta_seconds from overheads already read, `sources` in the order they are asked (a
    caller estimating many sets of runs reads each folder once)."""
    means = [sum(found[None]) / len(found[None]) for found in sources if found[None]]
    total = 0.0
    for run in runs:
        key = run_class(run.spec)
        same = next((found[key] for found in sources if found.get(key)), None)
        overhead = sum(same) / len(same) if same else (means[0] if means else 10.0)
        total += window.warmup_of(run.spec) + run.spec["duration_s"] + overhead
    return total
