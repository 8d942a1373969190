"""The redis workload's pure parts: its command lines, its schema branch and campaign, the
buffered fio neighbours, and the binding's build record (the jar `make ycsb` built)."""

from __future__ import annotations

import json
from pathlib import Path

from journalbench.agent.workloads import fio, redis
from journalbench.campaign import expand, load_campaign
from journalbench.schemas import validate

SCHEMAS = Path(__file__).resolve().parent.parent / "workflow" / "schemas"
BUILT = Path(redis.__file__).parent / redis.JARS


def redis_branch() -> dict:
    workload = json.loads((SCHEMAS / "run-spec.schema.json").read_text())["$defs"]["workload"]
    [branch] = [b["then"]["properties"] for b in workload["allOf"]
                if b["if"]["properties"]["tool"].get("const") == "redis"]
    return branch


def test_schema_defaults_are_the_workload_defaults() -> None:
    branch = redis_branch()
    assert {k: branch[k]["default"] for k in redis.DEFAULTS} == redis.DEFAULTS
    assert set(branch) == {"tool", *redis.DEFAULTS}


def test_server_keeps_an_everysec_aof_and_no_snapshot_or_port() -> None:
    argv = redis.server_argv("/mnt/redis")
    options = dict(zip(argv[1::2], argv[2::2], strict=True))
    assert options["--appendonly"] == "yes" and options["--appendfsync"] == "everysec"
    assert options["--save"] == "" and options["--port"] == "0"
    assert options["--unixsocket"] == "/mnt/redis/redis.sock" and options["--dir"] == "/mnt/redis"
    assert options["--auto-aof-rewrite-percentage"] == "0"


def test_client_inserts_only_and_stops_at_the_duration() -> None:
    config = redis.settings_of({"tool": "redis", "records": 500})
    assert config == {"records": 500, "operations": 200_000, "threads": 1}
    run = redis.ycsb_argv(Path("/s/h/ycsb"), "-t", Path("/d/redis.sock"), config, 20)
    assert run[:3] == ["java", "-cp", "/s/h/ycsb/*"]  # names the state folder: found after kill -9
    assert "insertproportion=1" in run and "readproportion=0" in run
    assert "maxexecutiontime=20" in run and "operationcount=200000" in run
    assert "redis.socket=/d/redis.sock" in run and "status.interval=1" in run
    load = redis.ycsb_argv(Path("/s/h/ycsb"), "-load", Path("/d/redis.sock"), config, None)
    assert "-load" in load and "recordcount=500" in load
    assert not any(arg.startswith(("operationcount", "maxexecutiontime")) for arg in load)


def test_buffered_neighbours_skip_direct_io() -> None:
    for preset, direct in [("buffered-high-fsync", "0"), ("high-fsync", "1")]:
        argv = fio.run_command("n", "/mnt", {"tool": "fio", "preset": preset}, 10)
        assert f"--direct={direct}" in argv
    assert fio.PRESETS["buffered-low-fsync"]["fsync"] == fio.PRESETS["low-fsync"]["fsync"]


def test_quick_redis_campaign_expands_to_valid_specs() -> None:
    campaign = load_campaign("quick-redis")
    specs = expand(campaign, "quick-redis")
    assert len(specs) == 3 * (3 + 3 * 3)
    for spec in specs:
        validate(spec, "run-spec", "quick-redis")
    assert "vm" not in {spec["arm"] for spec in specs}


def test_the_built_binding_records_its_version_and_source_hash() -> None:
    info = redis.binding_info(BUILT)  # built by `make ycsb`, which `make test` runs first
    assert info["version"] == "0.1.0" and len(info["source_sha256"]) == 64
    assert len(info["jar_sha256"]) == 64
    assert {p.name for p in BUILT.glob("core-*.jar")} == {"core-0.17.0.jar"}
