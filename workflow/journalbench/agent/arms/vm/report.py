"""Inside a VM guest: what the host cannot see, once a second, as JSON lines on stdout.

`python3 -m journalbench.agent.arms.vm.report <tenant>` prints per interval the deltas of the
guest's vCPU time (from /proc/stat), of its data disk vda (/sys/block/vda/stat) and of the bytes
its own jbd2 thread submitted (tracefs, as the host's sampler does for host journals), with the
guest's /proc/uptime at the reading (`uptime`: the clock a MariaDB tenant's counters bound its
client's run on).

Python starts slowly in a TCG guest, so the report is started early (while the workloads
prepare): it imports, finds the journal, makes its trace instance, says ARMED on stderr and
waits for SIGUSR1 (the host's go, just before measuring) to start tracing, take its first
reading and say STARTED. Its seconds run from the go, as if it had been started then.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

# only light modules: Python imports slowly in a TCG guest (the sampler, with logging,
# subprocess and dataclasses' inspect, cost the report ~0.5 s more)
from journalbench.agent.iocounters import device_counters
from journalbench.agent.journals import JournalTracer, find_jbd2

DISK = "vda"
ARMED = "guest report armed"
STARTED = "guest report started"
SATURATED = 0.95  # a vCPU this busy may bound the guest's I/O rate (TCG)


def cpu_times() -> tuple[int, int, int]:
    """(busy, iowait, total) jiffies of all CPUs, from the first line of /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    busy = user + nice + system + irq + softirq + steal
    return busy, iowait, busy + idle + iowait


def uptime() -> float:
    """/proc/uptime's first field: the clock a MariaDB tenant's counters bound its client's
    run on (agent/workloads/mariadb.py), read the same way."""
    return float(Path("/proc/uptime").read_text().split()[0])


def sample(tenant: str, jbd2_name: str, previous: dict, current: dict) -> dict:
    busy, iowait, total = (c - p for c, p in zip(current["cpu"], previous["cpu"], strict=True))
    disk = current["disk"] - previous["disk"]
    journal = current["jbd2"] - previous["jbd2"]
    return {
        "tenant": tenant, "t": round(current["t"] - current["t0"], 3),
        "dt": round(current["t"] - previous["t"], 3),
        "vcpu_busy": round(busy / total, 4) if total else None,
        "vcpu_iowait": round(iowait / total, 4) if total else None,
        "disk": DISK, "disk_read_bytes": disk.read_bytes, "disk_write_bytes": disk.write_bytes,
        "disk_read_ios": disk.read_ios, "disk_write_ios": disk.write_ios,
        "jbd2": jbd2_name, "jbd2_write_bytes": journal.write_bytes,
        "jbd2_write_ios": journal.write_ios, "uptime": current["uptime"],
    }


def main(tenant: str, interval: float = 1.0) -> None:
    jbd2 = find_jbd2(f"/dev/{DISK}", tenant)
    tracer = JournalTracer("guest-report", [jbd2])
    # blocked before the tracer's thread starts (it inherits the mask), so that only this
    # thread receives them: by sigwait until the go, then SIGTERM by its handler
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM})
    tracer.prepare()
    print(ARMED, file=sys.stderr, flush=True)
    if signal.sigwait({signal.SIGUSR1, signal.SIGTERM}) == signal.SIGTERM:
        tracer.stop()  # stopped before the go: nothing was measured
        return
    os.setpriority(os.PRIO_PROCESS, 0, 0)  # started niced beside the workloads' preparation
    # the tracer traces from the go: parsing the journal's trace while the workloads prepare
    # would take the guest's vCPU from them
    tracer.start()
    stopping = threading.Event()
    # SIGTERM ends the report with a last, shorter interval, so a short run still has a row.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopping.set())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    t0 = time.monotonic()

    def read_all() -> dict:
        return {"t0": t0, "t": time.monotonic(), "uptime": uptime(), "cpu": cpu_times(),
                "disk": device_counters(DISK), "jbd2": tracer.snapshot(jbd2)}

    previous = read_all()
    print(STARTED, file=sys.stderr, flush=True)
    next_tick = t0 + interval
    while not stopping.is_set():
        stopping.wait(max(0.0, next_tick - time.monotonic()))
        next_tick += interval
        current = read_all()
        print(json.dumps(sample(tenant, jbd2.name, previous, current)), flush=True)
        previous = current
    tracer.stop()


if __name__ == "__main__":
    main(sys.argv[1])
