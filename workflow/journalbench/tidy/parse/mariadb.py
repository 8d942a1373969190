"""A MariaDB tenant's figures: its sysbench client's throughput and latency (percentiles from
sysbench's histogram), the server's counters over the measured phase (fsyncs, CPU) and the
set-up facts (mariadb-<tenant>-counters.txt, mariadb-<tenant>.json). Its fsyncs are traced on
the host for containers (tidy/rows.py reads the trace)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench.formats import percentile_of_counts, problem
from journalbench.formats.guest import ClientPhase
from journalbench.formats.mariadb import (
    Counters,
    client_point,
    mariadb_counters_file,
    mariadb_facts_file,
    parse_counters,
    parse_facts,
)
from journalbench.formats.sysbench import SysbenchResult, parse_sysbench, sysbench_file
from journalbench.tidy.parse.metric import CPU, FAILED, LATENCY, OPS, RUNTIME, TOOL_VERSION, Metric

TOOL = "mariadb"
FILES = (sysbench_file("{tenant}"), mariadb_counters_file("{tenant}"),
         mariadb_facts_file("{tenant}"))
METRICS = (
    TOOL_VERSION, RUNTIME, OPS, FAILED, *LATENCY,
    Metric("qps", "float64", "queries/s", "queries per second"),
    Metric("client_threads", "int64", "", "sysbench's threads"),
    Metric("client_location", "string", "", "where the client ran"),
    Metric("client_point", "string", "", "how its thread count was chosen: io-saturation, "
                                         "guest (the guest's operating point) or spec"),
    *CPU,
    Metric("db_fsyncs", "int64", "", "the server's data fsyncs over the measured phase"),
    Metric("db_fsyncs_per_s", "float64", "calls/s", "their rate"),
    Metric("db_log_fsyncs", "int64", "", "its log fsyncs (servers that count them apart)"),
    Metric("db_setup_s", "float64", "s", "the tenant's set-up: copy, start, load"),
)


@dataclass(frozen=True)
class Loaded:
    bench: SysbenchResult
    counters: Counters
    facts: dict[str, Any]


def load(folder: Path, tenant: str, workload: dict[str, Any]) -> Loaded:
    bench = parse_sysbench(folder / sysbench_file(tenant))
    if not bench.histogram:
        raise problem(bench.path, "no latency histogram (the agent runs sysbench with "
                                  "--histogram=on)")
    counters = parse_counters(folder / mariadb_counters_file(tenant))
    facts = parse_facts(folder / mariadb_facts_file(tenant))
    if facts["threads"] != bench.threads:
        raise problem(bench.path, f"{bench.threads} threads, but "
                                  f"{mariadb_facts_file(tenant)} says {facts['threads']}")
    return Loaded(bench, counters, facts)


def columns(loaded: Loaded, workload: dict[str, Any]) -> dict[str, Any]:
    bench, counters, facts = loaded.bench, loaded.counters, loaded.facts
    return {"tool_version": f"sysbench {bench.version}", "tool_runtime_s": bench.total_time_s,
            "ops_s": bench.tps, "failed_ops": bench.ignored_errors,
            "op_lat_mean_ms": bench.lat_avg_ms,
            "op_lat_p95_ms": percentile_of_counts(bench.histogram, 95),
            "op_lat_p99_ms": percentile_of_counts(bench.histogram, 99),
            "qps": bench.qps, "client_threads": bench.threads,
            "client_location": facts["client_location"],
            "client_point": client_point(facts["threads_from"]),
            "client_cpu_share": counters.client_cpu_share,
            "server_cpu_share": counters.server_cpu_share,
            "db_fsyncs": counters.data_fsyncs,
            "db_fsyncs_per_s": counters.data_fsyncs / counters.elapsed_s,
            "db_log_fsyncs": counters.log_fsyncs,
            "db_setup_s": float(facts["setup_s"]["total"])}


def per_second(loaded: Loaded) -> list[tuple[float, float, int]]:
    """(t, dt, transactions) of every --report-interval line (t since sysbench started)."""
    rows, previous = [], 0.0
    for interval in loaded.bench.intervals:
        dt = interval.t_s - previous
        rows.append((interval.t_s, dt, round(interval.tps * dt)))
        previous = interval.t_s
    return rows


def client_phase(loaded: Loaded) -> ClientPhase | None:
    """When the measured sysbench ran, and its threads, on /proc/uptime of the host or guest
    it ran in (its counters, since 2026-11-29): a VM tenant's guest seconds are its threads'
    (tidy/rows.py)."""
    return threads_phase(loaded.counters.client_phase, loaded.bench.total_time_s)


def threads_phase(client: tuple[float, float] | None,
                  total_time_s: float) -> ClientPhase | None:
    """The client's run (`client`: from the counters' `before uptime` to their `after
    uptime`) and its threads' start: sysbench's total time runs from its threads' start, once
    every thread has opened its connection (its exec timer starts when all threads are
    ready), to their end, so they started `total_time_s` before the client's end at the
    latest (its exit after them falls inside). Under TCG the start-up (its Lua script, 8
    connections) keeps the guest's vCPU busy for a second with no transaction: not the
    database's pace (2026-11-29, rule vm-db-threads; the guest point's method 3)."""
    if client is None:
        return None
    start, end = client
    return ClientPhase(start, max(start, end - total_time_s), end)
