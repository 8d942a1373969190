"""iocost: the kernel's cost-model proportional controller (cgroup v2 only). Each I/O is
charged its modelled device time (`io.cost.model`, a linear model measured on the test device),
the device's capacity is what the model says scaled by a rate the kernel tunes within the QoS
(`io.cost.qos`), and each tenant's `io.weight` is its share of that time among the groups with
I/O pending. Model and QoS come from a named, versioned procedure (PROCEDURES; a run's
`iocost_qos`, else the default): the knee of the device's latency against load
(costmodel.py) or the model of two interleaved streams at a fixed rate (interleaved.py). The
elevator is off (`none`): iocost throttles above the queue, and a second scheduler would divide
the disk again.

On a cgroup-v1 host it refuses in one line. What it sets on the device stays there after the
run (a loop device's queue outlives its detach, a nested host's disk the run), so each device
it enabled is noted in the state folder and teardown disables it again, also after kill -9.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from journalbench import vocabulary
from journalbench.agent import disk
from journalbench.agent.cgroups import Backend, V2Io, host_parent
from journalbench.agent.cgroups import v2_root as cgroup_v2_root
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.iocontrol import costmodel, interleaved, vrate
from journalbench.agent.iocontrol.base import PAST_BUDGET, IoControl
from journalbench.agent.iocounters import IoCounters, parse_cost, parse_v2_stat
from journalbench.agent.system import log, read, write
from journalbench.errors import AgentError

QOS, MODEL = "io.cost.qos", "io.cost.model"
# the blk_cgroup module's switch for io.stat's cost.wait, cost.indebt and cost.indelay: on
# while a run is under iocost, back as it was afterwards (its old value kept in NOTE's folder)
DEBUG_STATS = Path("/sys/module/blk_cgroup/parameters/blkcg_debug_stats")
DEBUG_NOTE = "blkcg-debug-stats.was"
QOS_RULE = costmodel.QOS_RULE
# the QoS procedures by name, in the vocabulary's order (vocabulary.IOCOST_QOS)
PROCEDURES = {p.name: p for p in (costmodel.KNEE_QOS, interleaved.INTERLEAVED)}
NOTE = "iocost-devices.json"  # in the state root: the devices a run enabled iocost on


def parse_line(text: str, devnum: str) -> dict[str, str]:
    """The key=value fields of the device's line of io.cost.qos or io.cost.model; {} when
    the file has no line for it."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == devnum:
            return dict(item.split("=", 1) for item in fields[1:] if "=" in item)
    return {}


def parse_weight(text: str) -> int:
    """io.weight starts `default <w>` (per-device lines may follow)."""
    return int(text.splitlines()[0].split()[-1])


def enabled_devnums(text: str) -> list[str]:
    """The devices io.cost.qos lists with enable=1."""
    return [line.split()[0] for line in text.splitlines()
            if line.split() and parse_line(line, line.split()[0]).get("enable") == "1"]


def note_path(host: dict[str, Any]) -> Path:
    return disk.state_root(host) / NOTE


def noted(host: dict[str, Any]) -> list[str]:
    try:
        return list(json.loads(note_path(host).read_text()))
    except (OSError, ValueError):
        return []


def v2_root() -> Path | None:
    """The v2 hierarchy's root when it has iocost's files (a v2 host with iocost)."""
    found = cgroup_v2_root()
    return found if found is not None and (found / QOS).is_file() else None


class IoCost(IoControl):
    NAME = vocabulary.IOCOST
    SCHEDULER = "none"
    ENFORCES = PAST_BUDGET
    DIVIDES = "modelled device time (io.cost.model, Documentation/admin-guide/cgroup-v2.rst)"

    def __init__(self, backend: Backend) -> None:
        super().__init__(backend)
        self.procedure = PROCEDURES[vocabulary.DEFAULT_IOCOST_QOS]
        self.calibration: dict[str, Any] = {}
        self.readback: dict[str, dict[str, str]] = {}
        self.qos: dict[str, int] = {}
        self.settled: dict[str, float] = {}
        self.parent = ""  # the host's cgroup parent (a scratch group goes under it)

    @classmethod
    def refuses(cls, backend: Backend) -> str | None:
        if not isinstance(backend, V2Io):
            return (f"needs cgroup v2's io controller (io.cost.qos, io.weight); this host's "
                    f"disk weights are cgroup v{backend.version}'s")
        if not (backend.root / QOS).is_file():
            return (f"{backend.root / QOS}: missing; the kernel has no iocost "
                    "(CONFIG_BLK_CGROUP_IOCOST)")
        return None

    @classmethod
    def tunables(cls, host: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
        """The QoS procedure the run asks (`iocost_qos`), else the default."""
        return {"procedure": procedure_of(spec).name}

    # -- the device ----------------------------------------------------------------------------

    def calibrate(self, host: dict[str, Any], profile: DeviceProfile, device: disk.Device,
                  state_root: Path, tunables: dict[str, Any]) -> None:
        self.procedure = PROCEDURES[str(tunables.get("procedure",
                                                     vocabulary.DEFAULT_IOCOST_QOS))]
        self.parent = host_parent(str(host["name"]))
        self.note(state_root, device.devnum)  # before anything is set: teardown finds it
        debug_stats_on(state_root)
        self.disable(device.devnum)  # measured as the device is, not as iocost throttles it
        self.calibration = costmodel.reference(host, profile, device, self.procedure)

    def note(self, state_root: Path, devnum: str) -> None:
        path = state_root / NOTE
        known = set(json.loads(path.read_text())) if path.is_file() else set()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sorted(known | {devnum})) + "\n")

    def disable(self, devnum: str) -> None:
        if parse_line(read(self.backend.root / QOS), devnum).get("enable") == "1":
            write(self.backend.root / QOS, f"{devnum} enable=0")

    def prepare(self, device: disk.Device, tunables: dict[str, Any]) -> dict[str, str]:
        if not self.calibration:
            raise AgentError("iocost: prepare before calibrate (no device model)")
        select_none(device)
        devnum = device.devnum
        write(self.backend.root / MODEL, costmodel.model_line(devnum,
                                                              self.calibration["model"]))
        self.qos = self.procedure.qos_of(self.calibration)
        write(self.backend.root / QOS, costmodel.qos_line(devnum, self.qos))
        # the vrate is the device's: a QoS's bounds move it back only gradually (vrate.py)
        self.settled = vrate.settle(
            self.backend, self.parent, device, self.qos,
            lambda qos: write(self.backend.root / QOS, costmodel.qos_line(devnum, qos)))
        self.readback = {
            "qos": parse_line(read(self.backend.root / QOS), devnum),
            "model": parse_line(read(self.backend.root / MODEL), devnum)}
        qos = self.readback["qos"]
        if qos.get("enable") != "1" or any(float(qos.get(key, "nan")) != value
                                            for key, value in self.qos.items()):
            raise AgentError(f"{device.path}: iocost did not take its QoS ({QOS} reads {qos}, "
                             f"set {self.qos})")
        log.info("iocost on %s: qos %s, model %s", device.path, self.readback["qos"],
                 self.readback["model"])
        return {f"{part}.{key}": value for part, fields in self.readback.items()
                for key, value in fields.items()}

    # -- a tenant's cgroup ---------------------------------------------------------------------

    @property
    def weight_file(self) -> str:
        return "io.weight"

    @property
    def counter_files(self) -> tuple[str, ...]:
        return ("io.stat",)

    def parse_weight(self, text: str) -> int:
        return parse_weight(text)

    def counters(self, rel: str, devnum: str) -> IoCounters:
        return parse_v2_stat(read(self.backend.path(rel) / "io.stat"), devnum)

    def controller_stats(self, rel: str, devnum: str) -> dict[str, float]:
        return parse_cost(read(self.backend.path(rel) / "io.stat"), devnum)

    # -- what the run records ------------------------------------------------------------------

    def record(self, tunables: dict[str, str], chosen_by: str) -> dict[str, Any]:
        record = super().record(tunables, chosen_by)
        record["io_control"]["iocost"] = {
            **self.readback, "model_measured": self.calibration.get("model"),
            "qos_set": self.qos, "qos_rule": self.procedure.rule,
            "procedure": self.procedure.name, **self.settled,
            "calibration": {k: v for k, v in self.calibration.items() if k != "model"}}
        return record

    # -- clean-up by discovery -----------------------------------------------------------------

    @classmethod
    def leftovers(cls, host: dict[str, Any]) -> list[str]:
        left = ([f"blkcg_debug_stats on (was {was_note(disk.state_root(host)).read_text()})"]
                if was_note(disk.state_root(host)).is_file() else [])
        root = v2_root()
        if root is None:
            return left
        on = set(enabled_devnums(read(root / QOS)))
        return left + [f"iocost enabled on {devnum}" for devnum in noted(host) if devnum in on]

    @classmethod
    def clean(cls, host: dict[str, Any]) -> None:
        root = v2_root()
        for devnum in noted(host) if root is not None else []:
            qos = parse_line(read(root / QOS), devnum)
            if qos.get("enable") == "1" or qos.get("ctrl") == "user":
                write(root / QOS, f"{devnum} enable=0 ctrl=auto")
            if parse_line(read(root / MODEL), devnum).get("ctrl") == "user":
                write(root / MODEL, f"{devnum} ctrl=auto")
        debug_stats_back(disk.state_root(host))
        if not cls.leftovers(host):
            note_path(host).unlink(missing_ok=True)


def procedure_of(spec: dict[str, Any]) -> costmodel.Procedure:
    """The QoS procedure a run spec names (`iocost_qos`), else the default; an unknown name
    fails in one line."""
    name = str(spec.get("iocost_qos") or vocabulary.DEFAULT_IOCOST_QOS)
    if name not in PROCEDURES:
        raise AgentError(f"run spec field iocost_qos: unknown QoS procedure {name!r}; this "
                         f"agent has {', '.join(PROCEDURES)}")
    return PROCEDURES[name]


def was_note(state_root: Path) -> Path:
    return state_root / DEBUG_NOTE


def debug_stats_on(state_root: Path) -> None:
    """io.stat's cost.wait, cost.indebt and cost.indelay for the run (the kernel prints them
    only with blkcg_debug_stats); the value it had is noted first, so teardown puts it back
    even after kill -9. A kernel without the switch gives cost.usage and cost.vrate alone."""
    if not DEBUG_STATS.is_file():
        return
    note = was_note(state_root)
    if not note.is_file():
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(read(DEBUG_STATS).strip())
    write(DEBUG_STATS, "Y")


def debug_stats_back(state_root: Path) -> None:
    note = was_note(state_root)
    if note.is_file():
        if DEBUG_STATS.is_file():
            write(DEBUG_STATS, note.read_text().strip() or "N")
        note.unlink()


def select_none(device: disk.Device) -> None:
    """No elevator: iocost alone divides the device (BFQ's tunables go with it)."""
    queue = device.sysfs / "queue"
    offered = read(queue / "scheduler").replace("[", "").replace("]", "").split()
    if "none" not in offered:
        raise AgentError(f"{device.path}: no `none` scheduler to run iocost alone")
    write(queue / "scheduler", "none")
