"""sysbench 1.0 text output of an OLTP test (e.g. oltp_insert) -> interval and summary records.

Reads the interval lines of `--report-interval` ("[ 1s ] thds: ... tps: ..."), the optional
`--histogram` table, and the final report (SQL statistics, General statistics, Latency).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from journalbench.formats import problem, read_text


# the file of a tenant's output in its run folder
def sysbench_file(tenant: str) -> str:
    return f"sysbench-{tenant}.log"


NUM = r"(\d+(?:\.\d+)?)"
BANNER = re.compile(r"^sysbench (1\.0\.\d+)")
INTERVAL = re.compile(
    rf"^\[ {NUM}s \] thds: (\d+) tps: {NUM} qps: {NUM} \(r/w/o: {NUM}/{NUM}/{NUM}\) "
    rf"lat \(ms,{NUM}%\): {NUM} err/s: {NUM} reconn/s: {NUM}$"
)
# with --rate sysbench adds a line per interval about its event queue
QUEUE = re.compile(rf"^\[ {NUM}s \] queue length: \d+, concurrency: \d+$")
HISTOGRAM_ROW = re.compile(rf"^\s*{NUM} \|\**\s+(\d+)$")
# "    transactions:   14828  (4937.19 per sec.)" and "    total time:   3.0020s"
FIELD = re.compile(rf"^\s+([A-Za-z0-9][A-Za-z0-9 ()/.,]*?):\s+{NUM}s?(?:\s+\({NUM} per sec\.\))?$")
PERCENTILE = re.compile(r"^(\d+)(?:st|nd|rd|th) percentile$")
SECTIONS = ("SQL statistics:", "General statistics:", "Latency (ms):", "Threads fairness:")


@dataclass(frozen=True)
class Interval:
    t_s: float
    threads: int
    tps: float
    qps: float
    reads_s: float
    writes_s: float
    other_s: float
    lat_percentile: float
    lat_ms: float
    errors_s: float
    reconnects_s: float


@dataclass(frozen=True)
class SysbenchResult:
    path: str
    version: str
    threads: int
    intervals: list[Interval]
    transactions: int
    tps: float
    queries: int
    qps: float
    writes: int
    reads: int
    ignored_errors: int
    reconnects: int
    total_time_s: float
    events: int
    lat_min_ms: float
    lat_avg_ms: float
    lat_max_ms: float
    lat_percentile: float  # which percentile sysbench reported (--percentile, default 95)
    lat_pct_ms: float
    histogram: list[tuple[float, int]]  # (latency ms, events); empty without --histogram


def parse_sysbench(path: Path | str) -> SysbenchResult:
    """A complete sysbench 1.0 OLTP report; ParseError if truncated, failed or foreign."""
    path = Path(path)
    lines = read_text(path).splitlines()
    banner = BANNER.match(lines[0])
    if not banner:
        raise problem(path, "not sysbench 1.0 output (no 'sysbench 1.0.x' banner)", 1)
    threads = None
    intervals: list[Interval] = []
    histogram: list[tuple[float, int]] = []
    fields: dict[str, dict[str, float]] = {}
    section = None
    for number, line in enumerate(lines, start=1):
        if line.startswith("FATAL") or line.startswith("Error in"):
            raise problem(path, f"sysbench failed: {line}", number)
        if line.startswith("Number of threads:"):
            threads = int(line.split(":")[1])
        elif line.startswith("[ "):
            match = INTERVAL.match(line)
            if match:
                values = match.groups()
                intervals.append(Interval(
                    float(values[0]), int(values[1]), *(float(v) for v in values[2:7]),
                    float(values[7]), float(values[8]), float(values[9]), float(values[10])))
            elif not QUEUE.match(line):
                raise problem(path, "malformed interval line", number)
        elif line.startswith("Latency histogram"):
            section = "histogram"
        elif line in SECTIONS:
            section = line
            fields.setdefault(line, {})
        elif section == "histogram" and (row := HISTOGRAM_ROW.match(line)):
            histogram.append((float(row[1]), int(row[2])))
        elif section in SECTIONS and (field := FIELD.match(line)):
            fields[section][field[1]] = float(field[2])
            if field[3] is not None:
                fields[section][field[1] + " per sec."] = float(field[3])
    return build(path, banner[1], threads, intervals, histogram, fields, len(lines))


def build(path: Path, version: str, threads: int | None, intervals: list[Interval],
          histogram: list[tuple[float, int]], fields: dict[str, dict[str, float]],
          n_lines: int) -> SysbenchResult:
    def need(section: str, name: str) -> float:
        if section not in fields:
            raise problem(path, f"truncated: no '{section}' section (sysbench did not finish)",
                          n_lines)
        if name not in fields[section]:
            raise problem(path, f"'{section}' has no '{name}' line")
        return fields[section][name]

    # a killed sysbench stops before its final report: say so rather than name a missing field
    if "Threads fairness:" not in fields:
        raise problem(path, "truncated: no final report (sysbench did not finish)", n_lines)
    if threads is None:
        raise problem(path, "no 'Number of threads:' line")
    latency = fields.get("Latency (ms):", {})
    percentiles = [(float(m[1]), value) for name, value in latency.items()
                   if (m := PERCENTILE.match(name))]
    if len(percentiles) != 1:
        raise problem(path, "'Latency (ms):' has no 'Nth percentile' line")
    return SysbenchResult(
        path=str(path),
        version=version,
        threads=threads,
        intervals=intervals,
        transactions=int(need("SQL statistics:", "transactions")),
        tps=need("SQL statistics:", "transactions per sec."),
        queries=int(need("SQL statistics:", "queries")),
        qps=need("SQL statistics:", "queries per sec."),
        writes=int(need("SQL statistics:", "write")),
        reads=int(need("SQL statistics:", "read")),
        ignored_errors=int(need("SQL statistics:", "ignored errors")),
        reconnects=int(need("SQL statistics:", "reconnects")),
        total_time_s=need("General statistics:", "total time"),
        events=int(need("General statistics:", "total number of events")),
        lat_min_ms=need("Latency (ms):", "min"),
        lat_avg_ms=need("Latency (ms):", "avg"),
        lat_max_ms=need("Latency (ms):", "max"),
        lat_percentile=percentiles[0][0],
        lat_pct_ms=percentiles[0][1],
        histogram=histogram,
    )
