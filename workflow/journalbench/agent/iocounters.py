"""Bytes and requests read and written: a cgroup's, a journal thread's or a block device's,
and the parsers of the cgroup files that count them (which files an I/O control reads is its
own: agent/iocontrol/).

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


def parse_v1_stat(text: str, devnum: str) -> dict[str, int]:
    """A cgroup v1 blkio stat file (`<maj:min> <Read|Write|...> <n>` lines): one device's
    Read and Write figures."""
    values = {"Read": 0, "Write": 0}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == devnum and fields[1] in values:
            values[fields[1]] = int(fields[2])
    return values


def parse_v2_stat(text: str, devnum: str) -> IoCounters:
    """cgroup v2's io.stat (`<maj:min> rbytes=.. wbytes=.. rios=.. wios=..` lines): one
    device's counters, zero when it has no line (nothing done on it yet)."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == devnum:
            kv = dict(item.split("=", 1) for item in fields[1:])
            return IoCounters(
                int(kv.get("rbytes", 0)),
                int(kv.get("wbytes", 0)),
                int(kv.get("rios", 0)),
                int(kv.get("wios", 0)),
            )
    return IoCounters()


# iocost's own statistics in io.stat (blk-iocost.c, ioc_pd_stat): a group's usage, and with
# the blk_cgroup module's blkcg_debug_stats its wait, debt and delay, each cumulative
# microseconds; the root group's line also has the device's vrate (percent of the model).
COST_COUNTERS = ("cost.usage", "cost.wait", "cost.indebt", "cost.indelay")
COST_VRATE = "cost.vrate"


def parse_cost(text: str, devnum: str) -> dict[str, float]:
    """The cost.* fields of one device's io.stat line ({} when it has none: iocost off)."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == devnum:
            kv = dict(item.split("=", 1) for item in fields[1:] if "=" in item)
            return {key: float(kv[key]) for key in (*COST_COUNTERS, COST_VRATE) if key in kv}
    return {}
