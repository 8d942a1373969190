"""The redis workload's pure parts: its command lines, its schema branch and campaign, the
buffered fio neighbours, the binding's build record (the jar `make ycsb` built), and the vm
arm's tunnel into a guest as far as it is decided before a guest boots."""

from __future__ import annotations

import fnmatch
import json
import subprocess
from pathlib import Path

import pytest

from journalbench.agent import cgroups
from journalbench.agent.arms.base import Context
from journalbench.agent.arms.vm import (
    image as guest_image,
)
from journalbench.agent.arms.vm import (
    side as guest_side,
)
from journalbench.agent.arms.vm import (
    tunnel as guest_tunnel,
)
from journalbench.agent.arms.vm.arm import VirtualMachine, qemu_argv
from journalbench.agent.iocontrol.bfq import Bfq
from journalbench.agent.workloads import fio, redis
from journalbench.formats.fsync import fsync_file
from journalbench.plan.campaign import expand, load_campaign
from journalbench.plan.schemas import validate

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
    assert len(specs) == 3 * (4 + 4 * 3)
    for spec in specs:
        validate(spec, "run-spec", "quick-redis")
    vm = [spec for spec in specs if spec["arm"] == "vm"]
    assert len(vm) == 3 * (1 + 3)  # the tunnel takes one client thread: the default
    assert all(t["workload"].get("threads", 1) == 1 for s in vm for t in s["tenants"])


def test_the_built_binding_records_its_version_and_source_hash() -> None:
    info = redis.binding_info(BUILT)  # built by `make ycsb`, which `make test` runs first
    assert info["version"] == "0.1.0" and len(info["source_sha256"]) == 64
    assert len(info["jar_sha256"]) == 64
    assert {p.name for p in BUILT.glob("core-*.jar")} == {"core-0.17.0.jar"}


def vm_arm(root: Path) -> VirtualMachine:
    host = {"name": "unit", "state_dir": str(root.parent)}
    return VirtualMachine(Context(host, root, Bfq(cgroups.detect()), root / "out"))


def test_the_vm_arm_plans_a_tunnel_per_workload_and_refuses_a_socket_path_too_long(
        tmp_path: Path) -> None:
    workload = redis.Redis("kv", {"tool": "redis"}, 10)
    assert workload.guest_tunnels() == [redis.TUNNEL]
    arm = vm_arm(tmp_path / "unit")
    arm.plan_tunnels({"kv": workload.guest_tunnels(), "noisy": []})
    assert arm.tunnels == {"kv": ["redis"]}
    assert arm.tunnel("kv", "redis") == tmp_path / "unit" / "vm" / "kv" / "tunnel-redis.sock"
    with pytest.raises(Exception, match="tenant noisy: its guest has no tunnel 'redis'"):
        arm.tunnel("noisy", "redis")
    deep = vm_arm(tmp_path / ("d" * 100) / "unit")
    with pytest.raises(Exception, match="tenant kv: tunnel socket .* longer than 107 bytes"):
        deep.plan_tunnels({"kv": ["redis"]})


def test_redis_on_the_vm_arm_takes_its_tunnel_and_one_client_thread(tmp_path: Path) -> None:
    arm = vm_arm(tmp_path / "unit")
    arm.plan_tunnels({"kv": ["redis"]})
    one = redis.Redis("kv", {"tool": "redis"}, 10)
    one.where(arm.shell("kv"))
    assert one.guest and one.socket() == arm.tunnel("kv", "redis")
    assert fsync_file("kv") not in one.outputs()  # no fsync trace from inside a guest
    two = redis.Redis("kv", {"tool": "redis", "threads": 2}, 10)
    with pytest.raises(Exception, match="tenant kv: .* takes threads: 1, not 2"):
        two.where(arm.shell("kv"))


@pytest.mark.skipif(not (guest_image.GUEST_DIR / guest_image.INFO).is_file(),
                    reason="no guest kernel: run `make guest`")
def test_a_tunnel_is_one_more_port_that_the_guests_command_server_leaves_alone(
        tmp_path: Path) -> None:
    argv = qemu_argv("tcg", tmp_path, "", "jb_path=x", ["redis"])
    devices = [a for a in argv if a.startswith("virtserialport,")]
    assert devices[-1] == "virtserialport,chardev=tredis,name=jb-tunnel.redis"
    assert all(d.split("name=")[1].startswith(guest_side.PORT_PREFIX) for d in devices[:-1])
    assert not guest_tunnel.PREFIX.startswith(guest_side.PORT_PREFIX)
    chardev = argv[argv.index("-chardev", len(argv) - 5) + 1]
    assert chardev == f"socket,id=tredis,path={tmp_path}/tunnel-redis.sock,server=on,wait=off"
    assert not fnmatch.fnmatch("tunnel-redis.sock", "p*.sock")  # the relay's command ports
    assert qemu_argv("tcg", tmp_path, "", "jb_path=x") == argv[:-4]


def test_tunnel_names_fit_a_qemu_id_and_the_bridge_fails_plainly_without_its_port() -> None:
    for bad in ("Redis", "a,b", "1x", ""):
        with pytest.raises(ValueError):
            guest_tunnel.check_name(bad)
    # on the host there is no such virtio-serial port: the bridge's own search says so
    done = subprocess.run(guest_tunnel.bridge_argv("redis", "/nowhere/redis.sock"),
                          capture_output=True, text=True, timeout=10)
    assert done.returncode == 1
    assert done.stderr.strip() == "no virtio-serial port jb-tunnel.redis"
