"""The mariadb workload on this machine: real MariaDB servers and sysbench clients inside LXC
containers on a loop device, the bpftrace fsync tracer, and no server left whatever happens.
Small tables (2 x 2,000 rows) keep each run to a few seconds beside its set-up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import VENV_BIN, start_run, system_residue
from journalbench import runfolder
from journalbench.agent.workloads.mariadb_server import (
    DATA_NAME,
    LocalShell,
    cache_key,
    cache_path,
    our_processes,
    stall_note,
)
from journalbench.errors import AgentError
from journalbench.formats.fsync import fsync_file, parse_fsync
from journalbench.formats.guest import guest_file
from journalbench.formats.mariadb import mariadb_counters_file, mariadb_facts_file, parse_counters
from journalbench.tidy.parse import mariadb
from journalbench.tidy.rows import parse_run

pytestmark = [pytest.mark.root, pytest.mark.slow]

SMALL = {"tool": "mariadb", "tables": 2, "table_size": 2000}


def spec(arm: str, *tenants: tuple[str, int, dict[str, Any]], duration: int = 4
         ) -> dict[str, Any]:
    return {"arm": arm, "duration_s": duration, "repetition": 1,
            "tenants": [{"name": n, "weight": w, "workload": wl} for n, w, wl in tenants]}


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, str]:
    _, stderr = proc.communicate(timeout=timeout)
    return proc.returncode, stderr


def servers(host: dict[str, Any]) -> list[tuple[int, str]]:
    return our_processes(host["state_dir"] / host["name"])


def tenant_servers(host: dict[str, Any], tenant: str) -> list[tuple[int, str]]:
    """servers() in the tenant's own cgroup: not the host-side build or calibration ones."""
    own = f"/journalbench/{host['name']}/{tenant}"
    found = []
    for pid, comm in servers(host):
        try:
            paths = [line.split(":", 2)[2] for line in
                     Path(f"/proc/{pid}/cgroup").read_text().splitlines()]
        except OSError:
            continue
        if any(path == own or path.startswith(f"{own}/") for path in paths):
            found.append((pid, comm))
    return found


def wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.2)


def test_two_tenants_end_to_end(agent_host, tmp_path):
    """A 70/30 pair on the shared journal, parsed as tidy parses it: throughput, counters and
    the tracer agree, and no server is left."""
    threads = {**SMALL, "threads": 2}
    out = tmp_path / "run"
    code, stderr = finish(start_run(spec("shared-journal", ("victim", 700, threads),
                                         ("neighbour", 300, threads)), agent_host, out))
    assert code == 0, stderr
    assert runfolder.is_complete(out)
    assert not servers(agent_host)
    runs, samples = parse_run(out)
    assert {r["tenant"] for r in runs} == {"victim", "neighbour"}
    for row in runs:
        assert row["tool"] == "mariadb" and row["workload"] == "mariadb"
        assert row["beside"] == "mariadb"
        assert row["ops_s"] > 0 and row["qps"] >= row["ops_s"]
        assert 0 < row["op_lat_mean_ms"] and 0 < row["op_lat_p95_ms"] <= row["op_lat_p99_ms"]
        assert row["client_threads"] == 2 and row["client_location"] == "tenant"
        assert row["db_setup_s"] > 0
        assert row["db_log_fsyncs"] is None  # MariaDB 10.11 counts them in Innodb_data_fsyncs
        # every autocommitted INSERT waits for a log flush (a few share one: group commit)
        assert 0.5 * row["ops_s"] <= row["db_fsyncs_per_s"] <= 1.5 * row["ops_s"]
        # the kernel saw the server's syscalls that InnoDB counted: the whole trace (from
        # before the workloads start to after they end) holds them, and at most the few
        # background flushes of an idle server around sysbench
        whole = parse_fsync(out / fsync_file(row["tenant"])).count
        assert whole == pytest.approx(row["db_fsyncs"], rel=0.05, abs=20)
        # tidy keeps the trace's seconds in the run's window, which sysbench's own phase
        # overlaps but for its start-up inside the tenant
        assert row["fsync_source"] == "bpftrace" and 0 < row["fsync_count"] <= whole
        assert row["fsync_lat_p50_ms"] > 0
        assert 0 <= row["client_cpu_share"] <= 1.05 and 0 < row["server_cpu_share"] <= 1.05
        assert row["cpu_bound"] in (0, 1)
    per_second = [s for s in samples if s["kind"] == "ops"]
    assert {s["tenant"] for s in per_second} == {"victim", "neighbour"}
    for tenant in ("victim", "neighbour"):
        facts = json.loads((out / mariadb_facts_file(tenant)).read_text())
        assert facts["threads_from"] == "spec"
        assert "--skip-networking" in facts["server_argv"]
        # the client's run on /proc/uptime: as long as bash's `time` of it says
        counters = parse_counters(out / mariadb_counters_file(tenant))
        start, end = counters.client_phase
        assert end - start == pytest.approx(counters.client_real_s, abs=0.3)


def test_calibrated_threads_and_a_cached_datadir(agent_host, tmp_path):
    """Without `threads`, the host's calibration picks them (and is kept); the prepared data
    directory is built once and reused by the second run."""
    out = tmp_path / "run"
    code, stderr = finish(start_run(spec("journal-accounted", ("victim", 700, SMALL)),
                                    agent_host, out))
    assert code == 0, stderr
    host = json.loads((out / runfolder.HOST).read_text())
    record = host["calibration"]["mariadb_threads"]
    steps = [s["threads"] for s in record["steps"]]
    assert steps[:2] == [1, 2] and record["threads"] in steps
    assert Path(record["file"]).is_file()
    facts = json.loads((out / mariadb_facts_file("victim")).read_text())
    assert facts["threads"] == record["threads"]
    assert facts["threads_from"] == f"calibration {record['file']}"
    again = tmp_path / "again"
    code, stderr = finish(start_run(spec("journal-accounted", ("victim", 700, SMALL),
                                         duration=2), agent_host, again))
    assert code == 0, stderr
    cached = json.loads((again / mariadb_facts_file("victim")).read_text())
    assert cached["datadir_cache"]["made_at"] == facts["datadir_cache"]["made_at"]
    assert cached["setup_s"]["cache"] < 1


def test_threads_from_the_guest_operating_point(agent_host, tmp_path):
    """`threads: guest` reads the host's guest operating point (here a record of a sweep put
    in the host's calibration folder: the sweep itself is `journalbench guest-point`), keeps it
    with its sweep in host.json and says so in the facts and in tidy's client_point; without a
    record the run fails in one line naming the command that measures it, leaving nothing."""
    from journalbench.agent import disk
    from journalbench.agent.registry import profile_for
    from journalbench.agent.workloads import guest_point
    from journalbench.control.hosts import load_host

    host = load_host(str(agent_host["file"]))  # as the agent reads it
    profile = profile_for(host, {}, disk.state_root(host))
    asked = {**SMALL, "threads": guest_point.GUEST}
    out = tmp_path / "none"
    code, stderr = finish(start_run(spec("shared-journal", ("victim", 700, asked)), agent_host,
                                    out))
    assert code != 0 and not runfolder.is_complete(out)
    line = stderr.strip().splitlines()[-1]
    assert "no guest operating point" in line and "journalbench guest-point --host " in line
    assert not servers(agent_host) and not system_residue(agent_host["name"],
                                                          agent_host["state_dir"])
    steps = [guest_point.step(1, 0.2, 0, 10, 40.0, 25.0),
             guest_point.step(2, 0.4, 0, 10, 75.0, 26.6),
             guest_point.step(4, 0.8, 2, 10, 120.0, 33.0)]
    record = guest_point.record_of(steps, profile=profile.NAME, accel="tcg",
                                   tables=SMALL["tables"], table_size=SMALL["table_size"],
                                   step_s=10, warmup_s=0, runs=tmp_path / "sweep")
    path = guest_point.path_for(host, profile, SMALL["tables"], SMALL["table_size"])
    guest_point.write(path, record)
    out = tmp_path / "run"
    code, stderr = finish(start_run(spec("shared-journal", ("victim", 700, asked)), agent_host,
                                    out))
    assert code == 0, stderr
    kept = json.loads((out / runfolder.HOST).read_text())["calibration"][guest_point.RECORD]
    assert kept["threads"] == 2 and kept["sweep"] == steps and kept["file"] == str(path)
    facts = json.loads((out / mariadb_facts_file("victim")).read_text())
    assert facts["threads"] == 2 and facts["threads_from"] == f"guest point {path}"
    (row,) = parse_run(out)[0]
    assert row["client_threads"] == 2 and row["client_point"] == "guest"


def test_server_that_does_not_start(agent_host, tmp_path):
    """A data directory without system tables: the server aborts; one line names the tenant
    and its log, the run is not landed, nothing is left."""
    key = cache_key(SMALL["tables"], SMALL["table_size"])
    tarball = cache_path(agent_host["state_dir"], key)
    tarball.parent.mkdir(parents=True)
    (tmp_path / DATA_NAME).mkdir()
    with tarfile.open(tarball, "w") as archive:
        archive.add(tmp_path / DATA_NAME, arcname=DATA_NAME)
    tarball.with_suffix(".json").write_text(json.dumps({**key, "prepare_s": 0}))
    out = tmp_path / "run"
    code, stderr = finish(start_run(spec("per-container-journal",
                                         ("victim", 700, {**SMALL, "threads": 1})),
                                    agent_host, out))
    assert code != 0
    line = stderr.strip().splitlines()[-1]
    assert "tenant victim" in line and "mariadb-victim.log" in line, line
    assert not runfolder.is_complete(out)
    assert not servers(agent_host) and not system_residue(agent_host["name"],
                                                          agent_host["state_dir"])


def test_a_command_that_outlives_its_timeout_is_said_with_its_last_line():
    """A sysbench held past its --time by a query the server never answers is stopped, and its
    error says the last report it printed (or that it printed nothing)."""
    shell = LocalShell()
    with pytest.raises(AgentError, match=r"sh on the host timed out after 1 s; its last line: "
                                         r"\[ 2s \] thds: 4 tps: 0\.00$"):
        shell.run(["sh", "-c", "echo '[ 1s ] thds: 4 tps: 9.00'; echo '[ 2s ] thds: 4 tps: 0.00'"
                               "; exec sleep 30"], timeout=1)
    with pytest.raises(AgentError, match="timed out after 1 s; it printed nothing$"):
        shell.run(["sleep", "30"], timeout=1)


def test_innodb_s_own_word_that_its_writes_stalled_is_read_from_the_server_log(tmp_path):
    """The lines MariaDB 10.11 printed when its doublewrite flush never finished (a thread
    calibration on this machine, 2026-11-27): the first "Long wait" is the stall's note."""
    log = tmp_path / "mariadbd.log"
    log.write_text("2026-11-27 21:13:02 0 [Note] mariadbd: ready for connections.\n"
                   "2026-11-27 21:13:36 0 [Note] InnoDB: Long wait (5 seconds) for double-write"
                   " buffer flush.\n2026-11-27 21:13:36 0 [Note] InnoDB: Buffer Pool pages\n"
                   "Pending Write: 15\n")
    assert stall_note(log) == "InnoDB: Long wait (5 seconds) for double-write buffer flush."
    log.write_text("2026-11-27 21:13:02 0 [Note] mariadbd: ready for connections.\n")
    assert stall_note(log) is None
    assert stall_note(tmp_path / "missing.log") is None


def test_sysbench_failing_half_way(agent_host, tmp_path):
    """The victim's server dies while sysbench runs: the run fails on sysbench's FATAL line,
    naming the tenant and its log."""
    out = tmp_path / "run"
    proc = start_run(spec("shared-journal", ("victim", 700, {**SMALL, "threads": 1}),
                          duration=30), agent_host, out)
    try:
        # the measured sysbench, in the tenant (a host-side build of the tables runs one too)
        wait_for(lambda: any(c == "sysbench" for _, c in tenant_servers(agent_host, "victim")),
                 120, "sysbench in the victim")
        time.sleep(1)
        (server,) = [p for p, c in tenant_servers(agent_host, "victim") if c == "mariadbd"]
        os.kill(server, signal.SIGKILL)
        code, stderr = finish(proc)
    finally:
        proc.kill()
    assert code != 0
    line = stderr.strip().splitlines()[-1]
    assert "sysbench in victim" in line and "sysbench-victim.log" in line, line
    assert "FATAL" in line, line
    assert not runfolder.is_complete(out)
    assert not servers(agent_host)


def test_kill_9_of_the_agent_leaves_servers_that_teardown_ends(agent_host, tmp_path):
    proc = start_run(spec("per-container-journal", ("victim", 700, {**SMALL, "threads": 1}),
                          ("neighbour", 300, {**SMALL, "threads": 1}), duration=60),
                     agent_host, tmp_path / "run")
    try:
        wait_for(lambda: sum(c == "sysbench" for _, c in servers(agent_host)) == 2, 120,
                 "two sysbench clients")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    time.sleep(1)
    assert sum(c == "mariadbd" for _, c in servers(agent_host)) == 2  # the test tests a leak
    done = subprocess.run([str(VENV_BIN / "journalbench"), "teardown", "--host",
                           str(agent_host["file"])], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not servers(agent_host)
    assert not system_residue(agent_host["name"], agent_host["state_dir"])


@pytest.fixture
def guest_visible_host(tmp_path):
    """A throw-away host whose state folder a guest can read (its /tmp and /run are its own
    tmpfs, so the agent_host fixture's folder under /tmp is hidden from it): the prepared data
    directory is read there. Torn down and checked for residue like agent_host."""
    from journalbench.agent.arms.vm import image as guest_image

    if not (guest_image.GUEST_DIR / guest_image.INFO).is_file():
        pytest.skip("no guest kernel: run `make guest`")
    state = Path(f"/var/tmp/journalbench-pytest-{os.getpid()}")
    name = f"pytestvm{os.getpid()}"
    state.mkdir(parents=True)
    host_file = tmp_path / f"{name}.yaml"
    host_file.write_text(f"name: {name}\ntransport: local\nstate_dir: {state}\n"
                         "device: {kind: image, size_gb: 4}\nbfq: {strict_guarantees: 1}\n")
    try:
        yield {"name": name, "file": host_file, "state_dir": state}
        subprocess.run([str(VENV_BIN / "journalbench"), "teardown", "--host", str(host_file)],
                       capture_output=True, text=True, timeout=120)
        assert not system_residue(name, state)
    finally:
        subprocess.run(["rm", "-rf", str(state)], check=True)


def test_two_guests(guest_visible_host, tmp_path):
    """The vm arm: each server and client inside its guest, the data directory read over the
    guest's view of the host's root; no fsync trace (the guest's kernel sees those calls)."""
    threads = {**SMALL, "threads": 2}
    out = tmp_path / "run"
    code, stderr = finish(start_run(spec("vm", ("victim", 700, threads),
                                         ("neighbour", 300, threads)),
                                    guest_visible_host, out), timeout=600)
    assert code == 0, stderr
    runs, _ = parse_run(out)
    for row in runs:
        assert row["ops_s"] > 0 and row["db_fsyncs"] > 0 and row["client_threads"] == 2
        assert row["fsync_source"] is None and row["cpu_bound"] in (0, 1)
        # the guest's busy seconds are its client's run's, on the guest's own /proc/uptime:
        # the snapshots of the counters around it (a mariadb client started under TCG each)
        # and the warm-up fall outside
        counters = parse_counters(out / mariadb_counters_file(row["tenant"]))
        start, end = counters.client_phase
        assert end - start == pytest.approx(counters.client_real_s, abs=0.5)
        # from its threads' start: the client's run less its start-up (script, connections)
        phase = mariadb.client_phase(mariadb.load(out, row["tenant"], threads))
        assert phase.whole == (start, end) and start < phase.work < end
        threads_start = phase.work
        assert end - threads_start == pytest.approx(row["tool_runtime_s"])
        report = [json.loads(line)
                  for line in (out / guest_file(row["tenant"])).read_text().splitlines()]
        assert all("uptime" in line for line in report)
        inside = [line for line in report
                  if threads_start <= line["uptime"] - line["dt"] / 2 <= end]
        assert 0 < len(inside) < len(report)
        busy = [line["vcpu_busy"] for line in inside if line["vcpu_busy"] is not None]
        assert row["vcpu_busy_mean"] == pytest.approx(sum(busy) / len(busy))
    assert not servers(guest_visible_host)
    reread_as_a_sweep(guest_visible_host, out, runs, tmp_path)


def reread_as_a_sweep(host_facts: dict[str, Any], out: Path, runs: list[dict[str, Any]],
                      tmp_path: Path) -> None:
    """`journalbench guest-point --reread` on a sweep of this one run (a record of method 2
    whose 2-thread count is the run: nothing in it is read but the count and the folder) reads
    its run folder as tidy read it, writes this method's record, and leaves the earlier one."""
    from journalbench.agent import disk
    from journalbench.agent.registry import profile_for
    from journalbench.agent.workloads import guest_point
    from journalbench.cli import guestpoint
    from journalbench.control.hosts import load_host

    host = load_host(str(host_facts["file"]))
    profile = profile_for(host, {}, disk.state_root(host))
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "threads-2").symlink_to(out)
    earlier = {**guest_point.record_of([guest_point.step(2, 0.9, 30, 60, 1.0, 1.0)],
                                       profile=profile.NAME, accel="tcg",
                                       tables=guest_point.TABLES,
                                       table_size=guest_point.TABLE_SIZE, step_s=60,
                                       warmup_s=5, runs=sweep), "method": 2}
    old = guest_point.path_for(host, profile, guest_point.TABLES, guest_point.TABLE_SIZE, 2)
    guest_point.write(old, earlier)
    with pytest.raises(AgentError, match=r"by method \d+: read its record .* --reread"):
        guest_point.read(host, profile, guest_point.TABLES, guest_point.TABLE_SIZE)
    path = guest_point.path_for(host, profile, guest_point.TABLES, guest_point.TABLE_SIZE)
    record = guestpoint.reread(host, profile, path)
    victim = next(row for row in runs if row["tenant"] == guest_point.TENANT)
    (found,) = record["sweep"]
    assert found["busy_share"] == round(victim["vcpu_busy_mean"], 4)
    assert found["tps"] == round(victim["ops_s"], 3) and found["threads"] == 2
    assert record["method"] == guest_point.METHOD and record["threads"] == (
        2 if found["keeps_up"] else None)
    assert record["read_from"] == {"file": str(old), "method": 2, "threads": None}
    assert record["measured_at"] == earlier["measured_at"]
    assert json.loads(old.read_text()) == earlier and json.loads(path.read_text()) == record
