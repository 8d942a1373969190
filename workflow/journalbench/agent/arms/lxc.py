"""LXC containers: the host's root read-only, the tenant's data mounted at /mnt, its own cgroup.

Containers live in their own lxcpath under the host's state directory, so teardown finds every
container the agent ever made there, and none of anyone else's. `ContainerArm` is what the three
container arms share: they differ only in their storage (and journal-accounted in its hooks).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from journalbench.agent.arms.base import Arm
from journalbench.agent.cgroups import lxc_key, monitor_cgroup, tenant_cgroup
from journalbench.agent.iocontrol.base import IoControl
from journalbench.agent.requires import Tool
from journalbench.agent.system import log, sh, tool_version
from journalbench.errors import AgentError

DATA_MOUNT = "/mnt"  # exists on every Debian root, so the read-only root needs no new dir


def lxc_path(state_root: Path) -> Path:
    return state_root / "lxc"


def config_text(host: str, tenant: str, data_dir: Path, weight: int, cpu: int,
                control: IoControl, log_file: Path) -> str:
    keys = [
        ("lxc.uts.name", tenant),
        ("lxc.rootfs.path", "dir:/"),
        ("lxc.rootfs.options", "ro"),
        ("lxc.net.0.type", "none"),  # host network: database clients connect on loopback
        ("lxc.mount.auto", "proc:mixed sys:ro cgroup:ro"),
        ("lxc.mount.entry", f"{data_dir} {DATA_MOUNT.lstrip('/')} none bind,rw 0 0"),
        ("lxc.mount.entry", "tmpfs tmp tmpfs rw,size=256m 0 0"),
        ("lxc.mount.entry", "tmpfs run tmpfs rw,size=64m 0 0"),
        ("lxc.apparmor.profile", "unconfined"),
        ("lxc.cgroup.dir.container", tenant_cgroup(host, tenant)),
        ("lxc.cgroup.dir.monitor", monitor_cgroup(host, tenant)),
        (control.lxc_weight_key(), str(weight)),
        # The thesis pins each VM/container to one core.
        (lxc_key(control.backend.version, "cpuset.cpus"), str(cpu)),
        ("lxc.log.file", str(log_file)),
        ("lxc.log.level", "INFO"),
    ]
    return "".join(f"{key} = {value}\n" for key, value in keys)


def start(lxcpath: Path, tenant: str, config: str) -> int:
    """Start the container (its init is `sleep infinity`) and return its init pid."""
    directory = lxcpath / tenant
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config").write_text(config)
    sh("lxc-start", "-n", tenant, "-P", str(lxcpath), "-d", "--", "sleep", "infinity")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pid = sh("lxc-info", "-n", tenant, "-P", str(lxcpath), "-p", "-H", check=False).strip()
        if pid.isdigit():
            return int(pid)
        time.sleep(0.05)
    raise AgentError(f"container {tenant} did not reach RUNNING (see {directory})")


def attach(lxcpath: Path, tenant: str, argv: list[str], stdout: IO[bytes],
           stderr: IO[bytes]) -> subprocess.Popen[bytes]:
    """Run argv inside the container (its namespaces and cgroup)."""
    log.debug("lxc-attach %s: %s", tenant, " ".join(argv))
    return subprocess.Popen(
        ["lxc-attach", "-n", tenant, "-P", str(lxcpath), "--clear-env", "--", *argv],
        stdout=stdout, stderr=stderr,
    )


def names(lxcpath: Path) -> list[str]:
    if not lxcpath.is_dir():
        return []
    return sorted(p.name for p in lxcpath.iterdir() if (p / "config").is_file())


def running(lxcpath: Path) -> list[str]:
    if not lxcpath.is_dir():
        return []
    out = sh("lxc-ls", "-P", str(lxcpath), "--running", "-1", check=False)
    return out.split()


def destroy_all(lxcpath: Path) -> None:
    for tenant in names(lxcpath):
        sh("lxc-stop", "-n", tenant, "-P", str(lxcpath), "-k", check=False, timeout=60)
    left = running(lxcpath)
    if left:
        raise AgentError(f"containers still running after lxc-stop: {left} in {lxcpath}")
    if lxcpath.is_dir():
        shutil.rmtree(lxcpath)


def cpu_for(index: int) -> int:
    return index % (os.cpu_count() or 1)


class ContainerArm(Arm):
    """Each tenant an LXC container with the host's root read-only and its data at /mnt."""

    TOOLS = (
        Tool("lxc-start", "lxc", True, "container arms"),
        Tool("lxc-attach", "lxc", True, "container arms"),
    )
    DATA_MOUNT = DATA_MOUNT

    @property
    def lxcpath(self) -> Path:
        return lxc_path(self.context.root)

    def start(self) -> None:
        host = self.context.host_name
        for index, tenant in enumerate(self.tenants):
            config = config_text(host, tenant.name, tenant.data_dir, tenant.weight, cpu_for(index),
                                 self.context.io_control, self.lxcpath / f"{tenant.name}.log")
            start(self.lxcpath, tenant.name, config)
        self.check_weights()

    def spawn(self, tenant: str, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        return attach(self.lxcpath, tenant, argv, stdout, stderr)

    def stop(self) -> None:
        destroy_all(self.lxcpath)

    def versions(self) -> dict[str, str]:
        return {"lxc": tool_version("lxc-start", "--version")}

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        return [f"container {c}" for c in names(lxc_path(root))]

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        destroy_all(lxc_path(root))
