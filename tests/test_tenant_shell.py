"""What a tenant offers its workload through TenantShell, per arm, decided before anything
runs: its data folder as the host sees it, a byte tunnel into it, whether it runs its own
kernel, which tenants share its file system, and the run's folders and names."""

from __future__ import annotations

from pathlib import Path

import pytest

from journalbench.agent.arms.base import Context, TenantLayout
from journalbench.agent.arms.shared_journal import SharedJournal
from journalbench.agent.arms.vm import tunnel as guest_tunnel
from journalbench.agent.arms.vm.arm import VirtualMachine
from journalbench.agent.cgroups import V1Blkio
from journalbench.agent.iocontrol.bfq import Bfq
from journalbench.errors import AgentError


def context(tmp_path: Path) -> Context:
    host = {"name": "unit", "state_dir": str(tmp_path)}
    return Context(host, tmp_path / "unit", Bfq(V1Blkio(Path("/nowhere"))), tmp_path / "out")


def layouts(data: Path, volumes: list[str]) -> list[TenantLayout]:
    return [TenantLayout(f"t{i}", 100, data / f"t{i}", volume, None)
            for i, volume in enumerate(volumes)]


def test_a_container_offers_its_folder_and_no_tunnel(tmp_path: Path) -> None:
    arm = SharedJournal(context(tmp_path))
    arm.tenants = layouts(tmp_path / "mnt", ["/dev/a", "/dev/b", "/dev/a"])
    shell = arm.shell("t2")
    assert shell.host_path == tmp_path / "mnt" / "t2" and shell.data_dir == "/mnt"
    assert shell.tunnel("redis") is None and not shell.guest_kernel
    assert shell.sharing == ["t0", "t2"] and arm.shell("t1").sharing == ["t1"]
    assert shell.cgroup == "journalbench/unit/t2"
    assert (shell.out, shell.state_root, shell.state_dir, shell.host_name) == (
        tmp_path / "out", tmp_path / "unit", tmp_path, "unit")
    with pytest.raises(AgentError, match="tenant t9: not one of this run's"):
        _ = arm.shell("t9").host_path


def test_a_guest_offers_a_tunnel_and_its_own_kernel(tmp_path: Path) -> None:
    arm = VirtualMachine(context(tmp_path))
    arm.plan_tunnels({"kv": ["redis"]})
    arm.tenants = layouts(Path("guest:"), ["/dev/a"])
    shell = arm.shell("kv")
    assert shell.host_path is None and shell.guest_kernel
    tunnel = shell.tunnel("redis")
    assert tunnel is not None and tunnel.host_end == arm.tunnel("kv", "redis")
    assert tunnel.bridge("/mnt/redis/redis.sock") == guest_tunnel.bridge_argv(
        "redis", "/mnt/redis/redis.sock")
    assert tunnel.ready == guest_tunnel.READY
    with pytest.raises(AgentError, match="its guest has no tunnel 'other'"):
        shell.tunnel("other")
