"""The VM arm: real QEMU guests (TCG here) booting the project's Debian kernel, fio inside them,
their QEMU processes in the tenants' cgroups, and no QEMU left whatever happens."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import VENV_BIN, start_run, system_residue
from journalbench import runfolder
from journalbench.agent import guest_image
from journalbench.agent.arms.vm import summarize
from journalbench.agent.guest_side import frame

GUEST_READY = (guest_image.GUEST_DIR / guest_image.INFO).is_file()
needs_guest = pytest.mark.skipif(not GUEST_READY, reason="no guest kernel: run `make guest`")


def spec(*tenants: tuple[str, int, str], duration: int = 5, **fio: Any) -> dict[str, Any]:
    return {
        "arm": "vm", "duration_s": duration, "repetition": 1,
        "tenants": [{"name": n, "weight": w,
                     "workload": {"tool": "fio", "preset": p, "size_mb": 32, **fio}}
                    for n, w, p in tenants],
    }


def qemus(host: dict[str, Any]) -> dict[int, str]:
    """QEMU processes of this host's guests and the blkio cgroup each sits in."""
    marker = f"{host['state_dir'] / host['name']}/vm/".encode()
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            if argv[0].startswith(b"qemu-system") and any(marker in a for a in argv):
                lines = (cmdline.parent / "cgroup").read_text().splitlines()
                found[int(cmdline.parent.name)] = next(
                    line.split(":", 2)[2] for line in lines if "blkio" in line.split(":")[1])
        except (OSError, StopIteration):
            continue
    return found


# -- pure parts -------------------------------------------------------------------------------


def test_cpio_archive_is_newc_with_aligned_entries():
    archive = guest_image.cpio_newc([("init", 0o100755, b"#!/bin/sh\n"), ("bin", 0o40755, b"")])
    assert archive.startswith(b"070701")
    assert len(archive) % 4 == 0
    assert b"TRAILER!!!\0" in archive
    assert archive.index(b"init\0") == 110  # header is 110 bytes, then the name


def test_module_dependencies_come_first():
    files = {"a": Path("a"), "b": Path("b")}
    info = {"a": b"\0depends=b\0", "b": b"\0depends=\0"}
    original = guest_image.module_bytes
    guest_image.module_bytes = lambda path: info[path.name]  # type: ignore[assignment]
    try:
        assert guest_image.load_order(("a", "missing"), files) == ["b", "a"]
    finally:
        guest_image.module_bytes = original


def test_frames_carry_the_request_id():
    data = frame(b"O", b"12345678", b"hi")
    assert data == b"O12345678\x00\x00\x00\x02hi"


def test_saturation_needs_half_the_seconds_busy(tmp_path):
    report = tmp_path / "guest-a.jsonl"
    report.write_text("".join(json.dumps({"vcpu_busy": b}) + "\n" for b in (0.99, 0.97, 0.5)))
    assert summarize(report)["vcpu_saturated"] is True
    report.write_text("".join(json.dumps({"vcpu_busy": b}) + "\n" for b in (0.99, 0.5, 0.5)))
    assert summarize(report)["vcpu_saturated"] is False


@needs_guest
def test_built_initramfs_holds_busybox_init_and_modules():
    info = json.loads((guest_image.GUEST_DIR / guest_image.INFO).read_text())
    archive = gzip.decompress((guest_image.GUEST_DIR / guest_image.INITRD).read_bytes())
    for name in ("init", "bin/busybox", "lib/modules/virtio_blk.ko", "lib/modules/9p.ko",
                 "lib/modules/ext4.ko", "lib/modules/virtio_console.ko"):
        assert name.encode() + b"\0" in archive, name
    assert info["package"].startswith("linux-image-")


# -- real guests --------------------------------------------------------------------------------


@pytest.mark.root
@pytest.mark.slow
@needs_guest
def test_two_vm_tenants_run_fio_with_weights_on_the_qemu_cgroups(agent_host, tmp_path):
    out = tmp_path / "run"
    proc = start_run(spec(("victim", 700, "high-fsync"), ("neighbour", 300, "high-fsync")),
                     agent_host, out)
    weights: dict[str, int] = {}
    blkio = Path("/sys/fs/cgroup/blkio")
    deadline = time.monotonic() + 120
    while len(weights) < 2 and proc.poll() is None and time.monotonic() < deadline:
        for cgroup in qemus(agent_host).values():
            try:
                weights[Path(cgroup).name] = int(
                    (blkio / cgroup.lstrip("/") / "blkio.bfq.weight").read_text().split()[-1])
            except (OSError, ValueError):
                pass
        time.sleep(0.2)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert runfolder.is_complete(out), runfolder.manifest_problems(out)
    assert weights == {"victim": 700, "neighbour": 300}
    facts = json.loads((out / runfolder.HOST).read_text())
    layout = facts["layout"]
    assert facts["virt_accel"] in ("kvm", "tcg")  # top level, where tidy reads it
    for tenant in ("victim", "neighbour"):
        guest = layout["guests"][tenant]
        assert guest["threads_cgroup"] == [f"/journalbench/{agent_host['name']}/{tenant}"]
        assert 0 < guest["boot_s"] < 60
        rows = [json.loads(line) for line in (out / f"guest-{tenant}.jsonl").read_text()
                .splitlines()]
        assert rows and all(0 <= r["vcpu_busy"] <= 1 for r in rows)
        assert sum(r["jbd2_write_bytes"] for r in rows) > 0  # the guest's own journal wrote
        assert sum(r["disk_write_bytes"] for r in rows) > 0
        assert guest["report"]["seconds"] == len(rows)
        fio = json.loads((out / runfolder.fio_file(tenant)).read_text())["jobs"][0]
        assert fio["write"]["io_bytes"] > 0
        assert fio["sync"]["lat_ns"]["N"] > 0  # fsync latency, measured inside the guest
    assert qemus(agent_host) == {}


@pytest.mark.root
@pytest.mark.slow
@needs_guest
def test_error_inside_a_guest_names_the_tenant_and_leaves_no_qemu(agent_host, tmp_path):
    # 100-byte direct writes are refused by the guest's kernel: fio fails inside the guest.
    proc = start_run(spec(("solo", 500, "seqwrite-64k"), duration=3, bs="100"), agent_host,
                     tmp_path / "run")
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode != 0
    assert "fio in solo exited" in stderr
    assert "teardown complete" in stderr
    assert qemus(agent_host) == {}
    assert system_residue(agent_host["name"], agent_host["state_dir"]) == []


@pytest.mark.root
@pytest.mark.slow
@needs_guest
def test_teardown_stops_the_guests_of_a_killed_agent(agent_host, tmp_path):
    proc = start_run(spec(("victim", 700, "high-fsync"), ("neighbour", 300, "no-fsync"),
                          duration=60), agent_host, tmp_path / "run")
    deadline = time.monotonic() + 120
    report = tmp_path / "run" / "guest-victim.jsonl"
    while not (report.exists() and report.stat().st_size > 0):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the guests never started measuring"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert len(qemus(agent_host)) == 2  # really left running
    done = subprocess.run(
        [str(VENV_BIN / "journalbench"), "teardown", "--host", str(agent_host["file"])],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert qemus(agent_host) == {}
    assert system_residue(agent_host["name"], agent_host["state_dir"]) == []
