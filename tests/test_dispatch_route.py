"""One route to the agent: `journalbench dispatch` drives this machine (transport: local) the
way it drives an SSH host, through run_remote: deploy the bundle, reap, run (the agent tears
the host down first), atomic fetch. The same two-tenant spec runs on a throw-away local host
and on an sshd host, and both traces of the run_remote steps must be the same."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import system_residue
from journalbench import runfolder
from journalbench.cli import main as cli
from journalbench.control import runremote
from journalbench.control.hosts import load_hosts
from journalbench.control.transport import Transport
from journalbench.errors import AgentError
from journalbench.plan import plan as plans

pytest_plugins = ["sshd_fixtures"]  # sshd_local
pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.unmeasured]

STEPS = ("for_host", "deploy", "reap", "fetch_run")
CAMPAIGN = """\
name: route
description: one route to the agent
duration_s: 3
repetitions: 1
experiments:
  - id: pair
    claims: [C17]
    arms: [shared-journal]
    tenants:
      - {name: a, weight: 700, workload: {tool: fio, preset: high-fsync, size_mb: 16,
                                              prep: overwrite}}
      - {name: b, weight: 300, workload: {tool: fio, preset: high-fsync, size_mb: 16,
                                              prep: overwrite}}
"""
SPEC = {
    "arm": "shared-journal",
    "duration_s": 3,
    "repetition": 1,
    "campaign": "route",
    "tenants": [{"name": "a", "weight": 500,
                 "workload": {"tool": "fio", "preset": "high-fsync", "size_mb": 16}}],
}


def transport_in(args: tuple, result: object) -> str:
    """Class name of the transport a run_remote step worked through."""
    for value in (*args, result):
        if isinstance(value, Transport):
            return type(value).__name__
        if isinstance(getattr(value, "transport", None), Transport):
            return type(value.transport).__name__
    raise AssertionError(f"no transport among {args!r}")


@pytest.fixture
def trace(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(step, transport class) of every run_remote step, in order; the steps still run."""
    calls: list[tuple[str, str]] = []
    for name in STEPS:
        original = getattr(runremote, name)

        def step(*args, _name=name, _original=original, **kwargs):
            result = _original(*args, **kwargs)
            calls.append((_name, transport_in(args, result)))
            return result

        monkeypatch.setattr(runremote, name, step)
    return calls


def dispatch_run(campaign_file: Path, hosts: str, host: str, raw: Path) -> Path:
    runs = [r for r in plans.runs(str(campaign_file), load_hosts(hosts))
            if r.host == host]
    assert len(runs) == 1
    args = ["dispatch", "--campaign", str(campaign_file), "--hosts", hosts, "--host", host,
            "--run-id", runs[0].run_id, "--raw", str(raw)]
    assert cli.main(args) == 0
    return runs[0].folder(raw)


def test_local_and_ssh_runs_go_through_the_same_functions(agent_host, sshd_local, trace,
                                                         tmp_path: Path):
    campaign_file = tmp_path / "route.yaml"
    campaign_file.write_text(CAMPAIGN)
    ssh_name = f"jbt-route-{os.getpid()}"
    ssh_state = tmp_path / "ssh-state"
    ssh_file = sshd_local.host_file(ssh_state, name=ssh_name)
    hosts = f"{agent_host['file']},{ssh_file}"
    raw = tmp_path / "raw"
    traces = {}
    folders = {}
    for name in (agent_host["name"], ssh_name):
        trace.clear()
        folders[name] = dispatch_run(campaign_file, hosts, name, raw)
        traces[name] = list(trace)

    local, ssh = traces[agent_host["name"]], traces[ssh_name]
    assert [step for step, _ in local] == [step for step, _ in ssh] == list(STEPS)
    assert {via for _, via in local} == {"LocalTransport"}
    assert {via for _, via in ssh} == {"SSHTransport"}
    for name, state in ((agent_host["name"], agent_host["state_dir"]), (ssh_name, ssh_state)):
        folder = folders[name]
        assert runfolder.manifest_problems(folder) == []
        assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # no .partial
        assert len(list((state / "agent").glob("journalbench-*.pyz"))) == 1
        assert not list((state / "runs").rglob("MANIFEST.json"))  # the host's copy is gone
        assert system_residue(name, state) == []
    assert sorted(p.name for p in folders[ssh_name].iterdir()) == sorted(
        p.name for p in folders[agent_host["name"]].iterdir())


def test_a_local_run_without_root_is_refused_in_one_line():
    shared = Path(tempfile.mkdtemp(prefix="jbt-noroot-"))
    shared.chmod(0o755)  # the run must fail on root, not on a permission
    host = {"name": "jbt-noroot", "transport": "local", "state_dir": str(shared / "state"),
            "device": {"kind": "image", "size_gb": 2}}
    try:
        os.seteuid(65534)
        try:
            with pytest.raises(AgentError) as caught:
                runremote.run_remote(host, SPEC, shared / "run")
        finally:
            os.seteuid(0)
        assert str(caught.value) == (
            f"run {runfolder.run_id(SPEC)} must run on host jbt-noroot (this machine) and "
            "needs root: rerun as root")
        assert sorted(p.name for p in shared.iterdir()) == []
    finally:
        shutil.rmtree(shared)
