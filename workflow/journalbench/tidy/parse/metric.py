"""A tool's metric, and the metrics several tools report (tidy/parse/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    column: str
    dtype: str  # the tidy table's type: string, int64 or float64
    unit: str  # "" for a count or a name
    meaning: str


# What several tools report: each tool's METRICS names those it fills.
TOOL_VERSION = Metric("tool_version", "string", "", "the tool's name and version")
RUNTIME = Metric("tool_runtime_s", "float64", "s", "how long the tool says it ran")
OPS = Metric("ops_s", "float64", "ops/s", "operations (transactions) per second")
FAILED = Metric("failed_ops", "int64", "", "operations that failed or were ignored")
LATENCY = (Metric("op_lat_mean_ms", "float64", "ms", "mean latency of the main operation"),
           Metric("op_lat_p95_ms", "float64", "ms", "95th percentile of that latency"),
           Metric("op_lat_p99_ms", "float64", "ms", "99th percentile of that latency"))
CPU = (Metric("client_cpu_share", "float64", "cores", "the client's CPU over the measured "
              "phase, as a share of one core"),
       Metric("server_cpu_share", "float64", "cores", "the server's CPU, likewise"))
# fsync calls: fio counts its own; a database's are traced (tidy/rows.py, fsync-<tenant>.txt)
FSYNC = (Metric("fsync_source", "string", "", "fio, or bpftrace for a traced server"),
         Metric("fsync_count", "int64", "", "fsync and fdatasync calls in the window"),
         Metric("fsync_per_s", "float64", "calls/s", "their rate"),
         Metric("fsync_lat_mean_ms", "float64", "ms", "their mean latency"),
         Metric("fsync_lat_p50_ms", "float64", "ms", "their median latency"),
         Metric("fsync_lat_p99_ms", "float64", "ms", "their 99th percentile latency"))
