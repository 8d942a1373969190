"""vm: each tenant a QEMU guest (1 vCPU, 1 GiB) with its own kernel, ext4 and journal.

The guest gets the tenant's partition as a raw virtio-blk disk with `cache=none` (no host page
cache), so every journal write leaves through the QEMU process, which runs with all its threads
in the tenant's cgroup. The guest boots the project's Debian kernel and initramfs
(`agent/arms/vm/image.py`) and runs the host's own binaries over a read-only 9p root; commands
reach it over virtio-serial (`agent/arms/vm/side.py`, `agent/arms/vm/relay.py`): no guest network,
no host kernel module. Everything of a run's guests lives in `<state>/vm/`, and any process
whose command line names that folder is ours: teardown finds them that way after kill -9.

Set-up time: the guests boot at once and each then makes and mounts its ext4 and starts its
report (Python starts slowly under TCG; the report waits for a go before its first reading), and
the workloads prepare their data in all guests at once (`prepare_workloads`): under TCG each
guest is bound by its own vCPU, so one guest's set-up hardly slows the other's. The guests are
stopped with SIGKILL: nothing of a guest outlives its run (its disk is re-made by the next run,
its outputs are already in the run folder), so a clean shutdown would only cost time.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, TypeVar

import journalbench
from journalbench import vocabulary
from journalbench.agent import disk
from journalbench.agent.arms.base import Arm, TenantLayout, Tunnel
from journalbench.agent.arms.lxc import cpu_for
from journalbench.agent.arms.vm import image as guest_image
from journalbench.agent.arms.vm import tunnel as guest_tunnel
from journalbench.agent.arms.vm.report import ARMED, SATURATED, STARTED
from journalbench.agent.requires import Tool
from journalbench.agent.system import kill_wait, log, processes_naming, tool_version
from journalbench.errors import AgentError
from journalbench.formats.guest import guest_file

MEMORY_MB = 1024  # the thesis's VM: 1 vCPU, 1 GiB
PORTS = 6  # concurrent commands per guest (a server, its bridge, the report, a query, spares)
BOOT_TIMEOUT_S = 60
PROBE_TIMEOUT_S = 20
PROBE_CACHE = "kvm-probe.json"  # in the guest folder: the KVM probe's answer, per host boot
GUEST_DISK = "/dev/vda"
SATURATED_SHARE = 0.5  # a run is CPU-bound when the vCPU is saturated this share of seconds
REPORT_START_S = 60
# The report starts (Python, under TCG) while its guest's workload prepares, at the lowest
# priority: beside the preparation it only takes the vCPU's idle time (at the same priority
# the two slowed each other down by more than the report's start-up alone costs); it returns to
# the default priority at its go, before its first reading.
REPORT_NICE = 19
# The guest's kernel command line: its console, no probing of a keyboard, a mouse or serial
# ports nobody uses, and PCI INTx routing from the BIOS table instead of ACPI's interpreted one
# (pci=noacpi: ~0.35 s less under TCG; the virtio devices interrupt by MSI-X either way, the
# timer is the local APIC's either way), and no self-tests of the crypto algorithms at boot
# (cryptomgr.notests: ~0.3 s less under TCG; the same implementations serve, e.g. ext4's crc32c).
BOOT_ARGS = ("console=ttyS0 quiet panic=-1 i8042.nokbd i8042.noaux i8042.nopnp "
             "8250.nr_uarts=1 pci=noacpi cryptomgr.notests")
T = TypeVar("T")


def vm_root(state_root: Path) -> Path:
    return state_root / "vm"


def qemu_binary(arch: str | None = None) -> str:
    return f"qemu-system-{arch or platform.machine()}"


def agent_share() -> tuple[Path, str]:
    """The folder the guest sees as /run/jbagent, and the package root's name inside it (the
    zipapp or the source folder the agent runs from)."""
    package_root = Path(journalbench.__file__).resolve().parents[1]
    return package_root.parent, package_root.name


def guest_files() -> dict[str, Any]:
    info_path = guest_image.GUEST_DIR / guest_image.INFO
    fix = "run `make guest` (python3 -m journalbench.agent.arms.vm.image) on this host"
    if not info_path.is_file():
        raise AgentError(f"no guest kernel in {guest_image.GUEST_DIR}: {fix}")
    info: dict[str, Any] = json.loads(info_path.read_text())
    if info.get("recipe") != guest_image.recipe():
        raise AgentError(f"the guest in {guest_image.GUEST_DIR} was built by an older "
                         f"recipe: {fix}")
    return info


def qemu_argv(accel: str, folder: Path, volume: str, append: str,
              tunnels: list[str] | tuple[str, ...] = ()) -> list[str]:
    """multidevs=remap: the host root spans several file systems (/proc, /sys, ...) whose inode
    numbers collide; without it the guest confuses their directories and mounts land wrong."""
    share, _ = agent_share()
    guest = guest_image.GUEST_DIR
    kernel = guest / guest_files().get("boot_kernel", guest_image.KERNEL)
    argv = [
        qemu_binary(), "-name", f"jb-{folder.name}", "-accel", accel,
        "-cpu", "host" if accel == "kvm" else "max", "-m", str(MEMORY_MB), "-smp", "1",
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-nic", "none",
        "-serial", f"file:{folder / 'console.log'}", "-pidfile", str(folder / "qemu.pid"),
        "-kernel", str(kernel), "-initrd", str(guest / guest_image.INITRD),
        "-append", f"{BOOT_ARGS} {append}",
        "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
        "-fsdev", f"local,id=agent,path={share},security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=agent,mount_tag=jbagent",
        "-device", "virtio-serial-pci",
    ]
    if volume:
        argv += ["-drive", f"file={volume},format=raw,if=none,id=data,cache=none,aio=native",
                 "-device", "virtio-blk-pci,drive=data"]
    for port in range(PORTS):
        argv += ["-chardev", f"socket,id=p{port},path={folder / f'p{port}.sock'},"
                 "server=on,wait=off",
                 "-device", f"virtserialport,chardev=p{port},name=jb.{port}"]
    for name in tunnels:  # byte tunnels a workload asked for (agent/arms/vm/tunnel.py)
        argv += guest_tunnel.qemu_args(folder, name)
    return argv


def wait_console(proc: subprocess.Popen[bytes], console: Path, marker: str,
                 timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if console.exists() and marker in console.read_text(errors="replace"):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def probe_argv(arch: str, boot_kernel: str, serial: str) -> list[str]:
    """The KVM probe: the run's guest (kernel, initramfs, memory, root share, serial
    controller) without disk or command ports; its init prints PROBE_OK and powers off.
    check-host runs the same probe over the host's transport."""
    guest = guest_image.GUEST_DIR
    return [
        qemu_binary(arch), "-accel", "kvm", "-cpu", "host", "-m", str(MEMORY_MB), "-smp", "1",
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-nic", "none",
        "-serial", serial, "-kernel", str(guest / boot_kernel),
        "-initrd", str(guest / guest_image.INITRD), "-append", f"{BOOT_ARGS} jb_probe=1",
        "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
        "-device", "virtio-serial-pci",
    ]


def probe_kvm(folder: Path) -> str:
    """'kvm' if a guest really boots under KVM within the timeout, else why not."""
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError as error:
        return f"/dev/kvm: {error.strerror}"
    folder.mkdir(parents=True, exist_ok=True)
    boot_kernel = guest_files().get("boot_kernel", guest_image.KERNEL)
    argv = probe_argv(platform.machine(), boot_kernel, f"file:{folder / 'console.log'}")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ok = wait_console(proc, folder / "console.log", guest_image.PROBE_OK, PROBE_TIMEOUT_S)
    finally:
        kill_wait([proc.pid])
        proc.wait()
    return "kvm" if ok else probe_failed()


def probe_failed() -> str:
    return f"a KVM guest did not boot within {PROBE_TIMEOUT_S} s"


def probe_key(boot_id: str, kernel: str, qemu_version: str) -> dict[str, str]:
    """What the probe's answer holds for: this host boot, kernel, QEMU and guest build and
    command line."""
    return {"boot_id": boot_id, "kernel": kernel, "qemu": qemu_version,
            "guest": guest_image.recipe(), "boot_args": BOOT_ARGS}


def probe_record(key: dict[str, str], result: str) -> str:
    return json.dumps({"key": key, "result": result}, indent=1) + "\n"


def choose_accel(host: dict[str, Any], folder: Path) -> tuple[str, str]:
    """(accel, why); the probe's answer is kept per host boot, kernel, QEMU and guest build."""
    key = probe_key(Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
                    platform.release(), tool_version(qemu_binary(), "--version"))
    cache = guest_image.GUEST_DIR / PROBE_CACHE
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    if known.get("key") != key:
        known = {"key": key, "result": probe_kvm(folder / "kvm-probe")}
        cache.write_text(probe_record(key, known["result"]))
        shutil.rmtree(folder / "kvm-probe", ignore_errors=True)
    result = known["result"]
    if result == "kvm":
        return "kvm", "probe booted"
    if host.get("require_kvm"):
        raise AgentError(f"host {host['name']} requires KVM but {result} "
                         f"(probe cached in {cache})")
    log.info("KVM not usable (%s): guests run under TCG", result)
    return "tcg", result




def together(calls: dict[str, Callable[[], T]]) -> dict[str, T]:
    """Run each call in its own thread and wait for all; the first failure (in the calls'
    order) is raised once all have ended. A signal (Ctrl-C, SIGTERM) interrupts the wait and
    leaves the threads to end when teardown kills their guests."""
    pool = ThreadPoolExecutor(max_workers=max(1, len(calls)), thread_name_prefix="guest")
    try:
        futures = {name: pool.submit(call) for name, call in calls.items()}
        for future in futures.values():
            future.exception()
        return {name: future.result() for name, future in futures.items()}
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def summarize(report: Path) -> dict[str, Any]:
    busy = []
    if report.exists():
        for line in report.read_text().splitlines():
            try:
                value = json.loads(line).get("vcpu_busy")
            except ValueError:
                continue
            if value is not None:
                busy.append(value)
    saturated = sum(1 for b in busy if b >= SATURATED)
    return {
        "report": report.name, "seconds": len(busy),
        "vcpu_busy_mean": round(sum(busy) / len(busy), 4) if busy else None,
        "seconds_saturated": saturated, "saturated_at": SATURATED,
        "vcpu_saturated": bool(busy) and saturated >= SATURATED_SHARE * len(busy),
    }


class VirtualMachine(Arm):
    NAME = vocabulary.VM
    TOOLS = (
        Tool("qemu-system-{arch}", "qemu-system-{qarch}", True, "vm arm"),
        Tool("apt-get", "apt", True, "vm arm: guest kernel and busybox (make guest)"),
        Tool("dpkg-deb", "dpkg", True, "vm arm: guest kernel and busybox (make guest)"),
    )
    DATA_MOUNT = "/mnt"
    GUEST_KERNEL = True

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.qemus: dict[str, subprocess.Popen[bytes]] = {}
        self.boot_s: dict[str, float] = {}
        self.timing: dict[str, float] = {}
        # each report's start on CLOCK_MONOTONIC (the clock host.json's window names the
        # sampler's zero on), so tidy can place the report's seconds on the sampler's clock
        self.report_started_ns: dict[str, int] = {}
        self.reports: dict[str, subprocess.Popen[bytes]] = {}
        self.accel, self.accel_why = "", ""
        self.summaries: dict[str, dict[str, Any]] = {}
        self.layout: dict[str, Any] = {}
        self.tunnels: dict[str, list[str]] = {}

    @property
    def folder(self) -> Path:
        return vm_root(self.context.root)

    def prepare(self, device: disk.Device, tenants: list[dict[str, Any]]) -> None:
        volumes = disk.make_partitions(device, len(tenants))
        self.tenants = [TenantLayout(t["name"], t["weight"], Path(f"guest:{self.DATA_MOUNT}"),
                                     volume, None)
                        for t, volume in zip(tenants, volumes, strict=True)]

    def start(self) -> None:
        t0 = time.monotonic()
        self.guest = guest_files()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.accel, self.accel_why = choose_accel(self.context.host, self.folder)
        started = time.monotonic()
        for index, tenant in enumerate(self.tenants):
            self.qemus[tenant.name] = self.boot(tenant, cpu_for(index))
        together({t.name: lambda t=t: self.set_up_guest(t.name, started)
                  for t in self.tenants})
        log.info("guests up under %s: boot %s s", self.accel, self.boot_s)
        self.check_weights()
        self.check_threads()
        self.timing["start_s"] = round(time.monotonic() - t0, 3)

    def set_up_guest(self, tenant: str, started: float) -> None:
        self.make_file_system(tenant, started)
        self.start_report(tenant)

    def make_file_system(self, tenant: str, started: float) -> None:
        """Once its guest is up: the guest makes its own ext4 on its disk and mounts it (one
        command, as each costs a round trip through a TCG guest)."""
        self.wait_ready(tenant)
        self.boot_s[tenant] = round(time.monotonic() - started, 3)
        mkfs = ["mkfs.ext4", "-q", "-F", "-L", f"jb-{tenant}"[:16], "-E", "lazy_itable_init=1",
                GUEST_DISK]
        mount = ["mount", "-t", "ext4", "-o", disk.MOUNT_OPTIONS, GUEST_DISK, self.DATA_MOUNT]
        self.run(tenant, ["sh", "-ec", f"{shlex.join(mkfs)}; {shlex.join(mount)}"])

    def prepare_workloads(self, workloads: dict[str, Any]) -> None:
        """All guests at once: each is bound by its own vCPU under TCG."""
        t0 = time.monotonic()
        together({name: lambda name=name, w=w: w.prepare(self.shell(name))
                  for name, w in workloads.items()})
        self.timing["prepare_workloads_s"] = round(time.monotonic() - t0, 3)

    def boot(self, tenant: TenantLayout, cpu: int) -> subprocess.Popen[bytes]:
        """QEMU starts inside the tenant's cgroup, so every thread it ever makes is charged
        there, pinned to one core like the containers."""
        rel = self.context.cgroup(tenant.name)
        backend = self.context.backend
        backend.create(rel)
        self.context.io_control.set_weight(rel, tenant.weight)
        procs = backend.path(rel) / "cgroup.procs"
        folder = self.folder / tenant.name
        folder.mkdir(parents=True, exist_ok=True)
        _, package_root = agent_share()
        argv = qemu_argv(self.accel, folder, tenant.volume, f"jb_path={package_root}",
                         self.tunnels.get(tenant.name, []))
        log.debug("$ %s", " ".join(argv))

        def enter() -> None:
            procs.write_text(f"{os.getpid()}\n")
            os.sched_setaffinity(0, {cpu})

        return subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                stderr=(folder / "qemu.stderr").open("wb"), preexec_fn=enter)

    def wait_ready(self, tenant: str) -> None:
        proc, console = self.qemus[tenant], self.folder / tenant / "console.log"
        if wait_console(proc, console, guest_image.READY, BOOT_TIMEOUT_S):
            return
        why = "exited" if proc.poll() is not None else f"not ready in {BOOT_TIMEOUT_S} s"
        tail = (self.folder / tenant / "qemu.stderr").read_text(errors="replace").strip()
        raise AgentError(f"guest of {tenant} {why} (see {console})"
                         + (f": {tail.splitlines()[-1]}" if tail else ""))

    def check_threads(self) -> None:
        """Every QEMU thread (vCPU, I/O workers, 9p) must sit in its tenant's cgroup."""
        backend = self.context.backend
        for tenant, proc in self.qemus.items():
            want = "/" + self.context.cgroup(tenant)
            for task in Path(f"/proc/{proc.pid}/task").iterdir():
                found = backend.cgroup_of(int(task.name))
                if found != want:
                    raise AgentError(f"QEMU thread {task.name} of {tenant} is in {found}, "
                                     f"not {want}")

    def start_report(self, tenant: str) -> None:
        """Python starts slowly in a TCG guest: the report starts once the guest's ext4 is
        mounted (its journal exists) and arms itself while the workloads prepare."""
        path = self.context.out / guest_file(tenant)
        err = self.folder / tenant / "report.stderr"
        with path.open("wb") as stdout, err.open("wb") as stderr:
            self.reports[tenant] = self.spawn(
                tenant, ["nice", "-n", str(REPORT_NICE), "python3", "-S", "-m",
                         "journalbench.agent.arms.vm.report", tenant],
                stdout, stderr)

    def after_start(self) -> None:
        """Each report, once armed, gets its go (SIGUSR1, through its relay) and takes its first
        reading: measuring begins once every report runs."""
        t0 = time.monotonic()
        deadline = t0 + REPORT_START_S
        waiting, gone = [t.name for t in self.tenants], set()
        while waiting:
            for tenant in list(waiting):
                err = self.folder / tenant / "report.stderr"
                text = err.read_text(errors="replace")
                if STARTED in text:
                    self.report_started_ns[tenant] = time.monotonic_ns()
                    waiting.remove(tenant)
                elif self.reports[tenant].poll() is not None or time.monotonic() > deadline:
                    detail = text.strip().splitlines()
                    raise AgentError(f"guest report of {tenant} did not start ({err}): "
                                     f"{detail[-1] if detail else 'no output'}")
                elif ARMED in text and tenant not in gone:
                    self.reports[tenant].send_signal(signal.SIGUSR1)
                    gone.add(tenant)
            if waiting:
                time.sleep(0.01)
        self.timing["report_start_s"] = round(time.monotonic() - t0, 3)

    def before_stop(self) -> None:
        out = self.context.out
        for proc in self.reports.values():
            proc.terminate()  # all at once: each report writes its last row and exits
        for tenant, proc in self.reports.items():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            summary = summarize(out / guest_file(tenant))
            if summary["seconds"] == 0:
                err = (self.folder / tenant / "report.stderr").read_text(errors="replace")
                raise AgentError(f"guest report of {tenant} is empty: "
                                 f"{err.strip().splitlines()[-1] if err.strip() else '?'}")
            summary["started_ns"] = self.report_started_ns.get(tenant)
            self.summaries[tenant] = summary
            if summary["vcpu_saturated"]:
                log.warning("vCPU of %s saturated %d of %d s: its I/O may be CPU-bound",
                            tenant, summary["seconds_saturated"], summary["seconds"])
        self.reports.clear()

    def stop(self) -> None:
        for proc in [*self.reports.values(), *self.qemus.values()]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self.reports.clear()
        self.qemus.clear()
        self.clean(self.context.host, self.context.root)

    def plan_tunnels(self, wanted: dict[str, list[str]]) -> None:
        """Each guest gets one virtio-serial port per tunnel its workload asks for; their
        host ends (QEMU's sockets) are checked here, before any guest boots."""
        for tenant, names in wanted.items():
            for name in names:
                path = guest_tunnel.socket_path(self.folder / tenant, name)
                if len(str(path).encode()) > guest_tunnel.SOCKET_PATH_MAX:
                    raise AgentError(f"tenant {tenant}: tunnel socket {path} is longer than "
                                     f"{guest_tunnel.SOCKET_PATH_MAX} bytes: use a shorter "
                                     "state_dir")
        self.tunnels = {tenant: list(names) for tenant, names in wanted.items() if names}

    def tunnel(self, tenant: str, name: str) -> Path:
        """The host's end of a planned tunnel into the tenant's guest."""
        if name not in self.tunnels.get(tenant, []):
            raise AgentError(f"tenant {tenant}: its guest has no tunnel {name!r} (planned: "
                             f"{self.tunnels.get(tenant, [])})")
        return guest_tunnel.socket_path(self.folder / tenant, name)

    def byte_tunnel(self, tenant: str, name: str) -> Tunnel:
        """A guest shares no writable folder with the host: a host-side client reaches a
        server in it through its tunnel, whose guest end is a socat bridge."""
        return Tunnel(self.tunnel(tenant, name),
                      lambda target: guest_tunnel.bridge_argv(name, target), guest_tunnel.READY)

    def host_path(self, tenant: str) -> Path | None:
        return None  # the data folder is the guest's own file system

    # -- commands inside a guest --------------------------------------------------------------

    def spawn(self, tenant: str, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        folder = self.folder / tenant
        if tenant not in self.qemus or not folder.is_dir():
            raise AgentError(f"tenant {tenant} has no running guest")
        share, package_root = agent_share()
        log.debug("guest %s: %s", tenant, " ".join(argv))
        return subprocess.Popen(
            [sys.executable, "-m", "journalbench.agent.arms.vm.relay", str(folder), *argv],
            stdout=stdout, stderr=stderr, env={**os.environ,
                                               "PYTHONPATH": str(share / package_root)})

    # -- what the run records -----------------------------------------------------------------

    def versions(self) -> dict[str, str]:
        info = guest_files()
        return {"qemu": tool_version(qemu_binary(), "--version"),
                "guest_kernel": f"{info['kernel_release']} ({info['package_version']})"}

    def facts(self) -> dict[str, Any]:
        self.layout = super().facts()
        self.layout["virt_accel_reason"] = self.accel_why
        self.layout["mount_options"] = f"{disk.MOUNT_OPTIONS} (inside each guest)"
        self.layout["set_up_s"] = dict(self.timing)
        self.layout["guests"] = {
            tenant: {"qemu_pid": proc.pid, "vcpus": 1, "memory_mb": MEMORY_MB,
                     "boot_s": self.boot_s.get(tenant), "disk": GUEST_DISK,
                     "disk_cache": "none", "cpu": cpu_for(index),
                     "kernel": self.guest["kernel_release"],
                     "kernel_package": f"{self.guest['package']} {self.guest['package_version']}",
                     "threads_cgroup": sorted({self.context.backend.cgroup_of(int(t.name))
                                               for t in Path(f"/proc/{proc.pid}/task").iterdir()})}
            for index, (tenant, proc) in enumerate(self.qemus.items())
        }
        return self.layout

    def results(self) -> dict[str, Any]:
        """Each guest's own report summary (vCPU busy, saturation), beside its other facts."""
        return {"guests": {tenant: {**facts, "report": self.summaries.get(tenant)}
                           for tenant, facts in self.layout.get("guests", {}).items()}}

    def virt_accel(self) -> str | None:
        return self.accel

    # -- clean-up by discovery ----------------------------------------------------------------

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        found = [f"guest process {pid}" for pid in processes_naming(vm_root(root))]
        if vm_root(root).exists():
            found.append(f"guest folder {vm_root(root)}")
        return found

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        folder = vm_root(root)
        kill_wait(processes_naming(folder))
        if folder.exists():
            shutil.rmtree(folder)
