"""iocost's second QoS procedure, aimed at isolation (fixed 2026-11-29, before its first run):
the model measured on two interleaved streams, at a fixed rate (vocabulary.IOCOST_INTERLEAVED).

Why. iocost charges each I/O its modelled cost and holds a group back only once the group's
modelled use outruns its weight's share of the device's modelled capacity (the model scaled by
vrate); a group that uses less than its share gives the rest away (Documentation/admin-guide/
cgroup-v2.rst, io.weight and io.cost.*; block/blk-iocost.c). The model decides, per group,
whether an I/O is sequential from that group's own cursor (blk-iocost.c,
calc_vtime_cost_builtin: `iocg->cursor`), so a tenant's sequential stream is priced as
sequential even when a neighbour's stream between its requests makes the disk seek. Under the
knee procedure (costmodel.py) the model came from the kernel tool's single streams
(tools/cgroup/iocost_coef_gen.py) and priced a 64 KiB write at 3.8 ms where the device served
the tenants' interleaved pair at ~8-20 ms a request: the pair used a fraction of the modelled
device, and its latency target sat above what the tenants saw, so vrate never fell to where
weights bind (thesis-nested: no tenant of a direct pair held back).

What. The same six coefficients as the kernel tool (`io.cost.model`, linear), each measured
on the raw device (elevator and merges off) as two synchronous streams at once, one in each
half of the device (offsets 0 and 50%): every request of one stream is followed at the disk by
one of the other, so each pays the seek and the rotation two interleaved tenants pay. Each
coefficient is the two streams' sum (bytes/s, or 4 KiB requests/s). Depth 1 per stream (a
synchronous process's: a request waits for its predecessor), large requests for the bandwidth
(SEQ_BS, as the knee's) and 4 KiB for the request rates.

The QoS follows the shape of resctl-bench's isolation solutions (iocost-tune's `isolation`
and `isolated-bandwidth`: rpct=wpct=0 and min=max, the model scaled instead of the rate):
latency percentiles 0 (latency does not move vrate: blk-iocost.c, ioc_timer_fn, misses are
counted against `MILLION - rpct`), vrate fixed at 100% (min=max: "the narrower the allowed
adjustment range between min and max, the more conformant to the cost model the IO behavior",
cgroup-v2.rst). The device's capacity is then what the interleaved model says it is, at all
times: two tenants that keep the disk busy use about all of it, and a group whose modelled use
outruns its weight's share waits. rlat=wlat=LATENCY_US only set iocost's period (twice the
larger latency target when the percentiles are 0: blk-iocost.c, ioc_refresh_period_us): 100
ms, CFQ's sync slice (the thesis's scheduler divided time in slices of that length).

What it costs, stated before any run: a tenant alone is priced as if interleaved (a lone
sequential stream's requests cost the disk less than the model says), so a lone sequential
tenant may be held below what the disk gives it; the weights divide modelled time, which is
device time only as far as the interleaved model prices each tenant's requests as the disk
serves them. The procedure looks only at the device (fio on the raw device), never at a
claim's workload or outcome.
"""

from __future__ import annotations

import time
from typing import Any

from journalbench import vocabulary
from journalbench.agent import disk, provenance
from journalbench.agent.devices import calibrate
from journalbench.agent.iocontrol import costmodel
from journalbench.errors import AgentError

NAME = vocabulary.IOCOST_INTERLEAVED
SECONDS = 3  # per coefficient (both streams at once); six coefficients, ~25 s on `hdd`
STREAMS = ("a", "b")  # the two streams
OFFSETS = {"a": "0", "b": "50%"}  # one in each half of the device
SPAN = "50%"  # each stream's region
DEPTH = 1
# (model key, fio rw, block size): the kernel tool's six coefficients, in its order
JOBS = tuple((key, rw, bs) for key, rw, bs, _ in costmodel.JOBS)
LATENCY_US = 50_000  # sets iocost's period only (2 x 50 ms): the percentiles are 0
QOS = {"rpct": 0, "rlat": LATENCY_US, "wpct": 0, "wlat": LATENCY_US, "min": 100, "max": 100}
QOS_RULE = ("model of two interleaved synchronous streams (offsets 0 and 50% of the device, "
            "depth 1 each; each coefficient the two streams' sum); vrate fixed at 100% "
            "(min=max=100), latency percentiles 0 (latency does not move vrate), "
            f"rlat=wlat={LATENCY_US} us (iocost's period: {2 * LATENCY_US // 1000} ms)")


def fio_args(device: disk.Device, seconds: int) -> list[str]:
    """One fio process: for each coefficient in turn (--stonewall on the first stream), its
    two streams at once."""
    args = []
    for key, rw, bs in JOBS:
        for stream in STREAMS:
            args += [f"--name={key}-{stream}", *(["--stonewall"] if stream == STREAMS[0]
                                                   else []),
                     f"--filename={device.path}", f"--rw={rw}", f"--bs={bs}",
                     f"--offset={OFFSETS[stream]}", f"--size={SPAN}",
                     f"--iodepth={DEPTH}", "--direct=1", "--ioengine=libaio",
                     "--time_based", f"--runtime={seconds}"]
    return args


def model_of(jobs: dict[str, dict[str, Any]]) -> dict[str, int]:
    """fio's jobs (by name) -> the model's six coefficients, each the sum of its two streams:
    bytes/s, or 4 KiB requests/s."""
    summed = {}
    for key, *_ in JOBS:
        found = [jobs.get(f"{key}-{stream}") for stream in STREAMS]
        if any(job is None for job in found):
            raise AgentError(f"iocost calibration ({NAME}): fio reported no {key} stream pair")
        summed[key] = {side: {"bw_bytes": sum(int(job[side]["bw_bytes"]) for job in found
                                              if job is not None)}
                       for side in ("read", "write")}
    return costmodel.model_of(summed)


def qos_of(calibration: dict[str, Any]) -> dict[str, int]:
    """The QoS of the procedure: fixed, whatever the calibration (the model carries the
    device)."""
    return dict(QOS)


def measure(device: disk.Device, seconds: int = SECONDS) -> dict[str, Any]:
    """The interleaved model, measured with the elevator and merges off."""
    before = provenance.load()
    with costmodel.raw_queue(device):
        jobs = {job["jobname"]: job for job in calibrate.fio_jobs(
            *fio_args(device, seconds), timeout=120 + len(JOBS) * seconds)}
    return {"procedure": NAME, "model": model_of(jobs),
            "streams": {key: {name: int(jobs[name]["read"]["bw_bytes"]
                                        + jobs[name]["write"]["bw_bytes"])
                              for name in (f"{key}-{s}" for s in STREAMS)}
                        for key, *_ in JOBS},
            "seconds_per_job": seconds, "depth": DEPTH, "offsets": dict(OFFSETS),
            "seq_bs": costmodel.SEQ_BS, "iops_bs": costmodel.IOPS_BS,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load": provenance.load_between(before, provenance.load())}


INTERLEAVED = costmodel.Procedure(NAME, QOS_RULE, measure, qos_of)
