"""A campaign on a pool of two real SSH hosts (each in a network namespace of its own, with its
own emulated `hdd` disk), end to end as a user runs it: the plan dealt to the members, runs
landing under the pool's name with their member recorded, a resume after the controller is
killed, a member lost (its wire cut) whose waiting runs are dealt to the other by `journalbench
pool redeal`, every planned run measured exactly once, and the blocked analysis of the pool as
one family. Nothing mocked; nothing left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from sshd import NetNS, start_sshd, stop_all
from test_resume import kill_when, teardown

from conftest import VENV_BIN, system_residue
from journalbench import runfolder
from journalbench.control import pools
from journalbench.control.hosts import load_hosts
from journalbench.judge import claims
from journalbench.plan import deal as deals
from journalbench.plan import plan as plans

pytestmark = [pytest.mark.root, pytest.mark.slow]

CAMPAIGN = f"pytest-pool-{os.getpid()}"
POOL = f"jbt-pool-{os.getpid()}"
MEMBERS = (f"jbt-pm1-{os.getpid()}", f"jbt-pm2-{os.getpid()}")


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[dict]:
    """Two sshd hosts in their own namespaces, their host files (hdd profile, own state
    folders) and the pool file naming them; torn down and checked for residue after."""
    state = Path(f"/var/lib/journalbench-pooltest-{os.getpid()}")
    state.mkdir()
    namespaces, servers, files = [], [], []
    try:
        for name in MEMBERS:
            ns = NetNS.create()
            namespaces.append(ns)
            server = start_sshd(tmp_path / f"sshd-{name}", name, netns=ns)
            servers.append(server)
            files.append(server.host_file(state / name, name=name,
                                          device={"kind": "image", "size_gb": 2,
                                                  "profile": "hdd"},
                                          bfq={"strict_guarantees": 1}))
        pool_file = tmp_path / f"{POOL}.yaml"
        pool_file.write_text(json.dumps({"name": POOL, "members": [str(f) for f in files]}))
        yield {"file": pool_file, "members": files, "namespaces": namespaces, "state": state}
    finally:
        for ns in namespaces:
            ns.link(True)
        for file in files:
            teardown(file)
        left = stop_all(servers, namespaces)
        for name in MEMBERS:
            left += system_residue(name, state / name)
        shutil.rmtree(state, ignore_errors=True)
        assert not left, f"residue: {left}"


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    """C8 on the shared journal: a high-fsync victim beside a no-, low- or high-fsync
    neighbour, 2 repetitions: 6 runs, each member one of each condition (the deal's blocks
    and its balance are test_pools.py's)."""
    path = tmp_path / f"{CAMPAIGN}.yaml"
    path.write_text(
        f"name: {CAMPAIGN}\ndescription: a pool of two\nduration_s: 3\nrepetitions: 2\n"
        "experiments:\n  - id: c8\n    claims: [C8]\n    arms: [shared-journal]\n"
        "    vary: {n: [no-fsync, low-fsync, high-fsync]}\n    tenants:\n"
        "      - {name: victim, weight: 700, workload: {tool: fio, preset: high-fsync,"
        " size_mb: 16, prep: overwrite}}\n"
        "      - {name: neighbour, weight: 300, workload: {tool: fio, preset: \"{n}\","
        " size_mb: 16, prep: overwrite}}\n")
    return path


def start(workdir: Path, campaign_file: Path, hosts: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(VENV_BIN / "snakemake"), "--cores", "2", "--keep-going",
         f"data/processed/{CAMPAIGN}/runs.parquet",
         "--config", f"campaign={campaign_file}", f"hosts={hosts}"],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def journalbench(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "journalbench"), *args], cwd=workdir,
                          capture_output=True, text=True, timeout=120)


def test_a_campaign_dealt_to_a_pool_resumes_survives_a_lost_member_and_is_one_family(
        workdir: Path, pool: dict, campaign_file: Path) -> None:
    hosts = load_hosts(str(pool["file"]))
    plan = plans.runs(str(campaign_file), hosts)
    raw = workdir / "data" / "raw"
    dealt = {run.run_id: run.member for run in plan}
    # dealt once each, every condition's repetitions 1 and 1
    assert len(plan) == 6 and {r.host for r in plan} == {POOL}
    assert Counter(dealt.values()) == {MEMBERS[0]: 3, MEMBERS[1]: 3}
    for condition in {deals.condition_of(r.spec) for r in plan}:
        assert Counter(r.member for r in plan
                       if deals.condition_of(r.spec) == condition) == {m: 1 for m in MEMBERS}

    def landed() -> list:
        return [r for r in plan if runfolder.is_complete(r.folder(raw))]

    # Both members measure at once; the controller is killed once two runs landed (one of
    # each: their first runs end together), which leaves the second member two runs to wait.
    first = kill_when(start(workdir, campaign_file, pool["file"]), lambda: len(landed()) >= 2)
    for file in pool["members"]:
        teardown(file)
    assert f"(pool {POOL} member {MEMBERS[0]})" in first
    assert f"(pool {POOL} member {MEMBERS[1]})" in first
    for run in landed():
        recorded = json.loads((run.folder(raw) / runfolder.HOST).read_text())
        assert (recorded["host"], recorded["member"]) == (POOL, dealt[run.run_id])
        assert json.loads((run.folder(raw) / runfolder.SPEC).read_text())["host"] == POOL

    # The second member's wire is cut: the resumed campaign marks it lost after its
    # transport's attempts, its other runs wait (refused at once), the first's all land.
    pool["namespaces"][1].link(False)
    second = start(workdir, campaign_file, pool["file"])
    output = second.communicate(timeout=1800)[0]
    assert second.returncode != 0
    record = pools.read(raw, CAMPAIGN, POOL)
    assert list(record.lost) == [MEMBERS[1]], output[-3000:]
    assert "is lost since" in output
    assert all(runfolder.is_complete(r.folder(raw)) for r in plan if r.member == MEMBERS[0])
    waiting = [r for r in plan if r.member == MEMBERS[1] and r not in landed()]
    assert waiting
    status = journalbench(workdir, "status", "--campaign", str(campaign_file),
                          "--hosts", str(pool["file"]))
    assert f"pool {POOL} member {MEMBERS[1]}: " in status.stdout
    assert "lost since" in status.stdout

    # Its waiting runs dealt to the first member; the campaign completes on it.
    redealt = journalbench(workdir, "pool", "redeal", "--campaign", str(campaign_file),
                           "--hosts", str(pool["file"]), "--member", MEMBERS[1])
    assert redealt.returncode == 0, redealt.stderr
    assert f"{len(waiting)} runs of {MEMBERS[1]} dealt to {MEMBERS[0]} ({len(waiting)})" \
        in redealt.stdout
    third = start(workdir, campaign_file, pool["file"])
    final = third.communicate(timeout=1800)[0]
    assert third.returncode == 0, final[-3000:]

    # Every planned run exactly once, under the pool's name, its member recorded.
    assert sum(log.count(" done in ") for log in (first, output, final)) == len(plan)
    folders = sorted(p.name for p in (raw / CAMPAIGN / POOL).iterdir() if p.is_dir())
    assert folders == sorted(dealt)
    members = {r.run_id: json.loads((r.folder(raw) / runfolder.HOST).read_text())["member"]
               for r in plan}
    assert all(members[r.run_id] == MEMBERS[0] for r in waiting)

    # The blocked analysis: the pool is one family, its checks stratified by member.
    processed = workdir / "data" / "processed" / CAMPAIGN
    runs = pd.read_parquet(processed / "runs.parquet")
    assert set(runs["host"]) == {POOL} and set(runs["member"]) == set(MEMBERS)
    table, checks_, _ = claims.ledger(runs, pd.read_parquet(processed / "samples.parquet"),
                                      pd.read_parquet(processed / "experiments.parquet"))
    c8 = table.set_index("claim").loc["C8"]
    assert c8["host"] == POOL and MEMBERS[0] in c8["members"] and MEMBERS[1] in c8["members"]
    check = checks_[checks_["claim"] == "C8"].iloc[0]
    assert MEMBERS[0] in check["members"] and MEMBERS[1] in check["members"]
    if check["status"] == "measured":
        assert MEMBERS[0] in check["agreement"] and MEMBERS[1] in check["agreement"]
