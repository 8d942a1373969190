"""journal-accounted: per-container journals, and each tenant's jbd2 thread moved into the
tenant's cgroup for the measured phase, so the disk time of its journal commits is charged to
(and scheduled with the weight of) the tenant whose fsyncs cause them. The threads are moved back
before the containers stop; teardown also moves back any jbd2 thread found in our cgroups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench import vocabulary
from journalbench.agent import cgroups, disk
from journalbench.agent.arms.base import ext4_per_tenant
from journalbench.agent.arms.lxc import ContainerArm
from journalbench.agent.system import log
from journalbench.errors import AgentError


class JournalAccounted(ContainerArm):
    NAME = vocabulary.JOURNAL_ACCOUNTED

    def prepare(self, device: disk.Device, tenants: list[dict[str, Any]]) -> None:
        self.tenants = ext4_per_tenant(device, self.context.root / "mnt", tenants)

    def after_start(self) -> None:
        backend = self.context.backend
        for thread in self.jbd2_threads:
            target = self.context.cgroup(str(thread.tenant))
            backend.move_thread(thread.pid, target)
            where = backend.cgroup_of(thread.pid)
            if where != "/" + target:
                raise AgentError(f"{thread.name} is in {where}, not in /{target}")
            log.info("moved %s (pid %d) into /%s", thread.name, thread.pid, target)

    def before_stop(self) -> None:
        restore_journals(self.context.host_name)

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        restore_journals(host["name"])
        super().clean(host, root)


def restore_journals(host: str) -> None:
    """Move every kernel thread found in our cgroups (the jbd2 threads) back to the root."""
    backend = cgroups.detect()
    top = backend.path(cgroups.host_parent(host))
    if not top.is_dir():
        return
    for tasks in top.rglob("tasks" if backend.version == 1 else "cgroup.procs"):
        for tid in tasks.read_text().split():
            comm = Path(f"/proc/{tid}/comm")
            if comm.exists() and comm.read_text().startswith("jbd2/"):
                backend.move_thread(int(tid), "")
                log.info("moved %s back to the root cgroup", comm.read_text().strip())
