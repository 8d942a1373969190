"""hdd: the test device served at the speed of one hard-disk actuator, so that journal commits
cost what they cost on the thesis's disk (~18 ms per fsync), on a host whose own disk is a fast
SSD. A user-space model (`hdd_model.py`) runs as an nbdkit Python plugin over a sparse backing
file; nbdfuse exposes it as a file, and a direct-I/O loop device on that file is the test
device (rotational, BFQ, partitions as for an image).

Everything lives in <state>/hdd/: the backing file, the NBD socket, the FUSE mount point and
the daemons' pid files, so teardown finds it all after kill -9 of the agent.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from journalbench.agent import disk
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.devices.hdd_model import Params
from journalbench.agent.requires import Tool
from journalbench.agent.system import log, mounts, read, sh, write
from journalbench.errors import AgentError

# nbdkit loads its plugin from a real file, and the agent may run from a zipapp: the plugin
# and the model it imports are written into the state folder at attach (the plugin lives in a
# folder without __init__.py: it imports nbdkit, which only exists inside nbdkit)
SOURCES = {"hdd_plugin.py": "nbdkit/hdd_plugin.py", "hdd_model.py": "hdd_model.py"}
DAEMONS = ("nbdkit", "nbdfuse")
FAST_FLAG = "unmodelled"  # while this file exists the emulator skips the model's delays
START_TIMEOUT_S = 20


def folder(root: Path) -> Path:
    return root / "hdd"


class Hdd(DeviceProfile):
    NAME = "hdd"
    TOOLS = (
        Tool("nbdkit", "nbdkit-plugin-python", False, "hdd device profile (emulated disk)"),
        Tool("nbdfuse", "libnbd-bin", False, "hdd device profile (emulated disk)"),
    )
    ROTATIONAL = True
    ACCEPT_FSYNC_MS = (10.0, 25.0)  # the thesis's regime: ~18 ms per fsync on its HDD
    DRIFT_LIMIT = 0.10
    REFERENCE_S = 10  # ~150 fsyncs: its mean is steady to ~1.5% here
    MODEL: dict[str, Any] = {"write_cache": False}

    @property
    def model(self) -> Params:
        return Params(**{**self.MODEL, **self.params})

    def attach(self) -> disk.Device:
        here = folder(self.root)
        if self.leftovers(self.root):
            raise AgentError(f"{here}: an emulated disk of an earlier run is still there: run "
                             f"`journalbench teardown --host {self.host['name']}` first")
        (here / "fuse").mkdir(parents=True, exist_ok=True)
        (here / "nbd.sock").unlink(missing_ok=True)  # no daemon holds it (checked above)
        backing = here / "backing.img"
        backing.unlink(missing_ok=True)
        with backing.open("wb") as handle:
            handle.truncate(self.host["device"].get("size_gb", 12) << 30)
        self.start_nbdkit(here, backing)
        self.start_nbdfuse(here)
        path = sh("losetup", "--direct-io=on", "-P", "-f", "--show",
                  str(here / "fuse" / "disk")).strip()
        name = Path(path).name
        if read(f"/sys/block/{name}/loop/dio") != "1":
            raise AgentError(f"{path}: direct I/O could not be enabled on the emulated disk")
        write(f"/sys/block/{name}/queue/rotational", 1)  # a loop device claims 0
        log.info("emulated disk %s on %s (%s)", path, backing, self.model)
        return disk.Device(path=path, kind=self.host["device"]["kind"], named=str(backing))

    def start_nbdkit(self, here: Path, backing: Path, fast_flag: Path | None = None) -> None:
        """nbdkit serving `backing` through the model on here/nbd.sock; while `fast_flag`
        (default here/unmodelled) exists, without the model's delays."""
        package = importlib.resources.files("journalbench.agent.devices")
        for name, source in SOURCES.items():
            (here / name).write_text(package.joinpath(source).read_text())
        settings = [f"{k}={v}" for k, v in sorted(self.model.__dict__.items())]
        sh("nbdkit", "--unix", str(here / "nbd.sock"), "--pidfile", str(here / "nbdkit.pid"),
           "python", str(here / "hdd_plugin.py"), f"file={backing}",
           f"fast_flag={fast_flag or here / FAST_FLAG}", *settings, timeout=START_TIMEOUT_S)
        wait_for(here / "nbdkit.pid")

    def start_nbdfuse(self, here: Path) -> None:
        # setsid --fork: nbdfuse becomes init's child, so it never lingers as our zombie and
        # outlives a killed agent only until teardown stops it by its pid file
        with (here / "nbdfuse.log").open("ab") as logfile:
            subprocess.run(
                ["setsid", "--fork", "nbdfuse", "-P", str(here / "nbdfuse.pid"),
                 str(here / "fuse" / "disk"), "--unix", str(here / "nbd.sock")],
                stdin=subprocess.DEVNULL, stdout=logfile, stderr=logfile, check=True,
                timeout=START_TIMEOUT_S)
        wait_for(here / "nbdfuse.pid")
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (here / "fuse" / "disk").exists():
            if time.monotonic() > deadline:
                raise AgentError(f"nbdfuse did not expose {here / 'fuse' / 'disk'}")
            time.sleep(0.05)

    @contextmanager
    def unmodelled(self) -> Iterator[None]:
        flag = folder(self.root) / FAST_FLAG
        flag.touch()
        try:
            yield
        finally:
            flag.unlink(missing_ok=True)

    def cpu_seconds(self) -> float | None:
        """CPU time the emulator's daemons have used so far."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for pid in daemon_pids(self.root).values():
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        return total

    def facts(self) -> dict[str, Any]:
        return {"profile": self.NAME, "params": dict(self.model.__dict__),
                "emulator": "nbdkit python plugin hdd_model.py via nbdfuse + direct-I/O loop"}

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        here = folder(root)
        found = [f"{name} pid {pid}" for name, pid in daemon_pids(root).items()]
        found += [f"FUSE mount {t}" for _, t, kind, _ in mounts()
                  if kind.startswith("fuse") and Path(t).is_relative_to(here)]
        return found

    @classmethod
    def clean(cls, root: Path) -> None:
        here = folder(root)
        # a loop device whose detach the kernel deferred still writes through the FUSE file:
        # give it the time a slow disk needs to drain before pulling the file from under it
        disk.detach_loops(here, wait_s=60)
        for _, target, kind, _ in mounts():
            if kind.startswith("fuse") and Path(target).is_relative_to(here):
                sh("umount", target)
        for name in DAEMONS:  # nbdfuse first: it is nbdkit's client
            pid = daemon_pids(root).get(name)
            if pid is not None:
                stop(pid, name)
            (here / f"{name}.pid").unlink(missing_ok=True)
        if here.is_dir() and not cls.leftovers(root):
            for item in ("backing.img", "nbd.sock", "nbdfuse.log", FAST_FLAG, *SOURCES):
                (here / item).unlink(missing_ok=True)
            # the plugin's compiled model, where nbdkit's Python may write bytecode
            shutil.rmtree(here / "__pycache__", ignore_errors=True)
            for directory in (here / "fuse", here):
                try:
                    directory.rmdir()
                except OSError:
                    pass  # holds something that is not ours


class HddWriteCache(Hdd):
    """The same disk with its write cache on: writes are acknowledged at interface speed, and
    a flush pays for everything dirty (so the cost of an fsync grows with the neighbour's
    unflushed writes)."""

    NAME = "hdd-wcache"
    ACCEPT_FSYNC_MS = None  # how far from the thesis's regime this model lands is the finding
    MODEL = {"write_cache": True}


def wait_for(pidfile: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (pidfile.exists() and pidfile.read_text().strip()):
        if time.monotonic() > deadline:
            raise AgentError(f"{pidfile} did not appear within {START_TIMEOUT_S} s")
        time.sleep(0.05)


def daemon_pids(root: Path) -> dict[str, int]:
    """The emulator's daemons that still run, from their pid files (checked by name, so a
    recycled pid is never killed)."""
    found = {}
    for name in DAEMONS:
        pidfile = folder(root) / f"{name}.pid"
        try:
            pid = int(pidfile.read_text().strip())
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except (OSError, ValueError):
            continue
        if comm == name and alive(pid):
            found[name] = pid
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie its parent (init, or a container's init) has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop(pid: int, name: str, grace_s: float = 10) -> None:
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5)):
        if not alive(pid):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not alive(pid):
            return
        log.warning("%s (pid %d) ignored %s", name, pid, sig.name)
    raise AgentError(f"{name} (pid {pid}) did not stop")
