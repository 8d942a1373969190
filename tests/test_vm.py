"""The VM arm: real QEMU guests (TCG here) booting the project's Debian kernel, fio inside them,
their QEMU processes in the tenants' cgroups, and no QEMU left whatever happens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import VENV_BIN, start_run, system_residue
from journalbench import runfolder
from journalbench.agent.arms.vm import image as guest_image
from journalbench.agent.arms.vm.arm import choose_accel, summarize, together
from journalbench.agent.arms.vm.side import frame, parse_request, request
from journalbench.agent.system import process_files
from journalbench.errors import AgentError
from journalbench.formats.fio import fio_file
from journalbench.formats.guest import guest_file
from journalbench.tidy import build as tidy

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
    for _, cmdline in process_files("cmdline"):
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


def test_a_request_line_carries_any_argument_and_refuses_leftovers():
    argv = ["sh", "-ec", "echo 'a b'\nexit 3", "", "caf\u00e9", os.fsdecode(b"\xff")]
    line = request(argv, b"12345678")
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert parse_request(line[:-1]) == (argv, b"12345678")
    # a relay gone mid-line leaves its start, which the next request's line completes
    for leftover in (b"", b"K", line[:7], line[:-4] + line, line[:-1] + b" " + line):
        with pytest.raises(ValueError):
            parse_request(leftover.rstrip(b"\n"))


def test_saturation_needs_half_the_seconds_busy(tmp_path):
    report = tmp_path / "guest-a.jsonl"
    report.write_text("".join(json.dumps({"vcpu_busy": b}) + "\n" for b in (0.99, 0.97, 0.5)))
    assert summarize(report)["vcpu_saturated"] is True
    report.write_text("".join(json.dumps({"vcpu_busy": b}) + "\n" for b in (0.99, 0.5, 0.5)))
    assert summarize(report)["vcpu_saturated"] is False


def test_together_waits_for_every_call_and_raises_the_first_failure():
    ended = []

    def slow() -> str:
        time.sleep(0.2)
        ended.append(threading.current_thread().name)
        return "done"

    def fails() -> str:
        raise AgentError("guest b broke")

    assert together({"a": slow, "b": lambda: "also"}) == {"a": "done", "b": "also"}
    assert ended[0].startswith("guest")  # it ran in a thread of its own
    ended.clear()
    with pytest.raises(AgentError, match="guest b broke"):
        together({"a": slow, "b": fails})
    assert len(ended) == 1  # the other guest's call had run to its end first


@needs_guest
def test_built_guest_is_a_pvh_kernel_and_a_plain_initramfs():
    info = json.loads((guest_image.GUEST_DIR / guest_image.INFO).read_text())
    archive = (guest_image.GUEST_DIR / guest_image.INITRD).read_bytes()
    assert archive.startswith(b"070701")  # uncompressed: no gunzip inside a TCG guest
    for name in ("init", "bin/busybox", "lib/modules/virtio_blk.ko", "lib/modules/9p.ko",
                 "lib/modules/ext4.ko", "lib/modules/virtio_console.ko"):
        assert name.encode() + b"\0" in archive, name
    assert info["package"].startswith("linux-image-")
    assert info["recipe"] == guest_image.recipe()
    kernel = (guest_image.GUEST_DIR / info["boot_kernel"]).read_bytes()
    if info["boot"] == "pvh":  # Debian's amd64 kernel: xz inside, a PVH entry point
        assert kernel.startswith(b"\x7fELF")
        assert guest_image.PVH_NOTE in guest_image.elf_notes(kernel)


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
        rows = [json.loads(line) for line in (out / guest_file(tenant)).read_text()
                .splitlines()]
        assert rows and all(0 <= r["vcpu_busy"] <= 1 for r in rows)
        assert sum(r["jbd2_write_bytes"] for r in rows) > 0  # the guest's own journal wrote
        assert sum(r["disk_write_bytes"] for r in rows) > 0
        assert guest["report"]["seconds"] == len(rows)
        # the report's start and the sampler's zero, both on CLOCK_MONOTONIC
        assert 0 < facts["window"]["clock_ns"] - guest["report"]["started_ns"] < 5e9
        fio = json.loads((out / fio_file(tenant)).read_text())["jobs"][0]
        assert fio["write"]["io_bytes"] > 0
        assert fio["sync"]["lat_ns"]["N"] > 0  # fsync latency, measured inside the guest
    assert set(layout["set_up_s"]) == {"start_s", "prepare_workloads_s", "report_start_s"}
    assert qemus(agent_host) == {}
    # tidy makes of it the tables and columns of a container run, with the guests' own columns
    tidy.tidy(tmp_path, tmp_path / "tables", [])
    runs = pd.read_parquet(tmp_path / "tables" / "runs.parquet")
    assert list(runs.columns) == [name for name, _ in tidy.RUNS_COLUMNS]
    assert sorted(runs.tenant) == ["neighbour", "victim"]
    assert (runs.guest_jbd2_bytes > 0).all() and runs.vcpu_busy_mean.between(0, 1).all()
    assert set(runs.virt_accel) == {facts["virt_accel"]} and runs.cpu_bound.notna().all()
    assert (runs.throughput_mb_s > 0).all() and runs.fsync_count.gt(0).all()
    samples = pd.read_parquet(tmp_path / "tables" / "samples.parquet")
    assert set(samples.kind) == {"tenant", "device"}  # no host journal: it is in the guests


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


@needs_guest
def test_a_host_that_requires_kvm_fails_when_kvm_does_not_boot_a_guest(tmp_path):
    host = {"name": "kvmonly", "require_kvm": True}
    try:
        accel, why = choose_accel(host, tmp_path)  # the real probe (cached per host boot)
    except AgentError as error:
        assert "host kvmonly requires KVM but" in str(error)
    else:
        assert (accel, why) == ("kvm", "probe booted")
    assert choose_accel({"name": "any"}, tmp_path)[0] in ("kvm", "tcg")


def test_figures_and_tables_name_a_tcg_vm_first_and_as_such():
    import matplotlib

    matplotlib.use("Agg")
    from journalbench.report import plots, views

    rows = pd.DataFrame([
        {"host": "h", "arm": arm, "virt_accel": accel, "beside": "no-fsync", "tenant": "victim",
         "throughput_mb_s": 10.0 + rep, "fsync_lat_mean_ms": 1.0 + rep, "achieved_share": 0.7,
         "cpu_bound": 0 if accel else None}
        for arm, accel in (("shared-journal", None), ("vm", "tcg")) for rep in range(3)])
    table = views.medians(rows, ["arm"], "throughput_mb_s")
    assert list(table["arm"]) == ["vm (TCG)", "shared-journal"]
    assert list(views.fsync_table(rows).columns) == ["host", "beside", "vm (TCG), ms",
                                                        "shared-journal, ms"]
    fig = plots.bars(rows, "beside", "throughput_mb_s", "arm", "t", "h", "MB/s")
    legend = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    assert legend == ["vm (TCG)", "shared-journal"]
    assert "vm under TCG" in views.host_label(rows.assign(
        kernel="k", device_kind="image", device_profile="native", device_fsync_lat_ms=0.2))
    assert set(rows["arm"]) == {"vm", "shared-journal"}  # the rows themselves keep the names
