"""sysbench 1.0 parser on real oltp_insert runs against MariaDB 10.11."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.checks import FIXTURES, assert_names_file

from journalbench.formats import ParseError
from journalbench.formats.sysbench import parse_sysbench

SB = FIXTURES / "sysbench"
INTERVALS = SB / "oltp_insert-t1-interval1.log"
HISTOGRAM = SB / "oltp_insert-t4-histogram-p99.log"
TRACED = SB / "oltp_insert-t2-interval1-traced.log"
FATAL = SB / "fatal-no-server.log"


def test_interval_report() -> None:
    result = parse_sysbench(INTERVALS)
    assert (result.version, result.threads) == ("1.0.20", 1)
    assert (result.transactions, result.tps) == (14828, 4937.19)
    assert (result.queries, result.writes, result.reads) == (14828, 14828, 0)
    assert (result.total_time_s, result.events) == (3.002, 14828)
    assert (result.lat_percentile, result.lat_pct_ms, result.lat_max_ms) == (95, 0.34, 10.6)
    assert [i.t_s for i in result.intervals] == [1.0, 2.0]
    first = result.intervals[0]
    assert (first.threads, first.tps, first.writes_s, first.lat_ms) == (1, 4345.56, 4345.56, 0.39)
    assert result.histogram == []


def test_histogram_and_other_percentile() -> None:
    result = parse_sysbench(HISTOGRAM)
    assert result.threads == 4 and result.intervals == []
    assert (result.lat_percentile, result.lat_pct_ms) == (99, 1.27)
    assert len(result.histogram) == 211
    assert result.histogram[0] == (0.102, 1) and result.histogram[-1] == (14.207, 1)
    # every event is in the histogram: nothing dropped by the row pattern
    assert sum(count for _, count in result.histogram) == result.events == 24545


def test_two_threads_three_intervals() -> None:
    result = parse_sysbench(TRACED)
    assert result.threads == 2 and len(result.intervals) == 3
    assert all(i.threads == 2 for i in result.intervals)
    assert result.tps == 5450.03 and result.transactions == 16371


def test_failed_run_names_the_fatal_line() -> None:
    with pytest.raises(ParseError) as error:
        parse_sysbench(FATAL)
    assert "unable to connect" in assert_names_file(error, FATAL, 10)


@pytest.mark.parametrize("cut_before", ["SQL statistics:", "Latency (ms):", "Threads fairness:"])
def test_truncated_report(tmp_path: Path, cut_before: str) -> None:
    text = INTERVALS.read_text()
    path = tmp_path / "sysbench-a.log"
    path.write_text(text[: text.index(cut_before)])
    with pytest.raises(ParseError) as error:
        parse_sysbench(path)
    assert "truncated" in assert_names_file(error, path, path.read_text().count("\n"))


def test_malformed_interval_line(tmp_path: Path) -> None:
    lines = INTERVALS.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith("[ 2s ]"))
    lines[number] = lines[number][:40]
    path = tmp_path / "sysbench-a.log"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as error:
        parse_sysbench(path)
    assert "interval" in assert_names_file(error, path, number + 1)


def test_missing_field(tmp_path: Path) -> None:
    text = INTERVALS.read_text().replace("    transactions:", "    transactionz:")
    path = tmp_path / "sysbench-a.log"
    path.write_text(text)
    with pytest.raises(ParseError) as error:
        parse_sysbench(path)
    assert "'transactions'" in assert_names_file(error, path)


@pytest.mark.parametrize("foreign", ["fio/seqwrite-fsync5-jsonplus.json",
                                     "ycsb/load-hdrhistogram-status.log"])
def test_foreign_file(foreign: str) -> None:
    with pytest.raises(ParseError) as error:
        parse_sysbench(FIXTURES / foreign)
    assert "not sysbench" in assert_names_file(error, FIXTURES / foreign, 1)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "sysbench-a.log"
    path.write_text("")
    with pytest.raises(ParseError) as error:
        parse_sysbench(path)
    assert "empty" in assert_names_file(error, path)
