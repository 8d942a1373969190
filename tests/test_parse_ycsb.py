"""YCSB 0.17 parser on real runs of the core client with BasicDB (load and run phases)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.checks import FIXTURES, assert_names_file

from journalbench.formats import ParseError
from journalbench.formats.ycsb import failed_operations, parse_ycsb

YCSB = FIXTURES / "ycsb"
LOAD = YCSB / "load-hdrhistogram-status.log"
RUN = YCSB / "run-insert-histogram-t2-status.log"
FAILED = YCSB / "failed-unknown-db.log"


def test_load_phase_hdrhistogram() -> None:
    result = parse_ycsb(LOAD)
    assert result.version == "0.17.0"
    assert result.runtime_ms == 3010
    assert result.throughput_ops_s == pytest.approx(996.6777408637873)
    assert list(result.operations) == ["INSERT"]  # CLEANUP is bookkeeping, not workload
    insert = result.operations["INSERT"]
    assert (insert.operations, insert.max_us, insert.p99_us) == (3000, 212, 1)
    assert insert.returns == {"OK": 3000} and failed_operations(result) == 0
    assert len(result.status) == 5
    assert result.status[0].ops_s is None  # YCSB prints "∞" for the first, empty interval
    assert result.status[1].ops_s == 943
    assert result.status[1].latency["INSERT"]["99.9"] == 16
    assert result.status[-1].operations == insert.operations


def test_run_phase_histogram_two_threads() -> None:
    result = parse_ycsb(RUN)
    assert result.runtime_ms == 2519
    insert = result.operations["INSERT"]
    assert insert.operations == 2500 and insert.avg_us == pytest.approx(0.2548)
    assert result.metrics["INSERT"]["LatencyVariance(us)"] == pytest.approx(45.92747696000001)
    assert [s.t_s for s in result.status] == [0, 1, 2, 2]
    assert result.status[2].latency == {"INSERT": {"AverageLatency(us)": 0.01}}
    assert result.status[-1].ops_s == 971.32
    assert result.status[-1].operations == 2500


def test_failed_run_has_no_operations() -> None:
    with pytest.raises(ParseError) as error:
        parse_ycsb(FAILED)
    assert "no operation summary" in assert_names_file(error, FAILED)


def test_truncated_before_summary(tmp_path: Path) -> None:
    text = LOAD.read_text()
    path = tmp_path / "ycsb-a.log"
    path.write_text(text[: text.index("[OVERALL]")])
    with pytest.raises(ParseError) as error:
        parse_ycsb(path)
    lines = len(path.read_text().splitlines())
    assert "truncated" in assert_names_file(error, path, lines)


def test_truncated_inside_summary_line(tmp_path: Path) -> None:
    text = LOAD.read_text()
    cut = text.index("[INSERT], AverageLatency") + len("[INSERT], Avera")
    path = tmp_path / "ycsb-a.log"
    path.write_text(text[:cut])
    with pytest.raises(ParseError) as error:
        parse_ycsb(path)
    assert "malformed summary" in assert_names_file(error, path, len(text[:cut].splitlines()))


def test_missing_latency_metric(tmp_path: Path) -> None:
    path = tmp_path / "ycsb-a.log"
    path.write_text("".join(line for line in LOAD.read_text().splitlines(keepends=True)
                            if not line.startswith("[INSERT], 99th")))
    with pytest.raises(ParseError) as error:
        parse_ycsb(path)
    assert "99thPercentileLatency" in assert_names_file(error, path)


@pytest.mark.parametrize("foreign", ["sysbench/oltp_insert-t1-interval1.log",
                                     "fio/two-jobs-normal-json.out"])
def test_foreign_file(foreign: str) -> None:
    with pytest.raises(ParseError) as error:
        parse_ycsb(FIXTURES / foreign)
    assert "YCSB" in assert_names_file(error, FIXTURES / foreign)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "ycsb-a.log"
    path.write_text("\n")
    with pytest.raises(ParseError) as error:
        parse_ycsb(path)
    assert "empty" in assert_names_file(error, path)
