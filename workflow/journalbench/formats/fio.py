"""fio JSON output (`--output-format=json` or `json+`, fio 3.x) -> per-job records.

The JSON object may follow text (`--output-format=normal,json` prints the job banner and layout
messages first; fio prints notes such as "note: both iodepth >= 1 ..." on stdout) and may be
followed by the normal-format report. fsync/fdatasync latency is `jobs[].sync.lat_ns`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench.formats import percentile_of_counts, problem, read_text


# the file of a tenant's output in its run folder
def fio_file(tenant: str) -> str:
    return f"fio-{tenant}.json"


OBJECT_START = re.compile(r"^\{", re.MULTILINE)
DIRECTIONS = ("read", "write", "trim")
SYNC_OPTIONS = ("fsync", "fdatasync", "fsync_on_close", "end_fsync", "sync_file_range")


@dataclass(frozen=True)
class Direction:
    """One data direction of a job (fio's read/write/trim section)."""

    io_bytes: int
    bw_bytes: float  # bytes per second over the direction's runtime
    iops: float
    runtime_ms: int
    total_ios: int
    clat_mean_ns: float | None  # None when the direction did no I/O


@dataclass(frozen=True)
class Sync:
    """fsync/fdatasync calls of a job; latencies are None when it issued none."""

    count: int
    mean_ns: float | None
    p50_ns: float | None
    p99_ns: float | None
    bins: dict[int, int] | None  # json+ latency bins (ns -> calls); None with plain json


@dataclass(frozen=True)
class Job:
    name: str
    options: dict[str, str]
    runtime_ms: int
    read: Direction
    write: Direction
    trim: Direction
    sync: Sync


@dataclass(frozen=True)
class FioResult:
    path: str
    version: str
    jobs: list[Job]


@dataclass(frozen=True)
class FioSummary:
    """A tenant's fio figures: all its jobs together."""

    version: str
    runtime_s: float
    io_bytes: int
    bw_bytes: float
    iops: float
    fsync_count: int
    fsync_per_s: float
    fsync_mean_ns: float | None  # None when no job issued an fsync
    fsync_p50_ns: float | None
    fsync_p99_ns: float | None
    bs: str | None  # block size fio was given, when all jobs agree


def whole_object(text: str) -> dict[str, Any] | None:
    """The fio JSON object when it is all of the text (fio's output alone: every shipped file),
    decoded by msgspec where it is installed (tidy's environment) in half of json's time; None
    otherwise (other output around it, NaN, a number out of range): extract_object's scan
    decides, as json. Both give the same object for every shipped file."""
    if not text.startswith("{"):
        return None
    try:
        import msgspec
    except ImportError:  # the agent side: a bare python
        return None
    try:
        data = msgspec.json.decode(text)
    except msgspec.MsgspecError:
        return None
    return data if isinstance(data, dict) and "jobs" in data else None


def extract_object(text: str, path: Path) -> dict[str, Any]:
    """The fio JSON object inside text that may carry other output before and after it."""
    whole = whole_object(text)
    if whole is not None:
        return whole
    decoder = json.JSONDecoder()
    last_error: json.JSONDecodeError | None = None
    for match in OBJECT_START.finditer(text):
        try:
            data, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as error:
            last_error = error
            continue
        if isinstance(data, dict) and "jobs" in data:
            return data
    if last_error is not None:
        raise problem(path, f"truncated or invalid fio JSON ({last_error.msg})", last_error.lineno)
    raise problem(path, "no fio JSON object (not fio --output-format=json output)")


def number(section: dict[str, Any], key: str, path: Path, where: str) -> float:
    value = section.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise problem(path, f"fio JSON: {where}.{key} missing or not a number")
    return value


def parse_direction(job: dict[str, Any], name: str, path: Path) -> Direction:
    where = f"job {job.get('jobname')!r} {name}"
    section = job.get(name)
    if not isinstance(section, dict):
        raise problem(path, f"fio JSON: {where} section missing")
    total_ios = int(number(section, "total_ios", path, where))
    clat = section.get("clat_ns")
    clat_mean = clat.get("mean") if isinstance(clat, dict) and total_ios > 0 else None
    return Direction(
        io_bytes=int(number(section, "io_bytes", path, where)),
        bw_bytes=float(number(section, "bw_bytes", path, where)),
        iops=float(number(section, "iops", path, where)),
        runtime_ms=int(number(section, "runtime", path, where)),
        total_ios=total_ios,
        clat_mean_ns=float(clat_mean) if clat_mean is not None else None,
    )


def parse_bins(raw: Any, path: Path, where: str) -> dict[int, int] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise problem(path, f"fio JSON: {where}.bins is not an object")
    try:
        return {int(value): int(count) for value, count in raw.items()}
    except (TypeError, ValueError):
        raise problem(path, f"fio JSON: {where}.bins has a non-integer entry") from None


def parse_sync(job: dict[str, Any], path: Path) -> Sync:
    name = job.get("jobname")
    section = job.get("sync")
    options = job.get("job options") or {}
    if section is None:
        # fio before 3.5 had no sync section: only a job that never syncs can do without it
        if any(str(options.get(key, "0")) not in ("0", "") for key in SYNC_OPTIONS):
            raise problem(path, f"fio JSON: job {name!r} syncs but has no sync section "
                                "(fio too old to report fsync latency)")
        return Sync(0, None, None, None, None)
    where = f"job {name!r} sync"
    lat = section.get("lat_ns")
    if not isinstance(lat, dict):
        raise problem(path, f"fio JSON: {where}.lat_ns missing")
    # fio counts fdatasync calls in lat_ns.N but not in sync.total_ios (fsync in both)
    if "N" in lat:
        count = int(number(lat, "N", path, f"{where}.lat_ns"))
    else:
        count = int(number(section, "total_ios", path, where))
    bins = parse_bins(lat.get("bins"), path, f"{where}.lat_ns")
    if count == 0:
        return Sync(0, None, None, None, bins)
    percentiles = lat.get("percentile")
    if isinstance(percentiles, dict) and "50.000000" in percentiles and "99.000000" in percentiles:
        p50, p99 = float(percentiles["50.000000"]), float(percentiles["99.000000"])
    elif bins:
        p50 = float(percentile_of_counts(bins.items(), 50))
        p99 = float(percentile_of_counts(bins.items(), 99))
    else:
        raise problem(path, f"fio JSON: {where}.lat_ns has neither percentiles nor bins")
    return Sync(count, float(number(lat, "mean", path, f"{where}.lat_ns")), p50, p99, bins)


def parse_job(job: Any, path: Path) -> Job:
    if not isinstance(job, dict) or not isinstance(job.get("jobname"), str):
        raise problem(path, "fio JSON: a job without a jobname")
    name = job["jobname"]
    if job.get("error"):
        raise problem(path, f"fio job {name!r} failed with error {job['error']}")
    read, write, trim = (parse_direction(job, d, path) for d in DIRECTIONS)
    # job_runtime appeared in later 3.x; before it the longest direction is the job's runtime
    runtime = job.get("job_runtime")
    if not isinstance(runtime, int) or runtime <= 0:
        runtime = max(read.runtime_ms, write.runtime_ms, trim.runtime_ms)
    if runtime <= 0:
        raise problem(path, f"fio job {name!r} ran for 0 ms")
    options = {str(k): str(v) for k, v in (job.get("job options") or {}).items()}
    return Job(name, options, runtime, read, write, trim, parse_sync(job, path))


def parse_fio(path: Path | str) -> FioResult:
    """Every job of a fio JSON output; ParseError if truncated, foreign or a job failed."""
    path = Path(path)
    data = extract_object(read_text(path), path)
    version = data.get("fio version")
    if not isinstance(version, str) or not version.startswith("fio-3"):
        raise problem(path, f"not fio 3.x JSON (fio version {version!r})")
    jobs = data["jobs"]
    if not isinstance(jobs, list) or not jobs:
        raise problem(path, "fio JSON has no jobs")
    return FioResult(str(path), version, [parse_job(job, path) for job in jobs])


def summarise(result: FioResult, jobs: list[str] | None = None) -> FioSummary:
    """All (or the named) jobs of a result taken together, as one tenant's figures.

    Jobs run concurrently, so bandwidths and rates add up. Percentiles of several syncing
    jobs come from their merged json+ bins; without bins they cannot be combined honestly.
    """
    chosen = [job for job in result.jobs if jobs is None or job.name in jobs]
    if not chosen:
        raise problem(result.path, f"fio JSON has no job named {', '.join(jobs or [])}")
    directions = [d for job in chosen for d in (job.read, job.write, job.trim)]
    syncing = [job.sync for job in chosen if job.sync.count > 0]
    count = sum(sync.count for sync in syncing)
    mean = p50 = p99 = None
    if len(syncing) == 1:
        mean, p50, p99 = syncing[0].mean_ns, syncing[0].p50_ns, syncing[0].p99_ns
    elif syncing:
        if any(sync.bins is None for sync in syncing):
            raise problem(result.path, f"{len(syncing)} jobs issue fsync but the JSON has no "
                                       "latency bins to combine (use --output-format=json+)")
        merged: dict[int, int] = {}
        for sync in syncing:
            for value, calls in (sync.bins or {}).items():
                merged[value] = merged.get(value, 0) + calls
        mean = sum(s.mean_ns * s.count for s in syncing if s.mean_ns is not None) / count
        p50 = float(percentile_of_counts(merged.items(), 50))
        p99 = float(percentile_of_counts(merged.items(), 99))
    sizes = {job.options.get("bs") for job in chosen}
    return FioSummary(
        version=result.version,
        runtime_s=max(job.runtime_ms for job in chosen) / 1000.0,
        io_bytes=sum(d.io_bytes for d in directions),
        bw_bytes=sum(d.bw_bytes for d in directions),
        iops=sum(d.iops for d in directions),
        fsync_count=count,
        fsync_per_s=sum(job.sync.count / (job.runtime_ms / 1000.0) for job in chosen),
        fsync_mean_ns=mean,
        fsync_p50_ns=p50,
        fsync_p99_ns=p99,
        bs=sizes.pop() if len(sizes) == 1 else None,
    )
