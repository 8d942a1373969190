"""shared-journal: one ext4 over the whole test device, each container a folder of it, so every
tenant's fsync waits on the same journal thread (jbd2), which sits in the root cgroup."""

from __future__ import annotations

from typing import Any

from journalbench import vocabulary
from journalbench.agent import disk
from journalbench.agent.arms.base import one_ext4
from journalbench.agent.arms.lxc import ContainerArm


class SharedJournal(ContainerArm):
    NAME = vocabulary.SHARED_JOURNAL

    def prepare(self, device: disk.Device, tenants: list[dict[str, Any]]) -> None:
        self.tenants = one_ext4(device, self.context.root / "mnt", tenants)
