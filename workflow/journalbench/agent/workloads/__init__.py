"""The workloads, one module per tool; `WORKLOADS` is the one list of tools a run spec may name
(the schemas' enums are checked against it by a test)."""

from __future__ import annotations

from typing import Any

from journalbench.agent.workloads.base import Workload
from journalbench.agent.workloads.fio import Fio
from journalbench.agent.workloads.mariadb import MariaDB
from journalbench.agent.workloads.redis import Redis
from journalbench.errors import AgentError

WORKLOADS: dict[str, type[Workload]] = {
    workload.TOOL: workload for workload in (Fio, MariaDB, Redis)}


def workload_for(tenant: str, settings: dict[str, Any], duration_s: int) -> Workload:
    try:
        cls = WORKLOADS[settings["tool"]]
    except KeyError:
        raise AgentError(f"tenant {tenant}: unknown workload tool {settings['tool']!r}; "
                         f"this agent has {', '.join(WORKLOADS)}") from None
    return cls(tenant, settings, duration_s)
