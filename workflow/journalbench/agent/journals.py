"""The journal thread (jbd2) of a mounted ext4, on the host or inside a VM guest: finding it,
and counting the bytes it submits through a private tracefs instance.

Its own module, light to import (stdlib only, no logging or subprocess): the guest's report
imports it, and every module a TCG guest imports costs it a noticeable share of a second.
"""

from __future__ import annotations

import os
import re
import select
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from journalbench.agent.iocounters import IoCounters
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


def trace_instance(host: str) -> Path:
    return TRACEFS / "instances" / f"journalbench-{host}"


def write_file(path: Path, value: str | int) -> None:
    """A tracefs write, unlogged (the host's sampler passes its logged `system.write`)."""
    try:
        path.write_text(f"{value}\n")
    except OSError as error:
        raise AgentError(f"cannot write {value!r} to {path}: {error.strerror}") from None


class JournalTracer:
    """Counts bytes submitted by each jbd2 thread, read from a private trace instance."""

    def __init__(self, host: str, threads: list[Jbd2],
                 write: Callable[[Path, str | int], None] = write_file) -> None:
        self.instance = trace_instance(host)
        self.write = write
        self.threads = threads
        self.totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.prepared = False
        self.reader: threading.Thread | None = None

    def prepare(self) -> None:
        """The trace instance, made and filtered but not yet tracing: making it allocates its
        buffers (~0.15 s in a TCG guest, whose report does it before its go)."""
        if not self.threads or self.prepared:
            return
        self.instance.mkdir(exist_ok=True)
        self.write(self.instance / "tracing_on", 0)
        self.write(self.instance / "trace", "")
        self.write(self.instance / "buffer_size_kb", 1024)
        pids = " || ".join(f"common_pid == {t.pid}" for t in self.threads)
        self.write(self.instance / EVENT / "filter", pids)
        self.prepared = True

    def start(self) -> None:
        if not self.threads:
            return
        self.prepare()
        self.write(self.instance / EVENT / "enable", 1)
        self.write(self.instance / "tracing_on", 1)
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
        if not self.prepared:
            return
        if self.reader is not None:
            self.write(self.instance / "tracing_on", 0)
            self.stopping.set()
            self.reader.join(timeout=5)
            self.reader = None
        self.write(self.instance / EVENT / "enable", 0)
        self.instance.rmdir()
        self.prepared = False


def find_jbd2(volume: str, tenant: str | None) -> Jbd2:
    """The journal thread of the ext4 on `volume` (its name is jbd2/<dev>-<journal inode>)."""
    wanted = f"jbd2/{Path(volume).name}-"[:15]
    for pid in filter(str.isdigit, os.listdir("/proc")):  # not Path.glob: see process_files
        try:
            name = Path("/proc", pid, "comm").read_text().strip()
        except OSError:
            continue
        if name.startswith(wanted):
            return Jbd2(name=name, pid=int(pid), tenant=tenant)
    raise AgentError(f"no jbd2 thread for {volume} (is it mounted as ext4 with a journal?)")
