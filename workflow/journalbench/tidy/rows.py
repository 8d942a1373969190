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
from collections import defaultdict
from pathlib import Path
from typing import Any

from journalbench import runfolder, window
from journalbench.agent.workloads import fio
from journalbench.formats import ParseError, mariadb, problem
from journalbench.formats.fio import parse_fio, summarise
from journalbench.formats.fsync import parse_fsync
from journalbench.formats.guest import parse_guest
from journalbench.formats.samples import Sample, parse_samples
from journalbench.formats.sysbench import parse_sysbench
from journalbench.formats.ycsb import YcsbResult, failed_operations, parse_ycsb, per_second
from journalbench.tidy import currencies
from journalbench.tidy.currencies import same_cgroup
from journalbench.vocabulary import VM

MB = 1e6  # MB/s columns are decimal megabytes, as fio's "(MB/s)" figures
VIRT_ACCEL = ("kvm", "tcg")


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


def host_columns(folder: Path, arm: str) -> dict[str, Any]:
    path = folder / runfolder.HOST
    host = read_json(path)
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
        "scheduler": need(host, "scheduler", path, str),
        "device_kind": need(host, "device.kind", path, str),
        "device_fsync_lat_ms": float(need(host, "device_fsync_lat_ms.mean", path, number)),
        "device_fsync_lat_p50_ms": float(need(host, "device_fsync_lat_ms.p50", path, number)),
        "device_fsync_lat_p99_ms": float(need(host, "device_fsync_lat_ms.p99", path, number)),
        "virt_accel": accel,
        "bfq": bfq_label(host, path),
        **device_columns(host, path),
    }


def bfq_label(host: dict[str, Any], path: Path) -> str:
    """The BFQ tunables a study may vary, as the run read them back: runs of two settings
    are never pooled (views.apart, the ledger's families)."""
    return " ".join(f"{key}={need(host, f'bfq.{key}', path, str)}" for key in BFQ_LABELLED)


# the tunables a campaign sets to study BFQ (its starvation and isolation), in label order
BFQ_LABELLED = ("strict_guarantees", "slice_idle_us", "low_latency")


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


def ms(ns: float | None) -> float | None:
    return ns / 1e6 if ns is not None else None


def tool_columns(folder: Path, tenant: str, workload: dict[str, Any]) -> dict[str, Any]:
    """Throughput and fsync figures from the tenant's own tool output (and fsync trace)."""
    tool = workload["tool"]
    if tool == "fio":
        fio = summarise(parse_fio(folder / runfolder.fio_file(tenant)))
        return {
            "tool_version": fio.version, "tool_runtime_s": fio.runtime_s,
            "bs": fio.bs or workload.get("bs"),
            "throughput_mb_s": fio.bw_bytes / MB, "iops": fio.iops,
            "ops_s": None, "failed_ops": None,
            **NO_DATABASE,
            "fsync_source": "fio", "fsync_count": fio.fsync_count,
            "fsync_per_s": fio.fsync_per_s, "fsync_lat_mean_ms": ms(fio.fsync_mean_ns),
            "fsync_lat_p50_ms": ms(fio.fsync_p50_ns), "fsync_lat_p99_ms": ms(fio.fsync_p99_ns),
        }
    if tool == "mariadb":
        row = mariadb.tool_columns(folder, tenant)
    elif tool == "sysbench":
        bench = parse_sysbench(folder / runfolder.sysbench_file(tenant))
        row = {"tool_version": f"sysbench {bench.version}", "tool_runtime_s": bench.total_time_s,
               "ops_s": bench.tps, "failed_ops": bench.ignored_errors}
        row.update(NO_DATABASE)
    else:
        ycsb = read_ycsb(folder, tenant)
        row = {"tool_version": f"ycsb {ycsb.version}", "tool_runtime_s": ycsb.runtime_ms / 1000,
               "ops_s": ycsb.throughput_ops_s, "failed_ops": failed_operations(ycsb),
               **ycsb_latency(ycsb), **redis_columns(folder, tenant)}
    row.update({"bs": None, "throughput_mb_s": None, "iops": None})
    trace = folder / runfolder.fsync_file(tenant)
    if trace.is_file():
        fsync = parse_fsync(trace)
        span = window.monotonic_ns(read_json(folder / runfolder.HOST).get("window") or {})
        if span is not None:  # the measured window's seconds only (journalbench.window)
            fsync = fsync.within(*span)
        row.update({
            "fsync_source": "bpftrace", "fsync_count": fsync.count, "fsync_per_s": fsync.per_s,
            "fsync_lat_mean_ms": ms(fsync.mean_ns),
            "fsync_lat_p50_ms": ms(fsync.percentile_ns(50)),
            "fsync_lat_p99_ms": ms(fsync.percentile_ns(99)),
        })
    else:
        row.update({"fsync_source": None, "fsync_count": None, "fsync_per_s": None,
                    "fsync_lat_mean_ms": None, "fsync_lat_p50_ms": None,
                    "fsync_lat_p99_ms": None})
    return row


NO_DATABASE = {"op_lat_mean_ms": None, "op_lat_p95_ms": None, "op_lat_p99_ms": None,
               "aof_bytes": None, "aof_bytes_loaded": None, "load_s": None}


def read_ycsb(folder: Path, tenant: str) -> YcsbResult:
    """The run's YCSB report, with its stderr (banner, status lines) when kept apart."""
    banner = folder / runfolder.ycsb_stderr(tenant)
    return parse_ycsb(folder / runfolder.ycsb_file(tenant), banner if banner.is_file() else None)


def ycsb_latency(ycsb: YcsbResult) -> dict[str, float]:
    """Latency of the workload's main operation (the one YCSB did most often)."""
    main = max(ycsb.operations.values(), key=lambda op: op.operations)
    return {"op_lat_mean_ms": main.avg_us / 1000, "op_lat_p95_ms": main.p95_us / 1000,
            "op_lat_p99_ms": main.p99_us / 1000}


def redis_columns(folder: Path, tenant: str) -> dict[str, Any]:
    """The AOF's size after loading and after the run, and the load time (redis workload);
    null for a YCSB run without that file."""
    path = folder / runfolder.redis_file(tenant)
    if not path.is_file():
        return {"aof_bytes": None, "aof_bytes_loaded": None, "load_s": None}
    facts = read_json(path)
    return {"aof_bytes": need(facts, "aof_bytes_end", path, int),
            "aof_bytes_loaded": need(facts, "aof_bytes_loaded", path, int),
            "load_s": float(need(facts, "load_s", path, (int, float)))}


def redis_cpu(folder: Path, tenant: str, tool: str) -> dict[str, float]:
    """A redis tenant's client and server CPU, each as a share of one core over the seconds
    it was measured in (`cpu` of redis-<tenant>.json); nothing for other tools, nor for runs
    made before the agent recorded it (their columns stay null: not judged CPU-bound)."""
    path = folder / runfolder.redis_file(tenant)
    if tool != "redis" or not path.is_file():
        return {}
    cpu = read_json(path).get("cpu")
    if cpu is None:
        return {}
    if not isinstance(cpu, dict):
        raise problem(path, "'cpu' is not an object")
    shares = {}
    for part in ("client", "server"):
        used = need(cpu, f"{part}_s", path, (int, float))
        wall = need(cpu, f"{part}_wall_s", path, (int, float))
        if used < 0 or wall <= 0:
            raise problem(path, f"cpu {part}_s {used} over {part}_wall_s {wall}")
        shares[f"{part}_cpu_share"] = used / wall
    return shares


def ops_rows(folder: Path, ids: dict[str, Any], tenants: list[dict[str, Any]]
             ) -> list[dict[str, Any]]:
    """Operations per status interval of every YCSB tenant (kind 'ops'; t from its first
    status line, not the sampler's clock), and per --report-interval of every sysbench
    (mariadb) tenant (t from sysbench's start)."""
    rows = []
    for tenant in tenants:
        name = tenant["name"]
        tool = tenant["workload"]["tool"]
        if tool in ("fio", "sysbench"):
            continue
        seconds = (mariadb.per_second(folder, name) if tool == "mariadb"
                   else per_second(read_ycsb(folder, name)))
        for t, dt, ops in seconds:
            rows.append({
                **ids, "t": round(t, 3), "dt": round(dt, 3), "kind": "ops", "source": name,
                "tenant": name, "cgroup": None, "read_bytes": None, "write_bytes": None,
                "bytes": None, "ios": None, "own_bytes": None, "mb_s": None,
                "device_share": None, "ops": ops,
                **dict.fromkeys(currencies.SAMPLE_COLUMNS)})
    return rows


def own_bytes_by_line(samples: list[Sample]) -> dict[int, int]:
    """For every tenant line (by index): its cgroup bytes minus the bytes of jbd2 threads that
    sat in the same cgroup during the same interval."""
    journals: dict[float, list[Sample]] = defaultdict(list)
    for sample in samples:
        if sample.kind == "jbd2":
            journals[sample.t].append(sample)
    return {
        index: sample.bytes - sum(j.bytes for j in journals[sample.t]
                                  if same_cgroup(j.cgroup, sample.cgroup))
        for index, sample in enumerate(samples) if sample.kind == "tenant"
    }


def guest_columns(folder: Path, tenant: str, arm: str,
                  span: tuple[float, float]) -> dict[str, Any]:
    """A VM tenant's own report (vCPU, its own disk and journal bytes) over the measured window;
    null for containers, whose CPU and journal the host sees directly."""
    if arm != VM:
        return {"vcpu_busy_mean": None, "vcpu_saturated_share": None, "cpu_bound": None,
                "guest_disk_bytes": None, "guest_jbd2_bytes": None}
    host = read_json(folder / runfolder.HOST)
    summary = host.get("layout", {}).get("guests", {}).get(tenant, {}).get("report") or {}
    started, zero = summary.get("started_ns"), host.get("window", {}).get("clock_ns")
    report_path = folder / f"guest-{tenant}.jsonl"
    if started is None or zero is None:  # a run made before both were recorded: whole
        report = parse_guest(report_path, tenant)
    else:  # both on CLOCK_MONOTONIC: the report's zero on the sampler's clock
        report = parse_guest(report_path, tenant, span, (started - zero) / 1e9)
    return {"vcpu_busy_mean": report.vcpu_busy_mean,
            "vcpu_saturated_share": report.saturated_share, "cpu_bound": int(report.cpu_bound),
            "guest_disk_bytes": report.disk_bytes, "guest_jbd2_bytes": report.jbd2_bytes}


def share_columns(path: Path, samples: list[Sample], tenants: list[str]) -> dict[str, dict]:
    """Whole-run bytes and shares per tenant (see the module docstring)."""
    own_by_line = own_bytes_by_line(samples)
    cgroup = dict.fromkeys(tenants, 0)
    own = dict.fromkeys(tenants, 0)
    jbd2 = dict.fromkeys(tenants, 0)
    seconds = dict.fromkeys(tenants, 0.0)
    shared = 0
    for index, sample in enumerate(samples):
        if sample.kind == "tenant":
            if sample.source not in cgroup:
                raise problem(path, f"samples of tenant {sample.source!r}, not in spec.json")
            cgroup[sample.source] += sample.bytes
            own[sample.source] += own_by_line[index]
            seconds[sample.source] += sample.dt
        elif sample.kind == "jbd2":
            if sample.tenant is None:
                shared += sample.bytes
            elif sample.tenant in jbd2:
                jbd2[sample.tenant] += sample.bytes
            else:
                raise problem(path, f"jbd2 {sample.source} journals tenant {sample.tenant!r}, "
                                    "not in spec.json")
    for tenant in tenants:
        if seconds[tenant] == 0:
            raise problem(path, f"no samples of tenant {tenant!r}")
        if own[tenant] < 0:
            raise problem(path, f"tenant {tenant!r}: jbd2 bytes in its cgroup exceed the "
                                f"cgroup's own bytes ({own[tenant]} left): inconsistent samples")
    total = sum(own.values()) + sum(jbd2.values()) + shared
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
        }
        for tenant in tenants
    }


def sample_rows(path: Path, ids: dict[str, Any], samples: list[Sample]) -> list[dict[str, Any]]:
    device: dict[float, int] = {}
    for sample in samples:
        if sample.kind == "device":
            device[sample.t] = device.get(sample.t, 0) + sample.bytes
    own_by_line = own_bytes_by_line(samples)
    more = currencies.sample_columns(samples)  # requests and device time
    rows = []
    for index, sample in enumerate(samples):
        if sample.t not in device:
            raise problem(path, f"no device line for the interval ending at t={sample.t}")
        rows.append({
            **ids, "t": sample.t, "dt": sample.dt, "kind": sample.kind, "source": sample.source,
            "tenant": sample.source if sample.kind == "tenant" else sample.tenant,
            "cgroup": sample.cgroup,
            "read_bytes": sample.read_bytes, "write_bytes": sample.write_bytes,
            "bytes": sample.bytes, "ios": sample.read_ios + sample.write_ios,
            "own_bytes": own_by_line.get(index),
            "mb_s": sample.bytes / sample.dt / MB if sample.dt > 0 else None,
            "device_share": sample.bytes / device[sample.t] if device[sample.t] else None,
            "ops": None, **more[index],
        })
    return rows


def measured_span(folder: Path, samples: list[Sample]) -> tuple[float, float]:
    """The measured window on the sampler's clock (journalbench.window): host.json's `window`;
    a run made before it existed is measured whole (from 0 to its last sample)."""
    path = folder / runfolder.HOST
    recorded = read_json(path).get("window")
    if recorded is None:
        return 0.0, max((s.t for s in samples), default=0.0)
    number = (int, float)
    return (float(need(recorded, "start_s", path, number)),
            float(need(recorded, "end_s", path, number)))


def parse_run(folder: Path | str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(runs rows, samples rows) of one complete run folder; ParseError if anything in it is
    missing, truncated or inconsistent, naming the file."""
    folder = Path(folder)
    spec = read_spec(folder)
    host = host_columns(folder, spec["arm"])
    samples_path = folder / runfolder.SAMPLES
    samples = parse_samples(samples_path)
    span = measured_span(folder, samples)
    samples = [s for s in samples if window.inside(s.t, s.dt, *span)]
    tenants = spec["tenants"]
    names = [t["name"] for t in tenants]
    shares = share_columns(samples_path, samples, names)
    more_shares = currencies.run_columns(samples_path, samples, names)  # requests, time
    total_weight = sum(t["weight"] for t in tenants)
    ids = {"campaign": spec.get("campaign"), "host": spec["host"], "run_id": spec["run_id"],
           "arm": spec["arm"]}
    runs = []
    for tenant in tenants:
        workload = tenant["workload"]
        others = sorted(workload_name(t["workload"]) for t in tenants if t is not tenant)
        runs.append({
            **ids, "repetition": spec["repetition"], "duration_s": spec["duration_s"],
            "n_tenants": len(tenants), "tenant": tenant["name"], "weight": tenant["weight"],
            "target_share": tenant["weight"] / total_weight, "tool": workload["tool"],
            "preset": workload.get("preset"), "workload": workload_name(workload),
            "beside": "+".join(others) if others else "alone",
            "prep": fio.prep_of(workload) if workload["tool"] == "fio" else None,
            "warmup_s": window.warmup_of(spec),
            "window_start_s": span[0], "window_end_s": span[1],
            **tool_columns(folder, tenant["name"], workload),
            **shares[tenant["name"]], **more_shares[tenant["name"]],
            **guest_columns(folder, tenant["name"], spec["arm"], span),
            **mariadb.db_columns(folder, tenant["name"], workload["tool"]),
            **redis_cpu(folder, tenant["name"], workload["tool"]),
            **host,
        })
        runs[-1]["cpu_bound"] = mariadb.cpu_bound(runs[-1])
    return runs, sample_rows(samples_path, ids, samples) + ops_rows(folder, ids, tenants)


__all__ = ["ParseError", "parse_run"]
