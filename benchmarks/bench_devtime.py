"""What tracing requests and device time (agent/devtime.bt) costs on this machine (a script,
not a test; root).

    .venv/bin/python benchmarks/bench_devtime.py [--seconds 10] [--rounds 3]

A fast no-fsync writer (fio, 64 KiB direct sequential writes, one job: the `no-fsync` preset's
job) on ext4 on a loop device over an image in a temporary folder, --seconds at a time, rounds
alternating without and with the tracer attached. Reported (median over rounds): the writer's
MB/s and requests/s each way, the probe firings per second and their kernel time (from the BPF
programs' own counters, kernel.bpf_stats_enabled on for the measurement), and bpftrace's own CPU
(printing its totals every 50 ms), both as a share of one core. Everything is removed after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from journalbench.agent.sampler import DeviceTimeTracer

IMAGE_MB = 2048
STATS = Path("/proc/sys/kernel/bpf_stats_enabled")


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def fio(directory: Path, seconds: int) -> dict[str, float]:
    out = sh("fio", "--name=nofsync", f"--filename={directory / 'fio.dat'}", "--rw=write",
             "--bs=64k", "--size=1g", "--direct=1", "--ioengine=psync", "--time_based",
             f"--runtime={seconds}", "--output-format=json")
    job = json.loads(out)["jobs"][0]["write"]
    return {"mb_s": job["bw_bytes"] / 1e6, "iops": job["iops"]}


def prog_stats(pid: int) -> tuple[int, int]:
    """(run_cnt, run_time_ns) summed over the BPF programs a process holds."""
    count = spent = 0
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            fields = dict(line.split(":\t", 1) for line in info.read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue
        if "run_cnt" in fields:
            count += int(fields["run_cnt"])
            spent += int(fields["run_time_ns"])
    return count, spent


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def traced(root: Path, devnum: str, mount: Path, seconds: int) -> dict[str, float]:
    tracer = DeviceTimeTracer(root, devnum)
    tracer.launch()
    try:
        tracer.wait_ready()
        assert tracer.proc is not None
        pid = tracer.proc.pid
        count0, spent0 = prog_stats(pid)
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        result = fio(mount, seconds)
        elapsed = time.monotonic() - t0
        count1, spent1 = prog_stats(pid)
        result.update(events_s=(count1 - count0) / elapsed,
                      kernel_share=(spent1 - spent0) / 1e9 / elapsed,
                      bpftrace_share=(cpu_seconds(pid) - cpu0) / elapsed)
        return result
    finally:
        tracer.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_devtime: needs root (loop device, bpftrace)", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="journalbench-devtime-", dir="/var/tmp"))
    image, mount = root / "disk.img", root / "mnt"
    loop = None
    stats_before = STATS.read_text().strip()
    try:
        with image.open("wb") as handle:
            handle.truncate(IMAGE_MB << 20)
        loop = sh("losetup", "--direct-io=on", "-f", "--show", str(image)).strip()
        name = Path(loop).name
        Path(f"/sys/block/{name}/queue/scheduler").write_text("bfq\n")
        sh("mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop)
        mount.mkdir()
        sh("mount", loop, str(mount))
        devnum = Path(f"/sys/block/{name}/dev").read_text().strip()
        fio(mount, 2)  # lay the file out once
        STATS.write_text("1\n")
        plain, with_tracer = [], []
        for _ in range(args.rounds):
            plain.append(fio(mount, args.seconds))
            with_tracer.append(traced(root, devnum, mount, args.seconds))
        def med(rows: list[dict[str, float]], key: str) -> float:
            return statistics.median(row[key] for row in rows)
        print(f"no-fsync writer on {loop}, {args.rounds} x {args.seconds} s each way (median)")
        print(f"{'':<16}{'MB/s':>9}{'req/s':>9}")
        for label, rows in (("untraced", plain), ("traced", with_tracer)):
            print(f"{label:<16}{med(rows, 'mb_s'):>9.1f}{med(rows, 'iops'):>9.0f}")
        print(f"throughput traced / untraced: {med(with_tracer, 'mb_s') / med(plain, 'mb_s'):.3f}")
        print(f"probe firings: {med(with_tracer, 'events_s'):.0f}/s, kernel time "
              f"{100 * med(with_tracer, 'kernel_share'):.2f}% of a core "
              f"({1e9 * med(with_tracer, 'kernel_share') / med(with_tracer, 'events_s'):.0f} "
              "ns per firing)")
        print(f"bpftrace process: {100 * med(with_tracer, 'bpftrace_share'):.2f}% of a core")
    finally:
        STATS.write_text(f"{stats_before}\n")
        if mount.is_dir():
            subprocess.run(["umount", str(mount)], capture_output=True)
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
