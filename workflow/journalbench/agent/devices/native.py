"""native: the test device as the host has it: a sparse image on the host's disk behind a
direct-I/O loop device, or a dedicated disk that the host file names and allows to be wiped."""

from __future__ import annotations

from journalbench import vocabulary
from journalbench.agent import disk
from journalbench.agent.devices.base import DeviceProfile


class Native(DeviceProfile):
    NAME = vocabulary.NATIVE

    def attach(self) -> disk.Device:
        if self.host["device"]["kind"] == "image":
            return disk.attach_image(self.host)
        device = disk.guard_disk(self.host["device"]["id"])
        disk.wipe(device)
        return device
