"""What one route to the agent costs on this machine (a script, not a test; needs root).

    .venv/bin/python benchmarks/bench_route.py [--runs 5] [--duration 3] [--size-mb MB]
                                               [--prep fallocate] [--python python3]

The same small run (shared-journal arm, two fio high-fsync tenants; their files prepared as
--prep says, campaigns' default by default, of --size-mb or the preset's own size) is done --runs
times each way, alternating: in-process (`journalbench.agent.run.execute`, the old route of the
local host) and through `run_remote` over the Local transport, as `journalbench dispatch` now
does for every host (build the bundle, probe python, upload, reap, run under the pidfile (the
agent tears the host down first, in the same start), atomic fetch with tar). A throw-away host
in a temporary state folder under /var/lib is used and removed afterwards; a first, unmeasured
run measures its calibration reference (as a campaign's first run on a host does).

Reported per route, in seconds (median of the runs): the wall time, the agent's own total
(host.json timing.total_s), and the overhead outside the agent (wall - total); for run_remote
also each step, and where its runs' time goes by phase (from run.log). The project's goal is
campaign set-up + teardown at most 5% of a 60 s run; the last lines relate the agent's set-up
+ teardown plus the route's overhead to that.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from throwaway import throwaway_host

from journalbench import runfolder
from journalbench.agent.run import execute
from journalbench.agent.workloads import fio
from journalbench.control import bundle, deploy, runremote

RUN_S = 60  # the run length the 5% goal is stated for
STEPS = ("deploy", "reap", "fetch_run")


def spec(duration: int, repetition: int, size_mb: int | None, prep: str) -> dict:
    tenant: dict = {"tool": "fio", "preset": "high-fsync", "prep": prep}
    if size_mb is not None:
        tenant["size_mb"] = size_mb
    return {
        "arm": "shared-journal",
        "duration_s": duration,
        "repetition": repetition,
        "campaign": "bench",
        "tenants": [
            {"name": "a", "weight": 700, "workload": tenant},
            {"name": "b", "weight": 300, "workload": tenant},
        ],
    }


def timed_steps(record: dict[str, list[float]]) -> None:
    """Wrap run_remote's steps (and the bundle build inside deploy) to time them."""

    def wrap(module: object, name: str) -> None:
        original = getattr(module, name)

        def step(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                record[name].append(time.perf_counter() - started)

        setattr(module, name, step)

    for name in STEPS:
        wrap(runremote, name)
    wrap(deploy, "build_bundle")


def one(route: Callable[[Path], None], folder: Path) -> dict[str, float]:
    started = time.perf_counter()
    route(folder)
    wall = time.perf_counter() - started
    timing = json.loads((folder / runfolder.HOST).read_text())["timing"]
    return {"wall": wall, "agent": timing["total_s"], "outside": wall - timing["total_s"],
            "setup": timing["setup_s"], "workload": timing["workload_s"],
            "teardown": timing["teardown_s"],
            **{f"phase {name}": value for name, value in phases(folder / runfolder.RUN_LOG)
               .items()}}


LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ (.*)$")
# what each logged step of a run belongs to, first match wins (commands are logged as they
# start, so a step lasts until the next line)
PHASES = (
    ("tracer attach", re.compile(r"device-time tracer to attach")),
    ("calibration", re.compile(r"calibrat|fsync-p|seq-probe|jb-calibrate|mnt/calibrate|wipefs")),
    ("file preparation", re.compile(r"--name=(layout|create)|prepar")),
    ("measured", re.compile(r"workloads start|: fio --name=(?!layout|create)|sampler|tracing/")),
    ("teardown", re.compile(r"umount|losetup -d|lxc-stop|lxc-ls|back to the root|teardown")),
    ("file systems", re.compile(r"mkfs|sfdisk|partx|\$ mount|dumpe2fs|tune2fs")),
    ("tenants", re.compile(r"lxc-|qemu|guest|tenant ")),
)


def phases(run_log: Path) -> dict[str, float]:
    """Seconds of a run's log per phase (PHASES; the rest is `other`): where set-up and
    teardown go."""
    stamps: list[tuple[float, str]] = []
    for line in run_log.read_text().splitlines():
        match = LOG_LINE.match(line)
        if match:
            when = datetime.datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            stamps.append((when, match[2]))
    spent: dict[str, float] = defaultdict(float)
    for (when, text), (after, _) in zip(stamps, stamps[1:], strict=False):
        phase = next((name for name, pattern in PHASES if pattern.search(text)), "other")
        spent[phase] += after - when
    return dict(spent)


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def report(results: dict[str, list[dict[str, float]]], steps: dict[str, list[float]],
           duration: int) -> None:
    print(f"{'route':<12}{'wall':>8}{'agent':>8}{'outside':>9}{'setup':>8}{'teardown':>9}")
    for route, rows in results.items():
        print(f"{route:<12}" + "".join(
            f"{median(rows, k):>{w}.2f}"
            for k, w in (("wall", 8), ("agent", 8), ("outside", 9), ("setup", 8),
                         ("teardown", 9))))
    print("run_remote steps (median s per run): " + ", ".join(
        f"{name} {statistics.median(times):.3f}" for name, times in steps.items()))
    added = median(results["run_remote"], "outside") - median(results["in-process"], "outside")
    rows = results["run_remote"]
    setup_down = median(rows, "setup") + median(rows, "teardown")
    print(f"added by the one route: {added:.2f} s per run = {100 * added / RUN_S:.1f}% of a "
          f"{RUN_S} s run")
    print(f"agent set-up + teardown {setup_down:.2f} s + route {added:.2f} s = "
          f"{100 * (setup_down + added) / RUN_S:.1f}% of a {RUN_S} s run (goal <= 5%)")
    names = sorted({key for row in rows for key in row if key.startswith("phase ")})
    print("where a run_remote run's time goes, by its run.log (median s): " + ", ".join(
        f"{name[6:]} {statistics.median(row.get(name, 0.0) for row in rows):.3f}"
        for name in names))
    print(f"measured phase beyond the {duration} s asked (fio's own start and end, the "
          f"sampler's start and stop): {median(rows, 'workload') - duration:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duration", type=int, default=3, help="seconds of workload per run")
    parser.add_argument("--size-mb", type=int, default=None,
                        help="each tenant's file (default: the preset's own)")
    parser.add_argument("--prep", choices=fio.PREPS, default=fio.DEFAULT_PREP,
                        help="file preparation (default: campaigns' own)")
    parser.add_argument("--python", default="python3", help="the host's python (host file python:)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_route: needs root (loop devices, cgroups, containers)", file=sys.stderr)
        return 2
    steps: dict[str, list[float]] = defaultdict(list)
    timed_steps(steps)
    results: dict[str, list[dict[str, float]]] = {"in-process": [], "run_remote": []}
    with throwaway_host("bench_route", f"python: {args.python}\n") as box:
        host, work = box.host, box.work
        routes = {
            "in-process": lambda out, s: execute(s, host, out),
            "run_remote": lambda out, s: runremote.run_remote(host, s, out),
        }
        bundle.build_bundle()  # a warm cache, as in a campaign after its first run
        # and a calibrated host: a fresh one measures its reference once, in its first run
        execute(spec(args.duration, 1, args.size_mb, args.prep), host, work / "warm-up")
        for repetition in range(1, args.runs + 1):
            order = list(routes) if repetition % 2 else list(routes)[::-1]
            for route in order:
                run_spec = spec(args.duration, repetition, args.size_mb, args.prep)
                folder = work / route / str(repetition)
                results[route].append(
                    one(lambda out, r=route, s=run_spec: routes[r](out, s), folder))
                print(f"{route} run {repetition}: " + ", ".join(
                    f"{k} {v:.2f}" for k, v in results[route][-1].items()), file=sys.stderr)
        report(results, steps, args.duration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
