"""The Snakemake pipeline drives a campaign over two real SSH hosts in parallel, resumes, and
never re-runs a complete run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import VENV_BIN
from journalbench import runfolder

pytest_plugins = ["sshd_fixtures"]  # sshd_local, sshd_netns
pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.unmeasured]

CAMPAIGN = f"pytest-ssh-{os.getpid()}"


@pytest.fixture
def workspace(repo: Path):
    """The pipeline writes below the repo (data/raw/<campaign>, ...): remove all of it after."""
    state = Path(f"/var/lib/journalbench-pipetest-{os.getpid()}")
    state.mkdir()
    made = [repo / d / CAMPAIGN for d in ("data/raw", "data/processed", "logs/runs", "logs/tidy")]
    yield state
    for path in made:
        shutil.rmtree(path, ignore_errors=True)
    assert not any(p.exists() for p in made)
    mounts = Path("/proc/self/mounts").read_text()
    assert str(state) not in mounts
    shutil.rmtree(state)


def snakemake(repo: Path, campaign: Path, inventory: Path, *extra: str):
    return subprocess.run(
        [str(VENV_BIN / "snakemake"), "--cores", "2", *extra,
         f"data/processed/{CAMPAIGN}/runs.parquet",
         "--config", f"campaign={campaign}", f"hosts={inventory}"],
        cwd=repo, capture_output=True, text=True, timeout=600)


def test_campaign_over_two_ssh_hosts(repo, sshd_local, sshd_netns, workspace, tmp_path):
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(
        f"name: {CAMPAIGN}\ndescription: two hosts\nduration_s: 3\nrepetitions: 2\n"
        "experiments:\n  - id: solo\n    claims: [C8]\n    arms: [shared-journal]\n"
        "    tenants:\n      - {name: a, weight: 500, workload: {tool: fio, preset: high-fsync,"
        " size_mb: 16, prep: overwrite}}\n")  # a small file it goes round
    hosts = [server.host_file(workspace / name, name=name)
             for server, name in ((sshd_local, "jbt-pipe-a"), (sshd_netns, "jbt-pipe-b"))]
    inventory = tmp_path / "lab.yaml"
    inventory.write_text("hosts:\n" + "".join(f"  - {h}\n" for h in hosts))

    first = snakemake(repo, campaign, inventory)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    raw = repo / "data/raw" / CAMPAIGN
    folders = sorted(raw.glob("*/*"))
    assert [f.parent.name for f in folders] == ["jbt-pipe-a"] * 2 + ["jbt-pipe-b"] * 2
    assert all(runfolder.is_complete(f) for f in folders)
    # The same matrix gives the same run ids on both hosts.
    assert {f.name for f in folders if f.parent.name == "jbt-pipe-a"} == {
        f.name for f in folders if f.parent.name == "jbt-pipe-b"}
    assert {json.loads((f / "spec.json").read_text())["host"] for f in folders} == {
        "jbt-pipe-a", "jbt-pipe-b"}
    assert f"campaign {CAMPAIGN}: 0/4 runs done" in first.stdout + first.stderr

    again = snakemake(repo, campaign, inventory)
    assert again.returncode == 0
    assert "Nothing to be done" in again.stdout + again.stderr

    # A lost run is the only one re-run; the complete ones keep their bytes.
    before = {f: (f / runfolder.MANIFEST).read_bytes() for f in folders}
    shutil.rmtree(folders[0])
    resumed = snakemake(repo, campaign, inventory)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert runfolder.is_complete(folders[0]), resumed.stdout[-6000:] + resumed.stderr[-6000:]
    assert (resumed.stdout + resumed.stderr).count("done in") == 1
    for folder in folders[1:]:
        assert (folder / runfolder.MANIFEST).read_bytes() == before[folder]
    final = snakemake(repo, campaign, inventory)
    assert "Nothing to be done" in final.stdout + final.stderr
