"""YCSB 0.17 text output -> status records (from `-s`) and the per-operation summary.

The summary is the "[SECTION], metric, value" block YCSB prints at the end ([OVERALL],
[INSERT], [READ], [CLEANUP], GC counters, ...), on stdout. The banner ("YCSB Client x.y.z") and
the status lines of `-s` go to stderr: give that file as `banner` when the run kept the two
apart (the agent does); a run that captured both in one file needs no second file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from journalbench.formats import problem, read_text


# the file of a tenant's output in its run folder
def ycsb_file(tenant: str) -> str:
    return f"ycsb-{tenant}.log"


def ycsb_stderr(tenant: str) -> str:
    """YCSB's stderr: its banner and the status line of every second."""
    return f"ycsb-{tenant}.stderr"


VERSION = re.compile(r"^YCSB Client (\d+\.\d+\.\d+)")
NUMBER = r"-?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN)"
SUMMARY = re.compile(rf"^\[([A-Za-z0-9_%-]+)\], ([^,]+), ({NUMBER})$")
# "2026-11-22 01:34:36:050 1 sec: 995 operations; 943 current ops/sec; ... [INSERT: Count=..]"
STATUS = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d+) (\d+) sec: (\d+) operations; "
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
    at_s: float = 0.0  # the line's wall-clock time stamp (ms resolution), as epoch seconds


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
    version: str | None  # None: the banner was in a file not given
    runtime_ms: float
    throughput_ops_s: float
    operations: dict[str, Operation]  # INSERT, READ, ...; CLEANUP excluded
    status: list[Status]
    metrics: dict[str, dict[str, float]]  # every summary line, as printed


def parse_status(match: re.Match[str]) -> Status:
    rate = match[4]
    latency = {
        op[1]: {name: float(value) for name, value in STATUS_VALUE.findall(op[2])}
        for op in STATUS_OP.finditer(match[5])
    }
    at = datetime.strptime(match[1][:19], "%Y-%m-%d %H:%M:%S").timestamp()
    return Status(int(match[2]), int(match[3]),
                  None if rate in (None, "∞", "NaN") else float(rate), latency,
                  at + int(match[1][20:]) / 1000)


def status_lines(lines: list[str]) -> list[Status]:
    return [parse_status(found) for line in lines if (found := STATUS.match(line)) is not None]


def parse_ycsb(path: Path | str, banner: Path | str | None = None) -> YcsbResult:
    """A complete YCSB 0.17 run, from its report (`path`) and, when YCSB's stderr went to
    another file, that file (`banner`: version and status lines). ParseError if truncated or
    foreign; failed operations are counted (`failed_operations`), not refused."""
    path = Path(path)
    lines = read_text(path).splitlines()
    banner_lines = read_text(banner).splitlines() if banner is not None else []
    # identify the file before judging its lines, so a foreign file is called foreign
    version = next((found[1] for line in lines + banner_lines
                    if (found := VERSION.match(line))), None)
    if version is None and not any(SUMMARY.match(line) for line in lines):
        raise problem(path, "not YCSB output (no 'YCSB Client x.y.z' line and no "
                            "'[SECTION], metric, value' summary)")
    status = status_lines(banner_lines) if banner is not None else []
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


def per_second(result: YcsbResult) -> list[tuple[float, float, int]]:
    """(t, dt, operations) of every interval between status lines; t is the interval's end in
    seconds since the first status line (YCSB prints one as it starts measuring)."""
    if not result.status:
        return []
    first = result.status[0]
    return [(now.at_s - first.at_s, now.at_s - before.at_s, now.operations - before.operations)
            for before, now in zip(result.status, result.status[1:], strict=False)]
