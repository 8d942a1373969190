"""A device profile the machine below provides: on a nested host (a QEMU guest the controller
boots, control/nested/), the outer host runs the profile's machinery (the `hdd` model's nbdkit,
or the `native` image) and hands the result to the guest as a virtio-blk disk, one per profile
it booted with. Inside, the profile's device is that disk as it is: guarded, wiped, flagged
rotational as the profile says.

The host document the controller gives the agent names the disks (`nested.disks`: profile ->
`id`, the stable /dev/disk/by-id name, and `fast_flag`, the emulator's flag file as the guest
sees it through a shared folder): touching the flag drops the model's delays on the outer host
while set-up runs, as `Hdd.unmodelled` does on a host that runs its own emulator.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from journalbench.agent import disk
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.system import write
from journalbench.errors import AgentError


def disks_of(host: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The provided disks of a nested host's document, by profile; {} on any other host."""
    nested = host.get("nested") or {}
    return dict(nested.get("disks") or {})


def provided(cls: type[DeviceProfile], host: dict[str, Any], root: Path,
             params: dict[str, Any]) -> DeviceProfile:
    """The profile `cls` as the outer host of a nested host provides it."""
    disks = disks_of(host)
    if cls.NAME not in disks:
        raise AgentError(f"host {host['name']}: the nested host was booted with device "
                         f"profile(s) {', '.join(sorted(disks))}, not {cls.NAME}: name it in "
                         "the host file's nested.profiles (the machine boots again)")
    kind = type(f"Provided{cls.__name__}", (Provided, cls), {})
    return kind(host, root, params, disks[cls.NAME])


class Provided(DeviceProfile):
    """Mixed in before the profile's own class: its name, bounds and facts stay the profile's;
    attaching, set-up without the model's delays and the emulator's CPU are the outer host's.
    The profile's fsync bounds are recorded, not enforced: the guest's own path adds to what
    the outer host's emulator costs (on this machine `hdd`'s high-fsync writer waits 22 ms per
    fsync on the outer host and 27-30 ms in the nested guest under TCG)."""

    ENFORCE_ACCEPT = False

    def __init__(self, host: dict[str, Any], root: Path, params: dict[str, Any],
                 disk_facts: dict[str, Any]) -> None:
        super().__init__(host, root, params)
        self.disk = disk_facts

    def attach(self) -> disk.Device:
        device = disk.guard_disk(self.disk["id"])
        disk.wipe(device)
        # virtio-blk reports no rotation: the profile says what the disk stands for
        write(device.sysfs / "queue" / "rotational", 1 if self.ROTATIONAL else 0)
        return device

    @contextmanager
    def unmodelled(self) -> Iterator[None]:
        flag = self.disk.get("fast_flag")
        if not flag:
            yield
            return
        Path(flag).touch()
        try:
            yield
        finally:
            Path(flag).unlink(missing_ok=True)

    def cpu_seconds(self) -> float | None:
        return None  # the emulator runs on the outer host, out of the guest's sight

    def facts(self) -> dict[str, Any]:
        """The profile's facts, its emulator as the outer host runs it (the machine's record
        of its disks), not as the profile would on this host."""
        outer = ((self.host.get("nested") or {}).get("facts") or {}).get("disks") or {}
        found = super().facts()
        emulator = (outer.get(self.NAME) or {}).get("emulator")
        if "emulator" in found or emulator:
            found["emulator"] = (f"{emulator} on the outer host, this guest's virtio-blk disk "
                                 "(cache=none)" if emulator else None)
        return {**found, "provided_by": "outer host of this nested host",
                "disk": self.disk["id"]}


def leftover_flags(host: dict[str, Any]) -> list[str]:
    """Flags a killed agent left set: the outer emulator would serve the next run unmodelled."""
    return [str(f["fast_flag"]) for f in disks_of(host).values()
            if f.get("fast_flag") and Path(f["fast_flag"]).exists()]


def clean(host: dict[str, Any]) -> None:
    for flag in leftover_flags(host):
        Path(flag).unlink(missing_ok=True)
