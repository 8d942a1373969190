"""journal-cgroup: per-container journals, and each tenant's jbd2 thread moved, for the measured
phase, into a cgroup of its own (`journal.<tenant>`, a sibling of the tenants' groups) whose
weight is its tenant's. Under the same weights as journal-accounted, the journal is controlled
(scheduled with a weight, and under iocost throttled: iocost never throttles the root group,
where per-container-journal leaves it) but charged to nobody's budget but its own. So the
per-container-journal / journal-cgroup / journal-accounted trio tells "the journal is
controlled" from "the journal is charged to the tenant whose fsyncs cause it" (C24).

The groups are made before the containers start and removed with the host's other groups
(a tenant's name holds no dot, so `journal.<tenant>` is never a tenant's); the threads go back
to the root before the containers stop, and teardown moves back any jbd2 thread found in our
cgroups (journal_accounted.restore_journals)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench import vocabulary
from journalbench.agent import cgroups, disk
from journalbench.agent.arms.base import ext4_per_tenant
from journalbench.agent.arms.journal_accounted import restore_journals
from journalbench.agent.arms.lxc import ContainerArm
from journalbench.agent.system import log
from journalbench.errors import AgentError

PREFIX = "journal."  # + the tenant's name


def journal_group(host: str, tenant: str) -> str:
    """The cgroup (relative to the disk controller's root) of a tenant's journal thread."""
    return cgroups.tenant_cgroup(host, PREFIX + tenant)


class JournalCgroup(ContainerArm):
    NAME = vocabulary.JOURNAL_CGROUP

    def prepare(self, device: disk.Device, tenants: list[dict[str, Any]]) -> None:
        self.tenants = ext4_per_tenant(device, self.context.root / "mnt", tenants)

    def journal_cgroups(self) -> dict[str, str]:
        return {t.jbd2.name: journal_group(self.context.host_name, t.name)
                for t in self.tenants if t.jbd2 is not None}

    def after_start(self) -> None:
        backend, control = self.context.backend, self.context.io_control
        for tenant in self.tenants:
            if tenant.jbd2 is None:
                raise AgentError(f"tenant {tenant.name} has no journal thread to move")
            target = journal_group(self.context.host_name, tenant.name)
            backend.create(target)
            control.set_weight(target, tenant.weight)
            found = control.weight(target)
            if found != tenant.weight:
                raise AgentError(f"{target}: weight reads {found}, set {tenant.weight}")
            backend.move_thread(tenant.jbd2.pid, target)
            where = backend.cgroup_of(tenant.jbd2.pid)
            if where != "/" + target:
                raise AgentError(f"{tenant.jbd2.name} is in {where}, not in /{target}")
            log.info("moved %s (pid %d) into /%s (weight %d)", tenant.jbd2.name,
                     tenant.jbd2.pid, target, tenant.weight)

    def before_stop(self) -> None:
        restore_journals(self.context.host_name)

    def facts(self) -> dict[str, Any]:
        facts = super().facts()
        control = self.context.io_control
        facts["journal_groups"] = {
            t.name: {"jbd2": t.jbd2.name if t.jbd2 else None,
                     "cgroup": "/" + journal_group(self.context.host_name, t.name),
                     "weight_set": t.weight,
                     "weight_read_back": control.weight(
                         journal_group(self.context.host_name, t.name))}
            for t in self.tenants}
        return facts

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        restore_journals(host["name"])
        super().clean(host, root)
