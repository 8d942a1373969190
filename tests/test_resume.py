"""A campaign whose controller dies by SIGKILL resumes when the same command is run again:
after `journalbench teardown` it neither stops on Snakemake's stale lock nor on a half-written
notebook, measures every planned run exactly once, and leaves nothing behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import VENV_BIN, system_residue
from journalbench import runfolder
from journalbench.agent.system import process_files
from journalbench.control import locks
from journalbench.control.hosts import load_hosts
from journalbench.plan import plan as plans

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.unmeasured]

CAMPAIGN = f"pytest-resume-{os.getpid()}"
NOTEBOOKS = ["base-workloads", "fsync-interference", "journal-fixes"]


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "campaign.yaml"
    path.write_text(
        f"name: {CAMPAIGN}\ndescription: killed and resumed\nduration_s: 2\nrepetitions: 3\n"
        "experiments:\n  - id: solo\n    claims: [C8]\n    arms: [shared-journal]\n"
        "    tenants:\n      - {name: a, weight: 500, workload: {tool: fio, preset: high-fsync,"
        " size_mb: 16, prep: overwrite}}\n")  # a small file it goes round
    return path


def start(workdir: Path, campaign_file: Path, host_file: Path) -> subprocess.Popen[str]:
    """The README's command, in its own process group (the controller the test kills)."""
    return subprocess.Popen(
        [str(VENV_BIN / "snakemake"), "--cores", "1",
         "--config", f"campaign={campaign_file}", f"hosts={host_file}"],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def kill_when(controller: subprocess.Popen[str], ready: Callable[[], bool]) -> str:
    """SIGKILL the controller's whole process group once `ready()`; returns its output."""
    deadline = time.monotonic() + 300
    try:
        while not ready() and controller.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
            os.killpg(controller.pid, signal.SIGKILL)
        output = controller.communicate(timeout=60)[0]
        wait_until_gone(controller.pid)
    assert controller.returncode == -signal.SIGKILL, f"not killed mid-way:\n{output[-3000:]}"
    return output


def wait_until_gone(group: int) -> None:
    """SIGKILL is delivered at once but a process exits (and frees its locks) a moment later."""
    deadline = time.monotonic() + 30
    while group_members(group):
        assert time.monotonic() < deadline, f"process group {group} survived SIGKILL"
        time.sleep(0.05)


def group_members(group: int) -> list[int]:
    members = []
    for _, stat in process_files("stat"):
        try:
            state, _, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except OSError:
            continue
        if int(pgrp) == group and state != "Z":
            members.append(int(stat.parent.name))
    return members


def measuring(host: str) -> bool:
    """A fio of this host's tenants is running."""
    for _, cgroup in process_files("cgroup"):
        try:
            if (f"/journalbench/{host}/" in cgroup.read_text()
                    and (cgroup.parent / "comm").read_text().strip() == "fio"):
                return True
        except OSError:
            continue
    return False


def teardown(host_file: Path) -> None:
    """`journalbench teardown`, retried while the host is busy: an agent started in its own
    session outlives the killed controller until its run (or its own teardown) ends."""
    deadline = time.monotonic() + 180
    while True:
        result = subprocess.run(
            [str(VENV_BIN / "journalbench"), "teardown", "--host", str(host_file)],
            capture_output=True, text=True, timeout=120)
        if "is busy" not in result.stderr or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def host(agent_host: dict) -> Iterator[dict]:
    """agent_host, torn down here first so that the fixture's own teardown and residue check
    do not race an agent that outlived a killed controller."""
    yield agent_host
    teardown(agent_host["file"])


def test_killed_campaign_resumes_with_the_same_command(workdir, campaign_file, host):
    name, host_file = host["name"], host["file"]
    plan = plans.runs(str(campaign_file), load_hosts(str(host_file)))
    raw = workdir / "data" / "raw"

    def landed() -> list:
        return [r for r in plan if runfolder.is_complete(r.folder(raw))]

    # Killed while the second run measures: its folder is a .partial, the lock is stale.
    first = kill_when(start(workdir, campaign_file, host_file),
                      lambda: len(landed()) == 1 and measuring(name))
    assert any((workdir / ".snakemake" / "locks").glob("*.lock"))
    teardown(host_file)
    assert not system_residue(name, host["state_dir"])

    # Killed again while a notebook is half written: Snakemake marks it incomplete.
    notebooks = workdir / "results" / CAMPAIGN / "notebooks"
    second = kill_when(start(workdir, campaign_file, host_file),
                       lambda: any(notebooks.glob("*.ipynb")))
    assert "removed the stale Snakemake lock" in second
    assert len(landed()) == len(plan)

    third = start(workdir, campaign_file, host_file)
    output = third.communicate(timeout=600)[0]
    assert third.returncode == 0, output[-3000:]

    # Every planned run measured exactly once, and only the planned folders exist.
    assert sum(log.count(" done in ") for log in (first, second, output)) == len(plan)
    folders = sorted(p.name for p in (raw / CAMPAIGN / name).iterdir())
    assert folders == sorted(r.run_id for r in plan)
    assert all(runfolder.is_complete(r.folder(raw)) for r in plan)
    for name in NOTEBOOKS:
        assert (notebooks / f"{name}.ipynb").stat().st_size > 0
    assert (workdir / "results" / "claims.md").read_text().startswith(
        f"# Claims ledger: campaigns {CAMPAIGN}")
    assert not system_residue(name, host["state_dir"])
    assert not locks.workflow_processes(workdir)
    assert not any((workdir / ".snakemake" / "locks").glob("*.lock"))
