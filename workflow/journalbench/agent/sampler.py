"""1 Hz disk I/O samples per tenant cgroup, per jbd2 thread and for the whole device.

Tenant bytes come from the cgroup controller's counters. jbd2 bytes come from tracefs
`block:block_bio_queue` events in a private trace instance, filtered in the kernel to the jbd2
pids, so tracing costs a few events per journal commit and nothing for tenant I/O.
"""

from __future__ import annotations

import json
import os
import re
import select
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from journalbench.agent.cgroups import Backend, IoCounters
from journalbench.agent.system import log, mounts, read, sh, write
from journalbench.errors import AgentError

TRACEFS = Path("/sys/kernel/tracing")
EVENT = "events/block/block_bio_queue"
# e.g. "jbd2/loop0p1-8-812 [000] ..... 95.1: block_bio_queue: 7,0 WS 2048 + 8 [jbd2/loop0p1-8]"
TRACE_LINE = re.compile(
    r"block_bio_queue: \S+ (?P<rwbs>\S+) \d+ \+ (?P<sectors>\d+) \[(?P<comm>[^\]]*)\]"
)


@dataclass(frozen=True)
class Jbd2:
    name: str  # thread name, e.g. jbd2/loop0p1-8
    pid: int
    tenant: str | None  # whose volume it journals; None for a shared journal


def ensure_tracefs() -> bool:
    """Mount tracefs if needed; True when we mounted it (and so must unmount it)."""
    if (TRACEFS / "instances").is_dir():
        return False
    sh("mount", "-t", "tracefs", "nodev", str(TRACEFS))
    if not (TRACEFS / "instances").is_dir():
        raise AgentError(f"tracefs at {TRACEFS} has no instances directory")
    return True


def trace_instance(host: str) -> Path:
    return TRACEFS / "instances" / f"journalbench-{host}"


def remove_trace_instance(host: str) -> None:
    instance = trace_instance(host)
    if instance.is_dir():
        write(instance / EVENT / "enable", 0)
        instance.rmdir()


def tracefs_mounted() -> bool:
    return any(fstype == "tracefs" and Path(t) == TRACEFS for _, t, fstype, _ in mounts())


def device_counters(device_name: str) -> IoCounters:
    fields = read(Path("/sys/class/block") / device_name / "stat").split()
    return IoCounters(int(fields[2]) * 512, int(fields[6]) * 512, int(fields[0]), int(fields[4]))


class JournalTracer:
    """Counts bytes submitted by each jbd2 thread, read from a private trace instance."""

    def __init__(self, host: str, threads: list[Jbd2]) -> None:
        self.instance = trace_instance(host)
        self.threads = threads
        self.totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.reader: threading.Thread | None = None

    def start(self) -> None:
        if not self.threads:
            return
        self.instance.mkdir(exist_ok=True)
        write(self.instance / "tracing_on", 0)
        write(self.instance / "trace", "")
        write(self.instance / "buffer_size_kb", 1024)
        pids = " || ".join(f"common_pid == {t.pid}" for t in self.threads)
        write(self.instance / EVENT / "filter", pids)
        write(self.instance / EVENT / "enable", 1)
        write(self.instance / "tracing_on", 1)
        self.reader = threading.Thread(target=self.read_pipe, name="jbd2-trace", daemon=True)
        self.reader.start()

    def read_pipe(self) -> None:
        fd = os.open(self.instance / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        pending = b""
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 0.1)
                chunk = b""
                if ready:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        chunk = b""
                if not chunk and self.stopping.is_set():
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                self.count(lines)
        finally:
            os.close(fd)

    def count(self, lines: list[bytes]) -> None:
        with self.lock:
            for raw in lines:
                match = TRACE_LINE.search(raw.decode(errors="replace"))
                if not match:
                    continue
                size = int(match["sectors"]) * 512
                entry = self.totals[match["comm"]]
                if "W" in match["rwbs"]:
                    entry[1] += size
                    entry[3] += 1
                elif "R" in match["rwbs"]:
                    entry[0] += size
                    entry[2] += 1

    def snapshot(self, thread: Jbd2) -> IoCounters:
        with self.lock:
            return IoCounters(*self.totals[thread.name[:15]])

    def stop(self) -> None:
        if self.reader is None:
            return
        write(self.instance / "tracing_on", 0)
        self.stopping.set()
        self.reader.join(timeout=5)
        write(self.instance / EVENT / "enable", 0)
        self.instance.rmdir()
        self.reader = None


class Sampler:
    """Writes io-samples.jsonl: deltas per interval for every tenant, jbd2 thread and device."""

    def __init__(self, out: Path, backend: Backend, device_name: str, devnum: str,
                 tenants: dict[str, str], weights: dict[str, int], jbd2: list[Jbd2],
                 host: str, interval: float = 1.0) -> None:
        self.out = out
        self.backend = backend
        self.device_name = device_name
        self.devnum = devnum
        self.tenants = tenants
        self.weights = weights
        self.jbd2 = jbd2
        self.interval = interval
        self.tracer = JournalTracer(host, jbd2)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="sampler", daemon=True)
        self.error: BaseException | None = None

    def read_all(self) -> dict[tuple[str, str], IoCounters]:
        values = {("tenant", name): self.backend.counters(rel, self.devnum)
                  for name, rel in self.tenants.items()}
        for thread in self.jbd2:
            values[("jbd2", thread.name)] = self.tracer.snapshot(thread)
        values[("device", self.device_name)] = device_counters(self.device_name)
        return values

    def start(self) -> None:
        self.tracer.start()
        self.start_time = time.monotonic()
        self.previous = self.read_all()
        self.previous_time = self.start_time
        self.thread.start()

    def loop(self) -> None:
        try:
            with self.out.open("w") as handle:
                next_tick = self.start_time + self.interval
                while not self.stopping.wait(max(0.0, next_tick - time.monotonic())):
                    self.sample(handle)
                    next_tick += self.interval
                self.sample(handle)
        except BaseException as error:  # reported by stop(), never lost in the thread
            self.error = error

    def sample(self, handle: IO[str]) -> None:
        now = time.monotonic()
        current = self.read_all()
        base = {"t": round(now - self.start_time, 3), "dt": round(now - self.previous_time, 3)}
        for (kind, source), value in current.items():
            delta = value - self.previous[(kind, source)]
            row = {**base, "kind": kind, "source": source, **delta.__dict__}
            row.update(self.extra(kind, source))
            handle.write(json.dumps(row) + "\n")
        handle.flush()
        self.previous, self.previous_time = current, now

    def extra(self, kind: str, source: str) -> dict[str, object]:
        if kind == "tenant":
            return {"cgroup": "/" + self.tenants[source], "weight": self.weights[source]}
        if kind == "jbd2":
            thread = next(t for t in self.jbd2 if t.name == source)
            return {"tenant": thread.tenant, "pid": thread.pid,
                    "cgroup": self.backend.cgroup_of(thread.pid)}
        return {"device": f"/dev/{source}"}

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)
        self.tracer.stop()
        if self.error is not None:
            raise AgentError(f"sampler failed: {self.error}") from self.error
        log.info("sampler stopped")
