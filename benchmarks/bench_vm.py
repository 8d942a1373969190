"""The VM arm's costs on this machine (a script, not a test; root, real QEMU guests).

    .venv/bin/python benchmarks/bench_vm.py [--duration 60] [--boots 3] [--size-mb 256]
                                            [--presets seqwrite-64k ...] [--pairs 1]
                                            [--timeline]

1. guest boot time: QEMU start to the guest helper's ready line, no disk (goal < 10 s, TCG);
2. per-run set-up + teardown of a two-tenant high-fsync VM run (after the runs of 3., so that
   the host's one-time device calibration is not counted), as the agent records them in
   host.json (goal: under 15 % of a 60 s run, 9 s), with the VM arm's own share of the set-up
   (start_s: boot + mkfs + mount; prepare_workloads_s: the workloads' preparation in the
   guests, beside which the guest reports start; report_start_s: what is left of the reports'
   start after it, and their go) and everything a run spends outside its measured seconds
   (total - workload);
3. (run first) fio alone, each base workload: in a guest (a one-tenant vm run) and bare on
   the host (no container, no cgroup: fio on the host's kernel), on the same device, the same
   one-partition layout and ext4, the same file size and duration; the ratio is the guest's
   throughput over the host's.
`--presets` with no name and `--boots 0` measure the set-up alone (then a first, unmeasured
two-tenant run measures the device's calibration); `--pairs N` repeats the two-tenant run;
`--timeline` prints each set-up line of its run.log with its time since the run's start.
Everything lives in a temporary state folder and is torn down; the script checks nothing is left.
The accelerator is the agent's own choice (KVM if a probe guest boots under it, else TCG).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from journalbench import runfolder
from journalbench.agent import cgroups, disk, run
from journalbench.agent.arms.base import Arm, Context
from journalbench.agent.arms.vm import image as guest_image
from journalbench.agent.arms.vm.arm import choose_accel, qemu_argv, wait_console
from journalbench.agent.registry import profile_for, workload_for
from journalbench.agent.system import kill_wait
from journalbench.control import hosts

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "journalbench"
BASE = ("seqwrite-64k", "seqread-64k", "randwrite-16k", "randread-16k")
RUN_S = 60  # the run length the set-up goal is measured against
SOLO = "solo"


def boot_once(folder: Path, accel: str) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    proc = subprocess.Popen(qemu_argv(accel, folder, "", "jb_path=workflow"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_console(proc, folder / "console.log", guest_image.READY, 60):
            raise SystemExit(f"guest did not boot (see {folder / 'console.log'})")
        return time.monotonic() - start
    finally:
        kill_wait([proc.pid])
        proc.wait()


def agent_run(host_file: Path, out: Path, spec: dict[str, Any]) -> dict[str, Any]:
    spec_file = out.parent / f"{out.name}.json"
    spec_file.write_text(json.dumps(spec))
    done = subprocess.run([str(CLI), "run", str(spec_file), "--host", str(host_file),
                           "--out", str(out)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"run {out.name} failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads((out / "host.json").read_text())


def fio_mib_s(path: Path) -> float:
    job = json.loads(path.read_text())["jobs"][0]
    return (job["read"]["bw"] + job["write"]["bw"]) / 1024


def tenant(name: str, weight: int, preset: str, size_mb: int) -> dict[str, Any]:
    return {"name": name, "weight": weight,
            "workload": {"tool": "fio", "preset": preset, "size_mb": size_mb}}


class BareHost(Arm):
    """Commands straight on the host, in the agent's own cgroup: fio without any container.
    Not an arm of the agent (not in its list); only the shell the workload runs through."""

    NAME = "bare-host"

    def __init__(self, context: Context, mount: Path) -> None:
        super().__init__(context)
        self.DATA_MOUNT = str(mount)

    def spawn(self, tenant: str, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, stdout=stdout, stderr=stderr)


def bare_fio(host: dict[str, Any], workload: dict[str, Any], duration_s: int,
             out: Path) -> float:
    """fio on the host's kernel, on the one-partition ext4 a one-tenant vm run gets (same
    device profile, BFQ settings and mount options); MiB/s."""
    out.mkdir(parents=True)
    root = disk.state_root(host)
    with run.host_lock(host):
        try:
            device = profile_for(host, {}, root).attach()
            disk.set_bfq(device, host["bfq"])
            volume = disk.make_partitions(device, 1)[0]
            disk.mkfs_ext4(volume, f"jb-{SOLO}")
            mount = root / "mnt" / SOLO
            disk.mount_ext4(volume, mount)
            shell = BareHost(Context(host, root, cgroups.detect(), out), mount).shell(SOLO)
            fio = workload_for(SOLO, workload, duration_s)
            fio.prepare(shell)
            for proc in fio.start(shell, out):
                code = proc.popen.wait(timeout=duration_s + 120)
                proc.close()
                proc.check(code)
        finally:
            run.teardown(host)
    return fio_mib_s(next(out.glob("fio-*.json")))


LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ (.*)$")


def timeline(run_log: Path) -> None:
    """The set-up's lines of a run.log, each with its seconds since the first line: where the
    set-up's time goes (a command is logged as it starts)."""
    first = None
    for line in run_log.read_text().splitlines():
        match = LOG_LINE.match(line)
        if not match:
            continue
        when = datetime.datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        first = when if first is None else first
        print(f"  {when - first:7.3f}  {match[2][:140]}")
        if "workloads start" in match[2]:
            return


def set_up_report(facts: dict[str, Any]) -> None:
    timing, layout = facts["timing"], facts["layout"]
    cost = timing["setup_s"] + timing["teardown_s"]
    outside = timing["total_s"] - timing["workload_s"]
    print(f"two-tenant VM run: set-up {timing['setup_s']:.2f} s + teardown "
          f"{timing['teardown_s']:.2f} s = {cost:.2f} s, {100 * cost / RUN_S:.1f} % of a "
          f"{RUN_S} s run (goal < 15 %); outside the measured seconds in all {outside:.2f} s "
          f"({100 * outside / RUN_S:.1f} %)")
    arm = layout.get("set_up_s", {})
    print("  of the set-up, the VM arm: " + ", ".join(f"{k} {v:.2f} s" for k, v in arm.items())
          + f" (sum {sum(arm.values()):.2f} s; the rest is the device, its calibration probe "
          "and host facts)")
    for name, guest in layout["guests"].items():
        report = guest["report"]
        print(f"  {name}: boot {guest['boot_s']:.2f} s, vCPU busy "
              f"{report['vcpu_busy_mean']:.2f}, saturated {report['seconds_saturated']}"
              f"/{report['seconds']} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=RUN_S)
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--presets", nargs="*", default=list(BASE), choices=BASE)
    parser.add_argument("--pairs", type=int, default=1, help="two-tenant runs to measure")
    parser.add_argument("--timeline", action="store_true",
                        help="print the two-tenant runs' set-up from their run.log")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_vm needs root (loop devices, cgroups, QEMU)")
    with tempfile.TemporaryDirectory(prefix="bench-vm-") as tmp:
        state = Path(tmp) / "state"
        host_file = Path(tmp) / "benchvm.yaml"
        host_file.write_text(f"name: benchvm\ntransport: local\nstate_dir: {state}\n"
                             "device: {kind: image, size_gb: 4}\nbfq: {strict_guarantees: 1}\n")
        host = hosts.load_host(str(host_file))
        accel, why = choose_accel(host, Path(tmp) / "probe")
        boots = [boot_once(Path(tmp) / f"boot{i}", accel) for i in range(args.boots)]
        print(f"accel: {accel} ({why})")
        if boots:
            print(f"guest boot: {', '.join(f'{b:.2f}' for b in boots)} s "
                  f"(best {min(boots):.2f} s, goal < 10 s)")

        if args.presets:
            print(f"fio alone, {args.duration} s, {args.size_mb} MiB file, under {accel}: "
                  "guest vs bare host")
        for preset in args.presets:
            solo = tenant(SOLO, 500, preset, args.size_mb)
            out = Path(tmp) / f"vm-{preset}"
            agent_run(host_file, out, {"arm": "vm", "duration_s": args.duration,
                                       "repetition": 1, "tenants": [solo]})
            guest = fio_mib_s(out / f"fio-{SOLO}.json")
            bare = bare_fio(host, solo["workload"], args.duration, Path(tmp) / f"host-{preset}")
            print(f"  {preset:14s} guest {guest:8.1f} MiB/s  host {bare:8.1f} MiB/s  "
                  f"guest/host {guest / bare:.3f}")
        # after the runs above: the first run of a host measures its device's calibration
        # reference once, which is no per-run cost
        pair = {"arm": "vm", "duration_s": args.duration, "repetition": 1,
                "tenants": [tenant("victim", 700, "high-fsync", args.size_mb),
                            tenant("neighbour", 300, "high-fsync", args.size_mb)]}
        if not args.presets:
            agent_run(host_file, Path(tmp) / "pair-calibrates", pair)
        for index in range(args.pairs):
            out = Path(tmp) / f"pair{index}"
            set_up_report(agent_run(host_file, out, pair))
            if args.timeline:
                timeline(out / runfolder.RUN_LOG)
        left = run.residue(host)
        if left:
            raise SystemExit(f"residue left: {left}")


if __name__ == "__main__":
    main()
