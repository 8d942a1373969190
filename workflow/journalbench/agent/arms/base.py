"""The interface every arm implements, and what an arm knows about its tenants.

An arm decides how tenants' storage maps onto the one test device, how a tenant is started
(container, VM), how a command runs inside it, and what it adds to host.json. A workload sees
its tenant through a `TenantShell` only: what the tenant offers (its data folder as the host
sees it, a byte tunnel into it, whether it runs its own kernel, ...), never which arm it is.
Tenants' weights are set, read back and counted through the run's I/O control
(`Context.io_control`, agent/iocontrol/). The agent's run (`agent/run.py`) calls, in order:
`plan_tunnels`, `prepare` (storage), `start`, `prepare_workloads` (the workloads' own
preparation through `run`/`spawn`), `after_start`, the measured phase, `before_stop`, `stop`.
Teardown after a crash cannot rely on an arm object, so each arm class also finds and removes
its own leftovers by discovery (`leftovers`, `clean`).
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar

from journalbench.agent import cgroups, disk
from journalbench.agent.iocontrol.base import IoControl
from journalbench.agent.journals import find_jbd2
from journalbench.agent.requires import Tool
from journalbench.agent.sampler import Jbd2
from journalbench.agent.system import log
from journalbench.errors import AgentError


@dataclass
class TenantLayout:
    name: str
    weight: int
    data_dir: Path  # the tenant's data folder as the host sees it
    volume: str  # block device holding the tenant's file system
    jbd2: Jbd2 | None  # None when the journal runs where the host cannot see it (a guest)


@dataclass(frozen=True)
class Tunnel:
    """A byte tunnel into a tenant, for a client on the host and a server listening on a unix
    socket inside the tenant: the client connects to `host_end`; inside the tenant the command
    `bridge(target)` carries the bytes to the server's socket `target`, and logs `ready` once
    both its ends are open."""

    host_end: Path
    bridge: Callable[[str], list[str]]
    ready: str


@dataclass(frozen=True)
class Context:
    """What an arm needs from the run: the host, its state folder, the I/O control (and
    through it the cgroup backend) and the run folder."""

    host: dict[str, Any]
    root: Path  # the host's state folder: every mount, image and container lives below it
    io_control: IoControl
    out: Path  # the run folder, for files an arm adds (e.g. a guest's own report)

    @property
    def backend(self) -> cgroups.Backend:
        return self.io_control.backend

    @property
    def host_name(self) -> str:
        return str(self.host["name"])

    def cgroup(self, tenant: str) -> str:
        return cgroups.tenant_cgroup(self.host_name, tenant)


class Arm:
    NAME: ClassVar[str]
    TOOLS: ClassVar[tuple[Tool, ...]] = ()
    DATA_MOUNT: ClassVar[str] = "/mnt"  # where a tenant sees its data folder
    # a tenant runs its own kernel: the host can neither trace its syscalls nor see its journal
    GUEST_KERNEL: ClassVar[bool] = False

    def __init__(self, context: Context) -> None:
        self.context = context
        self.tenants: list[TenantLayout] = []

    # -- storage and lifecycle ---------------------------------------------------------------

    def prepare(self, device: disk.Device, tenants: list[dict[str, Any]]) -> None:
        """Make the tenants' file systems on the test device and fill `self.tenants`."""
        raise NotImplementedError

    def plan_tunnels(self, wanted: dict[str, list[str]]) -> None:
        """Before `start`: the byte tunnels each tenant's workload asks for into its tenant
        (Workload.guest_tunnels). Only an arm whose tenants share no folder with the host opens
        them (vm); a container's socket is already in the host's view of its data folder."""

    def start(self) -> None:
        raise NotImplementedError

    def prepare_workloads(self, workloads: dict[str, Any]) -> None:
        """Once the tenants run: each tenant's workload prepares (data, servers, load phase),
        one tenant after the other, as they share one kernel and device; all at once when
        every workload only lays out files that nothing measures (Workload.prepares_apart)."""
        if workloads and all(w.prepares_apart() for w in workloads.values()):
            with ThreadPoolExecutor(max_workers=len(workloads)) as pool:
                done = [pool.submit(w.prepare, self.shell(name)) for name, w in workloads.items()]
            for future in done:
                future.result()  # the first failure, in the tenants' order
            return
        for name, workload in workloads.items():
            workload.prepare(self.shell(name))

    def after_start(self) -> None:
        """Once the tenants run and their workloads are prepared, before measuring."""

    def before_stop(self) -> None:
        """After measuring, before the tenants stop."""

    def results(self) -> dict[str, Any]:
        """What the arm learnt during the run (after `before_stop`), added to host.json's
        `layout`."""
        return {}

    def virt_accel(self) -> str | None:
        """`kvm` or `tcg` for an arm whose tenants are VMs; None for containers."""
        return None

    # -- what a tenant offers its workload (TenantShell) --------------------------------------

    def layout_of(self, tenant: str) -> TenantLayout:
        for layout in self.tenants:
            if layout.name == tenant:
                return layout
        raise AgentError(f"tenant {tenant}: not one of this run's (its storage is not prepared)")

    def host_path(self, tenant: str) -> Path | None:
        """The tenant's data folder as the host sees it; None when the host cannot see it."""
        return self.layout_of(tenant).data_dir

    def byte_tunnel(self, tenant: str, name: str) -> Tunnel | None:
        """The tunnel `name` into the tenant (planned in `plan_tunnels`); None when the arm
        needs none (a container's sockets are in the host's view of its data folder)."""
        return None

    def stop(self) -> None:
        raise NotImplementedError

    # -- commands inside a tenant -------------------------------------------------------------

    def spawn(self, tenant: str, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        raise NotImplementedError

    def run(self, tenant: str, argv: list[str], timeout: float = 600) -> str:
        """Run argv inside the tenant and return its stdout; a failure names the tenant."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = self.spawn(tenant, argv, out, err)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise AgentError(f"{argv[0]} in {tenant} timed out after {timeout:.0f} s") from None
            out.seek(0)
            err.seek(0)
            if code != 0:
                detail = err.read().decode(errors="replace").strip().splitlines()
                raise AgentError(f"{argv[0]} in {tenant} exited {code}: "
                                 f"{detail[-1] if detail else 'no output'}")
            return out.read().decode(errors="replace")

    def shell(self, tenant: str) -> TenantShell:
        return TenantShell(self, tenant)

    # -- what the run records -----------------------------------------------------------------

    @property
    def jbd2_threads(self) -> list[Jbd2]:
        """Journal threads the host can see and sample, once each."""
        unique = {t.jbd2.pid: t.jbd2 for t in self.tenants if t.jbd2 is not None}
        return list(unique.values())

    def journal_cgroups(self) -> dict[str, str]:
        """jbd2 thread name -> the cgroup of its own it sits in for the measured phase (whose
        controller statistics the sampler adds to the thread's lines); none by default."""
        return {}

    def versions(self) -> dict[str, str]:
        """Tool versions of the arm's runtime, for host.json's `tools`."""
        return {}

    def facts(self) -> dict[str, Any]:
        """host.json's `layout`: the tenants, their cgroups and weights, the journals."""
        backend, control = self.context.backend, self.context.io_control
        return {
            "arm": self.NAME,
            "tenants": {
                t.name: {
                    "volume": t.volume, "data_dir": str(t.data_dir),
                    "cgroup": "/" + self.context.cgroup(t.name),
                    "weight_set": t.weight,
                    "weight_read_back": control.weight(self.context.cgroup(t.name)),
                    "jbd2": t.jbd2.name if t.jbd2 else None,
                }
                for t in self.tenants
            },
            "jbd2": [
                {"name": j.name, "pid": j.pid, "tenant": j.tenant,
                 "cgroup_during_run": backend.cgroup_of(j.pid)}
                for j in self.jbd2_threads
            ],
            "mount_options": disk.MOUNT_OPTIONS,
        }

    def check_weights(self) -> None:
        """cgroup weights only compete among siblings: each tenant's own group must read back
        the weight the spec gave it."""
        for tenant in self.tenants:
            rel = self.context.cgroup(tenant.name)
            found = self.context.io_control.weight(rel)
            if found != tenant.weight:
                raise AgentError(f"{rel}: weight reads {found}, spec says {tenant.weight}")

    # -- clean-up by discovery (also after kill -9 of the agent) ------------------------------

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        return []

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        """Remove what runs of this arm leave on the host, found without the run's state."""


@dataclass(frozen=True)
class TenantShell:
    """An arm bound to one tenant: what a workload may ask of its tenant (run its commands
    there, and what the tenant offers), so that no workload tests which arm it runs on."""

    arm: Arm
    name: str

    @property
    def data_dir(self) -> str:
        """The tenant's data folder as commands inside the tenant see it."""
        return self.arm.DATA_MOUNT

    @property
    def host_path(self) -> Path | None:
        """The tenant's data folder as the host sees it; None when it lives in a guest."""
        return self.arm.host_path(self.name)

    def tunnel(self, name: str) -> Tunnel | None:
        """The byte tunnel `name` into the tenant, as its workload asked for it
        (Workload.guest_tunnels); None when the tenant needs none: its data folder is the
        host's (`host_path`)."""
        return self.arm.byte_tunnel(self.name, name)

    @property
    def guest_kernel(self) -> bool:
        """The tenant runs its own kernel: the host can neither trace its syscalls nor see
        its journal."""
        return self.arm.GUEST_KERNEL

    @property
    def sharing(self) -> list[str]:
        """The tenants whose data is on this tenant's file system, itself included, in the
        run's order; empty before the storage is prepared."""
        mine = next((t for t in self.arm.tenants if t.name == self.name), None)
        return [t.name for t in self.arm.tenants if mine and t.volume == mine.volume]

    @property
    def cgroup(self) -> str:
        """The tenant's cgroup, relative to the hierarchy's root (no leading slash)."""
        return self.arm.context.cgroup(self.name)

    @property
    def out(self) -> Path:
        """The run folder."""
        return self.arm.context.out

    @property
    def state_root(self) -> Path:
        """The host's state folder of this run (`<state_dir>/<host>`), which teardown empties."""
        return self.arm.context.root

    @property
    def state_dir(self) -> Path:
        """The host's `state_dir`: what outlives runs (caches) lives there."""
        return Path(self.arm.context.host["state_dir"])

    @property
    def host_name(self) -> str:
        return self.arm.context.host_name

    def run(self, argv: list[str], timeout: float = 600) -> str:
        return self.arm.run(self.name, argv, timeout)

    def spawn(self, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        return self.arm.spawn(self.name, argv, stdout, stderr)


def one_ext4(device: disk.Device, mount_root: Path,
             tenants: list[dict[str, Any]]) -> list[TenantLayout]:
    """One ext4 over the whole device, each tenant a folder of it: one shared journal."""
    disk.wipe(device)
    disk.mkfs_ext4(device.path, "jb-shared")
    mount = mount_root / "shared"
    disk.mount_ext4(device.path, mount)
    journal = find_jbd2(device.path, None)
    layouts = []
    for tenant in tenants:
        data = mount / tenant["name"]
        data.mkdir()
        layouts.append(TenantLayout(tenant["name"], tenant["weight"], data, device.path, journal))
    return layouts


def ext4_per_tenant(device: disk.Device, mount_root: Path,
                    tenants: list[dict[str, Any]]) -> list[TenantLayout]:
    """One partition and ext4 per tenant: one journal thread each."""
    layouts = []
    volumes = disk.make_partitions(device, len(tenants))
    for tenant, volume in zip(tenants, volumes, strict=True):
        disk.mkfs_ext4(volume, f"jb-{tenant['name']}")
        mount = mount_root / tenant["name"]
        disk.mount_ext4(volume, mount)
        layouts.append(TenantLayout(tenant["name"], tenant["weight"], mount, volume,
                                    find_jbd2(volume, tenant["name"])))
        log.debug("tenant %s on %s", tenant["name"], volume)
    return layouts
