"""Bytes and requests read and written: a cgroup's, a journal thread's or a block device's.

Light to import (stdlib only, no logging or subprocess): a VM guest's report imports it, and
every module a TCG guest imports costs it a noticeable share of a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IoCounters:
    read_bytes: int = 0
    write_bytes: int = 0
    read_ios: int = 0
    write_ios: int = 0

    def __sub__(self, other: IoCounters) -> IoCounters:
        return IoCounters(
            self.read_bytes - other.read_bytes,
            self.write_bytes - other.write_bytes,
            self.read_ios - other.read_ios,
            self.write_ios - other.write_ios,
        )


def device_counters(device_name: str) -> IoCounters:
    """A whole block device's counters, from /sys/class/block/<name>/stat."""
    fields = (Path("/sys/class/block") / device_name / "stat").read_text().split()
    return IoCounters(int(fields[2]) * 512, int(fields[6]) * 512, int(fields[0]), int(fields[4]))
