"""The nested host's guest on this machine: its disks, its QEMU, whether it runs, stopping it,
and what it leaves.

Everything of one nested host lives in `<state_dir>/<name>/` on this machine (QEMU's pid file,
console and stderr, the controller's key and the pinned host key, the disks and their
emulators, the set-up flags the guest shares), and every process it starts names that folder
on its command line: after kill -9 of any controller, teardown finds them all by discovery. The
device calibrations the guest measures are kept in `<state_dir>/calibration/<name>.nested/`,
which outlives the machine as a host's calibration folder outlives its runs.

The guest (control/nested/image.py) boots the VM arm's Debian kernel with cgroup v1 switched off
(`cgroup_no_v1=all`), the host's root read-only over 9p under a writable overlay, QEMU's user
network closed to the outside (`restrict=on`) with one port forward, bound to 127.0.0.1, to
its sshd. Each device profile it boots with is one virtio-blk disk (`cache=none`): `native` a
sparse image, `hdd` and `hdd-wcache` the profile's model in nbdkit, which QEMU's own NBD client
reads (no NBD or FUSE in the kernel here).

Two locks, both flock(2) (released by the kernel when their holder dies, even by SIGKILL):
booting or stopping holds `<name>.nested-boot.lock` exclusively, so concurrent controllers boot
once; every controller that uses the machine holds `<name>.nested-use.lock` shared, and
stopping takes it exclusively, so a machine in use is never stopped under it. Teardown removes
both files while it holds both locks (nothing of the host is left in the state folder); a
controller that was waiting on a file so removed finds it gone once it holds the lock, and
locks the path anew (`flock_path`).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from journalbench.agent.arms.vm import arm as vm
from journalbench.agent.devices.hdd import Hdd
from journalbench.agent.registry import PROFILES
from journalbench.agent.system import kill_wait, processes_naming, tool_version
from journalbench.control.nested import image
from journalbench.errors import AgentError, ConfigError

LOOPBACK = "127.0.0.1"
STOP_GRACE_S = 10
LOCKS = ("boot", "use")
SAFE_ARG = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-")


@dataclass(frozen=True)
class Machine:
    host: dict[str, Any]

    # -- where things are ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return str(self.host["name"])

    @property
    def state_dir(self) -> Path:
        return Path(self.host["state_dir"])

    @property
    def folder(self) -> Path:
        return self.state_dir / self.name

    @property
    def record(self) -> Path:
        return self.folder / "machine.json"

    @property
    def console(self) -> Path:
        return self.folder / "console.log"

    def console_text(self) -> str:
        """What the guest printed on its console so far ("" before QEMU made the file)."""
        return self.console.read_text(errors="replace") if self.console.exists() else ""

    @property
    def client_key(self) -> Path:
        return self.folder / "client_key"

    @property
    def known_hosts(self) -> Path:
        return self.folder / "known_hosts"

    @property
    def flags(self) -> Path:
        return self.folder / "flags"

    @property
    def calibration(self) -> Path:
        return self.state_dir / "calibration" / f"{self.name}.nested"

    def lock_file(self, what: str) -> Path:
        return self.state_dir / f"{self.name}.nested-{what}.lock"

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self.host["nested"])

    # -- locks ---------------------------------------------------------------------------------

    @contextmanager
    def booting(self) -> Iterator[None]:
        with self.locked("boot", fcntl.LOCK_EX):
            yield

    @contextmanager
    def locked(self, what: str, how: int) -> Iterator[IO[str]]:
        try:
            handle = flock_path(self.lock_file(what), how)
        except BlockingIOError:
            raise AgentError(f"host {self.name} is busy: a controller is using its nested "
                             f"machine ({self.lock_file(what)}); wait until it is done") from None
        try:
            yield handle
        finally:
            handle.close()

    def lease(self) -> IO[str]:
        """A shared hold on the machine while a controller uses it; close it to let go."""
        return flock_path(self.lock_file("use"), fcntl.LOCK_SH)

    def remove_lock_files(self) -> None:
        """Only while holding both locks exclusively (teardown): a waiter then finds its
        file gone and locks the path anew."""
        for what in LOCKS:
            self.lock_file(what).unlink(missing_ok=True)

    # -- is it running -------------------------------------------------------------------------

    def state(self) -> dict[str, Any] | None:
        """The record of the running machine, None if it does not run."""
        try:
            record: dict[str, Any] = json.loads(self.record.read_text())
        except (OSError, ValueError):
            return None
        return record if self.alive(record) else None

    def alive(self, record: dict[str, Any]) -> bool:
        pid = int(record.get("pid", 0))
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        fields = stat.rsplit(")", 1)[1].split()
        return (fields[0] != "Z" and int(fields[19]) == record.get("start_ticks")
                and any(str(self.folder).encode() in arg for arg in argv))

    def ensure(self, cgroup_version: int | None = None) -> dict[str, Any]:
        """The running machine's record; booted first if it does not run (once, whoever asks
        at the same time), as `cgroup_version` (else the host file's first) when it boots.
        A running machine is returned whatever its version: the caller switches it
        (NestedTransport.connect)."""
        found = self.state()
        if found is not None:
            return found
        with self.booting():
            found = self.state()
            if found is not None:
                return found  # another controller booted it while we waited
            self.clean()  # whatever a machine that died left
            return self.boot(cgroup_version)

    def cgroup_version(self, wanted: int | None) -> int:
        """The version a boot asked for `wanted` gets: it, if the host file allows it."""
        allowed = [int(v) for v in self.settings["cgroup_versions"]]
        if wanted is None:
            return allowed[0]
        if int(wanted) not in allowed:
            raise ConfigError(f"host {self.name}: a run needs cgroup v{wanted}; its host file's "
                              f"nested.cgroup_versions allows {allowed}")
        return int(wanted)

    # -- booting -------------------------------------------------------------------------------

    def boot(self, cgroup_version: int | None = None) -> dict[str, Any]:
        check_safe(self.host)
        version = self.cgroup_version(cgroup_version)
        nested = self.settings
        try:
            info = image.build()
        except SystemExit as error:  # the build's own one-line message (it also runs alone)
            raise AgentError(str(error)) from None
        self.folder.mkdir(parents=True, exist_ok=True)
        self.flags.mkdir()
        self.calibration.mkdir(parents=True, exist_ok=True)
        blob = self.make_client_key()
        accel, why = self.accel()
        disks = self.make_disks()
        t0 = time.monotonic()
        port = self.start_qemu(info, accel, blob, disks, version)
        host_key, uptime = self.wait_ready(float(nested["boot_timeout_s"]))
        boot_s = time.monotonic() - t0
        self.known_hosts.write_text(f"[{LOOPBACK}]:{port} {host_key}\n")
        pid = int((self.folder / "qemu.pid").read_text().strip())
        record = {
            "pid": pid, "start_ticks": start_ticks(pid), "port": port, "host_key": host_key,
            "accel": accel, "accel_why": why, "vcpus": nested["vcpus"],
            "memory_mb": nested["memory_mb"], "profiles": list(nested["profiles"]),
            "cgroup_version": version,
            "boot_s": round(boot_s, 3), "guest_uptime_at_ready_s": float(uptime),
            "booted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "kernel": info["kernel_release"],
            "kernel_package": f"{info['package']} {info['package_version']}",
            "initramfs_recipe": info["recipe"],
            "qemu": tool_version(vm.qemu_binary(), "--version"),
            "outer_kernel": platform.release(), "outer_hostname": socket.gethostname(),
            "disks": disks,
        }
        tmp = self.record.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        tmp.rename(self.record)
        return record

    def make_client_key(self) -> str:
        """A fresh key pair for this boot; the guest authorizes its public half only."""
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                        f"journalbench-{self.name}", "-f", str(self.client_key)],
                       check=True, capture_output=True)
        return self.client_key.with_suffix(".pub").read_text().split()[1]

    def accel(self) -> tuple[str, str]:
        wanted = self.settings["accel"]
        if wanted == "tcg":
            return "tcg", "host file: nested.accel tcg"
        if wanted == "kvm":
            return "kvm", "host file: nested.accel kvm"
        return vm.choose_accel({**self.host, "require_kvm": False}, self.folder)

    def make_disks(self) -> dict[str, dict[str, Any]]:
        """One disk per device profile; returns each disk's facts and QEMU's -drive value."""
        disks = {}
        size = int(self.host["device"]["size_gb"]) << 30
        for profile in self.settings["profiles"]:
            here = self.folder / "disks" / profile
            here.mkdir(parents=True)
            cls = PROFILES[profile]
            if issubclass(cls, Hdd):
                backing = here / "backing.img"
                backing.write_bytes(b"")
                os.truncate(backing, size)
                params = dict(self.host.get("device_profiles", {}).get(profile, {}))
                cls(self.host, here, params).start_nbdkit(here, backing, self.flags / profile)
                drive = f"file=nbd+unix:///?socket={here / 'nbd.sock'},format=raw"
                disks[profile] = {"drive": drive, "emulated": True,
                                  "emulator": "nbdkit python plugin hdd_model.py, read by "
                                              "QEMU's NBD client"}
            else:
                disk_image = here / "disk.img"
                disk_image.write_bytes(b"")
                os.truncate(disk_image, size)
                disks[profile] = {"drive": f"file={disk_image},format=raw,aio=native",
                                  "emulated": False, "emulator": None}
            disks[profile].update(serial=f"jb-{profile}", size_bytes=size, cache="none")
        return disks

    def qemu_argv(self, info: dict[str, Any], accel: str, blob: str,
                  disks: dict[str, dict[str, Any]], port: int,
                  cgroup_version: int = 2) -> list[str]:
        nested = self.settings
        memory = int(nested["memory_mb"])
        # v2: every controller on cgroup v2 (v1 off); v1: the hybrid layout stage2 mounts
        cgroups = (("cgroup_no_v1=all " if cgroup_version == 2 else "")
                   + f"jb_cgroup={cgroup_version}")
        append = (f"{vm.BOOT_ARGS} {cgroups} jb_authkey={blob} jb_state={self.state_dir} "
                  f"jb_name={self.name} jb_rw_mb={memory // 2}")
        argv = [
            vm.qemu_binary(), "-name", f"jb-nested-{self.name}", "-accel", accel,
            "-cpu", "host" if accel == "kvm" else "max", "-m", str(memory),
            "-smp", str(nested["vcpus"]), "-nodefaults", "-no-user-config", "-display", "none",
            "-no-reboot", "-daemonize", "-pidfile", str(self.folder / "qemu.pid"),
            "-serial", f"file:{self.console}",
            "-kernel", info["kernel"], "-initrd", str(image.NESTED_DIR / image.INITRD),
            "-append", append,
            "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
            "-fsdev", f"local,id=cal,path={self.calibration},security_model=none",
            "-device", "virtio-9p-pci,fsdev=cal,mount_tag=calibration",
            "-fsdev", f"local,id=flags,path={self.flags},security_model=none",
            "-device", "virtio-9p-pci,fsdev=flags,mount_tag=flags",
            # restrict=on: the guest reaches neither this machine nor the outside; the one
            # way in is the forward to its sshd, bound to the loopback address only
            "-netdev", f"user,id=net0,restrict=on,hostfwd=tcp:{LOOPBACK}:{port}-:22",
            "-device", "virtio-net-pci,netdev=net0",
        ]
        for index, (profile, facts) in enumerate(disks.items()):
            argv += ["-drive", f"{facts['drive']},if=none,id=disk{index},cache=none",
                     "-device", f"virtio-blk-pci,drive=disk{index},serial=jb-{profile}"]
        return argv

    def start_qemu(self, info: dict[str, Any], accel: str, blob: str,
                   disks: dict[str, dict[str, Any]], cgroup_version: int = 2) -> int:
        """QEMU daemonizes once the machine is set up (it then outlives this controller);
        a port taken meanwhile by someone else is tried again with another."""
        for _ in range(3):
            port = free_port()
            argv = self.qemu_argv(info, accel, blob, disks, port, cgroup_version)
            (self.folder / "qemu.argv").write_text(shlex.join(argv) + "\n")
            with (self.folder / "qemu.stderr").open("wb") as stderr:
                done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=stderr,
                                      stderr=stderr, timeout=120)
            if done.returncode == 0:
                return port
            detail = (self.folder / "qemu.stderr").read_text(errors="replace").strip()
            if "host forwarding" not in detail:
                break
        raise AgentError(f"host {self.name}: QEMU did not start the nested machine: "
                         f"{detail.splitlines()[-1] if detail else 'no message'} "
                         f"({self.folder / 'qemu.stderr'})")

    def wait_ready(self, timeout_s: float) -> tuple[str, str]:
        """(host key, guest uptime) once the guest's PID 1 says its sshd runs."""
        deadline = time.monotonic() + timeout_s
        pidfile = self.folder / "qemu.pid"
        while time.monotonic() < deadline:
            text = self.console_text()
            key = next((line.split(None, 1)[1] for line in text.splitlines()
                        if line.startswith(image.HOST_KEY)), None)
            ready = next((line.split()[1] for line in text.splitlines()
                          if line.startswith(image.READY)), None)
            if key and ready:
                return key, ready
            failed = [line for line in text.splitlines() if "boot failed" in line
                      or "nested init:" in line]
            if failed or not (pidfile.exists() and pid_alive(int(pidfile.read_text()))):
                last = next((line.strip() for line in reversed(text.splitlines())
                             if line.strip()), "")
                why = failed[-1] if failed else f"QEMU exited (the console ends {last!r})"
                raise AgentError(f"host {self.name}: the nested machine did not boot: {why} "
                                 f"(see {self.console})")
            time.sleep(0.1)
        raise AgentError(f"host {self.name}: the nested machine was not ready within "
                         f"{timeout_s:.0f} s (see {self.console})")

    # -- stopping and clean-up -----------------------------------------------------------------

    def clean(self) -> None:
        """Stop every process of this machine (QEMU, the disks' emulators), found by the
        folder they name, and remove the folder."""
        pids = processes_naming(self.folder)
        for pid in pids:  # QEMU first gets the chance to exit on its own
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + STOP_GRACE_S
        while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        kill_wait([p for p in pids if pid_alive(p)], f"processes of {self.folder}")
        if self.folder.exists():
            shutil.rmtree(self.folder)

    def stop(self, remove_locks: bool = False) -> None:
        """`remove_locks`: the caller holds the use lock exclusively (teardown)."""
        with self.booting():
            self.clean()
            if remove_locks:
                self.remove_lock_files()

    def residue(self) -> list[str]:
        found = [f"process {pid} ({process_name(pid)}) of nested host {self.name}"
                 for pid in processes_naming(self.folder)]
        if self.folder.exists():
            found.append(f"folder {self.folder}")
        found += [f"lock file {self.lock_file(what)}" for what in LOCKS
                  if self.lock_file(what).exists()]
        return found


def check_safe(host: dict[str, Any]) -> None:
    """Values that travel on the guest's kernel command line hold no space or quote."""
    for field, value in (("state_dir", str(host["state_dir"])), ("name", str(host["name"]))):
        if not set(value) <= SAFE_ARG:
            raise ConfigError(f"{host.get('_file', host['name'])}: field {field}: a nested "
                              f"host's {field} may hold letters, digits and / . _ - only")


def flock_path(path: Path, how: int) -> IO[str]:
    """flock(2) on the file at `path` (made if missing), held by the handle returned. A file
    removed by its last holder (teardown) may have been locked meanwhile by a waiter that had
    opened it: that waiter then holds a lock nobody else can see, so it opens the path again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = path.open("a")
        try:
            fcntl.flock(handle, how)
            held = os.fstat(handle.fileno())
            now = os.stat(path)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                return handle
        except FileNotFoundError:
            pass  # removed while we waited: open it anew
        except BaseException:
            handle.close()
            raise
        handle.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def start_ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def pid_alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "gone"
