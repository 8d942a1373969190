"""`journalbench unlock` removes the lock of a killed Snakemake, and refuses while one runs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import VENV_BIN, stop_workflow_processes
from journalbench.control import locks

# Its one job holds the lock until the file `hold` is gone.
SNAKEFILE = """
rule held:
    output:
        "done.txt",
    shell:
        "while [ -e hold ]; do sleep 0.1; done; touch {output}"
"""


def test_workflow_commands_are_recognised() -> None:
    assert locks.is_workflow_command(["/x/.venv/bin/python3", "/x/.venv/bin/snakemake", "-c1"])
    assert locks.is_workflow_command(["python", "-m", "snakemake", "--cores", "1"])
    assert locks.is_workflow_command(
        ["/bin/bash", "-c", "set -euo pipefail; /x/python3 -m journalbench.cli dispatch --a b"])
    assert locks.is_workflow_command(["/bin/bash", "-c", "python -m papermill a.ipynb b.ipynb"])
    assert not locks.is_workflow_command(["vim", "/home/me/journalbench/README.md"])
    assert not locks.is_workflow_command(["/bin/bash"])


def test_parent_pid_survives_odd_command_names() -> None:
    assert locks.parent_pid("42 (a) b) S 7 42 42 0 -1") == 7
    assert locks.parent_pid(Path(f"/proc/{os.getpid()}/stat").read_text()) == os.getppid()


def unlock(workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "journalbench"), "unlock", "--directory", str(workdir)],
                          capture_output=True, text=True, timeout=60)


def snakemake(workdir: Path, **popen) -> subprocess.Popen[str]:
    return subprocess.Popen([str(VENV_BIN / "snakemake"), "--cores", "1"], cwd=workdir,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A one-rule workflow; every Snakemake started in it is gone after the test."""
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    yield tmp_path
    stop_workflow_processes(tmp_path)


def wait_for_lock(workdir: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not any((workdir / ".snakemake" / "locks").glob("*.lock")):
        assert process.poll() is None, process.stdout.read()
        assert time.monotonic() < deadline, "Snakemake never locked its directory"
        time.sleep(0.05)


def test_unlock_refuses_while_snakemake_runs_then_clears_its_stale_lock(workdir: Path) -> None:
    (workdir / "hold").touch()
    controller = snakemake(workdir, start_new_session=True)
    try:
        wait_for_lock(workdir, controller)
        refused = unlock(workdir)
        assert refused.returncode == 2
        assert f"pid {controller.pid}" in refused.stderr
        assert "Snakemake still runs here" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert any((workdir / ".snakemake" / "locks").glob("*.lock"))
    finally:
        os.killpg(controller.pid, signal.SIGKILL)
        controller.wait(timeout=30)
        controller.stdout.close()
    assert not locks.workflow_processes(workdir)

    (workdir / "hold").unlink()
    stuck = snakemake(workdir)
    output, _ = stuck.communicate(timeout=120)
    assert stuck.returncode != 0 and "LockException" in output  # the lock really is stale

    cleared = unlock(workdir)
    assert cleared.returncode == 0, cleared.stderr
    assert "removed the stale Snakemake lock" in cleared.stdout
    resumed = snakemake(workdir)
    output, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, output
    assert (workdir / "done.txt").exists()
    assert "was not locked" in unlock(workdir).stdout


def test_unlock_names_a_missing_directory(tmp_path: Path) -> None:
    result = unlock(tmp_path / "nowhere")
    assert result.returncode == 2
    assert result.stderr.strip() == f"journalbench: error: {tmp_path / 'nowhere'}: not a directory"
