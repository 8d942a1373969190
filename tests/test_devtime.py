"""Requests and device time per tenant and jbd2 thread (agent/devtime.bt), on a real run: a
high-fsync writer whose journal sits in its own cgroup (journal-accounted), beside a no-fsync
writer, on a loop device of a throw-away host."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from conftest import start_run
from journalbench import runfolder
from journalbench.agent.sampler import DEVTIME_SCRIPT, DeviceTimeTracer, devtime_source
from journalbench.tidy.rows import parse_run

pytestmark = [pytest.mark.root, pytest.mark.slow]

TIMES = ("requests", "time_ns", "inflight_ns", "wait_ns")


def run_pair(host: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    spec = {"arm": "journal-accounted", "duration_s": 4, "repetition": 1, "tenants": [
        {"name": "victim", "weight": 700, "workload": {"tool": "fio", "preset": "high-fsync"}},
        {"name": "neighbour", "weight": 300,
         "workload": {"tool": "fio", "preset": "no-fsync"}}]}
    proc = start_run(spec, host, out)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert runfolder.is_complete(out), runfolder.manifest_problems(out)
    return [json.loads(line) for line in (out / runfolder.SAMPLES).read_text().splitlines()]


def test_requests_and_device_time_per_tenant_and_journal(agent_host, tmp_path):
    lines = run_pair(agent_host, tmp_path / "run")
    assert all(set(TIMES) <= set(line) for line in lines)
    sums: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for line in lines:
        for key in (*TIMES, "write_ios", "dt"):
            sums[(line["kind"], line["tenant"] if line["kind"] == "jbd2" else line["source"])][
                key] += line[key]
    victim, neighbour = sums[("tenant", "victim")], sums[("tenant", "neighbour")]
    journal = sums[("jbd2", "victim")]
    device = next(v for (kind, _), v in sums.items() if kind == "device")
    # the victim's journal commits, with requests and device time of its own
    assert journal["write_ios"] > 0 and journal["requests"] > 0 and journal["time_ns"] > 0
    assert victim["requests"] > 0 and neighbour["requests"] > 0
    by_interval: dict[float, dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
    for line in lines:
        by_interval[line["t"]][(line["kind"], line["tenant"] if line["kind"] == "jbd2"
                                else line["source"])] = line
    for t, parts in by_interval.items():
        dev = next(v for (kind, _), v in parts.items() if kind == "device")
        for key in TIMES:  # one snapshot per interval: the parts never exceed the whole
            assert parts[("tenant", "victim")][key] + parts[("tenant", "neighbour")][key] \
                <= dev[key], (t, key)
            # the journal sits in the victim's cgroup: its requests are within the victim's
            assert parts[("jbd2", "victim")][key] <= parts[("tenant", "victim")][key], (t, key)
    # each moment is charged at most once: no more device time than the run lasted (plus the
    # 50 ms by which a print may lag), and never more than the requests' issue->completion
    wall_ns = device["dt"] * 1e9
    # the tracer's totals keep pace with the kernel's own counters: over the run, the disk's
    # requests match /sys/block's completed I/Os but for what an interval's 50 ms lag moves
    disk_ios = sum(line["read_ios"] + line["write_ios"] for line in lines
                   if line["kind"] == "device")
    assert device["requests"] == pytest.approx(disk_ios, rel=0.05)
    assert device["time_ns"] <= wall_ns + 0.05e9
    for part in (victim, neighbour, journal, device):
        assert part["time_ns"] <= part["inflight_ns"]
    # the run's shares in requests and time add up to one, and the disk's time went to the
    # tenants and the journals (not to requests nobody could be named for)
    runs, _ = parse_run(tmp_path / "run")
    for currency in ("requests", "time"):
        parts = sum(row[f"own_{currency}_share"] + row[f"jbd2_{currency}_share"] for row in runs)
        assert parts + runs[0][f"shared_jbd2_{currency}_share"] == pytest.approx(1)
    assert runs[0]["other_time_share"] < 0.05
    victim_row = next(row for row in runs if row["tenant"] == "victim")
    assert victim_row["jbd2_time_share"] > 0 and victim_row["jbd2_requests_share"] > 0
    # requests waited in BFQ before the device got them, the journal's commits too
    assert device["wait_ns"] > 0 and victim_row["jbd2_wait_ms"] is not None
    assert victim_row["own_wait_ms"] > 0 and victim_row["jbd2_wait_ms"] >= 0


def test_on_cgroup_v2_the_tracer_reads_no_task_struct(tmp_path):
    """On v2 the owner is the task's one cgroup and a jbd2 thread's pid (by its name): no
    task_struct, whose types bpftrace would resolve with clang at every start. The script
    compiles, attaches and prints its batches (the `cgroup` builtin exists on any host)."""
    v1, v2 = devtime_source(1), devtime_source(2)
    assert v1 == (Path(__file__).parents[1] / "workflow/journalbench/agent" / DEVTIME_SCRIPT
                  ).read_text()
    assert "curtask" in v1 and "curtask" not in v2
    assert "cgroup);" in v2 and 'strncmp(comm, "jbd2/", 5)' in v2
    tracer = DeviceTimeTracer(tmp_path, "4095:1048575", cgroup_version=2)  # no such disk
    tracer.launch()
    try:
        tracer.wait_ready(timeout_s=30)
        assert tracer.totals(fresh=True) == {}
        assert "curtask" not in (tmp_path / DEVTIME_SCRIPT).read_text()
    finally:
        tracer.stop()
    assert list(tmp_path.iterdir()) == []  # the script and its stderr are removed
