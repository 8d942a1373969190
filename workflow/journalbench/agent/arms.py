"""The container arms: how tenants' data directories map onto the one test device.

- shared-journal: one ext4 over the whole device; each tenant a folder of it (one jbd2).
- per-container-journal: one partition and ext4 per tenant (one jbd2 each, in the root cgroup).
- journal-accounted: as per-container, and each jbd2 thread sits in its tenant's cgroup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench.agent import disk
from journalbench.agent.sampler import Jbd2
from journalbench.errors import AgentError

CONTAINER_ARMS = ("shared-journal", "per-container-journal", "journal-accounted")


@dataclass
class TenantLayout:
    name: str
    weight: int
    data_dir: Path
    volume: str  # block device holding the tenant's file system
    jbd2: Jbd2


@dataclass
class Layout:
    arm: str
    tenants: list[TenantLayout] = field(default_factory=list)

    @property
    def jbd2_threads(self) -> list[Jbd2]:
        unique = {t.jbd2.pid: t.jbd2 for t in self.tenants}
        return list(unique.values())


def find_jbd2(volume: str, tenant: str | None) -> Jbd2:
    """The journal thread of the ext4 on `volume` (its name is jbd2/<dev>-<journal inode>)."""
    wanted = f"jbd2/{Path(volume).name}-"[:15]
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            name = comm.read_text().strip()
        except OSError:
            continue
        if name.startswith(wanted):
            return Jbd2(name=name, pid=int(comm.parent.name), tenant=tenant)
    raise AgentError(f"no jbd2 thread for {volume} (is it mounted as ext4 with a journal?)")


def build(arm: str, device: disk.Device, mount_root: Path,
          tenants: list[dict[str, Any]]) -> Layout:
    if arm not in CONTAINER_ARMS:
        raise AgentError(f"arm {arm} is not a container arm")
    layout = Layout(arm=arm)
    if arm == "shared-journal":
        disk.wipe(device)
        disk.mkfs_ext4(device.path, "jb-shared")
        mount = mount_root / "shared"
        disk.mount_ext4(device.path, mount)
        journal = find_jbd2(device.path, None)
        for tenant in tenants:
            data = mount / tenant["name"]
            data.mkdir()
            layout.tenants.append(
                TenantLayout(tenant["name"], tenant["weight"], data, device.path, journal))
        return layout
    volumes = disk.make_partitions(device, len(tenants))
    for tenant, volume in zip(tenants, volumes, strict=True):
        disk.mkfs_ext4(volume, f"jb-{tenant['name']}")
        mount = mount_root / tenant["name"]
        disk.mount_ext4(volume, mount)
        layout.tenants.append(TenantLayout(
            tenant["name"], tenant["weight"], mount, volume, find_jbd2(volume, tenant["name"])))
    return layout
