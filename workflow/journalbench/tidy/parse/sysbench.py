"""A bare sysbench client's figures (runs made before the mariadb workload kept its server's
counters): transactions per second and failed ones, from sysbench's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench.formats.sysbench import SysbenchResult, parse_sysbench, sysbench_file
from journalbench.tidy.parse.metric import FAILED, OPS, RUNTIME, TOOL_VERSION

TOOL = "sysbench"
FILES = (sysbench_file("{tenant}"),)
METRICS = (TOOL_VERSION, RUNTIME, OPS, FAILED)


def load(folder: Path, tenant: str, workload: dict[str, Any]) -> SysbenchResult:
    return parse_sysbench(folder / sysbench_file(tenant))


def columns(bench: SysbenchResult, workload: dict[str, Any]) -> dict[str, Any]:
    return {"tool_version": f"sysbench {bench.version}", "tool_runtime_s": bench.total_time_s,
            "ops_s": bench.tps, "failed_ops": bench.ignored_errors}


def per_second(bench: SysbenchResult) -> None:
    return None


def client_phase(loaded: object) -> None:
    """No client run of its own to bound a guest's seconds with (see mariadb.py)."""
    return None
