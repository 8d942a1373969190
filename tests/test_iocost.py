"""iocost's pure parts: the lines of io.cost.qos and io.cost.model, the weight file, the model
from fio's figures, the record, and that it refuses a cgroup-v1 host (or a v2 kernel without
iocost) in one line. Cgroup files are plain files in a temporary folder; the controller itself
runs on the nested host (tests/test_nested.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from journalbench.agent import registry
from journalbench.agent.cgroups import V1Blkio, V2Io
from journalbench.agent.iocontrol import costmodel, iocost
from journalbench.agent.iocontrol.iocost import IoCost
from journalbench.errors import AgentError

QOS = ("254:0 enable=1 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000 min=1.00 "
       "max=10000.00\n254:16 enable=0 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000 "
       "min=1.00 max=10000.00\n")
MODEL = {"rbps": 62265740, "rseqiops": 135, "rrandiops": 79, "wbps": 62757665,
         "wseqiops": 222, "wrandiops": 81}


def test_a_devices_line_parses_into_its_fields() -> None:
    assert iocost.parse_line(QOS, "254:0")["enable"] == "1"
    assert iocost.parse_line(QOS, "254:16")["wlat"] == "250000"
    assert iocost.parse_line(QOS, "8:0") == {}
    assert iocost.enabled_devnums(QOS) == ["254:0"]


def test_io_weight_is_its_default_line() -> None:
    assert iocost.parse_weight("default 700\n254:0 300\n") == 700


def test_the_model_line_is_a_user_linear_model_in_the_kernel_tools_order() -> None:
    assert costmodel.model_line("254:0", MODEL) == (
        "254:0 ctrl=user model=linear rbps=62265740 rseqiops=135 rrandiops=79 "
        "wbps=62757665 wseqiops=222 wrandiops=81")


def test_the_model_is_bytes_per_second_and_4k_requests_per_second() -> None:
    jobs = {key: {"read": {"bw_bytes": 0}, "write": {"bw_bytes": 0}} for key in costmodel.KEYS}
    jobs["rbps"]["read"]["bw_bytes"] = 1_000_000
    jobs["wrandiops"]["write"]["bw_bytes"] = 4096 * 80 + 100
    for key in costmodel.KEYS:
        if key not in ("rbps", "wrandiops"):
            jobs[key]["read" if key.startswith("r") else "write"]["bw_bytes"] = 4096 * 10
    model = costmodel.model_of(jobs)
    assert model["rbps"] == 1_000_000 and model["wrandiops"] == 80 and model["rseqiops"] == 10
    jobs["wbps"]["write"]["bw_bytes"] = 0
    with pytest.raises(AgentError, match="fio measured no wbps"):
        costmodel.model_of(jobs)


def test_six_jobs_one_after_the_other_on_the_raw_device(tmp_path: Path) -> None:
    class Device:
        path = "/dev/vdz"

    args = costmodel.fio_args(Device(), 2)  # type: ignore[arg-type]
    assert args.count("--stonewall") == 6 and args.count("--filename=/dev/vdz") == 6
    assert "--rw=randwrite" in args and "--iodepth=64" in args and "--bs=1048576" in args


def test_iocost_refuses_cgroup_v1_and_a_v2_kernel_without_it(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match=r"^io_control iocost: needs cgroup v2's io controller "
                                         r"\(io.cost.qos, io.weight\); this host's disk "
                                         r"weights are cgroup v1's$"):
        registry.io_control_on(IoCost, V1Blkio(tmp_path))
    with pytest.raises(AgentError, match=r"io.cost.qos: missing; the kernel has no iocost"):
        registry.io_control_on(IoCost, V2Io(tmp_path))
    (tmp_path / "io.cost.qos").write_text("")
    control = registry.io_control_on(IoCost, V2Io(tmp_path))
    assert (control.weight_file, control.counter_files, control.SCHEDULER) == (
        "io.weight", ("io.stat",), "none")
    assert control.lxc_weight_key() == "lxc.cgroup2.io.weight"


def test_the_record_keeps_qos_model_and_calibration_as_read_back(tmp_path: Path) -> None:
    (tmp_path / "io.cost.qos").write_text("")
    control = IoCost(V2Io(tmp_path))
    control.calibration = {"model": MODEL, "file": "/x-iocost.json", "seconds_per_job": 2}
    control.readback = {"qos": {"enable": "1"}, "model": {"ctrl": "user"}}
    control.qos = costmodel.qos_of(MODEL)
    record = control.record({"qos.enable": "1"}, "spec")
    assert record["scheduler"] == "none"
    assert record["io_control"]["name"] == "iocost"
    assert record["io_control"]["iocost"] == {
        "qos": {"enable": "1"}, "model": {"ctrl": "user"}, "model_measured": MODEL,
        "qos_set": control.qos, "qos_rule": iocost.QOS_RULE,
        "calibration": {"file": "/x-iocost.json", "seconds_per_job": 2}}


def test_the_qos_targets_one_and_a_half_random_requests_at_p95_within_its_rate() -> None:
    """The emulated HDD's model: a random 4 KiB read 1/79 s, a write 1/81 s."""
    qos = costmodel.qos_of(MODEL)
    assert qos == {"rpct": 95, "rlat": 18987, "wpct": 95, "wlat": 18519, "min": 1, "max": 100}
    assert costmodel.qos_line("254:0", qos) == (
        "254:0 enable=1 ctrl=user rpct=95 rlat=18987 wpct=95 wlat=18519 min=1 max=100")
    assert iocost.QOS_RULE == ("p95 latency <= 1.5 x the model's random 4 KiB request time; "
                               "vrate 1-100%")
