"""The exit summary of agent/workloads/fsync.bt (format: the header of that script).

Percentiles come from the script's log-linear buckets (16 per power of two): a bucket stands
for its midpoint, clamped to the traced min and max, so p50/p99 are within half a bucket
(3.1%) of the true value; the mean is exact (sum / calls). Version 2 also holds every figure
per second of the trace, so `FsyncSummary.within` can keep a measurement window's seconds only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from journalbench.formats import percentile_of_counts, problem, read_text


# the file of a tenant's output in its run folder
def fsync_file(tenant: str) -> str:
    return f"fsync-{tenant}.txt"


HEADER = re.compile(r"^journalbench-fsync (\d+) cgroup=(\d+) pids=([\d,]+)(?: t0_ns=(\d+))?$")
ELAPSED = re.compile(r"^elapsed_ns (\d+)$")
VALUE = re.compile(r"^@(calls|errors|sum_ns|min_ns|max_ns)\[(fsync|fdatasync)\]: (\d+)$")
BUCKET = re.compile(r"^@bucket_ns\[(fsync|fdatasync), (\d+)\]: (\d+)$")
SEC_VALUE = re.compile(r"^@sec_(calls|sum_ns|min_ns|max_ns)\[(fsync|fdatasync), (\d+)\]: (\d+)$")
SEC_BUCKET = re.compile(r"^@sec_bucket_ns\[(fsync|fdatasync), (\d+), (\d+)\]: (\d+)$")
# bpftrace's own messages when run without -q
NOISE = re.compile(r"^Attaching \d+ probes?\.\.\.$")
SUPPORTED = {1, 2}


@dataclass
class Syscall:
    name: str
    calls: int = 0
    errors: int = 0
    sum_ns: int = 0
    min_ns: int | None = None
    max_ns: int | None = None
    buckets: dict[int, int] = field(default_factory=dict)  # bucket low bound (ns) -> calls


@dataclass(frozen=True)
class FsyncSummary:
    path: str
    version: int
    cgroup: int  # cgroup v2 id traced, 0 when tracing pids
    pids: tuple[int, ...]
    elapsed_ns: int
    syscalls: dict[str, Syscall]  # only syscalls that were called
    t0_ns: int | None = None  # CLOCK_MONOTONIC at the start (version 2; None in version 1)
    # version 2: second after t0 -> its syscalls (calls, sum, min, max, buckets; no errors)
    seconds: dict[int, dict[str, Syscall]] = field(default_factory=dict)

    def within(self, start_ns: int, end_ns: int) -> FsyncSummary:
        """The summary of the seconds whose middle lies in [start_ns, end_ns] (CLOCK_MONOTONIC),
        as io-samples intervals are kept (journalbench.window). A version 1 summary has no
        seconds: it is returned whole."""
        if self.t0_ns is None:
            return self
        kept = [sec for sec in self.seconds
                if start_ns <= self.t0_ns + sec * 10**9 + 5 * 10**8 <= end_ns]
        syscalls: dict[str, Syscall] = {}
        for sec in kept:
            for name, part in self.seconds[sec].items():
                merge(syscalls.setdefault(name, Syscall(name)), part)
        seconds = max(1, round((end_ns - start_ns) / 1e9))
        return FsyncSummary(self.path, self.version, self.cgroup, self.pids, seconds * 10**9,
                            syscalls, self.t0_ns, {sec: self.seconds[sec] for sec in kept})

    @property
    def count(self) -> int:
        return sum(s.calls for s in self.syscalls.values())

    @property
    def per_s(self) -> float:
        return self.count / (self.elapsed_ns / 1e9)

    @property
    def mean_ns(self) -> float | None:
        """None when the tenant issued no fsync/fdatasync (there is no latency to report)."""
        return sum(s.sum_ns for s in self.syscalls.values()) / self.count if self.count else None

    def percentile_ns(self, percent: float) -> float | None:
        if not self.count:
            return None
        points = [(midpoint(low), calls) for s in self.syscalls.values()
                  for low, calls in s.buckets.items()]
        lowest = min(s.min_ns for s in self.syscalls.values() if s.min_ns is not None)
        highest = max(s.max_ns for s in self.syscalls.values() if s.max_ns is not None)
        return min(max(percentile_of_counts(points, percent), lowest), highest)


def merge(total: Syscall, part: Syscall) -> None:
    total.calls += part.calls
    total.errors += part.errors
    total.sum_ns += part.sum_ns
    total.min_ns = min(v for v in (total.min_ns, part.min_ns) if v is not None)
    total.max_ns = max(v for v in (total.max_ns, part.max_ns) if v is not None)
    for low, calls in part.buckets.items():
        total.buckets[low] = total.buckets.get(low, 0) + calls


def bucket_width(low: int) -> int:
    """Width of the fsync.bt bucket starting at low: 1/16 of its power of two."""
    return 1 << (low.bit_length() - 5) if low >= 16 else 1


def midpoint(low: int) -> float:
    return low + (bucket_width(low) - 1) / 2


def parse_fsync(path: Path | str) -> FsyncSummary:
    """A complete fsync.bt summary; ParseError if truncated (no footer), foreign or inconsistent."""
    path = Path(path)
    lines = read_text(path).splitlines()
    header = None
    elapsed = None
    ended = False
    syscalls: dict[str, Syscall] = {}
    seconds: dict[int, dict[str, Syscall]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or NOISE.match(line):
            continue
        if ended:
            raise problem(path, "text after the 'end' footer", number)
        if header is None:
            header = HEADER.match(line)
            if header is None:
                raise problem(path, "not an fsync.bt summary (no 'journalbench-fsync' header)",
                              number)
            if int(header[1]) not in SUPPORTED:
                raise problem(path, f"fsync.bt summary version {header[1]} not supported", number)
        # the kinds of line by how often they come (the patterns exclude each other): the
        # per-second buckets are most of a summary
        elif match := SEC_BUCKET.match(line):
            entry = entry_of(seconds.setdefault(int(match[2]), {}), match[1])
            entry.buckets[int(match[3])] = int(match[4])
        elif match := BUCKET.match(line):
            entry_of(syscalls, match[1]).buckets[int(match[2])] = int(match[3])
        elif match := SEC_VALUE.match(line):
            entry = entry_of(seconds.setdefault(int(match[3]), {}), match[2])
            setattr(entry, "calls" if match[1] == "calls" else match[1], int(match[4]))
        elif match := VALUE.match(line):
            setattr(entry_of(syscalls, match[2]), match[1], int(match[3]))
        elif line == "end":
            ended = True
        elif match := ELAPSED.match(line):
            elapsed = int(match[1])
        else:
            raise problem(path, "unexpected line in fsync.bt summary", number)
    if header is None:
        raise problem(path, "not an fsync.bt summary (no 'journalbench-fsync' header)")
    if not ended or elapsed is None:
        raise problem(path, "truncated: no summary footer (bpftrace killed before its END?)",
                      len(lines))
    if elapsed == 0:
        raise problem(path, "traced for 0 ns")
    for entry in [*syscalls.values(), *(e for sec in seconds.values() for e in sec.values())]:
        restore_min(entry)
    for entry in syscalls.values():
        if sum(entry.buckets.values()) != entry.calls or entry.min_ns is None:
            raise problem(path, f"{entry.name}: {entry.calls} calls but "
                                f"{sum(entry.buckets.values())} in buckets (inconsistent summary)")
    t0 = int(header[4]) if header[4] is not None else None
    if t0 is not None:
        check_seconds(path, syscalls, seconds)
    pids = tuple(int(p) for p in header[3].split(",") if int(p) != 0)
    return FsyncSummary(str(path), int(header[1]), int(header[2]), pids, elapsed, syscalls, t0,
                        seconds)


def entry_of(entries: dict[str, Syscall], name: str) -> Syscall:
    """The entry of syscall `name`, added when it has none yet (and only then made)."""
    found = entries.get(name)
    if found is None:
        found = entries[name] = Syscall(name)
    return found


def restore_min(entry: Syscall) -> None:
    """bpftrace's min() prints nothing for a map whose least value is 2^32 ns (4.3 s) or more
    (seen: a Redis AOF fdatasync of 4.4-9.4 s on the emulated HDD beside a buffered writer had
    its second's sum, max and bucket but no min). One call: its min is its sum; more: the
    lowest bucket's lower bound (within 1/16)."""
    if entry.min_ns is None and entry.calls and entry.buckets:
        entry.min_ns = entry.sum_ns if entry.calls == 1 else min(entry.buckets)


def check_seconds(path: Path, syscalls: dict[str, Syscall],
                  seconds: dict[int, dict[str, Syscall]]) -> None:
    """The seconds add up to the whole: a per-second map that filled up (bpftrace drops the
    updates) would otherwise shift a window's figures unseen."""
    for name, entry in syscalls.items():
        parts = [sec[name] for sec in seconds.values() if name in sec]
        if (sum(p.calls for p in parts) != entry.calls
                or sum(sum(p.buckets.values()) for p in parts) != entry.calls
                or sum(p.sum_ns for p in parts) != entry.sum_ns):
            raise problem(path, f"{name}: the per-second figures do not add up to the "
                                f"{entry.calls} calls traced (a full bpftrace map?)")
