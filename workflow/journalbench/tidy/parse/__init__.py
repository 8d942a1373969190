"""What tidy takes from each workload tool, one module per tool: the files of a tenant it
reads, the metrics it gives (column, type, unit), how it loads those files (each once, with
the readers of journalbench.formats) and the columns and per-second operations it computes
from what it loaded. `TOOLS` is the registry: tidy/rows.py loops over it and names no tool,
and the runs table's tool columns are the union of the tools' metrics (data/SCHEMA.md).

A tool module holds:
  TOOL     the name a run spec gives (`workload.tool`)
  FILES    the run-folder files of one tenant it reads, "{tenant}" for the tenant's name
  METRICS  the runs-table columns it fills (any other tool column is null for its tenants)
  load(folder, tenant, workload) -> what it read, every file once
  columns(loaded, workload) -> {column: value} for METRICS, pure
  per_second(loaded) -> [(t, dt, operations)] or None when the tool reports no seconds
  client_phase(loaded) -> its measured client's run on /proc/uptime of where it ran, with its
           work's start (formats.guest.ClientPhase: a VM's guest seconds are then its
           work's), or None
"""

from __future__ import annotations

from journalbench.tidy.parse import fio, mariadb, redis, sysbench, ycsb
from journalbench.tidy.parse.metric import Metric

TOOLS = {module.TOOL: module for module in (fio, mariadb, redis, sysbench, ycsb)}


def metrics() -> list[Metric]:
    """Every tool column once, in the registry's order; a column two tools fill is one
    column (a test checks they agree on its type and unit)."""
    seen: dict[str, Metric] = {}
    for module in TOOLS.values():
        for metric in module.METRICS:
            seen.setdefault(metric.column, metric)
    return list(seen.values())
