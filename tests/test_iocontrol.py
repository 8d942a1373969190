"""The I/O controls' pure parts: each cgroup version's weight and counter files, their parsing,
the LXC key, what host.json records, and how a run picks its control (the spec's, else the
host's, else the default; an unknown name or a control that refuses the host fails in one line).
Cgroup files are plain files in a temporary folder laid out like a cgroup: this machine's
blkio is v1, so v2 is tested only this way."""

from __future__ import annotations

from pathlib import Path

import pytest

from journalbench import vocabulary
from journalbench.agent import registry
from journalbench.agent.cgroups import Backend, V1Blkio, V2Io, lxc_key
from journalbench.agent.iocontrol import bfq
from journalbench.agent.iocontrol.base import IoControl
from journalbench.agent.iocontrol.bfq import Bfq
from journalbench.agent.iocounters import IoCounters
from journalbench.errors import AgentError

V1_BYTES = "7:0 Read 4096\n7:0 Write 1048576\n7:0 Total 1052672\n8:0 Write 99\nTotal 1052672\n"
V1_IOS = "7:0 Read 1\n7:0 Write 16\n7:0 Total 17\nTotal 17\n"
V2_STAT = ("8:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n"
           "7:0 rbytes=5 wbytes=6 rios=7 wios=8 dbytes=0 dios=0\n")


def group(root: Path, files: dict[str, str]) -> str:
    """A tenant's group `jb/h/t` below `root`, holding `files`."""
    folder = root / "jb" / "h" / "t"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return "jb/h/t"


def test_bfq_names_each_cgroup_versions_files() -> None:
    v1, v2 = Bfq(V1Blkio(Path("/v1"))), Bfq(V2Io(Path("/v2")))
    assert (v1.weight_file, v2.weight_file) == ("blkio.bfq.weight", "io.bfq.weight")
    assert v1.counter_files == ("blkio.bfq.io_service_bytes_recursive",
                                "blkio.bfq.io_serviced_recursive")
    assert v2.counter_files == ("io.stat",)
    assert v1.lxc_weight_key() == "lxc.cgroup.blkio.bfq.weight"
    assert v2.lxc_weight_key() == "lxc.cgroup2.io.bfq.weight"
    assert lxc_key(2, "cpuset.cpus") == "lxc.cgroup2.cpuset.cpus"


def test_weights_parse_as_each_version_writes_them() -> None:
    assert bfq.parse_weight("700", 1) == 700
    assert bfq.parse_weight("default 300\n8:0 500", 2) == 300  # the group's own, not a device's


@pytest.mark.parametrize("backend, text", [(V1Blkio, "100"), (V2Io, "default 100")])
def test_a_weight_set_is_read_back(tmp_path: Path, backend: type[Backend], text: str) -> None:
    control = Bfq(backend(tmp_path))
    rel = group(tmp_path, {control.weight_file: text})
    assert control.weight(rel) == 100
    control.set_weight(rel, 700)
    assert (tmp_path / rel / control.weight_file).read_text() == "700\n"
    if backend is V2Io:  # the kernel answers in its own format, not the value written
        (tmp_path / rel / control.weight_file).write_text("default 700\n")
    assert control.weight(rel) == 700


def test_v1_counters_are_bfqs_bytes_and_requests(tmp_path: Path) -> None:
    control = Bfq(V1Blkio(tmp_path))
    rel = group(tmp_path, dict(zip(control.counter_files, (V1_BYTES, V1_IOS), strict=True)))
    assert control.counters(rel, "7:0") == IoCounters(4096, 1048576, 1, 16)
    assert control.counters(rel, "8:0") == IoCounters(0, 99, 0, 0)


def test_v2_counters_are_io_stat(tmp_path: Path) -> None:
    control = Bfq(V2Io(tmp_path))
    rel = group(tmp_path, {"io.stat": V2_STAT})
    assert control.counters(rel, "7:0") == IoCounters(5, 6, 7, 8)
    assert control.counters(rel, "9:0") == IoCounters()  # nothing done on it yet


def test_bfq_tunables_are_the_specs_over_the_hosts() -> None:
    host = {"bfq": {"strict_guarantees": 1, "slice_idle": 8}}
    assert Bfq.tunables(host, {"bfq": {"slice_idle": 0}}) == {"strict_guarantees": 1,
                                                              "slice_idle": 0}
    assert Bfq.tunables(host, {}) == host["bfq"]


def test_the_record_keeps_the_old_fields_and_adds_io_control() -> None:
    tunables = {"slice_idle": "8", "strict_guarantees": "1"}
    record = Bfq(V1Blkio(Path("/v1"))).record(tunables, "default")
    assert record["scheduler"] == "bfq" and record["bfq"] == tunables  # what tidy reads
    assert record["io_control"] == {
        "name": "bfq", "chosen_by": "default", "scheduler": "bfq", "tunables": tunables,
        "cgroup_version": 1, "weight_file": "blkio.bfq.weight",
        "counter_files": ["blkio.bfq.io_service_bytes_recursive",
                          "blkio.bfq.io_serviced_recursive"]}


def test_the_spec_names_the_control_else_the_host_else_the_default() -> None:
    host = {"name": "h"}
    assert registry.io_control_choice({}, host) == (vocabulary.DEFAULT_IO_CONTROL, "default")
    assert registry.io_control_choice({}, {**host, "io_control": "bfq"}) == ("bfq", "host")
    assert registry.io_control_choice({"io_control": "bfq"}, {**host, "io_control": "x"}) == (
        "bfq", "spec")
    assert registry.io_control_class({}, host) is Bfq


def test_an_unknown_control_fails_naming_the_file_and_the_field() -> None:
    with pytest.raises(AgentError, match=r"^spec.json: field io_control: unknown I/O control "
                                         r"'nope'; this agent has bfq, iocost$"):
        registry.io_control_class({"io_control": "nope"}, {"name": "h"}, "spec.json")
    with pytest.raises(AgentError, match=r"^hosts/h.yaml: field io_control: unknown"):
        registry.io_control_class({}, {"name": "h", "_file": "hosts/h.yaml",
                                       "io_control": "nope"})
    with pytest.raises(AgentError, match=r"^host h: field io_control: unknown"):
        registry.io_control_class({}, {"name": "h", "io_control": "nope"})


class V2Only(IoControl):
    """A control of cgroup v2 only, as io.cost would be: how the registry refuses a host."""

    NAME = "v2only"

    @classmethod
    def refuses(cls, backend: Backend) -> str | None:
        return None if backend.version == 2 else "needs cgroup v2's io controller"


def test_a_control_that_refuses_the_hosts_cgroup_version_fails_in_one_line() -> None:
    with pytest.raises(AgentError, match=r"^io_control v2only: needs cgroup v2's io controller$"):
        registry.io_control_on(V2Only, V1Blkio(Path("/v1")))
    assert registry.io_control_on(V2Only, V2Io(Path("/v2"))).backend.version == 2
    assert registry.io_control_on(Bfq, V1Blkio(Path("/v1"))).NAME == "bfq"
