"""cgroup v1 blkio and cgroup v2 io behind one interface: what depends on the cgroup version
alone (making groups, moving threads, which group a task is in, the groups' paths, residue).
What a group's disk weight and counters are depends on how weights are enforced as well: that
is the I/O control's (agent/iocontrol/).

Every cgroup the agent makes lives under `journalbench/<host name>/` in every hierarchy, so two
hosts sharing one machine (tests) never touch each other's groups, and residue is easy to find.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from journalbench.agent.system import log, mounts, read, write
from journalbench.errors import AgentError

PARENT = "journalbench"


def cgroup_mounts() -> list[Path]:
    """Mount points of every cgroup hierarchy (v1 controllers and the v2 unified one)."""
    return [Path(target) for _, target, fstype, _ in mounts() if fstype in ("cgroup", "cgroup2")]


def v1_blkio_root() -> Path | None:
    for _, target, fstype, options in mounts():
        if fstype == "cgroup" and "blkio" in options.split(","):
            return Path(target)
    return None


def v2_root() -> Path | None:
    for _, target, fstype, _ in mounts():
        if fstype == "cgroup2":
            return Path(target)
    return None


def lxc_key(version: int, cgroup_file: str) -> str:
    """The LXC config key that writes `cgroup_file` in a container's cgroup as it starts."""
    return f"{'lxc.cgroup' if version == 1 else 'lxc.cgroup2'}.{cgroup_file}"


class Backend:
    """What differs between cgroup v1 blkio and v2 io."""

    version: int
    root: Path

    def path(self, rel: str) -> Path:
        return self.root / rel if rel not in ("", "/") else self.root

    def controller_line(self, pid: int) -> str | None:
        raise NotImplementedError

    def create(self, rel: str) -> None:
        self.path(rel).mkdir(parents=True, exist_ok=True)

    def move_thread(self, tid: int, rel: str) -> None:
        write(self.path(rel) / self.thread_file, tid)

    thread_file = "cgroup.procs"

    def cgroup_of(self, pid: int) -> str:
        """The cgroup (relative to our root, '/' for the root) a task sits in."""
        try:
            line = self.controller_line(pid)
        except FileNotFoundError:
            raise AgentError(f"task {pid} is gone") from None
        if line is None:
            raise AgentError(
                f"/proc/{pid}/cgroup has no line for the cgroup v{self.version} disk controller")
        return line.split(":", 2)[2]


class V1Blkio(Backend):
    version = 1
    thread_file = "tasks"  # v1 moves single threads through `tasks`

    def __init__(self, root: Path) -> None:
        self.root = root

    def controller_line(self, pid: int) -> str | None:
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            if "blkio" in line.split(":")[1].split(","):
                return line
        return None


# What a tenant's v2 group needs from its parents: io (weights, counters), memory (with io, a
# buffered writer's write-back is charged to the group that dirtied the pages, not to the
# flusher thread) and cpuset (the containers' core pinning).
V2_CONTROLLERS = ("io", "memory", "cpuset")


class V2Io(Backend):
    version = 2

    def __init__(self, root: Path) -> None:
        self.root = root

    def create(self, rel: str) -> None:
        # v2 only hands a controller to children whose parents enabled it.
        parts = Path(rel).parts
        for depth in range(len(parts)):
            parent = self.root.joinpath(*parts[:depth])
            child = parent / parts[depth]
            child.mkdir(exist_ok=True)
            offered = read(parent / "cgroup.controllers").split()
            enabled = read(parent / "cgroup.subtree_control").split()
            wanted = [c for c in V2_CONTROLLERS if c in offered and c not in enabled]
            if wanted:
                write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))

    def controllers(self, rel: str) -> list[str]:
        """The controllers a group has (its `cgroup.controllers`: what its parent enabled)."""
        return read(self.path(rel) / "cgroup.controllers").split()

    def controller_line(self, pid: int) -> str | None:
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line
        return None


def v2_controllers() -> list[str]:
    """The controllers cgroup v2 offers on this host (its root's `cgroup.controllers`): all of
    them on a v2-only host; on a v1 host, those its unified hierarchy holds (none, usually)."""
    root = v2_root()
    if root is None or not (root / "cgroup.controllers").is_file():
        return []
    return read(root / "cgroup.controllers").split()


def writeback_attributed(backend: Backend, groups: list[str]) -> bool:
    """Whether a buffered writer's write-back is charged to its own group: only cgroup v2 does
    it, and only for groups that have both the memory and the io controller (the flusher
    writes a page back on behalf of the memory group that dirtied it)."""
    if not isinstance(backend, V2Io) or not groups:
        return False
    return all({"io", "memory"} <= set(backend.controllers(rel)) for rel in groups)


def detect() -> Backend:
    """cgroup v1 blkio if the host has it, else v2 with the io controller."""
    v1 = v1_blkio_root()
    if v1 is not None:
        return V1Blkio(v1)
    v2 = v2_root()
    if v2 is not None and "io" in read(v2 / "cgroup.controllers").split():
        return V2Io(v2)
    raise AgentError("no cgroup disk controller: neither a v1 blkio hierarchy nor v2 with io")


def host_parent(host: str) -> str:
    return f"{PARENT}/{host}"


def tenant_cgroup(host: str, tenant: str) -> str:
    return f"{PARENT}/{host}/{tenant}"


def monitor_cgroup(host: str, tenant: str) -> str:
    # Tenant names cannot hold a dot, so the LXC monitor group never collides with a tenant.
    return f"{PARENT}/{host}/monitor.{tenant}"


def tasks_in(directory: Path) -> list[int]:
    pids: list[int] = []
    for procs in directory.rglob("cgroup.procs"):
        try:
            pids += [int(p) for p in procs.read_text().split()]
        except OSError:
            continue
    return pids


def remove_host_groups(host: str, attempts: int = 20) -> list[str]:
    """Remove journalbench/<host> in every hierarchy, deepest first; return what is left."""
    left = []
    for hierarchy in cgroup_mounts():
        top = hierarchy / host_parent(host)
        if not top.is_dir():
            continue
        for directory in sorted(top.rglob("*/"), key=lambda p: -len(p.parts)) + [top]:
            if not directory.is_dir():
                continue
            for _ in range(attempts):
                try:
                    os.rmdir(directory)
                    break
                except OSError as error:
                    if error.errno != errno.EBUSY:
                        raise
                    time.sleep(0.05)  # a task that just exited may still be leaving
            if directory.is_dir():
                left.append(f"{directory} (tasks {tasks_in(directory)})")
    for hierarchy in cgroup_mounts():
        parent = hierarchy / PARENT
        try:
            parent.rmdir()  # only when no other host still uses it
        except OSError:
            pass
    if left:
        log.warning("cgroups left: %s", left)
    return left


def host_groups_present(host: str) -> list[str]:
    return [str(h / host_parent(host)) for h in cgroup_mounts() if (h / host_parent(host)).exists()]
