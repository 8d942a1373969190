"""The redis workload for real: Redis 7 in LXC containers on a loop device, YCSB 0.17.0 on the
host through our binding (built by `make ycsb`), the AOF's fdatasync traced by bpftrace; and
Redis in QEMU guests (TCG here), reached through the vm arm's tunnel into each guest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import VENV_BIN, start_run, system_residue
from journalbench import runfolder
from journalbench.agent.arms.vm import image as guest_image
from journalbench.agent.arms.vm import tunnel as guest_tunnel
from journalbench.agent.cgroups import tenant_cgroup
from journalbench.agent.system import process_files
from journalbench.agent.workloads.redis import host_pids
from journalbench.formats.fsync import fsync_file, parse_fsync
from journalbench.formats.redis import redis_file
from journalbench.formats.ycsb import parse_ycsb, ycsb_file, ycsb_stderr
from journalbench.tidy.rows import parse_run

pytestmark = [pytest.mark.root, pytest.mark.slow]
GUEST_READY = (guest_image.GUEST_DIR / guest_image.INFO).is_file()
needs_guest = pytest.mark.skipif(not GUEST_READY, reason="no guest kernel: run `make guest`")


def spec(arm: str, redis: dict[str, Any], neighbour: str | None = None,
         duration: int = 8) -> dict[str, Any]:
    tenants = [{"name": "kv", "weight": 700, "workload": {"tool": "redis", **redis}}]
    if neighbour:
        tenants.append({"name": "noisy", "weight": 300,
                        "workload": {"tool": "fio", "preset": neighbour, "size_mb": 64}})
    return {"arm": arm, "duration_s": duration, "repetition": 1, "tenants": tenants}


def named(*names: str) -> set[int]:
    found = set()
    for _, comm in process_files("comm"):
        try:
            if comm.read_text().strip() in names:
                found.add(int(comm.parent.name))
        except OSError:
            continue
    return found


@pytest.fixture
def no_new_servers() -> Iterator[None]:
    """No redis-server or JVM the test started is left (whatever else runs on the machine)."""
    before = named("redis-server", "java")
    yield
    deadline = time.monotonic() + 10
    while named("redis-server", "java") - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert named("redis-server", "java") - before == set()


def wait_for_status(out: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the measured phase runs: YCSB printed a status line with operations done."""
    target = out / ycsb_stderr("kv")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if target.exists() and any(" sec: " in line and " 0 operations" not in line
                                   for line in target.read_text().splitlines()):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("YCSB never reported operations")


Rows = list[dict[str, Any]]


def landed_kv(code: int, stderr: str, out: Path) -> tuple[dict[str, Any], Rows, Rows]:
    """The Redis tenant's row, every tenant's row and the samples of a run that landed,
    checked as any Redis run must be: no failed operation, throughput and latencies present."""
    assert code == 0, stderr
    assert runfolder.is_complete(out), runfolder.manifest_problems(out)
    runs, samples = parse_run(out)
    kv = next(row for row in runs if row["tenant"] == "kv")
    assert kv["tool"] == "redis" and kv["failed_ops"] == 0 and kv["ops_s"] > 0
    assert kv["op_lat_p99_ms"] >= kv["op_lat_p95_ms"] > 0
    return kv, runs, samples


def test_load_and_insert_beside_a_buffered_neighbour(agent_host, tmp_path, no_new_servers):
    out = tmp_path / "run"
    proc = start_run(spec("shared-journal", {"records": 2000, "operations": 40000},
                          "buffered-high-fsync"), agent_host, out)
    _, stderr = proc.communicate(timeout=300)
    kv, runs, samples = landed_kv(proc.returncode, stderr, out)
    assert kv["aof_bytes"] > kv["aof_bytes_loaded"] > 0
    # Redis's AOF thread syncs once a second: fdatasync, traced in the tenant's Redis
    assert kv["fsync_source"] == "bpftrace" and kv["fsync_count"] >= 1
    assert "fdatasync" in parse_fsync(out / fsync_file("kv")).syscalls
    per_second = [row for row in samples if row["kind"] == "ops"]
    first = parse_ycsb(out / ycsb_file("kv"), out / ycsb_stderr("kv"))
    assert sum(row["ops"] for row in per_second) == 40000 - first.status[0].operations
    assert all(row["tenant"] == "kv" for row in per_second)
    noisy = next(row for row in runs if row["tenant"] == "noisy")
    assert noisy["preset"] == "buffered-high-fsync" and noisy["fsync_count"] > 0

    facts = json.loads((out / runfolder.HOST).read_text())
    assert facts["tools"]["ycsb"] == "0.17.0"
    assert facts["tools"]["ycsb-redis"].startswith("0.1.0 source ")
    redis = json.loads((out / redis_file("kv")).read_text())
    assert redis["records"] == 2000 and redis["load_s"] > 0
    assert redis["binding"]["source_sha256"] != "unknown"
    # client and server CPU over the measured phase: the flag of a CPU-paced request chain
    cpu = redis["cpu"]
    assert 0 < cpu["server_s"] <= cpu["server_wall_s"] * 1.05
    assert 0 < cpu["client_s"] and cpu["client_wall_s"] > 0
    assert kv["server_cpu_share"] == pytest.approx(cpu["server_s"] / cpu["server_wall_s"])
    assert kv["client_cpu_share"] == pytest.approx(cpu["client_s"] / cpu["client_wall_s"])
    assert kv["cpu_bound"] == int(kv["client_cpu_share"] + kv["server_cpu_share"] >= 0.9)
    assert redis["redis_version"].startswith("7.")
    assert (out / "ycsb-load-kv.log").is_file() and (out / "redis-kv.log").is_file()


def test_redis_dying_mid_run_fails_the_run_naming_tenant_and_file(agent_host, tmp_path,
                                                                   no_new_servers):
    out = tmp_path / "run"
    proc = start_run(spec("per-container-journal", {"records": 500, "operations": 10_000_000},
                          duration=6), agent_host, out)
    wait_for_status(out, proc)
    servers = host_pids("redis-server", tenant_cgroup(agent_host["name"], "kv"))
    assert len(servers) == 1
    os.kill(servers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode != 0
    error = [line for line in stderr.splitlines() if "tenant kv" in line]
    assert error and str(out / ycsb_file("kv")) in error[-1], stderr
    assert not (out / runfolder.MANIFEST).exists()
    assert system_residue(agent_host["name"], agent_host["state_dir"]) == []


@pytest.mark.parametrize("arm", ["journal-accounted", pytest.param("vm", marks=needs_guest)])
def test_teardown_after_kill_9_of_the_agent_stops_redis_and_the_client(arm, agent_host, tmp_path,
                                                                      no_new_servers):
    out = tmp_path / "run"
    proc = start_run(spec(arm, {"records": 500, "operations": 10_000_000}, duration=60),
                     agent_host, out)
    wait_for_status(out, proc, timeout=300)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.communicate(timeout=30)
    left = system_residue(agent_host["name"], agent_host["state_dir"])
    assert any("java" in item for item in left), left  # the client names the state folder
    done = subprocess.run(
        [str(VENV_BIN / "journalbench"), "teardown", "--host", str(agent_host["file"])],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert system_residue(agent_host["name"], agent_host["state_dir"]) == []


# -- the vm arm: Redis in QEMU guests, YCSB on the host through each guest's tunnel ------------


def in_guest(host: dict[str, Any], tenant: str, script: str) -> str:
    """A command inside a tenant's guest, over the arm's own command channel."""
    folder = host["state_dir"] / host["name"] / "vm" / tenant
    done = subprocess.run([str(VENV_BIN / "python"), "-m", "journalbench.agent.arms.vm.relay",
                           str(folder), "sh", "-c", script],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_guest
def test_two_guests_load_and_insert_through_the_tunnel(agent_host, tmp_path, no_new_servers):
    out = tmp_path / "run"
    proc = start_run(spec("vm", {"records": 300, "operations": 3000}, "buffered-high-fsync",
                          duration=6), agent_host, out)
    _, stderr = proc.communicate(timeout=400)
    kv, runs, samples = landed_kv(proc.returncode, stderr, out)
    assert kv["aof_bytes"] > kv["aof_bytes_loaded"] > 0  # read inside the guest
    assert kv["fsync_source"] is None  # the AOF's fdatasync is the guest kernel's call
    assert not (out / fsync_file("kv")).exists()
    assert kv["virt_accel"] in ("kvm", "tcg") and kv["cpu_bound"] in (0, 1)
    per_second = [row for row in samples if row["kind"] == "ops"]
    first = parse_ycsb(out / ycsb_file("kv"), out / ycsb_stderr("kv"))
    assert sum(row["ops"] for row in per_second) == \
        first.operations["INSERT"].operations - first.status[0].operations
    noisy = next(row for row in runs if row["tenant"] == "noisy")
    assert noisy["throughput_mb_s"] > 0

    redis = json.loads((out / redis_file("kv")).read_text())
    assert redis["client_via"] == "tunnel" and redis["fsync_tracer"] is None
    assert redis["client_socket"].endswith("/vm/kv/tunnel-redis.sock")
    assert redis["records"] == 300 and redis["load_s"] > 0
    assert redis["info"]["aof_last_write_status"] == "ok"
    assert redis["cpu"]["server_s"] > 0 and kv["client_cpu_share"] > 0  # guest's Redis, host's YCSB
    assert guest_tunnel.READY in (out / "redis-kv-tunnel.log").read_text()
    facts = json.loads((out / runfolder.HOST).read_text())
    assert facts["tools"]["socat"].startswith("socat version")
    assert system_residue(agent_host["name"], agent_host["state_dir"]) == []


@needs_guest
def test_redis_dying_in_a_guest_stops_the_client_and_fails_the_run(agent_host, tmp_path,
                                                                    no_new_servers):
    """Over the tunnel nobody tells the client that Redis is gone: the workload's watcher
    does, at once, instead of YCSB waiting for a reply until the run's deadline."""
    out = tmp_path / "run"
    proc = start_run(spec("vm", {"records": 200, "operations": 10_000_000}, duration=60),
                     agent_host, out)
    wait_for_status(out, proc, timeout=300)
    in_guest(agent_host, "kv", "kill -9 $(pidof redis-server)")
    killed = time.monotonic()
    _, stderr = proc.communicate(timeout=180)
    assert time.monotonic() - killed < 50  # well before the 60 s run would end
    assert proc.returncode != 0
    error = [line for line in stderr.splitlines() if "tenant kv" in line]
    assert error and "redis-server in kv exited" in error[-1], stderr
    assert str(out / ycsb_file("kv")) in error[-1]
    assert not (out / runfolder.MANIFEST).exists()
    assert system_residue(agent_host["name"], agent_host["state_dir"]) == []
