"""How busy each CPU of the host was, second by second, during the measured phase.

On a nested host (a QEMU guest under TCG) the host's own CPUs are vCPUs, and a saturated vCPU
can bound the tenants' I/O rate, as it can a VM tenant's (agent/arms/vm/report.py): host.json's
`cpu_during_run` says so with the same threshold and the same rule (saturated in at least half
of the seconds). On any other host it records how much CPU the run left idle.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from journalbench.agent.arms.vm.arm import SATURATED_SHARE
from journalbench.agent.arms.vm.report import SATURATED

Ticks = dict[str, tuple[int, int]]  # cpu name -> (busy, total) jiffies


def parse_stat(text: str) -> Ticks:
    """(busy, total) jiffies of every `cpuN` line of /proc/stat (iowait counts as idle)."""
    found: Ticks = {}
    for line in text.splitlines():
        name, *values = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        user, nice, system, idle, iowait, irq, softirq, steal = ([int(v) for v in values]
                                                                 + [0] * 8)[:8]
        busy = user + nice + system + irq + softirq + steal
        found[name] = (busy, busy + idle + iowait)
    return found


def busy_between(before: Ticks, after: Ticks) -> dict[str, float]:
    """Each CPU's busy share between two reads (a CPU with no tick between them: 0)."""
    shares = {}
    for name, (busy, total) in after.items():
        busy0, total0 = before.get(name, (busy, total))
        shares[name] = (busy - busy0) / (total - total0) if total > total0 else 0.0
    return shares


def summarize(seconds: list[dict[str, float]]) -> dict[str, Any]:
    """Per CPU: mean busy share, seconds at or above SATURATED, saturated (in at least
    SATURATED_SHARE of the seconds); `saturated`: any CPU was."""
    cpus: dict[str, Any] = {}
    for name in sorted({n for second in seconds for n in second},
                       key=lambda n: int(n[3:]) if n[3:].isdigit() else n):
        values = [second[name] for second in seconds if name in second]
        hot = sum(1 for v in values if v >= SATURATED)
        cpus[name] = {"busy_mean": round(sum(values) / len(values), 4),
                      "seconds_saturated": hot,
                      "saturated": bool(values) and hot >= SATURATED_SHARE * len(values)}
    return {"seconds": len(seconds), "saturated_at": SATURATED, "cpus": cpus,
            "saturated": any(cpu["saturated"] for cpu in cpus.values())}


def read_ticks() -> Ticks:
    return parse_stat(Path("/proc/stat").read_text())


class CpuSampler:
    """Reads /proc/stat once a second in a thread, from `start` to `stop`."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.seconds: list[dict[str, float]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="cpu-sampler", daemon=True)

    def start(self) -> None:
        self.previous = read_ticks()
        self.thread.start()

    def loop(self) -> None:
        next_tick = time.monotonic() + self.interval
        while not self.stopping.wait(max(0.0, next_tick - time.monotonic())):
            current = read_ticks()
            self.seconds.append(busy_between(self.previous, current))
            self.previous = current
            next_tick += self.interval

    def stop(self) -> dict[str, Any]:
        self.stopping.set()
        if self.thread.ident is not None:
            self.thread.join(timeout=5)
        return summarize(self.seconds)
