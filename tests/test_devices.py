"""Device profiles on this machine: the emulated HDD (nbdkit + nbdfuse + a direct-I/O loop
device) really runs, is calibrated into the thesis's regime, records itself in host.json, and
leaves no daemon, FUSE mount or loop device behind, also after kill -9 of the agent."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import VENV_BIN, start_run, system_residue
from journalbench import runfolder
from journalbench.formats.fio import fio_file

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.fixture(scope="module")
def hdd_host(tmp_path_factory: pytest.TempPathFactory):
    """One host for the module, so the hdd profile is calibrated once (its reference is
    cached in the state folder)."""
    state = tmp_path_factory.mktemp("state")
    name = f"hdd{int(time.time() * 1000) % 100000}"
    host_file = state / f"{name}.yaml"
    host_file.write_text(f"name: {name}\ntransport: local\nstate_dir: {state}\n"
                         "device: {kind: image, size_gb: 4, profile: hdd}\n")
    host = {"name": name, "file": host_file, "state_dir": state}
    yield host
    teardown(host)
    left = system_residue(name, state)
    assert not left, f"test left residue: {left}"


def teardown(host: dict[str, Any]) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "journalbench"), "teardown", "--host",
                           str(host["file"])], capture_output=True, text=True, timeout=120)


def pair(arm: str, device: str | None = None, duration: int = 6) -> dict[str, Any]:
    spec: dict[str, Any] = {"arm": arm, "duration_s": duration, "repetition": 1, "tenants": [
        {"name": n, "weight": w, "workload": {"tool": "fio", "preset": "high-fsync",
                                              "size_mb": 32}}
        for n, w in (("victim", 700), ("neighbour", 300))]}
    if device:
        spec["device"] = device
    return spec


def fio_sync(out: Path, tenant: str) -> dict[str, Any]:
    return json.loads((out / fio_file(tenant)).read_text())["jobs"][0]["sync"]


def test_hdd_pair_is_calibrated_and_slows_the_victim(hdd_host, tmp_path):
    out = tmp_path / "run"
    proc = start_run(pair("shared-journal"), hdd_host, out)
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    assert runfolder.is_complete(out)
    facts = json.loads((out / runfolder.HOST).read_text())
    assert facts["device_profile"]["profile"] == "hdd"
    assert facts["device"]["rotational"] == "1"
    reference = facts["calibration"]["reference"]
    # the thesis's regime for a high-fsync writer alone on its own journal
    assert 10 <= reference["high_fsync_ms"] <= 25
    assert 8 <= reference["high_fsync_per_s"] <= 20
    assert 0 <= reference["load"]["busy_share"] <= 1  # how busy the machine was meanwhile
    assert abs(facts["calibration"]["drift"]["write_fsync_per_s"]) <= 0.10
    assert 0 < facts["device_profile"]["emulator_cpu_share"] < 1
    # beside a second fsyncing tenant on the same journal, the victim waits longer than alone
    victim = fio_sync(out, "victim")["lat_ns"]
    assert victim["N"] > 0 and victim["mean"] / 1e6 > reference["high_fsync_ms"]
    assert not system_residue(hdd_host["name"], hdd_host["state_dir"])


def test_kill_9_of_an_hdd_run_then_teardown_leaves_nothing(hdd_host, tmp_path):
    out = tmp_path / "killed"
    proc = start_run(pair("per-container-journal", duration=60), hdd_host, out)
    log = out / runfolder.RUN_LOG
    deadline = time.monotonic() + 300
    while not (log.exists() and "workloads start" in log.read_text()):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the run did not reach its measured phase"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    left = system_residue(hdd_host["name"], hdd_host["state_dir"])
    assert any("nbdkit" in item for item in left), left  # the emulator outlived the agent
    done = teardown(hdd_host)
    assert done.returncode == 0, done.stderr
    assert not system_residue(hdd_host["name"], hdd_host["state_dir"])


def test_a_drifted_device_fails_the_run(hdd_host, tmp_path):
    """A reference that the device no longer matches (here: one claiming twice the sequential
    rate) fails the run before anything is measured, and leaves nothing."""
    from journalbench.agent.devices.calibrate import reference_path
    from journalbench.agent.registry import PROFILES
    from journalbench.control.hosts import load_host

    host = load_host(str(hdd_host["file"]))
    profile = PROFILES["hdd-wcache"](host, Path(host["state_dir"]) / host["name"], {})
    path = reference_path(host, profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"write_fsync_per_s": 1e6, "seq_write_mb_s": 1e6,
                                "high_fsync_ms": 20.0, "high_fsync_per_s": 14.0}))
    try:
        proc = start_run(pair("shared-journal", device="hdd-wcache", duration=2), hdd_host,
                     tmp_path / "drifted")
        _, stderr = proc.communicate(timeout=300)
    finally:
        path.unlink()
    assert proc.returncode != 0
    assert "not the one calibrated" in stderr and str(path) in stderr
    assert "in two probes in a row" in stderr  # probed again before failing
    assert "probing again" in (tmp_path / "drifted" / runfolder.RUN_LOG).read_text()
    assert not (tmp_path / "drifted" / runfolder.MANIFEST).exists()
    assert not system_residue(hdd_host["name"], hdd_host["state_dir"])


def adopt_reference(campaign: str, host: dict[str, Any], raw: Path
                    ) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "journalbench"), "adopt-reference", campaign,
                           "--host", str(host["file"]), "--raw", str(raw)],
                          capture_output=True, text=True, timeout=120)


def test_a_campaign_resumed_on_a_fresh_machine_keeps_its_reference(hdd_host, tmp_path):
    """A campaign's run lands; the host's reference cache is lost (a new machine of the same
    kind); `adopt-reference` puts back the reference the landed run was checked against, and
    the next run is checked against it instead of a new one measured there."""
    from journalbench.agent.devices.calibrate import reference_path
    from journalbench.agent.registry import PROFILES
    from journalbench.control.hosts import load_host

    raw = tmp_path / "raw"
    first = raw / "resumed" / hdd_host["name"] / "first"
    first.parent.mkdir(parents=True)
    proc = start_run(pair("shared-journal", device="hdd", duration=2), hdd_host, first)
    assert proc.wait(timeout=600) == 0, proc.communicate()[1]
    recorded = json.loads((first / runfolder.HOST).read_text())["calibration"]
    host = load_host(str(hdd_host["file"]))
    path = reference_path(host, PROFILES["hdd"](host, Path(host["state_dir"]) / host["name"],
                                                {}))
    assert recorded["reference_file"] == str(path)
    path.unlink()  # the fresh machine's empty cache

    adopted = adopt_reference("resumed", hdd_host, raw)
    assert adopted.returncode == 0, adopted.stderr
    assert json.loads(path.read_text()) == recorded["reference"]
    again = adopt_reference("resumed", hdd_host, raw)
    assert again.returncode == 0 and "already the runs' reference" in again.stdout

    second = tmp_path / "second"
    proc = start_run(pair("shared-journal", device="hdd", duration=2), hdd_host, second)
    assert proc.wait(timeout=600) == 0, proc.communicate()[1]
    checked = json.loads((second / runfolder.HOST).read_text())["calibration"]
    assert checked["reference"] == recorded["reference"]  # not measured anew
    assert json.loads(path.read_text()) == recorded["reference"]

    # a host that measured a reference of its own keeps it: adopting would hide that change
    path.write_text(json.dumps({**recorded["reference"], "measured_at": "elsewhere"}))
    try:
        refused = adopt_reference("resumed", hdd_host, raw)
    finally:
        path.write_text(json.dumps(recorded["reference"]))
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "holds another reference" in refused.stderr
    assert not system_residue(hdd_host["name"], hdd_host["state_dir"])


@pytest.mark.own_reference
def test_a_reference_measured_on_a_busy_machine_is_used_but_not_kept(agent_host, tmp_path):
    """Two processes spinning on both cores while the fast disk's reference is first measured:
    the run records how busy the machine was and goes on, but the reference is not cached, so a
    later run on a quiet machine measures its own."""
    from journalbench.agent.devices.calibrate import BUSY_LIMIT, reference_path
    from journalbench.agent.registry import PROFILES
    from journalbench.control.hosts import load_host

    host = load_host(str(agent_host["file"]))
    path = reference_path(host, PROFILES["native"](host, Path(host["state_dir"]) / host["name"],
                                                  {}))
    spinners = [subprocess.Popen(["python3", "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)
        proc = start_run(pair("shared-journal", duration=2), agent_host, tmp_path / "busy")
        _, stderr = proc.communicate(timeout=300)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert proc.returncode == 0, stderr
    load = json.loads((tmp_path / "busy" / runfolder.HOST).read_text())["calibration"][
        "reference"]["load"]
    assert load["busy_share"] > BUSY_LIMIT
    assert "not kept" in stderr and not path.exists()


def test_drifted_names_the_figures_beyond_the_limit_and_none_without_a_limit():
    from journalbench.agent.devices.calibrate import drifted

    record = {"drift": {"write_fsync_per_s": 0.02, "seq_write_mb_s": -0.12}, "drift_limit": 0.10}
    assert drifted(record) == ["seq_write_mb_s"]
    assert drifted({**record, "drift": {"write_fsync_per_s": 0.1, "seq_write_mb_s": -0.1}}) == []
    assert drifted({**record, "drift_limit": None}) == []
