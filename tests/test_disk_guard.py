"""A bare-metal host names its disk; the agent refuses anything unsafe and touches nothing."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import VENV_BIN
from journalbench.agent import disk
from journalbench.control.hosts import load_host
from journalbench.errors import AgentError, ConfigError

BY_ID = Path("/dev/disk/by-id")


@pytest.fixture
def by_id() -> Iterator[callable]:
    """Make /dev/disk/by-id/<name> symlinks for the test; remove them (and dirs we made)."""
    made_dirs = [d for d in (BY_ID.parent, BY_ID) if not d.exists()]
    BY_ID.mkdir(parents=True, exist_ok=True)
    links: list[Path] = []

    def link(name: str, target: str) -> str:
        path = BY_ID / f"journalbench-test-{os.getpid()}-{name}"
        path.symlink_to(target)
        links.append(path)
        return str(path)

    yield link
    for path in links:
        path.unlink()
    for directory in reversed(made_dirs):
        directory.rmdir()


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[str]:
    """A scratch loop device (not under any host's state dir), detached afterwards."""
    image = tmp_path / "scratch.img"
    with image.open("wb") as handle:
        handle.truncate(256 << 20)
    device = subprocess.run(["losetup", "-P", "-f", "--show", str(image)], check=True,
                            capture_output=True, text=True).stdout.strip()
    yield device
    subprocess.run(["umount", str(tmp_path / "mnt")], capture_output=True)
    subprocess.run(["losetup", "-d", device], check=True)
    # the kernel defers the detach while anything (udev's probe) still has the device open
    deadline = time.monotonic() + 10
    while disk.loops_backed_by(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not disk.loops_backed_by(tmp_path)


def head_digest(device: str) -> str:
    with open(device, "rb") as handle:
        return hashlib.sha256(handle.read(4 << 20)).hexdigest()


def root_disk() -> str:
    st = os.stat("/")
    name = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve().name
    return f"/dev/{name}"


def test_missing_device_is_refused():
    with pytest.raises(AgentError, match="no such device"):
        disk.guard_disk("/dev/disk/by-id/journalbench-no-such-disk")


@pytest.mark.root
def test_regular_file_is_refused(by_id, tmp_path):
    target = tmp_path / "plain"
    target.write_text("not a disk")
    with pytest.raises(AgentError, match="not a block device"):
        disk.guard_disk(by_id("file", str(target)))


@pytest.mark.root
def test_root_disk_is_refused(by_id):
    with pytest.raises(AgentError, match="root file system|mounted at /"):
        disk.guard_disk(by_id("root", root_disk()))


@pytest.mark.root
def test_mounted_disk_is_refused_and_untouched(by_id, loop, tmp_path):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True)
    (tmp_path / "mnt").mkdir()
    # read-only: a read-write ext4 writes its own metadata in the background (lazy inode-table
    # init, journal commits), which would change the digest whatever the agent does
    subprocess.run(["mount", "-o", "ro", loop, str(tmp_path / "mnt")], check=True)
    before = head_digest(loop)
    host = tmp_path / "baremetal.yaml"
    host.write_text(f"name: guardtest\ntransport: local\nstate_dir: {tmp_path / 'state'}\n"
                    f"device: {{kind: disk, id: {by_id('mounted', loop)}, wipe: true}}\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("arm: shared-journal\nduration_s: 2\nrepetition: 1\ntenants:\n"
                    "  - {name: solo, weight: 500, workload: {tool: fio, preset: no-fsync}}\n")
    done = subprocess.run([str(VENV_BIN / "journalbench"), "run", str(spec), "--host", str(host),
                           "--out", str(tmp_path / "run")], capture_output=True, text=True)
    assert done.returncode != 0
    assert "mounted at" in done.stderr and "refusing" in done.stderr
    assert head_digest(loop) == before


@pytest.mark.root
def test_partition_is_refused(by_id, loop):
    subprocess.run(["sfdisk", "-q", loop], input="label: gpt\n,64M\n", text=True, check=True)
    subprocess.run(["partx", "-u", loop], capture_output=True)
    with pytest.raises(AgentError, match="is a partition"):
        disk.guard_disk(by_id("part", f"{loop}p1"))


@pytest.mark.root
def test_disk_renamed_after_the_guard_is_refused(by_id, loop, tmp_path):
    named = by_id("moving", loop)
    device = disk.guard_disk(named)
    os.unlink(named)
    os.symlink(root_disk(), named)
    with pytest.raises(AgentError, match="no longer points"):
        disk.wipe(device)


def test_disk_without_wipe_true_is_a_schema_error(tmp_path):
    host = tmp_path / "h.yaml"
    host.write_text("name: h\ntransport: local\n"
                    "device: {kind: disk, id: /dev/disk/by-id/x, wipe: false}\n")
    with pytest.raises(ConfigError, match=r"h.yaml: field device"):
        load_host(str(host))


def test_disk_by_kernel_name_is_a_schema_error(tmp_path):
    host = tmp_path / "h.yaml"
    host.write_text("name: h\ntransport: local\ndevice: {kind: disk, id: /dev/sdb, wipe: true}\n")
    with pytest.raises(ConfigError, match=r"field device"):
        load_host(str(host))
