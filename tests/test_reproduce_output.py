"""`make reproduce` prints progress a person reads: a whole build from the shipped runs in a
scratch directory prints under 10 KB (Snakemake's job blocks list a few files of each list
and say how many, as does the report of the files it embeds: control/joblog.py), with
Snakemake's progress lines, and no line of hundreds of file names. Slow: it is the whole
analysis."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import VENV_BIN, stop_workflow_processes

pytestmark = pytest.mark.slow
LIMIT = 10 * 1024  # bytes, stdout and stderr together
LONGEST = 400  # characters of a line


@pytest.fixture
def scratch(repo: Path, tmp_path: Path) -> Iterator[Path]:
    """The repository's files linked into a fresh working directory: no data/processed,
    figures or results yet, as on a fresh clone (the venv is the repository's)."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("Makefile", "Snakefile", "workflow", "notebooks", "profiles", "hosts",
                 "requirements.txt", "pyproject.toml", ".venv"):
        (work / name).symlink_to(repo / name)
    (work / "data").mkdir()
    (work / "data" / "raw").symlink_to(repo / "data" / "raw")
    yield work
    stop_workflow_processes(work)


def test_a_whole_reproduce_prints_under_10_kb(scratch: Path) -> None:
    # -o: the venv is taken as made (a test must not reinstall the repository's venv)
    result = subprocess.run(["make", "-o", ".venv/.journalbench-installed", "reproduce"],
                            cwd=scratch, capture_output=True, text=True, timeout=3600,
                            env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(scratch)})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert (scratch / "results" / "report" / "index.html").is_file()
    assert "steps (100%) done" in output  # Snakemake's progress is still shown
    assert "files in all)" in output  # the tidy job's inputs, counted instead of listed
    # the report's embedded files: three named, the rest in one line
    assert output.count("Adding ") == 4 and "Adding the report's other files" in output
    longest = max(output.splitlines(), key=len)
    assert len(longest) <= LONGEST, longest[:500]
    assert len(output.encode()) < LIMIT, f"{len(output.encode())} bytes:\n{output[:3000]}"
    assert "Traceback" not in output
