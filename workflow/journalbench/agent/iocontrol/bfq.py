"""bfq: BFQ, the proportional-share I/O scheduler, selected on the test device; each tenant's
cgroup weight (1-1000) is its share among the groups with requests queued. Works on cgroup v1
(blkio's `blkio.bfq.weight`, BFQ's own counters) and v2 (`io.bfq.weight`, `io.stat`). The
device's tunables (`queue/iosched/`) are the host's `bfq:` with the run's `bfq:` over them.
"""

from __future__ import annotations

from typing import Any

from journalbench import vocabulary
from journalbench.agent.disk import Device
from journalbench.agent.iocontrol.base import EVERY_REQUEST, IoControl
from journalbench.agent.iocounters import IoCounters, parse_v1_stat, parse_v2_stat
from journalbench.agent.system import read, write
from journalbench.errors import AgentError

# per cgroup version: the weight file, and the counter files (v1: BFQ's own byte and request
# counts of the group and its descendants; v2: the io controller's, whoever schedules)
WEIGHT_FILES = {1: "blkio.bfq.weight", 2: "io.bfq.weight"}
COUNTER_FILES = {1: ("blkio.bfq.io_service_bytes_recursive", "blkio.bfq.io_serviced_recursive"),
                 2: ("io.stat",)}


def parse_weight(text: str, version: int) -> int:
    """v2's file starts `default <w>` (per-device lines may follow); v1's holds the weight."""
    if version == 1:
        return int(text.split()[-1])
    return int(text.splitlines()[0].split()[-1])


def counters_from(texts: list[str], version: int, devnum: str) -> IoCounters:
    """The counters of one device from the texts of COUNTER_FILES[version], in that order."""
    if version == 1:
        size, count = (parse_v1_stat(text, devnum) for text in texts)
        return IoCounters(size["Read"], size["Write"], count["Read"], count["Write"])
    return parse_v2_stat(texts[0], devnum)


def select(device: Device) -> None:
    """Select BFQ on the device afresh: its tunables back at the kernel's defaults."""
    queue = device.sysfs / "queue"
    offered = read(queue / "scheduler").replace("[", "").replace("]", "").split()
    if "bfq" not in offered:
        raise AgentError(f"{device.path}: BFQ is not available (queue/scheduler lists no bfq)")
    # a device kept from an earlier run (the emulated disk's loop device) keeps BFQ and the
    # tunables that run set: select another scheduler first, so one run's setting never
    # leaks into the next
    other = next((name for name in offered if name != "bfq"), None)
    if other is None:
        raise AgentError(f"{device.path}: no scheduler but bfq to reset BFQ's tunables with")
    write(queue / "scheduler", other)
    write(queue / "scheduler", "bfq")
    if "[bfq]" not in read(queue / "scheduler"):
        raise AgentError(f"{device.path}: could not select BFQ")


class Bfq(IoControl):
    NAME = vocabulary.BFQ
    SCHEDULER = "bfq"
    ENFORCES = EVERY_REQUEST
    DIVIDES = ("sectors of service (budgets \"measured in number of sectors\", "
               "block/bfq-iosched.c)")

    @classmethod
    def tunables(cls, host: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
        return {**host.get("bfq", {}), **spec.get("bfq", {})}

    def prepare(self, device: Device, tunables: dict[str, Any]) -> dict[str, str]:
        select(device)
        iosched = device.sysfs / "queue" / "iosched"
        for key, value in tunables.items():
            if not (iosched / key).exists():
                raise AgentError(f"host field bfq.{key}: {device.path} has no BFQ tunable {key}")
            write(iosched / key, value)
        return {p.name: read(p) for p in sorted(iosched.iterdir())}

    @property
    def weight_file(self) -> str:
        return WEIGHT_FILES[self.backend.version]

    @property
    def counter_files(self) -> tuple[str, ...]:
        return COUNTER_FILES[self.backend.version]

    def parse_weight(self, text: str) -> int:
        return parse_weight(text, self.backend.version)

    def counters(self, rel: str, devnum: str) -> IoCounters:
        base = self.backend.path(rel)
        texts = [read(base / name) for name in self.counter_files]
        return counters_from(texts, self.backend.version, devnum)

    def record(self, tunables: dict[str, str], chosen_by: str) -> dict[str, Any]:
        # `bfq`: every tunable read back, where runs made before `io_control` keep them
        return {**super().record(tunables, chosen_by), "bfq": tunables}
