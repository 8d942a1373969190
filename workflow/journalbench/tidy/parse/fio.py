"""fio's figures of a tenant, from its JSON output: throughput, IOPS and its own fsync calls
(fio counts them; no trace is needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench.agent.workloads.fio import prep_of
from journalbench.formats.fio import FioSummary, fio_file, parse_fio, summarise
from journalbench.tidy.parse.metric import FSYNC, RUNTIME, TOOL_VERSION, Metric

TOOL = "fio"
FILES = (fio_file("{tenant}"),)
METRICS = (
    Metric("bs", "string", "", "block size"),
    Metric("prep", "string", "", "how the data file was prepared (data/README.md)"),
    TOOL_VERSION, RUNTIME,
    Metric("throughput_mb_s", "float64", "MB/s", "bytes moved per second, decimal MB"),
    Metric("iops", "float64", "IO/s", "I/Os per second"),
    *FSYNC,
)
MB = 1e6  # decimal megabytes, as fio's "(MB/s)" figures


def load(folder: Path, tenant: str, workload: dict[str, Any]) -> FioSummary:
    return summarise(parse_fio(folder / fio_file(tenant)))


def columns(fio: FioSummary, workload: dict[str, Any]) -> dict[str, Any]:
    return {
        "bs": fio.bs or workload.get("bs"), "prep": prep_of(workload),
        "tool_version": fio.version, "tool_runtime_s": fio.runtime_s,
        "throughput_mb_s": fio.bw_bytes / MB, "iops": fio.iops,
        "fsync_source": "fio", "fsync_count": fio.fsync_count,
        "fsync_per_s": fio.fsync_per_s, "fsync_lat_mean_ms": ms(fio.fsync_mean_ns),
        "fsync_lat_p50_ms": ms(fio.fsync_p50_ns), "fsync_lat_p99_ms": ms(fio.fsync_p99_ns),
    }


def per_second(fio: FioSummary) -> None:
    """fio's seconds are the sampler's (its bytes): no operations of its own per second."""
    return None


def ms(ns: float | None) -> float | None:
    return ns / 1e6 if ns is not None else None


def client_phase(loaded: object) -> None:
    """No client run of its own to bound a guest's seconds with (see mariadb.py)."""
    return None
