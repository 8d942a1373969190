"""per-container-journal: one partition and ext4 per container, so each tenant has its own
journal thread; those threads stay in the root cgroup, where nobody is charged for them."""

from __future__ import annotations

from typing import Any

from journalbench import vocabulary
from journalbench.agent import disk
from journalbench.agent.arms.base import ext4_per_tenant
from journalbench.agent.arms.lxc import ContainerArm


class PerContainerJournal(ContainerArm):
    NAME = vocabulary.PER_CONTAINER_JOURNAL

    def prepare(self, device: disk.Device, tenants: list[dict[str, Any]]) -> None:
        self.tenants = ext4_per_tenant(device, self.context.root / "mnt", tenants)
