"""The arms, one module each, in the thesis's order; `ARMS` is the one list of arm names
(the schemas' enums are checked against it by a test)."""

from __future__ import annotations

from journalbench.agent.arms.base import Arm
from journalbench.agent.arms.journal_accounted import JournalAccounted
from journalbench.agent.arms.per_container_journal import PerContainerJournal
from journalbench.agent.arms.shared_journal import SharedJournal
from journalbench.agent.arms.vm import VirtualMachine
from journalbench.errors import AgentError

ARMS: dict[str, type[Arm]] = {
    arm.NAME: arm for arm in (VirtualMachine, SharedJournal, PerContainerJournal, JournalAccounted)
}
SHARED_JOURNAL = SharedJournal.NAME
PER_CONTAINER_JOURNAL = PerContainerJournal.NAME
JOURNAL_ACCOUNTED = JournalAccounted.NAME
VM = VirtualMachine.NAME
CONTAINER_ARMS = (SHARED_JOURNAL, PER_CONTAINER_JOURNAL, JOURNAL_ACCOUNTED)


def arm_class(name: str) -> type[Arm]:
    try:
        return ARMS[name]
    except KeyError:
        raise AgentError(f"unknown arm {name!r}; this agent has {', '.join(ARMS)}") from None
