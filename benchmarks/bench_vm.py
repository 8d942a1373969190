"""The VM arm's costs on this machine (a script, not a test; root, real QEMU guests).

    .venv/bin/python benchmarks/bench_vm.py [--duration 10] [--boots 3]

1. guest boot time: QEMU start to the guest helper's ready line, no disk (goal < 10 s, TCG);
2. per-run set-up + teardown of a two-tenant VM run, as the agent records them in host.json
   (goal: under 15 % of a 60 s run, 9 s);
3. fio alone, each base workload, in a guest vs in a container on the host's kernel: the same
   partition layout, device and file size; the ratio is the guest's throughput over the host's.
Everything lives in a temporary state folder and is torn down; the script checks nothing is left.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from journalbench.agent import guest_image
from journalbench.agent.arms.vm import choose_accel, kill_wait, qemu_argv, wait_console

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "journalbench"
BASE = ("seqwrite-64k", "seqread-64k", "randwrite-16k", "randread-16k")


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


def run(host_file: Path, out: Path, spec: dict[str, Any]) -> dict[str, Any]:
    spec_file = out.parent / f"{out.name}.json"
    spec_file.write_text(json.dumps(spec))
    done = subprocess.run([str(CLI), "run", str(spec_file), "--host", str(host_file),
                           "--out", str(out)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"run {out.name} failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads((out / "host.json").read_text())


def fio_mib_s(out: Path, tenant: str) -> float:
    job = json.loads((out / f"fio-{tenant}.json").read_text())["jobs"][0]
    return (job["read"]["bw"] + job["write"]["bw"]) / 1024


def tenant(name: str, weight: int, preset: str, size_mb: int) -> dict[str, Any]:
    return {"name": name, "weight": weight,
            "workload": {"tool": "fio", "preset": preset, "size_mb": size_mb}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--size-mb", type=int, default=64)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_vm needs root (loop devices, cgroups, QEMU)")
    with tempfile.TemporaryDirectory(prefix="bench-vm-") as tmp:
        state = Path(tmp) / "state"
        host_file = Path(tmp) / "benchvm.yaml"
        host_file.write_text(f"name: benchvm\ntransport: local\nstate_dir: {state}\n"
                             "device: {kind: image, size_gb: 4}\nbfq: {strict_guarantees: 1}\n")
        accel, why = choose_accel({"name": "benchvm"}, Path(tmp) / "probe")
        boots = [boot_once(Path(tmp) / f"boot{i}", accel) for i in range(args.boots)]
        print(f"accel: {accel} ({why})")
        print(f"guest boot: {', '.join(f'{b:.2f}' for b in boots)} s "
              f"(best {min(boots):.2f} s, goal < 10 s)")

        facts = run(host_file, Path(tmp) / "pair", {
            "arm": "vm", "duration_s": args.duration, "repetition": 1,
            "tenants": [tenant("victim", 700, "high-fsync", args.size_mb),
                        tenant("neighbour", 300, "high-fsync", args.size_mb)]})
        timing = facts["timing"]
        cost = timing["setup_s"] + timing["teardown_s"]
        print(f"two-tenant VM run: setup {timing['setup_s']:.2f} s, teardown "
              f"{timing['teardown_s']:.2f} s: {100 * cost / 60:.1f} % of a 60 s run (goal < 15 %)")
        for name, guest in facts["layout"]["guests"].items():
            report = guest["report"]
            print(f"  {name}: boot {guest['boot_s']:.2f} s, vCPU busy "
                  f"{report['vcpu_busy_mean']:.2f}, saturated {report['seconds_saturated']}"
                  f"/{report['seconds']} s")

        print(f"fio alone, {args.duration} s, {args.size_mb} MiB file: guest vs host kernel")
        for preset in BASE:
            speeds = {}
            for arm in ("vm", "per-container-journal"):
                out = Path(tmp) / f"{arm}-{preset}"
                run(host_file, out, {"arm": arm, "duration_s": args.duration, "repetition": 1,
                                     "tenants": [tenant("solo", 500, preset, args.size_mb)]})
                speeds[arm] = fio_mib_s(out, "solo")
            ratio = speeds["vm"] / speeds["per-container-journal"]
            print(f"  {preset:14s} guest {speeds['vm']:8.1f} MiB/s  host "
                  f"{speeds['per-container-journal']:8.1f} MiB/s  guest/host {ratio:.3f}")
        left = subprocess.run([str(CLI), "teardown", "--host", str(host_file)],
                              capture_output=True, text=True)
        if left.returncode != 0:
            sys.exit(f"teardown reported residue: {left.stderr.strip()}")


if __name__ == "__main__":
    main()
