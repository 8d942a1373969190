"""What the emulated HDD costs on this machine (a script, not a test; needs root, nbdkit's
Python plugin and nbdfuse).

    .venv/bin/python benchmarks/bench_hdd.py [--profile hdd] [--duration 60] [--runs 3]
                                             [--writes 300]

1. A 64 KiB direct write, beyond the model: --writes random 64 KiB direct writes, one at a
   time, on the raw emulated disk. Their mean latency minus what the model charges such a
   write on average (cache off: a seek, half a turn, the transfer; cache on: the transfer over
   the interface) is the emulator's own cost; the same writes with the model's delays off show
   the bare path (loop, FUSE, nbdfuse, NBD, the Python plugin). With the emulator's CPU time
   per write.
2. A two-tenant high-fsync run (shared journal, 700/300, 256 MiB files) of --duration seconds,
   --runs times, through `journalbench run` as a campaign does it: the emulator's CPU over the
   measured phase as a share of one core (goal <= 10 %) and per request of the disk; the set-up
   by phase (calibration probe, file systems, file preparation, tenants, other) and the
   teardown, as shares of a 60 s run (goal: set-up <= 10 %). The first run of a fresh host also
   measures the profile's reference calibration (once per host and parameters, cached): it is
   shown on its own line and left out of the medians when there are later runs.
Everything lives in a temporary state folder and is torn down; the script checks nothing is left.
A quick check of the script itself: --runs 1 --duration 3 --writes 20.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_route import phases
from throwaway import throwaway_host

from journalbench import runfolder
from journalbench.agent import disk
from journalbench.agent.devices.hdd import Hdd
from journalbench.agent.devices.hdd_model import Params
from journalbench.agent.registry import PROFILES
from journalbench.agent.run import host_lock, teardown

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "journalbench"
RUN_S = 60  # the run length the goals are stated for
WRITE = 64 << 10
SETUP_PHASES = ("calibration", "file systems", "file preparation", "tenants", "other")


def modelled_write_s(model: Params) -> float:
    """What the model charges, on average, a 64 KiB write at a random offset on an idle disk:
    the rotational wait is uniform over a turn, so half a turn on average."""
    if model.write_cache:
        return WRITE / (model.interface_mb_s * 1e6)
    return model.seek_ms / 1000 + model.turn_s / 2 + WRITE / (model.transfer_mb_s * 1e6)


def random_writes(device: str, count: int) -> tuple[float, float, int]:
    """Mean and standard deviation (s) of the latency of `count` random 64 KiB direct writes,
    one at a time, and how many fio counted."""
    out = subprocess.run(
        ["fio", "--name=bench-hdd", f"--filename={device}", "--rw=randwrite", "--bs=64k",
         "--direct=1", "--ioengine=psync", "--size=1g", f"--number_ios={count}",
         "--randrepeat=0", "--norandommap", "--output-format=json"],
        check=True, capture_output=True, text=True, timeout=600).stdout
    lat = json.loads(out[out.index("{"):])["jobs"][0]["write"]["clat_ns"]
    return lat["mean"] / 1e9, lat["stddev"] / 1e9, int(lat["N"])


def write_overhead(host: dict[str, Any], profile_name: str, count: int) -> dict[str, float]:
    root = disk.state_root(host)
    profile = PROFILES[profile_name](host, root, dict(host.get("device_profiles", {})
                                                      .get(profile_name, {})))
    assert isinstance(profile, Hdd)
    with host_lock(host):
        try:
            device = profile.attach()
            cpu0 = profile.cpu_seconds() or 0.0
            mean, sd, n = random_writes(device.path, count)
            cpu1 = profile.cpu_seconds() or 0.0
            with profile.unmodelled():
                bare, bare_sd, bare_n = random_writes(device.path, count)
            modelled = modelled_write_s(profile.model)
        finally:
            teardown(host)
    return {"mean_ms": 1e3 * mean, "sem_ms": 1e3 * sd / max(n, 1) ** 0.5,
            "modelled_ms": 1e3 * modelled, "overhead_ms": 1e3 * (mean - modelled),
            "bare_ms": 1e3 * bare, "bare_sem_ms": 1e3 * bare_sd / max(bare_n, 1) ** 0.5,
            "cpu_ms_per_write": 1e3 * (cpu1 - cpu0) / max(n, 1)}


def pair_spec(profile: str, duration: int, repetition: int) -> dict[str, Any]:
    tenant = {"tool": "fio", "preset": "high-fsync"}
    return {"arm": "shared-journal", "duration_s": duration, "repetition": repetition,
            "campaign": "bench-hdd", "device": profile,
            "tenants": [{"name": "a", "weight": 700, "workload": tenant},
                        {"name": "b", "weight": 300, "workload": tenant}]}


def one_run(host_file: Path, out: Path, spec: dict[str, Any]) -> dict[str, float]:
    spec_file = out.parent / f"{out.name}.json"
    spec_file.write_text(json.dumps(spec))
    done = subprocess.run([str(CLI), "run", str(spec_file), "--host", str(host_file),
                           "--out", str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_hdd: the run failed: {done.stderr.strip().splitlines()[-1]}")
    facts = json.loads((out / runfolder.HOST).read_text())
    lines = [json.loads(line) for line in (out / runfolder.SAMPLES).read_text().splitlines()]
    requests = sum(line.get("requests", 0) for line in lines if line["kind"] == "device")
    timing, profile = facts["timing"], facts["device_profile"]
    cpu_share = profile["emulator_cpu_share"]
    spent = phases(out / runfolder.RUN_LOG)
    return {"emulator_cpu_share": cpu_share,
            "cpu_us_per_request": 1e6 * cpu_share * timing["workload_s"] / max(requests, 1),
            "requests_s": requests / timing["workload_s"],
            "setup_s": timing["setup_s"], "teardown_s": timing["teardown_s"],
            "reference_measured": float("calibrating device profile"
                                        in (out / runfolder.RUN_LOG).read_text()),
            **{f"{phase}_s": spent.get(phase, 0.0) for phase in SETUP_PHASES},
            "fsync_ms": facts["calibration"]["reference"]["high_fsync_ms"]}


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def report(overhead: dict[str, float], runs: list[dict[str, float]], profile: str) -> None:
    print(f"emulated disk `{profile}`")
    print("\n64 KiB random direct writes, one at a time (ms, mean +- standard error)")
    print(f"  measured {overhead['mean_ms']:.3f} +- {overhead['sem_ms']:.3f}, modelled "
          f"{overhead['modelled_ms']:.3f}: emulator's own cost {overhead['overhead_ms']:+.3f}")
    print(f"  model's delays off (the bare path): {overhead['bare_ms']:.3f} +- "
          f"{overhead['bare_sem_ms']:.3f}; emulator CPU {overhead['cpu_ms_per_write']:.3f} "
          "ms per write")
    first, later = runs[0], runs[1:] or runs[:1]
    print(f"\ntwo high-fsync tenants, shared journal ({len(runs)} run(s); medians of "
          f"{'the later' if runs[1:] else 'the one'})")
    print(f"  emulator CPU: {100 * median(later, 'emulator_cpu_share'):.1f}% of a core "
          f"(goal <= 10%), {median(later, 'cpu_us_per_request'):.0f} us per request at "
          f"{median(later, 'requests_s'):.0f} requests/s")
    print(f"  {'set-up phase':<22}{'s':>8}{'% of 60 s':>11}")
    for phase in SETUP_PHASES:
        value = median(later, f"{phase}_s")
        print(f"  {phase:<22}{value:>8.2f}{100 * value / RUN_S:>10.1f}%")
    setup, down = median(later, "setup_s"), median(later, "teardown_s")
    print(f"  {'set-up (host.json)':<22}{setup:>8.2f}{100 * setup / RUN_S:>10.1f}%  (goal <= 10%)")
    print(f"  {'teardown':<22}{down:>8.2f}{100 * down / RUN_S:>10.1f}%")
    if first["reference_measured"] and runs[1:]:
        print(f"  first run, reference calibration included: set-up {first['setup_s']:.2f} s "
              f"(once per host and parameters; high-fsync alone {first['fsync_ms']:.1f} ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="hdd", choices=[p for p in PROFILES if p != "native"])
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_hdd: needs root (loop devices, FUSE, cgroups)", file=sys.stderr)
        return 2
    with throwaway_host("bench_hdd", "bfq: {strict_guarantees: 1}\n") as box:
        overhead = write_overhead(box.host, args.profile, args.writes)
        runs = []
        for repetition in range(1, args.runs + 1):
            runs.append(one_run(box.file, box.work / f"run{repetition}",
                                pair_spec(args.profile, args.duration, repetition)))
            print(f"run {repetition}: " + ", ".join(f"{k} {v:.3f}" for k, v in runs[-1].items()),
                  file=sys.stderr)
        report(overhead, runs, args.profile)
    if box.left:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
