"""`make reproduce` never measures: the real pipeline on a copy of a shipped campaign (arms20,
15 runs) whose run folders are damaged, missing or interrupted. A damaged folder (no
MANIFEST.json, a checksum that fails) stops the analysis with a line naming it and how to
restore it, whether the shipped data is reproduced or a campaign resumed, and no experiment
starts; a missing run stops reproducing but is measured by a campaign, as is a `.partial` (an
interrupted measurement)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from conftest import VENV_BIN, stop_workflow_processes

CAMPAIGN = "arms20"
# the campaign the scratch checkout reproduces, on a host no experiment could reach: were the
# pipeline to start one anyway, it would fail to connect instead of measuring on this machine
CONFIG = "campaign: {campaign}\nhosts: {hosts}\nclaims: \"\"\n"
HOST = """name: local
transport: ssh
ssh: {address: 127.0.0.1, port: 1, user: root, use_agent: true, connect_timeout_s: 2}
device: {kind: image}
"""
TAIL = ("restores a shipped run (a run measured here and never shipped: delete the folder and "
        "its campaign measures it again)")


@pytest.fixture
def work(repo: Path, tmp_path: Path) -> Iterator[Path]:
    """A scratch checkout whose workflow/config.yaml names arms20, with a copy of its shipped
    runs: `snakemake --cores 1` there is `make reproduce` of that campaign."""
    work = tmp_path / "work"
    (work / "workflow").mkdir(parents=True)
    for name in ("Snakefile", "notebooks", "profiles", "hosts"):
        (work / name).symlink_to(repo / name)
    for child in (repo / "workflow").iterdir():
        if child.name != "config.yaml":
            (work / "workflow" / child.name).symlink_to(child)
    (tmp_path / "unreachable.yaml").write_text(HOST)
    (work / "workflow" / "config.yaml").write_text(
        CONFIG.format(campaign=CAMPAIGN, hosts=tmp_path / "unreachable.yaml"))
    shutil.copytree(repo / "data" / "raw" / CAMPAIGN, work / "data" / "raw" / CAMPAIGN)
    yield work
    stop_workflow_processes(work)


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "snakemake"), "--cores", "1", *args], cwd=work,
                          capture_output=True, text=True, timeout=300)


def runs(work: Path) -> list[Path]:
    return sorted((work / "data" / "raw" / CAMPAIGN / "local").iterdir())


def nothing_measured(work: Path, output: str) -> None:
    """No experiment was started: no job of the run rule, no run log, no .partial folder."""
    assert "run_experiment" not in output
    assert not (work / "logs" / "runs").exists()
    assert not list((work / "data" / "raw").rglob("*.partial"))


def shown(folder: Path, work: Path) -> str:
    return str(folder.relative_to(work))


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(data)


def test_reproducing_stops_on_a_folder_without_its_manifest(work: Path) -> None:
    folder = runs(work)[0]
    (folder / "MANIFEST.json").unlink()
    kept = {p.name: p.read_bytes() for p in folder.iterdir()}
    result = snakemake(work)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    name = shown(folder, work)
    assert (f"damaged run folder {name}: no MANIFEST.json; `git checkout -- {name}` {TAIL}"
            in output.splitlines())
    assert "stopped before measuring or analysing anything: 1 damaged run folder" in output
    assert "Traceback" not in output and len(output) < 2000, output  # its lines, nothing else
    nothing_measured(work, output)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == kept
    assert not (work / "data" / "processed" / CAMPAIGN / "runs.parquet").exists()


def test_reproducing_stops_on_a_checksum_that_fails_and_records_it(work: Path) -> None:
    """tidy verifies every checksum: the analysis stops there, the folder is listed in
    skipped.parquet (status damaged), and restoring the file lets it go on."""
    folder = runs(work)[2]
    original = (folder / "io-samples.jsonl").read_bytes()
    flip_a_byte(folder / "io-samples.jsonl")
    result = snakemake(work)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    name = shown(folder, work)
    line = (f"damaged run folder {name}: io-samples.jsonl: sha256 does not match MANIFEST.json;"
            f" `git checkout -- {name}` {TAIL}")
    assert f"tidy: {line}" in output.splitlines()
    assert "stopped the analysis: 1 damaged run folder(s)" in output
    assert output.rstrip("\n").splitlines()[-1] == line  # again, below Snakemake's error
    # the failed job's block lists a few of its inputs, not every run's MANIFEST.json
    assert "Traceback" not in output and max(len(x) for x in output.splitlines()) < 400
    nothing_measured(work, output)
    processed = work / "data" / "processed" / CAMPAIGN
    skipped = pd.read_parquet(processed / "skipped.parquet")
    assert skipped[["status", "reason"]].to_dict("records") == [
        {"status": "damaged", "reason": line}]
    assert not (processed / "runs.parquet").exists() and not (work / "results").exists()

    (folder / "io-samples.jsonl").write_bytes(original)  # what `git checkout` does
    result = snakemake(work, f"data/processed/{CAMPAIGN}/runs.parquet")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert pd.read_parquet(processed / "skipped.parquet").empty
    assert pd.read_parquet(processed / "runs.parquet").run_id.nunique() == len(runs(work))


def test_reproducing_never_measures_a_missing_run(work: Path) -> None:
    folder = runs(work)[1]
    shutil.rmtree(folder)
    result = snakemake(work)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    name = shown(folder, work)
    assert (f"missing run folder {name}: `git checkout -- {name}` restores a shipped run"
            in output.splitlines())
    assert (f"`snakemake --cores 1 --config campaign={CAMPAIGN}` measures the missing runs"
            in output)
    nothing_measured(work, output)
    assert not folder.exists()


def test_a_resumed_campaign_refuses_a_damaged_folder_before_measuring(work: Path) -> None:
    """Named on the command line, the campaign would measure its missing run; with a damaged
    folder it measures nothing and keeps every file."""
    missing, damaged = runs(work)[:2]
    shutil.rmtree(missing)
    (damaged / "MANIFEST.json").unlink()
    kept = {p.name: p.read_bytes() for p in damaged.iterdir()}
    result = snakemake(work, "--config", f"campaign={CAMPAIGN}")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    name = shown(damaged, work)
    assert (f"damaged run folder {name}: no MANIFEST.json; `git checkout -- {name}` {TAIL}"
            in output.splitlines())
    nothing_measured(work, output)
    assert not missing.exists()
    assert {p.name: p.read_bytes() for p in damaged.iterdir()} == kept


def test_a_resumed_campaign_measures_an_interrupted_run_again(work: Path) -> None:
    """A .partial is no damage: a campaign (named on the command line, or measure=true) plans
    its run again beside the missing one (dispatch removes the .partial first:
    test_campaign.py)."""
    interrupted, missing = runs(work)[:2]
    (interrupted / "MANIFEST.json").unlink()
    interrupted.rename(interrupted.with_name(interrupted.name + ".partial"))
    shutil.rmtree(missing)
    for config in ([f"campaign={CAMPAIGN}"], ["measure=true"]):
        result = snakemake(work, "--dry-run", "--config", *config)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        planned = {line.split("run_id=")[1].strip() for line in output.splitlines()
                   if "wildcards:" in line and "run_id=" in line}
        assert planned == {interrupted.name, missing.name}
        assert "damaged run folder" not in output


def test_a_bad_measure_value_is_a_one_line_error(work: Path) -> None:
    result = snakemake(work, "--dry-run", "--config", "measure=yes")
    assert result.returncode != 0
    assert ("config (workflow/config.yaml, --config): field measure: 'yes' is not one of "
            "[True, False, 'true', 'false']") in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_make_reproduce_ends_with_the_damaged_folders_line(work: Path, repo: Path) -> None:
    """What a user runs: `make reproduce` prints the damaged folder's line last, below
    Snakemake's error block of the failed job (make's own closing line aside)."""
    for name in ("Makefile", "requirements.txt", "pyproject.toml", ".venv"):
        (work / name).symlink_to(repo / name)
    folder = runs(work)[2]
    flip_a_byte(folder / "io-samples.jsonl")
    result = subprocess.run(["make", "-o", ".venv/.journalbench-installed", "reproduce"],
                            cwd=work, capture_output=True, text=True, timeout=600,
                            env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(work)})
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines()
             if line.strip() and not line.startswith("make: ***")]
    name = shown(folder, work)
    assert lines[-1] == (f"damaged run folder {name}: io-samples.jsonl: sha256 does not match "
                         f"MANIFEST.json; `git checkout -- {name}` {TAIL}"), lines[-5:]
