"""The agent's parts by name: the class behind each arm, workload tool and device profile of
journalbench.vocabulary, and how a run spec picks one. The packages under agent/ (arms/,
workloads/, devices/) hold one module per part and import nothing of each other's registry, so
this module is the one place that knows them all (packages.py gathers their tools from here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench import vocabulary
from journalbench.agent.arms.base import Arm
from journalbench.agent.arms.journal_accounted import JournalAccounted
from journalbench.agent.arms.per_container_journal import PerContainerJournal
from journalbench.agent.arms.shared_journal import SharedJournal
from journalbench.agent.arms.vm.arm import VirtualMachine
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.devices.hdd import Hdd, HddWriteCache
from journalbench.agent.devices.native import Native
from journalbench.agent.workloads.base import Workload
from journalbench.agent.workloads.fio import Fio
from journalbench.agent.workloads.mariadb import MariaDB
from journalbench.agent.workloads.redis import Redis
from journalbench.errors import AgentError

ARMS: dict[str, type[Arm]] = {
    arm.NAME: arm for arm in (VirtualMachine, SharedJournal, PerContainerJournal, JournalAccounted)}
WORKLOADS: dict[str, type[Workload]] = {
    workload.TOOL: workload for workload in (Fio, MariaDB, Redis)}
PROFILES: dict[str, type[DeviceProfile]] = {
    profile.NAME: profile for profile in (Native, Hdd, HddWriteCache)}


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
    from the host's `device_profiles.<name>`."""
    name = spec.get("device") or host["device"].get("profile", vocabulary.DEFAULT_PROFILE)
    try:
        cls = PROFILES[name]
    except KeyError:
        raise AgentError(f"unknown device profile {name!r}; this agent has "
                         f"{', '.join(PROFILES)}") from None
    return cls(host, root, dict(host.get("device_profiles", {}).get(name, {})))
