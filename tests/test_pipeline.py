"""The Snakemake pipeline parses, lints clean, and the installed command line answers."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import VENV_BIN


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_snakemake_lint_has_no_findings(repo: Path) -> None:
    result = run([str(VENV_BIN / "snakemake"), "--lint"], repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr


def test_snakemake_dry_run_succeeds(repo: Path) -> None:
    result = run([str(VENV_BIN / "snakemake"), "--cores", "1", "--dry-run"], repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_installed_entry_point_prints_help(repo: Path) -> None:
    result = run([str(VENV_BIN / "journalbench"), "--help"], repo)
    assert result.returncode == 0 and "usage: journalbench" in result.stdout
