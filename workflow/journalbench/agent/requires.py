"""A command a module of the agent needs on the test host, and the Debian package that brings
it. Every module that runs a tool declares it in its `TOOLS` (agent/packages.py gathers them);
this module is a leaf so that every declaring module can import it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tool:
    command: str  # may hold {arch} (e.g. qemu-system-{arch})
    package: str  # Debian package; may hold {qarch}
    required: bool
    purpose: str

    def for_arch(self, arch: str) -> Tool:
        return Tool(self.command.format(arch=arch),
                    self.package.format(qarch=QEMU_PACKAGE_ARCH.get(arch, arch)),
                    self.required, self.purpose)


QEMU_PACKAGE_ARCH = {"x86_64": "x86", "aarch64": "arm", "ppc64le": "ppc", "s390x": "s390x"}
