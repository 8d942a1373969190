"""Real runs over SSH: a 3-second, one-tenant fio run in the shared-journal arm (the cheapest
run there is) on two sshd hosts, one of them in its own network namespace, against the same
run on the local host; then the faults: a connection killed mid-run, a killed campaign, a run
the agent refuses. Every test checks that the host is left with nothing (mounts, loop devices,
containers, cgroups, processes)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sshd import pids_matching

from journalbench import runfolder
from journalbench.control.deploy import deploy, layout_of
from journalbench.control.hosts import load_host
from journalbench.control.reach import for_host
from journalbench.control.runremote import run_remote
from journalbench.control.transport import CommandTimeout
from journalbench.errors import AgentError

pytest_plugins = ["sshd_fixtures"]  # sshd_local, sshd_netns
pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.unmeasured]

SPEC = {
    "arm": "shared-journal",
    "duration_s": 3,
    "repetition": 1,
    "campaign": "sshtest",
    "tenants": [
        {
            "name": "a",
            "weight": 500,
            "workload": {"tool": "fio", "preset": "high-fsync", "size_mb": 16},
        },
    ],
}


def spec(repetition: int = 1) -> dict:
    return {**SPEC, "repetition": repetition}


@pytest.fixture(scope="module")
def base():
    """State dirs of the test hosts (a real disk: loop devices with direct I/O need one)."""
    path = Path(f"/var/lib/journalbench-sshtests-{os.getpid()}")
    path.mkdir()
    yield path
    left = leftovers(path)
    assert left == [], left
    shutil.rmtree(path)


def leftovers(path: Path) -> list[str]:
    """Anything under path that would make removing it unsafe, or that a run left running."""
    left = [
        f"mount {line.split()[1]}"
        for line in Path("/proc/self/mounts").read_text().splitlines()
        if line.split()[1].startswith(str(path))
    ]
    loops = subprocess.run(
        ["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"],
        capture_output=True,
        text=True,
    ).stdout
    left += [f"loop {line}" for line in loops.splitlines() if str(path) in line]
    left += [f"pid {pid}" for pid in pids_matching(str(path))]
    return left


def host_residue(host: dict) -> list[str]:
    from journalbench.agent.run import residue

    state = Path(host["state_dir"])
    return residue(host) + [item for item in leftovers(state) if item.startswith("pid")]


def ssh_host(server, base: Path, name: str, **extra) -> dict:
    return load_host(str(server.host_file(base / name, name=name, **extra)))


def local_host(base: Path, name: str) -> dict:
    path = base / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "name": name,
                "transport": "local",
                "python": "/usr/bin/python3",
                "state_dir": str(base / name),
                "device": {"kind": "image", "size_gb": 2},
            }
        )
    )
    return load_host(str(path))


def dest_for(root: Path, host: dict, run_spec: dict) -> Path:
    return root / run_spec["campaign"] / host["name"] / runfolder.run_id(run_spec)


def timed_runs(jobs: list[tuple[dict, dict, Path]], parallel: bool) -> float:
    started = time.monotonic()
    errors: list[BaseException] = []

    def one(host: dict, run_spec: dict, dest: Path) -> None:
        try:
            run_remote(host, run_spec, dest)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test
            errors.append(error)

    if parallel:
        threads = [threading.Thread(target=one, args=job) for job in jobs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        for job in jobs:
            one(*job)
    if errors:
        raise errors[0]
    return time.monotonic() - started


def run_span(folder: Path) -> tuple[float, float]:
    """First and last timestamp of the agent's run.log, in seconds."""
    from datetime import datetime

    lines = (folder / "run.log").read_text().splitlines()
    stamps = [
        datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f") for line in (lines[0], lines[-1])
    ]
    return stamps[0].timestamp(), stamps[1].timestamp()


def comparable(folder: Path) -> dict:
    """What must agree between hosts (the numbers and timings may not)."""
    spec_json = json.loads((folder / "spec.json").read_text())
    host_json = json.loads((folder / "host.json").read_text())
    return {
        "files": sorted(p.name for p in folder.iterdir()),
        "spec": {k: v for k, v in spec_json.items() if k != "host"},
        "host_keys": sorted(host_json),
        "sources": sorted(
            {
                json.loads(line)["kind"]
                for line in (folder / "io-samples.jsonl").read_text().splitlines()
            }
        ),
    }


def test_two_ssh_hosts_run_in_parallel_and_match_the_local_host(
    sshd_local, sshd_netns, base: Path, tmp_path: Path
):
    local = local_host(base, "jbt-e2e-local")
    host_a = ssh_host(sshd_local, base, "jbt-e2e-a")
    host_b = ssh_host(sshd_netns, base, "jbt-e2e-b")
    raw = tmp_path / "raw"

    reference = dest_for(raw / "local", local, spec())
    timed_runs([(local, spec(), reference)], parallel=False)
    one_host = timed_runs(
        [(host_a, spec(r), dest_for(raw / "one", host_a, spec(r))) for r in (1, 2)],
        parallel=False,
    )
    two_hosts = timed_runs(
        [
            (host, spec(r), dest_for(raw / "two", host, spec(r)))
            for host, r in ((host_a, 1), (host_b, 2))
        ],
        parallel=True,
    )
    print(
        f"\ntwo runs: one host {one_host:.1f} s, two hosts in parallel {two_hosts:.1f} s "
        f"(ratio {two_hosts / one_host:.2f})"
    )

    folders = [
        reference,
        *sorted((raw / "one").rglob("shared-journal-*")),
        *sorted((raw / "two").rglob("shared-journal-*")),
    ]
    assert len(folders) == 5
    for folder in folders:
        assert runfolder.manifest_problems(folder) == []
    expected = comparable(reference)
    assert expected["files"] == [
        "MANIFEST.json",
        "fio-a.json",
        "host.json",
        "io-samples.jsonl",
        "run.log",
        "spec.json",
    ]
    for folder in folders:
        got = comparable(folder)
        if json.loads((folder / "spec.json").read_text())["repetition"] == 1:
            assert got == expected, folder
            assert folder.name == reference.name
        else:
            assert got["files"] == expected["files"] and got["host_keys"] == expected["host_keys"]
    assert (
        json.loads(
            (
                raw / "two" / "sshtest" / "jbt-e2e-b" / runfolder.run_id(spec(2)) / "spec.json"
            ).read_text()
        )["host"]
        == "jbt-e2e-b"
    )
    # The remote copies are gone once fetched; nothing is left on any host.
    for host in (local, host_a, host_b):
        assert not list((Path(host["state_dir"]) / "runs").rglob("MANIFEST.json"))
        assert host_residue(host) == []
    # Wall times depend on what else the machine runs; that the two hosts really ran at the
    # same time does not: their run logs' spans overlap.
    spans = [run_span(folder) for folder in sorted((raw / "two").rglob("shared-journal-*"))]
    overlap = min(end for _, end in spans) - max(start for start, _ in spans)
    assert overlap > 0.5 * min(end - start for start, end in spans), spans


def test_connection_killed_mid_run_is_torn_down_and_run_again(
    sshd_netns, base: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    host = ssh_host(sshd_netns, base, "jbt-e2e-cut")
    dest = tmp_path / "run"
    killed: list[int] = []
    lines: list[str] = []

    def on_output(_stream: str, line: str) -> None:
        lines.append(line)
        if "workloads start" in line and not killed:
            killed.extend(sshd_netns.kill_connections())

    caplog.set_level(logging.INFO, logger="journalbench.remote")
    run_remote(host, spec(), dest, on_output=on_output)
    assert killed, "the connection was never cut"
    assert runfolder.manifest_problems(dest) == []
    assert sum("workloads start" in line for line in lines) == 2
    assert any("connection lost" in r.getMessage() for r in caplog.records)
    assert any("interrupted run" in r.getMessage() for r in caplog.records)
    # The folder is the second run's alone: one set-up in its log.
    assert (dest / "run.log").read_text().count("workloads start") == 1
    assert host_residue(host) == []


def test_killed_campaign_resumes(
    sshd_local, base: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    host_file = sshd_local.host_file(base / "jbt-e2e-kill", name="jbt-e2e-kill")
    host = load_host(str(host_file))
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec()))
    dest = tmp_path / "raw" / "run"
    campaign = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "journalbench.cli",
            "run-remote",
            str(spec_file),
            "--host",
            str(host_file),
            "--out",
            str(dest),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in campaign.stderr:
            if "workloads start" in line:
                break
        campaign.send_signal(signal.SIGKILL)
        campaign.wait(timeout=10)
    finally:
        if campaign.poll() is None:
            campaign.kill()
        campaign.stderr.close()
    assert not dest.exists()
    assert Path(layout_of(host).pidfile).exists()

    caplog.set_level(logging.INFO, logger="journalbench.remote")
    run_remote(host, spec(), dest)
    assert runfolder.manifest_problems(dest) == []
    assert [p.name for p in dest.parent.iterdir()] == ["run"]  # no temp folders
    assert host_residue(host) == []
    # Run again: the complete folder is kept as it is.
    before = (dest / "MANIFEST.json").stat().st_mtime_ns
    run_remote(host, spec(), dest)
    assert (dest / "MANIFEST.json").stat().st_mtime_ns == before


def test_refused_run_is_one_line_and_leaves_nothing(sshd_local, base: Path, tmp_path: Path):
    host = ssh_host(
        sshd_local,
        base,
        "jbt-e2e-refused",
        device={"kind": "disk", "id": "/dev/disk/by-id/jbt-no-such-disk", "wipe": True},
    )
    dest = tmp_path / "run"
    with pytest.raises(AgentError) as caught:
        run_remote(host, spec(), dest)
    message = str(caught.value)
    assert "\n" not in message and "failed (exit" in message and "jbt-no-such-disk" in message
    assert not dest.exists() and not list(tmp_path.glob(".run.fetch-*"))
    assert host_residue(host) == []


def test_timed_out_run_is_killed_and_torn_down(sshd_local, base: Path, tmp_path: Path):
    host = ssh_host(sshd_local, base, "jbt-e2e-timeout")
    dest = tmp_path / "run"
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match="timed out after 2 s"):
        run_remote(host, spec(), dest, timeout_s=2)
    assert time.monotonic() - started < 60
    assert not dest.exists()
    assert not Path(layout_of(host).pidfile).exists()
    assert host_residue(host) == []


def test_cut_wire_mid_run_fetches_the_run_that_finished_meanwhile(
    sshd_netns, base: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    # keepalive 1 s x 3: the controller notices the dead link after ~4 s; the link comes back
    # after 8 s. The agent's sshd never noticed (no RST), so the run finished on the host.
    host = ssh_host(
        sshd_netns,
        base,
        "jbt-e2e-wire",
        ssh={"keepalive_s": 1, "keepalive_count_max": 3, "connect_attempts": 3},
    )
    dest = tmp_path / "run"
    restored = threading.Event()
    cut: list[float] = []
    lines: list[str] = []

    def restore_later() -> None:
        time.sleep(8)
        sshd_netns.netns.link(up=True)
        restored.set()

    def on_output(_stream: str, line: str) -> None:
        lines.append(line)
        if "workloads start" in line and not cut:
            cut.append(time.monotonic())
            sshd_netns.netns.link(up=False)
            threading.Thread(target=restore_later, daemon=True).start()

    caplog.set_level(logging.INFO, logger="journalbench.remote")
    try:
        run_remote(host, spec(), dest, on_output=on_output)
    finally:
        sshd_netns.netns.link(up=True)
    assert restored.is_set()
    assert runfolder.manifest_problems(dest) == []
    messages = [r.getMessage() for r in caplog.records]
    assert any("connection lost" in m for m in messages)
    assert any("completed earlier" in m for m in messages)
    assert sum("workloads start" in line for line in lines) == 1  # not run twice
    assert host_residue(host) == []


def test_residue_of_a_crashed_agent_is_torn_down_before_the_next_run(
    sshd_local, base: Path, tmp_path: Path
):
    # An agent SIGKILLed on the host, with no controller watching: no pidfile, no teardown,
    # containers, mounts, a loop device and cgroups left. The next run must start clean.
    host = ssh_host(sshd_local, base, "jbt-e2e-crash")
    with for_host(host) as transport:
        dep = deploy(host, transport)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec(7)))
    agent = subprocess.Popen(
        [
            dep.python,
            dep.bundle,
            "run",
            str(spec_file),
            "--host",
            dep.layout.host_json,
            "--out",
            str(tmp_path / "crashed"),
        ],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        for line in agent.stderr:
            if "workloads start" in line:
                break
    finally:
        os.killpg(agent.pid, signal.SIGKILL)
        agent.wait()
        agent.stderr.close()
    assert host_residue(host) != []

    dest = tmp_path / "run"
    run_remote(host, spec(), dest)
    assert runfolder.manifest_problems(dest) == []
    assert host_residue(host) == []
