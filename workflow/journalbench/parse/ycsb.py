"""YCSB 0.17 text output -> status records (from `-s`) and the per-operation summary.

The summary is the "[SECTION], metric, value" block YCSB prints at the end ([OVERALL],
[INSERT], [READ], [CLEANUP], GC counters, ...); status lines come from `-s`, on stderr, and are
present when the run captured stderr together with stdout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from journalbench.parse import problem, read_text

VERSION = re.compile(r"^YCSB Client (\d+\.\d+\.\d+)")
NUMBER = r"-?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN)"
SUMMARY = re.compile(rf"^\[([A-Za-z0-9_%-]+)\], ([^,]+), ({NUMBER})$")
# "2026-11-22 01:34:36:050 1 sec: 995 operations; 943 current ops/sec; ... [INSERT: Count=..]"
STATUS = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d+ (\d+) sec: (\d+) operations; "
    r"(?:(\S+) current ops/sec;)?(.*)$"
)
STATUS_OP = re.compile(r"\[([A-Z0-9_-]+)(?::| )([^\]]*)\]")
STATUS_VALUE = re.compile(r"([A-Za-z0-9.()]+)=(-?[\d.]+|NaN)")


@dataclass(frozen=True)
class Status:
    t_s: int  # seconds since the start, as YCSB prints it
    operations: int  # cumulative
    ops_s: float | None  # None for YCSB's "∞" (first status line of a fast start)
    latency: dict[str, dict[str, float]]  # per operation: Count, Avg, 99, ... (us)


@dataclass(frozen=True)
class Operation:
    name: str
    operations: int
    avg_us: float
    min_us: float
    max_us: float
    p95_us: float
    p99_us: float
    returns: dict[str, int]  # Return=OK, Return=ERROR, ... -> count


@dataclass(frozen=True)
class YcsbResult:
    path: str
    version: str
    runtime_ms: float
    throughput_ops_s: float
    operations: dict[str, Operation]  # INSERT, READ, ...; CLEANUP excluded
    status: list[Status]
    metrics: dict[str, dict[str, float]]  # every summary line, as printed


def parse_status(match: re.Match[str]) -> Status:
    rate = match[3]
    latency = {
        op[1]: {name: float(value) for name, value in STATUS_VALUE.findall(op[2])}
        for op in STATUS_OP.finditer(match[4])
    }
    return Status(int(match[1]), int(match[2]),
                  None if rate in (None, "∞", "NaN") else float(rate), latency)


def parse_ycsb(path: Path | str) -> YcsbResult:
    """A complete YCSB 0.17 run; ParseError if truncated, foreign or an operation failed."""
    path = Path(path)
    lines = read_text(path).splitlines()
    # identify the file before judging its lines, so a foreign file is called foreign
    version = next((found[1] for line in lines if (found := VERSION.match(line))), None)
    if version is None:
        raise problem(path, "not YCSB output (no 'YCSB Client x.y.z' line)")
    status: list[Status] = []
    metrics: dict[str, dict[str, float]] = {}
    for number, line in enumerate(lines, start=1):
        if line.startswith("["):
            match = SUMMARY.match(line)
            if not match:
                raise problem(path, "malformed summary line", number)
            metrics.setdefault(match[1], {})[match[2]] = float(match[3])
        elif (found := STATUS.match(line)) is not None:
            status.append(parse_status(found))
    overall = metrics.get("OVERALL")
    if not overall:
        raise problem(path, "truncated: no [OVERALL] summary (YCSB did not finish)", len(lines))
    for key in ("RunTime(ms)", "Throughput(ops/sec)"):
        if key not in overall:
            raise problem(path, f"[OVERALL] has no {key}")
    operations = {
        name: operation(path, name, values)
        for name, values in metrics.items()
        if "Operations" in values and name != "CLEANUP" and not name.endswith("-FAILED")
    }
    if not operations:
        raise problem(path, "no operation summary ([INSERT], [READ], ...)")
    return YcsbResult(str(path), version, overall["RunTime(ms)"], overall["Throughput(ops/sec)"],
                      operations, status, metrics)


def operation(path: Path, name: str, values: dict[str, float]) -> Operation:
    def need(key: str) -> float:
        if key not in values:
            raise problem(path, f"[{name}] has no {key}")
        return values[key]

    returns = {k.split("=", 1)[1]: int(v) for k, v in values.items() if k.startswith("Return=")}
    return Operation(name, int(need("Operations")), need("AverageLatency(us)"),
                     need("MinLatency(us)"), need("MaxLatency(us)"),
                     need("95thPercentileLatency(us)"), need("99thPercentileLatency(us)"),
                     returns)


def failed_operations(result: YcsbResult) -> int:
    """Operations that did not return OK (YCSB counts them, but they are no throughput)."""
    return sum(count for op in result.operations.values()
               for status, count in op.returns.items() if status != "OK")
