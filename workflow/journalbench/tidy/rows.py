"""One complete run folder -> the rows it contributes to runs.parquet and samples.parquet.

Column meanings are documented in data/SCHEMA.md. Plain dicts of Python numbers, so the
tables can be built by whatever writes them (tidy uses pyarrow).

Disk shares. A `tenant` sample counts what the tenant's cgroup was charged; in a
journal-accounted run that includes the tenant's jbd2 thread, which sits in its cgroup. So
  own bytes      = cgroup bytes - bytes of jbd2 threads sitting in that cgroup (per interval)
  jbd2 bytes     = bytes of the jbd2 thread(s) journalling the tenant's volume
  total          = sum of own bytes over tenants + bytes of every jbd2 thread
  achieved_share = cgroup bytes / sum of cgroup bytes over tenants (what the weights divided)
  own_share = own / total, jbd2_charged_share = (own + jbd2) / total, jbd2_share = jbd2 / total
A shared journal's jbd2 (tenant null) is charged to no tenant: shared_jbd2_share = its / total.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench import runfolder, window
from journalbench.formats import ParseError, problem
from journalbench.formats.fsync import fsync_file, parse_fsync
from journalbench.formats.guest import ClientPhase, GuestReport, guest_file, parse_guest
from journalbench.formats.samples import Sample, parse_samples
from journalbench.tidy import currencies
from journalbench.tidy.parse import TOOLS, metrics
from journalbench.tidy.samples import MB, RunSamples
from journalbench.tidy.samples import rows as sample_rows
from journalbench.vocabulary import (
    BFQ,
    DEFAULT_IO_CONTROL,
    DEFAULT_IOCOST_QOS,
    IOCOST,
    ON_DEMAND_IMAGE,
    OTHER_VOLUME,
    PARTITION,
    VM,
    WHOLE_DEVICE,
)

VIRT_ACCEL = ("kvm", "tcg")
# A database tenant has one core (a container's cpuset, a guest's vCPU) for its server and its
# client; a Redis tenant's client runs on the host, but it and the server take turns on one
# request chain (one YCSB thread). Either way, when client and server together used this much
# of a core over the measured phase, the CPU, not the disk, may have set the pace, and the run
# is flagged (runs.cpu_bound) rather than read as I/O interference.
CPU_BOUND_SHARE = 0.9
# the tunables a campaign sets to study BFQ (its starvation and isolation), in label order
BFQ_LABELLED = ("strict_guarantees", "slice_idle_us", "low_latency")
# a tunable labelled only where a run set it away from its default: max_budget 0 is BFQ's
# auto-tuning (Documentation/block/bfq-iosched.rst), what every run before weights-nested had;
# set, it decides whether BFQ charges a queue its sectors or its time (docs/nested-host.md)
BFQ_LABELLED_WHEN_SET = {"max_budget": "0"}

# The runs table (data/SCHEMA.md): the run and tenant, then each tool's metrics
# (tidy/parse/), then the disk shares, the guest's own view and the host's facts.
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("campaign", "string"), ("host", "string"), ("run_id", "string"), ("arm", "string"),
    ("repetition", "int64"), ("duration_s", "int64"), ("n_tenants", "int64"),
    ("tenant", "string"), ("weight", "int64"), ("target_share", "float64"),
    ("tool", "string"), ("preset", "string"), ("workload", "string"), ("beside", "string"),
    ("warmup_s", "int64"), ("window_start_s", "float64"), ("window_end_s", "float64"),
)
TOOL_COLUMNS: tuple[tuple[str, str], ...] = tuple((m.column, m.dtype) for m in metrics())
SHARE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cgroup_bytes", "int64"), ("own_bytes", "int64"), ("jbd2_bytes", "int64"),
    ("disk_mb_s", "float64"),
    ("achieved_share", "float64"), ("own_share", "float64"), ("jbd2_share", "float64"),
    ("jbd2_charged_share", "float64"), ("shared_jbd2_share", "float64"),
    ("own_requests", "int64"), ("jbd2_requests", "int64"), ("own_requests_share", "float64"),
    ("jbd2_requests_share", "float64"), ("shared_jbd2_requests_share", "float64"),
    ("own_time_s", "float64"), ("jbd2_time_s", "float64"), ("own_time_share", "float64"),
    ("jbd2_time_share", "float64"), ("shared_jbd2_time_share", "float64"),
    ("achieved_time_share", "float64"), ("other_time_share", "float64"),
    ("own_wait_ms", "float64"), ("jbd2_wait_ms", "float64"), ("shared_jbd2_wait_ms", "float64"),
    ("journal_bytes", "int64"), ("journal_wraps", "float64"), ("counter_note", "string"),
)
GUEST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("vcpu_busy_mean", "float64"), ("vcpu_saturated_share", "float64"), ("cpu_bound", "int64"),
    ("guest_disk_bytes", "int64"), ("guest_jbd2_bytes", "int64"),
    # the same over a MariaDB client's whole run, its start-up too (the rule vm-db-threads's
    # predecessor read these: judge/claims/rules.py); as the two above where no phase is known
    ("vcpu_busy_client_mean", "float64"), ("vcpu_saturated_client_share", "float64"),
)
HOST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("hostname", "string"), ("kernel", "string"), ("cgroup_version", "int64"),
    ("writeback_attributed", "int64"), ("scheduler", "string"), ("device_kind", "string"),
    ("device_fsync_lat_ms", "float64"), ("device_fsync_lat_p50_ms", "float64"),
    ("device_fsync_lat_p99_ms", "float64"), ("virt_accel", "string"), ("bfq", "string"),
    ("io_control", "string"), ("iocost_qos", "string"), ("device_profile", "string"),
    ("emulator_cpu_share", "float64"),
    ("ref_high_fsync_ms", "float64"), ("ref_high_fsync_per_s", "float64"),
    ("device_write_fsync_per_s", "float64"), ("device_seq_write_mb_s", "float64"),
    ("calibration_drift", "float64"), ("container_volume", "string"),
    ("outer_qemu_cpu_share", "float64"), ("outer_busy_share", "float64"),
    ("member", "string"),
)
RUNS_COLUMNS = (*RUN_COLUMNS, *TOOL_COLUMNS, *SHARE_COLUMNS, *GUEST_COLUMNS, *HOST_COLUMNS)
NO_TOOL = dict.fromkeys(column for column, _ in TOOL_COLUMNS)
FSYNC_COLUMNS = ("fsync_source", "fsync_count", "fsync_per_s", "fsync_lat_mean_ms",
                 "fsync_lat_p50_ms", "fsync_lat_p99_ms")


@dataclass(frozen=True)
class Run:
    """A run folder's shared files, each read once: its spec, host.json and samples (those of
    the measured window, `span` on the sampler's clock)."""

    folder: Path
    spec: dict[str, Any]
    host: dict[str, Any]
    samples: list[Sample]
    span: tuple[float, float]

    @property
    def samples_path(self) -> Path:
        return self.folder / runfolder.SAMPLES


def load_run(folder: Path, spec: dict[str, Any], host: dict[str, Any]) -> Run:
    samples = parse_samples(folder / runfolder.SAMPLES)
    span = measured_span(folder / runfolder.HOST, host, samples)
    return Run(folder, spec, host, [s for s in samples if window.inside(s.t, s.dt, *span)], span)


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise problem(path, "file not found") from None
    except json.JSONDecodeError as error:
        raise problem(path, f"not valid JSON ({error.msg})", error.lineno) from None
    if not isinstance(data, dict):
        raise problem(path, "not a JSON object")
    return data


def read_spec(folder: Path) -> dict[str, Any]:
    from journalbench.plan.schemas import validate  # jsonschema: not needed by the other parsers

    path = folder / runfolder.SPEC
    spec = read_json(path)
    validate(spec, "run-record", str(path))
    for key in ("run_id", "host"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise problem(path, f"no '{key}' (the agent adds it)")
    # a run made by hand (`journalbench run`) belongs to no campaign: its campaign is null
    if spec.get("campaign") is not None and not isinstance(spec["campaign"], str):
        raise problem(path, "'campaign' is not a string")
    if spec["run_id"] != runfolder.run_id(spec):
        raise problem(path, f"run_id {spec['run_id']} does not match the spec's hash "
                            f"{runfolder.run_id(spec)} (spec edited after the run?)")
    return spec


def need(data: dict[str, Any], dotted: str, path: Path, kinds: type | tuple[type, ...]) -> Any:
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise problem(path, f"no '{dotted}'")
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise problem(path, f"'{dotted}' is {value!r}, not {getattr(kinds, '__name__', kinds)}")
    return value


def host_columns(folder: Path, arm: str, host: dict[str, Any]) -> dict[str, Any]:
    path = folder / runfolder.HOST
    if "virt_accel" not in host:
        raise problem(path, "no 'virt_accel' (null for containers, kvm/tcg for VMs)")
    accel = host["virt_accel"]
    if arm == VM and accel not in VIRT_ACCEL:
        raise problem(path, f"virt_accel is {accel!r} in a vm run (expected kvm or tcg)")
    if arm != VM and accel is not None:
        raise problem(path, f"virt_accel is {accel!r} in a {arm} run (expected null)")
    number = (int, float)
    return {
        "hostname": need(host, "hostname", path, str),
        "kernel": need(host, "kernel", path, str),
        "cgroup_version": int(need(host, "cgroup_version", path, (int, str))),
        "writeback_attributed": writeback_attributed(host, path),
        "scheduler": need(host, "scheduler", path, str),
        "device_kind": need(host, "device.kind", path, str),
        "device_fsync_lat_ms": float(need(host, "device_fsync_lat_ms.mean", path, number)),
        "device_fsync_lat_p50_ms": float(need(host, "device_fsync_lat_ms.p50", path, number)),
        "device_fsync_lat_p99_ms": float(need(host, "device_fsync_lat_ms.p99", path, number)),
        "virt_accel": accel,
        "bfq": bfq_label(host, path),
        "io_control": io_control(host, path),
        "iocost_qos": iocost_qos(host, path),
        **device_columns(host, path),
        "container_volume": container_volume(host, arm),
        "member": member(host, path),
    }


def outer_columns(folder: Path) -> dict[str, Any]:
    """A nested host's run: the machine below's CPU over the workloads (outer.json, written by
    the controller): its QEMU's and all its cores' (`outer_*`), and its emulator's as the
    `emulator_cpu_share` a run on this machine records itself. Nothing for other runs."""
    path = folder / runfolder.OUTER
    if not path.is_file():
        return {"outer_qemu_cpu_share": None, "outer_busy_share": None}
    found = read_json(path)
    number = (int, float)
    return {"outer_qemu_cpu_share": float(need(found, "qemu_cpu_share", path, number)),
            "outer_busy_share": float(need(found, "busy_share", path, number)),
            "emulator_cpu_share": float(need(found, "emulator_cpu_share", path, number))}


def member(host: dict[str, Any], path: Path) -> str | None:
    """The pool member that ran the run (host.json `member`; `host` is then the pool's name);
    null for a host not pooled."""
    return str(need(host, "member", path, str)) if "member" in host else None


def container_volume(host: dict[str, Any], arm: str) -> str | None:
    """What the container tenants' file systems sit on (host.json `layout.tenants.*.volume`
    against `device.path`): the test device, a partition of it each, an image allocated on
    demand (a tenant recorded with `volume_allocation: on-demand`) or another volume; kinds
    joined with "+" when tenants differ; null for a VM or a run without the record."""
    tenants = host.get("layout", {}).get("tenants") if arm != VM else None
    if not isinstance(tenants, dict):
        return None
    device = str(host.get("device", {}).get("path") or "")
    partition = re.compile(re.escape(device) + r"p?\d+") if device else None
    kinds = set()
    for tenant in tenants.values():
        volume = str(tenant.get("volume") or "") if isinstance(tenant, dict) else ""
        if not volume:
            continue
        if tenant.get("volume_allocation") == "on-demand":
            kinds.add(ON_DEMAND_IMAGE)
        elif volume == device:
            kinds.add(WHOLE_DEVICE)
        elif partition is not None and partition.fullmatch(volume):
            kinds.add(PARTITION)
        else:
            kinds.add(OTHER_VOLUME)
    return "+".join(sorted(kinds)) or None


def bfq_label(host: dict[str, Any], path: Path) -> str:
    """The BFQ tunables a study may vary, as the run read them back: runs of two settings
    are never pooled (views.apart, the ledger's families); "" for a run whose weights another
    I/O control enforced (it records no BFQ tunables)."""
    if io_control(host, path) != BFQ and "bfq" not in host:
        return ""
    words = [f"{key}={need(host, f'bfq.{key}', path, str)}" for key in BFQ_LABELLED]
    words += [f"{key}={host['bfq'][key]}" for key, default in BFQ_LABELLED_WHEN_SET.items()
              if str(host["bfq"].get(key, default)) != default]
    return " ".join(words)


def writeback_attributed(host: dict[str, Any], path: Path) -> int | None:
    """1 when a buffered writer's write-back was charged to its own cgroup (memory and io both
    on cgroup v2), as host.json records it; a run made before the record: 0 on cgroup v1, where
    the kernel's flushers write back for no tenant, else unknown (null)."""
    if "writeback_attributed" in host:
        value = host["writeback_attributed"]
        if not isinstance(value, bool):
            raise problem(path, f"'writeback_attributed' is {value!r}, not true or false")
        return int(value)
    return 0 if int(host.get("cgroup_version", 0)) == 1 else None


def io_control(host: dict[str, Any], path: Path) -> str:
    """How the run's weights were enforced (host.json `io_control.name`); every run made before
    the field existed was under BFQ, what the default names."""
    if "io_control" not in host:
        return DEFAULT_IO_CONTROL
    return str(need(host, "io_control.name", path, str))


def iocost_qos(host: dict[str, Any], path: Path) -> str:
    """The QoS procedure of an iocost run (host.json `io_control.iocost.procedure`) when it is
    not the default one (vocabulary.DEFAULT_IOCOST_QOS, the knee: thesis-nested's): runs of two
    procedures are never pooled. "" for the default, for a run of another I/O control and for
    an iocost run that records no procedure (thesis-v2's, made before procedures were named)."""
    if io_control(host, path) != IOCOST:
        return ""
    found = host["io_control"].get("iocost", {}).get("procedure")
    if found is None or found == DEFAULT_IOCOST_QOS:
        return ""
    return str(need(host, "io_control.iocost.procedure", path, str))


def device_columns(host: dict[str, Any], path: Path) -> dict[str, Any]:
    """The device profile and its calibration. Runs made before profiles existed ran on the
    device as the host had it, which is what `native` names; their calibration is null."""
    profile = host.get("device_profile", {"profile": "native"})
    calibration = host.get("calibration")
    columns: dict[str, Any] = {
        "device_profile": need(profile, "profile", path, str),
        "emulator_cpu_share": profile.get("emulator_cpu_share"),
        "ref_high_fsync_ms": None, "ref_high_fsync_per_s": None,
        "device_write_fsync_per_s": None, "device_seq_write_mb_s": None,
        "calibration_drift": None,
    }
    if calibration is not None:
        number = (int, float)
        columns.update(
            ref_high_fsync_ms=float(need(calibration, "reference.high_fsync_ms", path, number)),
            ref_high_fsync_per_s=float(
                need(calibration, "reference.high_fsync_per_s", path, number)),
            device_write_fsync_per_s=float(
                need(calibration, "probe.write_fsync_per_s", path, number)),
            device_seq_write_mb_s=float(need(calibration, "probe.seq_write_mb_s", path, number)),
            calibration_drift=max((abs(v) for v in calibration.get("drift", {}).values()),
                                  default=None),
        )
    return columns


def workload_name(workload: dict[str, Any]) -> str:
    return workload.get("preset") or workload["tool"]


def tenant_columns(run: Run, tenant: dict[str, Any]
                   ) -> tuple[dict[str, Any], list[tuple], ClientPhase | None]:
    """The tenant's tool columns (every other tool's null), its operations per second and its
    client's run on /proc/uptime (or None), from its tool's module (tidy/parse/), each of its
    files read once; a traced fsync beside."""
    workload = tenant["workload"]
    module = TOOLS.get(workload["tool"])
    if module is None:
        raise problem(run.folder / runfolder.SPEC,
                      f"tenant {tenant['name']}: no reader for tool {workload['tool']!r} "
                      f"(tidy reads {', '.join(TOOLS)})")
    loaded = module.load(run.folder, tenant["name"], workload)
    row = {**NO_TOOL, **module.columns(loaded, workload)}
    return row, module.per_second(loaded) or [], module.client_phase(loaded)


def traced_fsync(run: Run, tenant: str) -> dict[str, Any]:
    """A server's fsync and fdatasync calls as the host traced them (fsync-<tenant>.txt, the
    measured window's seconds only); null where the tenant kept no trace."""
    trace = run.folder / fsync_file(tenant)
    if not trace.is_file():
        return dict.fromkeys(FSYNC_COLUMNS)
    fsync = parse_fsync(trace)
    span = window.monotonic_ns(run.host.get("window") or {})
    if span is not None:  # the measured window's seconds only (journalbench.window)
        fsync = fsync.within(*span)
    return {"fsync_source": "bpftrace", "fsync_count": fsync.count, "fsync_per_s": fsync.per_s,
            "fsync_lat_mean_ms": ms(fsync.mean_ns),
            "fsync_lat_p50_ms": ms(fsync.percentile_ns(50)),
            "fsync_lat_p99_ms": ms(fsync.percentile_ns(99))}


def ms(ns: float | None) -> float | None:
    return ns / 1e6 if ns is not None else None


def guest_columns(run: Run, tenant: str, phase: ClientPhase | None = None) -> dict[str, Any]:
    """A VM tenant's own report (vCPU, its own disk and journal bytes) over the measured window
    (over its client's work, `phase`, where the report can place it; its vCPU over the
    client's whole run beside); null for containers, whose CPU and journal the host sees
    directly."""
    if run.spec["arm"] != VM:
        return dict.fromkeys(column for column, _ in GUEST_COLUMNS)
    report = guest_report(run, tenant, phase.working if phase else None)
    whole = (guest_report(run, tenant, phase.whole)
             if phase and phase.whole != phase.working else report)
    return {"vcpu_busy_mean": report.vcpu_busy_mean,
            "vcpu_saturated_share": report.saturated_share, "cpu_bound": int(report.cpu_bound),
            "guest_disk_bytes": report.disk_bytes, "guest_jbd2_bytes": report.jbd2_bytes,
            "vcpu_busy_client_mean": whole.vcpu_busy_mean,
            "vcpu_saturated_client_share": whole.saturated_share}


def guest_report(run: Run, tenant: str,
                 phase: tuple[float, float] | None = None) -> GuestReport:
    """A VM tenant's own report over the run's measured window (the whole report for a run
    made before its start and the sampler's zero were both recorded); over `phase` (a MariaDB
    tenant's client, on the guest's /proc/uptime: its tool's `client_phase`), where the report
    records that clock (since 2026-11-29: the snapshots of the server's counters around the
    client, and its start-up, fall outside)."""
    host = run.host
    summary = host.get("layout", {}).get("guests", {}).get(tenant, {}).get("report") or {}
    started, zero = summary.get("started_ns"), host.get("window", {}).get("clock_ns")
    report_path = run.folder / guest_file(tenant)
    if started is None or zero is None:  # a run made before both were recorded: whole
        return parse_guest(report_path, tenant, client_phase=phase)
    # both on CLOCK_MONOTONIC: the report's zero on the sampler's clock
    return parse_guest(report_path, tenant, run.span, (started - zero) / 1e9, phase)


def host_saturated(host: dict[str, Any]) -> int | None:
    """Whether a test host that records its CPUs over the run (a nested host: its vCPUs are
    every tenant's) had a CPU saturated in at least half of the run's seconds, the rule a VM
    tenant's vCPU is flagged by; null for a host that records none."""
    cpu = host.get("cpu_during_run")
    if not cpu or not cpu.get("seconds"):
        return None
    worst = max(c["seconds_saturated"] for c in cpu["cpus"].values()) / cpu["seconds"]
    return int(worst >= 0.5)


def cpu_bound(row: dict[str, Any], host_flag: int | None = None) -> int | None:
    """The row's cpu_bound: a VM's own flag (its vCPU), a tenant whose server and client
    together used CPU_BOUND_SHARE of its core, or any tenant of a host whose CPU saturated
    (host_saturated); null when none was measured."""
    flags = [row["cpu_bound"]] if row["cpu_bound"] is not None else []
    if host_flag is not None:
        flags.append(host_flag)
    if row["client_cpu_share"] is not None:
        flags.append(int(row["client_cpu_share"] + row["server_cpu_share"] >= CPU_BOUND_SHARE))
    return max(flags) if flags else None


def share_columns(path: Path, samples: list[Sample], tenants: list[str],
                  journals: dict[int, list[Sample]] | None = None,
                  found: currencies.Sums | None = None) -> dict[str, dict]:
    """Whole-run bytes and shares per tenant (see the module docstring; `journals`:
    currencies.journals_in_cgroups, `found`: the bytes summed by currencies.summed, if found
    already)."""
    if found is None:
        found = currencies.summed(samples, tenants, journals)["bytes"]
    seconds = dict.fromkeys(tenants, 0.0)
    for sample in samples:
        if sample.kind == "tenant":
            if sample.source not in seconds:
                raise problem(path, f"samples of tenant {sample.source!r}, not in spec.json")
            seconds[sample.source] += sample.dt
        elif sample.kind == "jbd2" and sample.tenant is not None and sample.tenant not in seconds:
            raise problem(path, f"jbd2 {sample.source} journals tenant {sample.tenant!r}, "
                                "not in spec.json")
    for tenant in tenants:
        if seconds[tenant] == 0:
            raise problem(path, f"no samples of tenant {tenant!r}")
    sums = currencies.settled(path, found, "bytes", " B")
    cgroup, own, jbd2, shared, notes = (sums["cgroup"], sums["own"], sums["jbd2"],
                                        sums["shared"], sums["notes"])
    total = sums["total"]
    charged = sum(cgroup.values())
    if total == 0 or charged == 0:
        raise problem(path, "no tenant or journal I/O in the whole run: shares undefined")
    return {
        tenant: {
            "cgroup_bytes": cgroup[tenant], "own_bytes": own[tenant],
            "jbd2_bytes": jbd2[tenant],
            "disk_mb_s": cgroup[tenant] / seconds[tenant] / MB,
            "achieved_share": cgroup[tenant] / charged,
            "own_share": own[tenant] / total,
            "jbd2_share": jbd2[tenant] / total,
            "jbd2_charged_share": (own[tenant] + jbd2[tenant]) / total,
            "shared_jbd2_share": shared / total,
            # what the journal of the tenant's file system wrote: its own jbd2's, or the one
            # shared journal's (on either arm the other is 0)
            "journal_bytes": jbd2[tenant] + shared,
            "counter_note": notes.get(tenant),
        }
        for tenant in tenants
    }


JOURNAL_SIZE_KEYS = ("Total journal size", "Journal size")  # dumpe2fs -h, newer and older
UNITS = {"": 1, "k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def journal_size(host: dict[str, Any], tenant: str, path: Path) -> int | None:
    """Bytes of the journal of the tenant's file system, from dumpe2fs's header in host.json
    (file_systems of the volume layout.tenants names); None where none is recorded (a VM's
    guest journals inside its image)."""
    volume = host.get("layout", {}).get("tenants", {}).get(tenant, {}).get("volume")
    fields = host.get("file_systems", {}).get(volume, {}).get("dumpe2fs", {})
    text = next((fields[k] for k in JOURNAL_SIZE_KEYS if k in fields), None)
    if text is None:
        return None
    number, unit = text.strip()[:-1], text.strip()[-1]
    if unit.isdigit():
        number, unit = text.strip(), ""
    try:
        return int(float(number) * UNITS[unit])
    except (KeyError, ValueError):
        raise problem(path, f"file_systems.{volume}: journal size {text!r} is not a size "
                            "dumpe2fs prints (e.g. 64M)") from None


def journal_wraps(host: dict[str, Any], tenant: str, journal_bytes: int, arm: str,
                  path: Path) -> float | None:
    """How many times the journal of the tenant's file system was written over in the
    window: its bytes over its size (ext4 checkpoints before a full journal wraps)."""
    size = None if arm == VM else journal_size(host, tenant, path)
    return journal_bytes / size if size else None


def measured_span(path: Path, host: dict[str, Any], samples: list[Sample]) -> tuple[float, float]:
    """The measured window on the sampler's clock (journalbench.window): host.json's `window`;
    a run made before it existed is measured whole (from 0 to its last sample)."""
    recorded = host.get("window")
    if recorded is None:
        return 0.0, max((s.t for s in samples), default=0.0)
    number = (int, float)
    return (float(need(recorded, "start_s", path, number)),
            float(need(recorded, "end_s", path, number)))


def read_run(folder: Path | str) -> tuple[list[dict[str, Any]], RunSamples]:
    """(runs rows, its part of the samples table) of one complete run folder; ParseError if
    anything in it is missing, truncated or inconsistent, naming the file. Each file is read
    once; the samples' derived columns are computed with other runs' (tidy/samples.py)."""
    folder = Path(folder)
    spec = read_spec(folder)
    facts = read_json(folder / runfolder.HOST)
    host = {**host_columns(folder, spec["arm"], facts), **outer_columns(folder)}
    run = load_run(folder, spec, facts)
    samples_path = run.samples_path
    tenants = spec["tenants"]
    names = [t["name"] for t in tenants]
    journals = currencies.journals_in_cgroups(run.samples)
    # bytes, requests, device time and the scheduler's wait, in one pass
    found = currencies.summed(run.samples, names, journals)
    shares = share_columns(samples_path, run.samples, names, journals, found["bytes"])
    more_shares = currencies.run_columns(samples_path, run.samples, names, journals, found)
    total_weight = sum(t["weight"] for t in tenants)
    ids = {"campaign": spec.get("campaign"), "host": spec["host"], "run_id": spec["run_id"],
           "arm": spec["arm"]}
    runs, seconds = [], {}
    saturated = host_saturated(run.host)
    for tenant in tenants:
        name, workload = tenant["name"], tenant["workload"]
        others = sorted(workload_name(t["workload"]) for t in tenants if t is not tenant)
        tool, seconds[name], phase = tenant_columns(run, tenant)
        if tool["fsync_source"] is None:  # a tool that counts no fsync of its own: the trace
            tool.update(traced_fsync(run, name))
        runs.append({
            **ids, "repetition": spec["repetition"], "duration_s": spec["duration_s"],
            "n_tenants": len(tenants), "tenant": name, "weight": tenant["weight"],
            "target_share": tenant["weight"] / total_weight, "tool": workload["tool"],
            "preset": workload.get("preset"), "workload": workload_name(workload),
            "beside": "+".join(others) if others else "alone",
            "warmup_s": window.warmup_of(spec),
            "window_start_s": run.span[0], "window_end_s": run.span[1],
            **tool, **shares[name], **more_shares[name], **guest_columns(run, name, phase), **host,
            "counter_note": "; ".join(note for note in (shares[name]["counter_note"],
                                                        more_shares[name].get("counter_note"))
                                      if note) or None,
        })
        runs[-1]["cpu_bound"] = cpu_bound(runs[-1], saturated)
        runs[-1]["journal_wraps"] = journal_wraps(facts, name, shares[name]["journal_bytes"],
                                                  spec["arm"], folder / runfolder.HOST)
    check_intervals(samples_path, run.samples)
    # operations per second of every tenant whose tool reports them (t on the tool's own
    # clock: YCSB's first status line, sysbench's start)
    ops = [(name, t, dt, count) for name, per_second in seconds.items()
           for t, dt, count in per_second]
    return runs, RunSamples(ids, run.samples, ops)


def check_intervals(path: Path, samples: list[Sample]) -> None:
    """Every line's interval has a device line (the device's share is of its bytes)."""
    device = {sample.t for sample in samples if sample.kind == "device"}
    for sample in samples:
        if sample.t not in device:
            raise problem(path, f"no device line for the interval ending at t={sample.t}")


def parse_run(folder: Path | str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(runs rows, samples rows) of one complete run folder, as read_run reads it."""
    runs, part = read_run(folder)
    return runs, sample_rows(part)


__all__ = ["ParseError", "parse_run", "read_run"]
