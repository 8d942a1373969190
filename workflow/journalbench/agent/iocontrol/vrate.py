"""A run's vrate starts within its QoS's bounds.

Why. iocost's vrate (the share of the model the device is taken to deliver) is the device's,
not the QoS's: writing a new `io.cost.qos` moves its bounds but not the vrate itself, and the
kernel brings a vrate outside new bounds back only gradually (4% a period) and only in periods
where its busy level is not zero (block/blk-iocost.c, ioc_adjust_base_vrate: `if
(!ioc->busy_level || ...) return;` before the clamp; ioc_refresh_params resets the rate only
when the device's automatic parameter set changes). A run under the knee procedure may leave the
device at a few percent; a run of a fixed-rate procedure (interleaved.py, min=max=100) right
after it on the same boot would start there and stay there while nobody waits for budget
(measured: 5.7-17.6% in every second of such a run).

What. Before the run's window, with the run's QoS set: if the device's vrate lies below the
QoS's min, one direct 4 KiB random reader in a scratch group under the host's cgroup parent
outruns its budget (a group waiting for budget is a shortage; with the latency targets met the
busy level falls below zero) until the kernel's own clamp has brought the vrate up to min; then
the reader stops and the group goes. A vrate still outside the bounds after SETTLE_S fails the
run in one line. What the run started from is recorded (`vrate_before_pct`, `vrate_settle_s`).
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from journalbench.agent import cgroups, disk
from journalbench.agent.cgroups import Backend
from journalbench.agent.iocounters import COST_VRATE, parse_cost
from journalbench.agent.system import log, read
from journalbench.errors import AgentError

SETTLE_S = 60.0  # at most: from 1% to 100% at 4% a 100 ms period is ~12 s
POLL_S = 0.2
TOLERANCE_PCT = 0.05  # io.stat prints the vrate to two decimals
GROUP = "settle.vrate"  # a dot: never a tenant's name (cgroups.monitor_cgroup)


def current(backend: Backend, devnum: str) -> float | None:
    """The device's vrate in percent (the root group's io.stat), None before its first I/O."""
    return parse_cost(read(backend.root / "io.stat"), devnum).get(COST_VRATE)


def within(vrate: float | None, low: float, high: float) -> bool:
    return vrate is None or low - TOLERANCE_PCT <= vrate <= high + TOLERANCE_PCT


def reader(device: disk.Device, procs: Path) -> list[str]:
    fio = ["fio", "--name=settle", f"--filename={device.path}", "--readonly", "--rw=randread",
           "--bs=4k", "--direct=1", "--ioengine=psync", "--time_based",
           f"--runtime={int(SETTLE_S) + 5}", "--output=/dev/null"]
    return ["sh", "-c", f"echo $$ > {shlex.quote(str(procs))} && exec {shlex.join(fio)}"]


def settle(backend: Backend, host: str, device: disk.Device, low: float,
           high: float) -> dict[str, float]:
    """Bring the device's vrate into [low, high] percent; what it was and how long it took."""
    before = current(backend, device.devnum)
    if within(before, low, high):
        return {"vrate_before_pct": before if before is not None else -1.0,
                "vrate_settle_s": 0.0}
    if before is not None and before > high:
        raise AgentError(f"{device.path}: iocost's vrate stands at {before}%, above the QoS's "
                         f"max {high}%; the kernel lowers it only while the device misses its "
                         "latency targets: boot the host anew")
    rel = f"{cgroups.host_parent(host)}/{GROUP}"
    backend.create(rel)
    started = time.monotonic()
    proc = subprocess.Popen(reader(device, backend.path(rel) / "cgroup.procs"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    now = before
    try:
        while time.monotonic() - started < SETTLE_S and proc.poll() is None:
            time.sleep(POLL_S)
            now = current(backend, device.devnum)
            if within(now, low, high):
                break
    finally:
        proc.kill()
        _, err = proc.communicate()
        for _ in range(50):
            try:
                backend.path(rel).rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
    took = time.monotonic() - started
    if not within(now, low, high):
        why = f" (fio: {err.strip().splitlines()[-1]})" if err and err.strip() else ""
        raise AgentError(f"{device.path}: iocost's vrate stood at {before}% and reached {now}% "
                         f"in {took:.0f} s, short of the QoS's {low}-{high}%{why}")
    log.info("iocost on %s: vrate %s%% -> %s%% in %.1f s before the run", device.path, before,
             now, took)
    return {"vrate_before_pct": float(before if before is not None else -1.0),
            "vrate_settle_s": round(took, 1)}
