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


def test_bad_config_is_a_one_line_error_naming_the_field(repo: Path) -> None:
    result = run([str(VENV_BIN / "snakemake"), "--cores", "1", "--dry-run",
                  "--config", "campain=smoke"], repo)
    assert result.returncode != 0
    assert ("config (workflow/config.yaml, --config): field (top level): Additional properties "
            "are not allowed ('campain' was unexpected)") in result.stdout + result.stderr


def test_config_values_are_checked_against_the_schema(repo: Path) -> None:
    result = run([str(VENV_BIN / "snakemake"), "--cores", "1", "--dry-run",
                  "--config", "hosts="], repo)
    assert result.returncode != 0
    assert "field hosts: None is not of type 'string'" in result.stdout + result.stderr


def test_one_claims_experiments_dry_run_and_a_bad_claims_value(repo: Path) -> None:
    result = run([str(VENV_BIN / "snakemake"), "--cores", "1", "--dry-run",
                  "--config", "claims=C4"], repo)
    assert result.returncode == 0, result.stdout + result.stderr
    result = run([str(VENV_BIN / "snakemake"), "--cores", "1", "--dry-run",
                  "--config", "claims=C4;C8"], repo)
    assert result.returncode != 0 and "field claims:" in result.stdout + result.stderr
