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
QoS's min, the QoS is set for a moment with the same bounds and latency targets every request
misses (p99 of SETTLE_LAT_US; iocost's period is then its shortest, 1 ms), and one direct 4 KiB
random reader (depth SETTLE_DEPTH) in a scratch group under the host's cgroup parent keeps the
device busy: the group is active (iocost's timer runs only while a group is), each period
misses its targets or holds the group back, the busy level is never zero, and the kernel's own
clamp raises the vrate 4% a period up to min. Then the reader stops, the group goes, and the
run's QoS is written again. A vrate still outside the bounds after SETTLE_S fails the run in
one line. What the run started from is recorded (`vrate_before_pct`, `vrate_settle_s`).

Measured on the nested host (2026-11-29, native disk, a vrate first lowered to ~1.2%): in a
lab this drive reached 100% in 1.9 s (targets of 100 us or 2 ms, depth 1 or 32) and the same
reader under the run's own QoS (percentiles 0, 50 ms) in 12.7 s; a reader in the root group
moved nothing in 66 s (the root group is never throttled or active: no timer). In the nested
test's run (after iocost was off for the procedure's calibration and on again) this drive took
3.09% -> 100% 66 s, the run's own QoS 2.9% -> 98.7% in 66 s: why the lab was faster is not
known. So it is slow where it is needed at all (a fixed-rate run after a knee run on one boot;
no shipped run needed it), and its seconds are in host.json.

The reader runs as threads of one fio process (`--thread`): fio forks each job into a session of
its own, so killing fio's main process, as the reader's end does, left the job reading to the end
of its runtime and the run waiting for it (measured 2026-11-30 in the nested test: the vrate
5.13% -> 100% in 1.5 s, then 154 s more before the run's QoS was written again).
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from journalbench.agent import disk
from journalbench.agent.cgroups import Backend
from journalbench.agent.iocounters import COST_VRATE, parse_cost
from journalbench.agent.system import log, read
from journalbench.errors import AgentError

SETTLE_S = 150.0  # at most (66 s measured once: above)
SETTLE_LAT_US = 100  # every request waits longer on a disk
SETTLE_PCT = 99
SETTLE_DEPTH = 8
GROUP = "settle.vrate"  # a dot: never a tenant's name (cgroups.monitor_cgroup)
POLL_S = 0.2
TOLERANCE_PCT = 0.05  # io.stat prints the vrate to two decimals


def current(backend: Backend, devnum: str) -> float | None:
    """The device's vrate in percent (the root group's io.stat), None before its first I/O."""
    return parse_cost(read(backend.root / "io.stat"), devnum).get(COST_VRATE)


def within(vrate: float | None, low: float, high: float) -> bool:
    return vrate is None or low - TOLERANCE_PCT <= vrate <= high + TOLERANCE_PCT


def settling_qos(qos: dict[str, int]) -> dict[str, int]:
    """The run's QoS with latency targets every request misses (its bounds kept)."""
    return {**qos, "rpct": SETTLE_PCT, "rlat": SETTLE_LAT_US, "wpct": SETTLE_PCT,
            "wlat": SETTLE_LAT_US}


def reader(device: disk.Device, procs: Path) -> list[str]:
    # --thread: killing fio's process ends the reader (a forked job would outlive it)
    fio = ["fio", "--name=settle", "--thread", f"--filename={device.path}", "--readonly",
           "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=libaio",
           f"--iodepth={SETTLE_DEPTH}", "--time_based", f"--runtime={int(SETTLE_S) + 5}",
           "--output=/dev/null"]
    return ["sh", "-c", f"echo $$ > {shlex.quote(str(procs))} && exec {shlex.join(fio)}"]


def settle(backend: Backend, parent: str, device: disk.Device, qos: dict[str, int],
           write_qos: Callable[[dict[str, int]], None]) -> dict[str, float]:
    """Bring the device's vrate into the QoS's [min, max] percent (the QoS set already:
    `write_qos` sets one) with a reader in a scratch group under `parent` (a cgroup path
    relative to the backend's root); what it was and how long it took."""
    low, high = float(qos["min"]), float(qos["max"])
    before = current(backend, device.devnum)
    if within(before, low, high):
        return {"vrate_before_pct": before if before is not None else -1.0,
                "vrate_settle_s": 0.0}
    if before is not None and before > high:
        raise AgentError(f"{device.path}: iocost's vrate stands at {before}%, above the QoS's "
                         f"max {high}%; the kernel lowers it only while the device misses its "
                         "latency targets: boot the host anew")
    started = time.monotonic()
    rel = f"{parent}/{GROUP}"
    backend.create(rel)
    write_qos(settling_qos(qos))
    proc = subprocess.Popen(reader(device, backend.path(rel) / "cgroup.procs"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    now = before
    try:
        while time.monotonic() - started < SETTLE_S and proc.poll() is None:
            time.sleep(POLL_S)
            now = current(backend, device.devnum)
            if within(now, low, high):
                break
        reached = time.monotonic() - started
    finally:
        proc.kill()
        _, err = proc.communicate()
        write_qos(qos)
        for _ in range(100):  # the reader's exit takes a moment to leave the group
            try:
                backend.path(rel).rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
    if not within(now, low, high):
        why = f" (fio: {err.strip().splitlines()[-1]})" if err and err.strip() else ""
        raise AgentError(f"{device.path}: iocost's vrate stood at {before}% and reached {now}% "
                         f"in {reached:.0f} s, short of the QoS's {low}-{high}%{why}")
    log.info("iocost on %s: vrate %s%% -> %s%% in %.1f s before the run", device.path, before,
             now, reached)
    return {"vrate_before_pct": float(before if before is not None else -1.0),
            "vrate_settle_s": round(reached, 1)}
