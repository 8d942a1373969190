"""The test device: an image-backed loop device or a dedicated disk, partitions, ext4 (its
scheduler is the I/O control's: agent/iocontrol/).

Only a Device made by `attach_image` or `guard_disk` is ever partitioned or formatted, and
`guard_disk` refuses a disk that is mounted, in use, holds `/`, or is not a whole disk.
"""

from __future__ import annotations

import mmap
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench.agent.requires import Tool
from journalbench.agent.system import log, mounts, process_files, read, sh
from journalbench.errors import AgentError

TOOLS = (
    Tool("losetup", "mount", True, "image device"),
    Tool("sfdisk", "fdisk", True, "partitions"),
    Tool("partx", "util-linux", True, "partitions"),
    Tool("wipefs", "util-linux", True, "device wipe"),
    Tool("findmnt", "util-linux", True, "device guard"),
    Tool("mkfs.ext4", "e2fsprogs", True, "ext4 volumes"),
    Tool("mount", "mount", True, "volumes"),
)

MOUNT_OPTIONS = "noinit_itable"  # no background inode-table zeroing during measurements


@dataclass(frozen=True)
class Device:
    path: str
    kind: str  # image | disk
    named: str  # what the host file named: the image file or the stable disk id

    @property
    def name(self) -> str:
        return Path(os.path.realpath(self.path)).name

    @property
    def sysfs(self) -> Path:
        return Path("/sys/class/block") / self.name

    @property
    def devnum(self) -> str:
        return read(self.sysfs / "dev")

    def partition(self, index: int) -> str:
        sep = "p" if self.name[-1].isdigit() else ""
        return f"/dev/{self.name}{sep}{index}"


def state_root(host: dict[str, Any]) -> Path:
    return Path(host["state_dir"]) / host["name"]


def loops_backed_by(directory: Path) -> list[tuple[str, str]]:
    """(loop device, backing file) for every loop device whose file lies under directory."""
    found = []
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        target = read(backing).removesuffix(" (deleted)")
        if Path(target).is_relative_to(directory):
            found.append((f"/dev/{backing.parent.parent.name}", target))
    return found


def attach_image(host: dict[str, Any]) -> Device:
    root = state_root(host)
    root.mkdir(parents=True, exist_ok=True)
    stale = loops_backed_by(root)
    if stale:
        raise AgentError(
            f"loop devices from an earlier run are still attached ({stale[0][0]}): "
            f"run `journalbench teardown --host {host['name']}` first"
        )
    image = root / "disk.img"
    image.unlink(missing_ok=True)
    with image.open("wb") as handle:
        handle.truncate(host["device"]["size_gb"] << 30)
    path = sh("losetup", "--direct-io=on", "-P", "-f", "--show", str(image)).strip()
    log.info("attached %s -> %s", image, path)
    return Device(path=path, kind="image", named=str(image))


def block_devnums(name: str) -> set[str]:
    """major:minor of a whole disk and of each of its partitions."""
    base = Path("/sys/class/block") / name
    nums = {read(base / "dev")}
    for child in base.iterdir():
        if (child / "partition").exists():
            nums.add(read(child / "dev"))
    return nums


def devnum_of(st_dev: int) -> str:
    return f"{os.major(st_dev)}:{os.minor(st_dev)}"


def guard_disk(named: str) -> Device:
    """Resolve a host's dedicated disk and refuse anything unsafe to wipe."""
    if not os.path.exists(named):
        raise AgentError(f"device.id {named}: no such device")
    real = os.path.realpath(named)
    if not stat.S_ISBLK(os.stat(real).st_mode):
        raise AgentError(f"device.id {named} -> {real}: not a block device")
    device = Device(path=real, kind="disk", named=named)
    if (device.sysfs / "partition").exists():
        raise AgentError(f"device.id {named} -> {real}: is a partition; name the whole disk")
    nums = block_devnums(device.name)
    if devnum_of(os.stat("/").st_dev) in nums:
        raise AgentError(f"device.id {named} -> {real}: holds the root file system; refusing")
    for source, target, _, _ in mounts():
        if source.startswith("/dev/") and os.path.exists(source):
            if devnum_of(os.stat(source).st_rdev) in nums:
                raise AgentError(f"device.id {named} -> {real}: mounted at {target}; refusing")
    swaps = Path("/proc/swaps").read_text().splitlines()[1:]
    for line in swaps:
        source = line.split()[0]
        if os.path.exists(source) and devnum_of(os.stat(source).st_rdev) in nums:
            raise AgentError(f"device.id {named} -> {real}: used as swap; refusing")
    holders = [h.name for p in [device.sysfs, *device.sysfs.glob(f"{device.name}*")]
               for h in (p / "holders").glob("*")]
    if holders:
        raise AgentError(f"device.id {named} -> {real}: in use by {', '.join(holders)}; refusing")
    return device


def recheck(device: Device) -> None:
    """Right before a destructive step: the name must still resolve to the guarded device."""
    if device.kind == "disk" and os.path.realpath(device.named) != device.path:
        raise AgentError(f"device.id {device.named} no longer points to {device.path}; refusing")


def wipe(device: Device) -> None:
    recheck(device)
    sh("wipefs", "-a", "-q", device.path)


def make_partitions(device: Device, count: int) -> list[str]:
    """A GPT with `count` equal partitions; wait until the kernel shows each node."""
    recheck(device)
    size_mib = (int(read(device.sysfs / "size")) * 512 >> 20) // count - 2
    script = "label: gpt\n" + f",{size_mib}M\n" * count
    sh("sfdisk", "-q", "--wipe", "always", device.path, input=script)
    sh("partx", "-u", device.path, check=False)  # sfdisk's re-read can race; make sure
    paths = [device.partition(i + 1) for i in range(count)]
    deadline = time.monotonic() + 10
    while not all(os.path.exists(p) for p in paths):
        if time.monotonic() > deadline:
            raise AgentError(f"{device.path}: partitions {paths} did not appear")
        time.sleep(0.05)
    return paths


def mkfs_ext4(path: str, label: str) -> None:
    sh("mkfs.ext4", "-q", "-F", "-L", label[:16], "-E", "lazy_itable_init=1", path)


def mount_ext4(source: str, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    sh("mount", "-t", "ext4", "-o", MOUNT_OPTIONS, source, str(target))


def mounts_under(directory: Path) -> list[str]:
    return [t for _, t, _, _ in mounts() if Path(t).is_relative_to(directory)]


def unmount_under(directory: Path) -> None:
    for target in sorted(mounts_under(directory), key=len, reverse=True):
        sh("umount", target)


def detach_loops(directory: Path, wait_s: float = 10) -> None:
    """Detach our loop devices and wait until they are gone: the kernel defers a detach while
    anything (another agent scanning loop devices, say) still holds the device open."""
    for loop, _ in loops_backed_by(directory):
        sh("losetup", "-d", loop)
    deadline = time.monotonic() + wait_s
    while loops_backed_by(directory) and time.monotonic() < deadline:
        time.sleep(0.05)
    for loop, _ in loops_backed_by(directory):
        log.warning("%s still attached after %.0f s; held by %s", loop, wait_s,
                    ", ".join(holders(loop)) or "no process (the kernel itself)")


def holders(device: str) -> list[str]:
    """Processes with `device` (or one of its partitions) open, as 'comm (pid)'."""
    found = []
    for pid, fds in process_files("fd"):
        try:
            if any(os.readlink(fds / fd).startswith(device) for fd in os.listdir(fds)):
                found.append(f"{read(f'/proc/{pid}/comm')} ({pid})")
        except OSError:
            continue
    return sorted(set(found))


FSYNC_PROBE = "fsync-probe"  # the fio job whose figures fsync_figures reads
FSYNC_REGION = 1 << 20  # the bytes it writes over and over


def prefill(device: Device) -> None:
    """Write the fsync probe's region once, so a sparse image's first-allocation cost is not
    what the probe measures: one direct 1 MiB write, as a fio job would do it, without a fio
    start (~0.25 s each)."""
    recheck(device)
    buffer = mmap.mmap(-1, FSYNC_REGION)  # page-aligned, as O_DIRECT needs
    fd = os.open(device.path, os.O_WRONLY | os.O_DIRECT)
    try:
        done = 0
        while done < FSYNC_REGION:
            done += os.pwrite(fd, memoryview(buffer)[done:], done)
    finally:
        os.close(fd)
        buffer.close()


def fsync_probe_jobs(device: Device, seconds: int) -> list[str]:
    """A fio job measuring the raw device's own write+flush latency: 4 KiB direct writes with
    an fdatasync after each, over the 1 MiB region `prefill` wrote, 512 writes or `seconds`,
    whichever ends first. A job, not a command: a caller runs more jobs in the same fio
    process (each fio start costs ~0.25 s), one after the other (--stonewall)."""
    return [f"--name={FSYNC_PROBE}", f"--filename={device.path}", f"--size={FSYNC_REGION}",
            "--direct=1", "--rw=write", "--bs=4k", "--fdatasync=1", "--loops=2",
            f"--runtime={seconds}"]


def fsync_figures(device: Device, job: dict[str, Any], seconds: int) -> dict[str, float]:
    """The fsync probe job's figures (fio's JSON of the FSYNC_PROBE job)."""
    sync = job["sync"]
    pct = sync["lat_ns"].get("percentile", {})
    if not sync["lat_ns"].get("N"):
        raise AgentError(f"{device.path}: the fsync probe recorded no fdatasync latency")
    return {
        "mean": sync["lat_ns"]["mean"] / 1e6,
        # None, never 0, when fio printed no percentile
        "p50": pct["50.000000"] / 1e6 if "50.000000" in pct else None,
        "p99": pct["99.000000"] / 1e6 if "99.000000" in pct else None,
        "count": sync["lat_ns"].get("N", 0),
        "probe_s": seconds,
        # write + fdatasync cycles per second: on a disk that must reach the platter before
        # it acknowledges a write, the write, not the flush, carries the cost
        "per_s": round(sync["lat_ns"]["N"] / max(job["job_runtime"] / 1000, 1e-3), 3),
    }
