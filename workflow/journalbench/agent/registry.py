"""The agent's parts by name: the class behind each arm, workload tool, device profile and I/O
control of journalbench.vocabulary, and how a run spec picks one. The packages under agent/
(arms/, workloads/, devices/, iocontrol/) hold one module per part and import nothing of each
other's registry, so this module is the one place that knows them all (packages.py gathers
their tools from here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench import vocabulary
from journalbench.agent.arms.base import Arm
from journalbench.agent.arms.journal_accounted import JournalAccounted
from journalbench.agent.arms.journal_cgroup import JournalCgroup
from journalbench.agent.arms.per_container_journal import PerContainerJournal
from journalbench.agent.arms.shared_journal import SharedJournal
from journalbench.agent.arms.vm.arm import VirtualMachine
from journalbench.agent.cgroups import Backend
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.devices.hdd import Hdd, HddWriteCache
from journalbench.agent.devices.native import Native
from journalbench.agent.devices.provided import disks_of, provided
from journalbench.agent.iocontrol.base import IoControl
from journalbench.agent.iocontrol.bfq import Bfq
from journalbench.agent.iocontrol.iocost import IoCost
from journalbench.agent.workloads.base import Workload
from journalbench.agent.workloads.fio import Fio
from journalbench.agent.workloads.mariadb import MariaDB
from journalbench.agent.workloads.redis import Redis
from journalbench.errors import AgentError

ARMS: dict[str, type[Arm]] = {
    arm.NAME: arm for arm in (VirtualMachine, SharedJournal, PerContainerJournal, JournalAccounted,
                              JournalCgroup)}
WORKLOADS: dict[str, type[Workload]] = {
    workload.TOOL: workload for workload in (Fio, MariaDB, Redis)}
PROFILES: dict[str, type[DeviceProfile]] = {
    profile.NAME: profile for profile in (Native, Hdd, HddWriteCache)}
IO_CONTROLS: dict[str, type[IoControl]] = {
    control.NAME: control for control in (Bfq, IoCost)}


def arm_class(name: str) -> type[Arm]:
    try:
        return ARMS[name]
    except KeyError:
        raise AgentError(f"unknown arm {name!r}; this agent has {', '.join(ARMS)}") from None


def workload_for(tenant: str, settings: dict[str, Any], duration_s: int) -> Workload:
    try:
        cls = WORKLOADS[settings["tool"]]
    except KeyError:
        raise AgentError(f"tenant {tenant}: unknown workload tool {settings['tool']!r}; "
                         f"this agent has {', '.join(WORKLOADS)}") from None
    return cls(tenant, settings, duration_s)


def profile_for(host: dict[str, Any], spec: dict[str, Any], root: Path) -> DeviceProfile:
    """The spec's `device` if it names one, else the host's `device.profile`; parameters
    from the host's `device_profiles.<name>`. On a nested host the outer host provides it
    (agent/devices/provided.py)."""
    name = spec.get("device") or host["device"].get("profile", vocabulary.DEFAULT_PROFILE)
    try:
        cls = PROFILES[name]
    except KeyError:
        raise AgentError(f"unknown device profile {name!r}; this agent has "
                         f"{', '.join(PROFILES)}") from None
    params = dict(host.get("device_profiles", {}).get(name, {}))
    if disks_of(host):
        return provided(cls, host, root, params)
    return cls(host, root, params)


def io_control_choice(spec: dict[str, Any], host: dict[str, Any]) -> tuple[str, str]:
    """(name, which named it) of a run's I/O control: the spec's `io_control` if it names
    one, else the host's, else the default."""
    if spec.get("io_control") is not None:
        return str(spec["io_control"]), "spec"
    if host.get("io_control") is not None:
        return str(host["io_control"]), "host"
    return vocabulary.DEFAULT_IO_CONTROL, "default"


def io_control_class(spec: dict[str, Any], host: dict[str, Any],
                     source: str = "run spec") -> type[IoControl]:
    """The class of the run's I/O control; an unknown name fails naming the file (`source`
    for the spec) and the field."""
    name, chosen_by = io_control_choice(spec, host)
    try:
        found = IO_CONTROLS[name]
    except KeyError:
        where = source if chosen_by == "spec" else host.get("_file", f"host {host['name']}")
        raise AgentError(f"{where}: field io_control: unknown I/O control {name!r}; this agent "
                         f"has {', '.join(IO_CONTROLS)}") from None
    if spec.get("iocost_qos") is not None and name != vocabulary.IOCOST:
        raise AgentError(f"{source}: field iocost_qos: an iocost QoS procedure, but the run's "
                         f"weights are enforced by {name}")
    return found


def io_control_on(cls: type[IoControl], backend: Backend) -> IoControl:
    """The I/O control on this host's cgroup backend, unless it refuses the host."""
    why = cls.refuses(backend)
    if why is not None:
        raise AgentError(f"io_control {cls.NAME}: {why}")
    return cls(backend)
