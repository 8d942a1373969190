"""check-host's cgroup rows (pure, on probe facts): the cgroup version the agent drives weights
with and the v2 controllers, whether write-back is charged to its writer
(`writeback_attributed`: memory and io both on v2) and whether the host has iocost (required
only of a host whose file asks for it)."""

from __future__ import annotations

import pytest

from journalbench.control import checkhost

V1 = {"cgroup_v1_blkio": "yes", "cgroup_v2_controllers": ""}
V2 = {"cgroup_v2_io": "yes", "cgroup_v2_controllers": "cpuset cpu io memory pids",
      "iocost": "yes"}


@pytest.mark.parametrize(("facts", "cgroup", "writeback", "iocost"), [
    (V1, "v1 blkio", "false: cgroup v1 charges write-back to no tenant", "no (cgroup v1)"),
    (V2, "v2: cpuset cpu io memory pids", "true: memory and io on v2", "yes (io.cost.qos)"),
    ({**V2, "cgroup_v2_controllers": "io"}, "v2: io", "false: v2 without memory and io",
     "yes (io.cost.qos)"),
])
def test_check_host_reports_the_cgroup_version_controllers_and_writeback(
        facts: dict[str, str], cgroup: str, writeback: str, iocost: str) -> None:
    checks = {c.name: c for c in checkhost.evaluate({"name": "h", "device": {"kind": "image"}},
                                                    facts)}
    assert checks["cgroup"].found == cgroup and checks["cgroup"].ok
    assert checks["writeback_attributed"].found == writeback
    assert checks["writeback_attributed"].status == "info"
    assert checks["iocost"].found == iocost and checks["iocost"].status == "info"


def test_a_host_that_asks_for_iocost_needs_it() -> None:
    host = {"name": "h", "device": {"kind": "image"}, "io_control": "iocost"}
    iocost = {c.name: c for c in checkhost.evaluate(host, V1)}["iocost"]
    assert (iocost.required, iocost.ok, iocost.status) == (True, False, "MISSING")
    assert {c.name: c for c in checkhost.evaluate(host, V2)}["iocost"].status == "ok"
