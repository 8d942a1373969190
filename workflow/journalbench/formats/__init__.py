"""Readers of the raw files a run folder holds -> plain records (dataclasses of numbers).

The agent checks its own outputs with them before a run lands (a run tidy could not read is
never landed), and tidy reads every run with them: so they sit below both, stdlib only, and
ship in the agent's bundle.

Every parser reads one file and either returns complete records or raises ParseError, whose
message is one line naming the file (and the line where that helps). A parser never fills a
missing figure with zero or NaN: a field is None only where the tool itself has no value for
it (e.g. fsync latency of a job that issued no fsync), and the docstrings say where.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from journalbench.errors import ConfigError

DECODER = json.JSONDecoder()


class ParseError(ConfigError):
    """A raw tool output that cannot be read: one line naming the file (and line)."""


def problem(path: Path | str, message: str, line: int | None = None) -> ParseError:
    where = f"{path}:{line}" if line is not None else f"{path}"
    # one line whatever the tool or exception put in the message
    return ParseError(f"{where}: {' '.join(str(message).split())}")


def read_text(path: Path | str) -> str:
    """The file's text; ParseError if it is missing, empty or not text."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise problem(path, "file not found") from None
    except OSError as error:
        raise problem(path, f"cannot read ({error.strerror})") from None
    if not data.strip():
        raise problem(path, "empty file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise problem(path, f"not UTF-8 text (byte {error.start})") from None


def json_lines(path: Path, check: Callable[[Any], str | None]) -> list[dict[str, Any]]:
    """Every line of a JSON-lines file, each passed through `check` (which says what is wrong
    with a decoded line, or None); ParseError naming the file and line of the first bad one."""
    rows = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        try:
            row, end = DECODER.raw_decode(line)  # json.loads' own step, without its wrapping
            if end != len(line):  # space or more after the value: json.loads decides
                row = json.loads(line)
        except json.JSONDecodeError:
            try:
                row = json.loads(line)  # its message, for a line raw_decode refused
            except json.JSONDecodeError as error:
                raise problem(path, f"not a JSON object ({error.msg})", number) from None
        wrong = check(row)
        if wrong:
            raise problem(path, wrong, number)
        rows.append(row)
    return rows


def percentile_of_counts(counts: Iterable[tuple[float, int]], percent: float) -> float:
    """The smallest value whose cumulative count reaches percent% of the total.

    This is the rule fio applies to its own latency bins, so the same rule on bins merged
    from several jobs (or on bpftrace buckets) gives figures comparable with fio's.
    """
    ordered = sorted((value, count) for value, count in counts if count > 0)
    total = sum(count for _, count in ordered)
    if total == 0:
        raise ValueError("percentile of an empty histogram")
    threshold = total * percent / 100.0
    running = 0
    for value, count in ordered:
        running += count
        if running >= threshold:
            return value
    return ordered[-1][0]
