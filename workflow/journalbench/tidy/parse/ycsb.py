"""A YCSB client's figures: operations per second, failed ones, and the latency of its main
operation, from its report (and its stderr, when the run kept that apart: YCSB's banner and
a status line every second)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench.formats.ycsb import (
    YcsbResult,
    failed_operations,
    parse_ycsb,
    ycsb_file,
    ycsb_stderr,
)
from journalbench.formats.ycsb import per_second as status_seconds
from journalbench.tidy.parse.metric import FAILED, LATENCY, OPS, RUNTIME, TOOL_VERSION

TOOL = "ycsb"
FILES = (ycsb_file("{tenant}"), ycsb_stderr("{tenant}"))
METRICS = (TOOL_VERSION, RUNTIME, OPS, FAILED, *LATENCY)


def load(folder: Path, tenant: str, workload: dict[str, Any]) -> YcsbResult:
    banner = folder / ycsb_stderr(tenant)
    return parse_ycsb(folder / ycsb_file(tenant), banner if banner.is_file() else None)


def columns(ycsb: YcsbResult, workload: dict[str, Any]) -> dict[str, Any]:
    main = max(ycsb.operations.values(), key=lambda op: op.operations)  # what it did most
    return {"tool_version": f"ycsb {ycsb.version}", "tool_runtime_s": ycsb.runtime_ms / 1000,
            "ops_s": ycsb.throughput_ops_s, "failed_ops": failed_operations(ycsb),
            "op_lat_mean_ms": main.avg_us / 1000, "op_lat_p95_ms": main.p95_us / 1000,
            "op_lat_p99_ms": main.p99_us / 1000}


def per_second(ycsb: YcsbResult) -> list[tuple[float, float, int]]:
    """Operations per status interval (t from YCSB's first status line)."""
    return status_seconds(ycsb)


def client_phase(loaded: object) -> None:
    """No client run of its own to bound a guest's seconds with (see mariadb.py)."""
    return None
