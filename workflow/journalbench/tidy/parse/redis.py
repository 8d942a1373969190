"""A Redis tenant's figures: its YCSB client's (tidy/parse/ycsb.py), the AOF's size and load
time, and the client's and server's CPU (redis-<tenant>.json). Its AOF fsyncs are traced on
the host for containers (tidy/rows.py reads the trace)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench.formats.redis import RedisFacts, parse_facts, redis_file
from journalbench.formats.ycsb import YcsbResult
from journalbench.tidy.parse import ycsb
from journalbench.tidy.parse.metric import CPU, Metric

TOOL = "redis"
FILES = (*ycsb.FILES, redis_file("{tenant}"))
METRICS = (
    *ycsb.METRICS,
    Metric("aof_bytes", "int64", "bytes", "the append-only file's size at the end"),
    Metric("aof_bytes_loaded", "int64", "bytes", "its size after the load phase"),
    Metric("load_s", "float64", "s", "the load phase's length"),
    *CPU,
)


@dataclass(frozen=True)
class Loaded:
    ycsb: YcsbResult
    facts: RedisFacts | None  # None: a run without the file (a YCSB run of another store)


def load(folder: Path, tenant: str, workload: dict[str, Any]) -> Loaded:
    path = folder / redis_file(tenant)
    return Loaded(ycsb.load(folder, tenant, workload),
                  parse_facts(path) if path.is_file() else None)


def columns(loaded: Loaded, workload: dict[str, Any]) -> dict[str, Any]:
    row = ycsb.columns(loaded.ycsb, workload)
    facts = loaded.facts
    if facts is not None:
        row.update(aof_bytes=facts.aof_bytes_end, aof_bytes_loaded=facts.aof_bytes_loaded,
                   load_s=facts.load_s, **(facts.cpu_shares or {}))
    return row


def per_second(loaded: Loaded) -> list[tuple[float, float, int]]:
    return ycsb.per_second(loaded.ycsb)


def client_phase(loaded: object) -> None:
    """No client run of its own to bound a guest's seconds with (see mariadb.py)."""
    return None
