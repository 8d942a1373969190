"""iocost's pure parts: the lines of io.cost.qos and io.cost.model, the weight file, the model
from fio's figures, the record, and that it refuses a cgroup-v1 host (or a v2 kernel without
iocost) in one line, and the vrate settle's reader (real fio). Cgroup files are plain files in
a temporary folder; the controller itself runs on the nested host (tests/test_nested.py)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from journalbench import vocabulary
from journalbench.agent import registry
from journalbench.agent.cgroups import V1Blkio, V2Io
from journalbench.agent.iocontrol import costmodel, interleaved, iocost
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


def sweep_jobs(p95_ms: dict[str, list[float]]) -> dict[str, dict]:
    """fio's sweep jobs as it reports them: per direction, a p95 (ms) per load of SWEEP."""
    jobs = {}
    for rw, side in (("randread", "read"), ("randwrite", "write")):
        for load, p95 in zip(costmodel.SWEEP, p95_ms[rw], strict=True):
            pct = {"50.000000": p95 * 4e5, "95.000000": p95 * 1e6, "99.000000": p95 * 2e6}
            jobs[f"{rw}-{load:.2f}"] = {side: {"iops": 80 * load, "total_ios": 100,
                                               "clat_ns": {"percentile": pct}}}
    return jobs


# a disk that seeks: latency flat at light load, then rising as requests queue
CURVE = {"randread": [12.0, 13.0, 18.0, 26.0, 60.0, 140.0],
         "randwrite": [11.0, 11.5, 15.0, 21.0, 23.0, 90.0]}


def test_the_qos_is_read_at_the_knee_of_the_devices_latency_against_load() -> None:
    """The heaviest load whose p95 is within twice the lightest's: reads 18 ms (at 50%; 75%
    gives 26 > 2 x 12), writes 21 ms (75%; 90% gives 23 > 2 x 11); vrate 1-100%."""
    points = costmodel.sweep_of(sweep_jobs(CURVE))
    assert [p["p95_us"] for p in points if p["rw"] == "randread"] == [
        12000, 13000, 18000, 26000, 60000, 140000]
    qos = costmodel.qos_of({"model": MODEL, "sweep": points})
    assert qos == {"rpct": 95, "rlat": 18000, "wpct": 95, "wlat": 21000, "min": 1, "max": 100}
    assert costmodel.qos_line("254:0", qos) == (
        "254:0 enable=1 ctrl=user rpct=95 rlat=18000 wpct=95 wlat=21000 min=1 max=100")
    assert "knee" in iocost.QOS_RULE and "2x the lightest" in iocost.QOS_RULE
    # a flat curve (a device that never queues within the sweep): its heaviest load
    flat = costmodel.sweep_of(sweep_jobs({rw: [5.0] * 6 for rw in CURVE}))
    assert costmodel.qos_of({"model": MODEL, "sweep": flat})["rlat"] == 5000


def test_the_sweep_asks_each_load_of_the_models_random_rate_and_a_load_without_ios_fails(
) -> None:
    class Device:
        path = "/dev/vdz"

    args = costmodel.sweep_args(Device(), MODEL, 4)  # type: ignore[arg-type]
    rates = [a for a in args if a.startswith("--rate_iops=")]
    assert rates[:6] == [f"--rate_iops={max(1, round(x * 79))}" for x in costmodel.SWEEP]
    assert rates[6:] == [f"--rate_iops={max(1, round(x * 81))}" for x in costmodel.SWEEP]
    assert args.count("--rate_process=poisson") == 12 and "--iodepth=16" in args
    jobs = sweep_jobs(CURVE)
    jobs["randwrite-0.50"]["write"]["total_ios"] = 0
    with pytest.raises(AgentError, match="fio completed no randwrite at 50% load"):
        costmodel.sweep_of(jobs)


def test_the_record_keeps_qos_model_calibration_and_procedure_as_read_back(
        tmp_path: Path) -> None:
    (tmp_path / "io.cost.qos").write_text("")
    control = IoCost(V2Io(tmp_path))
    sweep = costmodel.sweep_of(sweep_jobs(CURVE))
    control.calibration = {"model": MODEL, "sweep": sweep, "file": "/x-iocost.json",
                           "procedure": costmodel.PROCEDURE}
    control.readback = {"qos": {"enable": "1"}, "model": {"ctrl": "user"}}
    control.qos = costmodel.qos_of(control.calibration)
    record = control.record({"qos.enable": "1"}, "spec")
    assert record["scheduler"] == "none"
    assert record["io_control"]["name"] == "iocost"
    assert record["io_control"]["iocost"] == {
        "qos": {"enable": "1"}, "model": {"ctrl": "user"}, "model_measured": MODEL,
        "qos_set": control.qos, "qos_rule": iocost.QOS_RULE, "procedure": costmodel.PROCEDURE,
        "calibration": {"sweep": sweep, "file": "/x-iocost.json",
                        "procedure": costmodel.PROCEDURE}}


def test_io_stat_gives_iocost_statistics_and_the_sampler_their_intervals() -> None:
    from journalbench.agent.iocounters import parse_cost
    from journalbench.agent.sampler import cost_fields

    root = ("254:0 rbytes=1 wbytes=2 rios=0 wios=0 dbytes=0 dios=0 cost.vrate=87.50 "
            "cost.usage=1200 cost.wait=30 cost.indebt=0 cost.indelay=0\n")
    assert parse_cost(root, "254:0") == {"cost.vrate": 87.5, "cost.usage": 1200.0,
                                        "cost.wait": 30.0, "cost.indebt": 0.0,
                                        "cost.indelay": 0.0}
    assert parse_cost("254:0 rbytes=1 wbytes=2 rios=0 wios=0\n", "254:0") == {}
    assert parse_cost(root, "8:0") == {}
    later = {"cost.vrate": 60.0, "cost.usage": 2000.0, "cost.wait": 530.0}
    assert cost_fields(later, parse_cost(root, "254:0")) == {
        "cost_usage_us": 800, "cost_wait_us": 500, "cost_vrate_pct": 60.0}
    assert cost_fields({}, {}) == {}


# -- the second QoS procedure: the model of two interleaved streams, at a fixed rate ----------

def stream_jobs(rates: dict[str, tuple[int, int]]) -> dict[str, dict]:
    """fio's jobs as it reports them: per coefficient, each stream's bytes per second."""
    jobs = {}
    for key, pair in rates.items():
        side = "read" if key.startswith("r") else "write"
        for stream, rate in zip(interleaved.STREAMS, pair, strict=True):
            jobs[f"{key}-{stream}"] = {"read": {"bw_bytes": 0}, "write": {"bw_bytes": 0},
                                       side: {"bw_bytes": rate}}
    return jobs


def test_the_interleaved_procedure_runs_two_synchronous_streams_per_coefficient() -> None:
    """Six coefficients one after the other (--stonewall on each pair's first stream), each
    as two depth-1 streams at once, one in each half of the device."""
    class Device:
        path = "/dev/vdz"

    args = interleaved.fio_args(Device(), 3)  # type: ignore[arg-type]
    assert args.count("--stonewall") == 6 and args.count("--filename=/dev/vdz") == 12
    assert args.count("--iodepth=1") == 12 and "--iodepth=64" not in args
    names = [a.removeprefix("--name=") for a in args if a.startswith("--name=")]
    assert names == [f"{key}-{s}" for key in costmodel.KEYS for s in ("a", "b")]
    assert args.count("--offset=0") == 6 and args.count("--offset=50%") == 6
    assert args.count("--size=50%") == 12 and "--bs=1048576" in args and "--bs=4096" in args
    first = args[:args.index("--name=rbps-b")]
    assert "--stonewall" in first and "--stonewall" not in args[
        args.index("--name=rbps-b"):args.index("--name=rseqiops-a")]


def test_each_coefficient_is_the_sum_of_its_two_streams() -> None:
    rates = {"rbps": (20_000_000, 22_000_000), "rseqiops": (160_000, 168_000),
             "rrandiops": (150_000, 154_000), "wbps": (21_000_000, 19_000_000),
             "wseqiops": (164_000, 160_000), "wrandiops": (152_000, 148_000)}
    model = interleaved.model_of(stream_jobs(rates))
    assert model == {"rbps": 42_000_000, "rseqiops": 80, "rrandiops": 74, "wbps": 40_000_000,
                     "wseqiops": 79, "wrandiops": 73}
    jobs = stream_jobs(rates)
    del jobs["wseqiops-b"]
    with pytest.raises(AgentError, match=r"interleaved-model-fixed-vrate-v1\): fio reported "
                                         r"no wseqiops stream pair"):
        interleaved.model_of(jobs)
    with pytest.raises(AgentError, match="fio measured no rbps"):
        interleaved.model_of(stream_jobs({**rates, "rbps": (0, 0)}))


def test_the_interleaved_qos_fixes_vrate_and_lets_no_latency_move_it() -> None:
    """min = max = 100% and percentiles 0 (resctl-bench's isolation solutions' shape);
    rlat = wlat = 50 ms only set iocost's period (2 x 50 ms); whatever the calibration."""
    qos = interleaved.qos_of({"model": MODEL})
    assert qos == {"rpct": 0, "rlat": 50000, "wpct": 0, "wlat": 50000, "min": 100, "max": 100}
    assert costmodel.qos_line("254:0", qos) == (
        "254:0 enable=1 ctrl=user rpct=0 rlat=50000 wpct=0 wlat=50000 min=100 max=100")
    qos["min"] = 1
    assert interleaved.qos_of({})["min"] == 100  # a copy: the procedure's rule stays
    assert "vrate fixed at 100%" in interleaved.QOS_RULE and "100 ms" in interleaved.QOS_RULE


def test_a_run_names_its_procedure_and_the_record_keeps_it(tmp_path: Path) -> None:
    """The spec's iocost_qos picks the procedure (the default without it; an unknown one fails
    in one line); the record names the procedure and its rule; a procedure on a BFQ run is
    refused naming the field."""
    assert list(iocost.PROCEDURES) == list(vocabulary.IOCOST_QOS)
    assert IoCost.tunables({}, {}) == {"procedure": vocabulary.IOCOST_KNEE}
    assert IoCost.tunables({}, {"iocost_qos": vocabulary.IOCOST_INTERLEAVED}) == {
        "procedure": vocabulary.IOCOST_INTERLEAVED}
    with pytest.raises(AgentError, match=r"^run spec field iocost_qos: unknown QoS procedure "
                                         r"'latency-v9'; this agent has knee-of-p95"):
        IoCost.tunables({}, {"iocost_qos": "latency-v9"})
    (tmp_path / "io.cost.qos").write_text("")
    control = IoCost(V2Io(tmp_path))
    control.procedure = iocost.PROCEDURES[vocabulary.IOCOST_INTERLEAVED]
    control.calibration = {"model": MODEL, "procedure": vocabulary.IOCOST_INTERLEAVED}
    control.qos = control.procedure.qos_of(control.calibration)
    facts = control.record({}, "spec")["io_control"]["iocost"]
    assert facts["procedure"] == vocabulary.IOCOST_INTERLEAVED
    assert facts["qos_rule"] == interleaved.QOS_RULE and facts["qos_set"]["max"] == 100
    spec = {"arm": "shared-journal", "iocost_qos": vocabulary.IOCOST_INTERLEAVED}
    with pytest.raises(AgentError, match=r"^spec.json: field iocost_qos: an iocost QoS "
                                         r"procedure, but the run's weights are enforced by "
                                         r"bfq$"):
        registry.io_control_class(spec, {"name": "h"}, "spec.json")
    assert registry.io_control_class({**spec, "io_control": "iocost"}, {"name": "h"}) is IoCost


@pytest.mark.root
def test_the_interleaved_model_is_measured_on_a_real_device(tmp_path: Path) -> None:
    """On a loop device (direct I/O) with real fio: every coefficient's two streams both did
    I/O at once, the model is their sum, and the queue's elevator and merges are back as they
    were afterwards."""
    from journalbench.agent.disk import Device

    image = tmp_path / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(256 << 20)
    path = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", str(image)],
                          check=True, capture_output=True, text=True).stdout.strip()
    try:
        device = Device(path=path, kind="image", named=str(image))
        queue = device.sysfs / "queue"
        before = ((queue / "scheduler").read_text(), (queue / "nomerges").read_text())
        found = interleaved.measure(device, seconds=1)
        assert ((queue / "scheduler").read_text(), (queue / "nomerges").read_text()) == before
    finally:
        subprocess.run(["losetup", "-d", path], check=True)
    assert found["procedure"] == vocabulary.IOCOST_INTERLEAVED
    for key in costmodel.KEYS:
        streams = found["streams"][key]
        assert set(streams) == {f"{key}-a", f"{key}-b"} and min(streams.values()) > 0, key
        total = sum(streams.values())
        assert found["model"][key] == (total if key.endswith("bps")
                                       else round(total / costmodel.IOPS_BS)), key


def test_a_vrate_outside_the_qos_bounds_is_to_be_settled_and_none_is_no_io_yet() -> None:
    """vrate.py: the device's vrate (root io.stat, two decimals) within [min, max] needs nothing;
    5.66% under min=max=100 (what a knee run left on the nested host) needs the reader, under
the run's bounds with targets every request misses; no
    cost.vrate yet (no I/O since iocost came on) is within."""
    from journalbench.agent.iocontrol import vrate
    assert vrate.within(100.0, 100, 100) and vrate.within(99.96, 100, 100)
    assert not vrate.within(5.66, 100, 100) and vrate.within(5.66, 1, 100)
    assert vrate.within(None, 100, 100)
    command = vrate.reader(type("D", (), {"path": "/dev/vdb"})(), Path("/sys/fs/cgroup/x/p"))
    assert command[:2] == ["sh", "-c"] and "echo $$ > /sys/fs/cgroup/x/p && exec fio" in command[2]
    assert "--readonly" in command[2] and "--direct=1" in command[2]
    settling = vrate.settling_qos(interleaved.QOS)
    assert (settling["min"], settling["max"]) == (100, 100) and settling["rpct"] == 99
    assert settling["rlat"] == settling["wlat"] == vrate.SETTLE_LAT_US


@pytest.mark.skipif(shutil.which("fio") is None,
                    reason="fio is not installed (make test installs it, as root)")
def test_the_settling_reader_ends_when_its_process_is_killed(tmp_path: Path) -> None:
    """vrate.settle kills the reader once the vrate is up: the reader is real fio, and its
    reading ends with its process (a forked fio job sat in a session of its own and read on
    to its runtime's end, 155 s, while the run waited for it)."""
    from journalbench.agent.iocontrol import vrate
    target = tmp_path / "device.img"
    target.write_bytes(b"\0" * (8 << 20))
    procs = tmp_path / "cgroup.procs"
    device = type("D", (), {"path": str(target)})()
    proc = subprocess.Popen(vrate.reader(device, procs), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        assert proc.poll() is None, proc.communicate()[1]  # reading
        assert procs.read_text().strip() == str(proc.pid)  # the process the group holds
        proc.kill()
        started = time.monotonic()
        proc.communicate(timeout=30)
        assert time.monotonic() - started < 5
        left = subprocess.run(["pgrep", "-f", str(target)], capture_output=True, text=True)
        assert left.stdout == "", f"the reader outlived its process: {left.stdout}"
    finally:
        subprocess.run(["pkill", "-KILL", "-f", str(target)], capture_output=True)
        proc.kill()
        proc.wait()
