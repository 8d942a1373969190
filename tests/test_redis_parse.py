"""YCSB's report and its stderr (banner, status lines) in two files, as the redis workload keeps
them: real output of YCSB 0.17.0 through our binding (workflow/ycsb-redis) on a real Redis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.checks import FIXTURES, assert_names_file

from journalbench.formats import ParseError
from journalbench.formats.redis import parse_facts, redis_file
from journalbench.formats.ycsb import failed_operations, parse_ycsb, per_second
from journalbench.tidy.parse import fio as fio_columns
from journalbench.tidy.parse.metric import CPU

REPORT = FIXTURES / "ycsb" / "redis-insert-report.log"
STATUS = FIXTURES / "ycsb" / "redis-insert-status.log"


def test_report_with_its_stderr_file() -> None:
    result = parse_ycsb(REPORT, STATUS)
    assert result.version == "0.17.0"
    insert = result.operations["INSERT"]
    assert insert.operations == 20000 and failed_operations(result) == 0
    assert (insert.p95_us, insert.p99_us) == (124, 2077)
    assert [s.operations for s in result.status] == [0, 11521, 20000]
    intervals = per_second(result)
    assert [ops for _, _, ops in intervals] == [11521, 8479]
    assert intervals[0][0] == pytest.approx(0.959) and intervals[1][1] == pytest.approx(0.707)


def test_report_alone_has_no_version_and_no_status() -> None:
    result = parse_ycsb(REPORT)
    assert result.version is None and result.status == [] and per_second(result) == []
    assert result.throughput_ops_s == pytest.approx(11737.089201877934)


def test_stderr_alone_is_truncated() -> None:
    with pytest.raises(ParseError) as error:
        parse_ycsb(STATUS)
    assert "truncated" in assert_names_file(error, STATUS)


def test_missing_stderr_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as error:
        parse_ycsb(REPORT, tmp_path / "ycsb-a.stderr")
    assert "not found" in assert_names_file(error, tmp_path / "ycsb-a.stderr")


def test_report_cut_inside_a_line(tmp_path: Path) -> None:
    path = tmp_path / "ycsb-a.log"
    text = REPORT.read_text()
    path.write_text(text[: text.index("[INSERT], 95th") + 12])
    with pytest.raises(ParseError) as error:
        parse_ycsb(path, STATUS)
    assert "malformed summary" in assert_names_file(error, path, len(path.read_text().splitlines()))


def test_report_without_overall(tmp_path: Path) -> None:
    path = tmp_path / "ycsb-a.log"
    path.write_text("".join(line for line in REPORT.read_text().splitlines(keepends=True)
                            if not line.startswith("[OVERALL]")))
    with pytest.raises(ParseError) as error:
        parse_ycsb(path, STATUS)
    assert "truncated" in assert_names_file(error, path)


def test_error_returns_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "ycsb-a.log"
    path.write_text(REPORT.read_text() + "[INSERT], Return=ERROR, 3\n")
    assert failed_operations(parse_ycsb(path, STATUS)) == 3


# -- the client's and server's CPU (redis-<tenant>.json `cpu`) -----------------------------------

def redis_facts(tmp_path: Path, cpu: object) -> Path:
    facts = {"aof_bytes_end": 2, "aof_bytes_loaded": 1, "load_s": 1.0}
    if cpu is not None:
        facts["cpu"] = cpu
    (tmp_path / redis_file("kv")).write_text(json.dumps(facts))
    return tmp_path / redis_file("kv")


def redis_cpu(folder: Path, tenant: str) -> dict[str, float]:
    return parse_facts(folder / redis_file(tenant)).cpu_shares or {}


def test_cpu_shares_of_client_and_server(tmp_path: Path) -> None:
    redis_facts(tmp_path, {"client_s": 12.0, "client_wall_s": 20.0, "server_s": 5.0,
                           "server_wall_s": 20.5})
    shares = redis_cpu(tmp_path, "kv")
    assert shares == pytest.approx({"client_cpu_share": 0.6, "server_cpu_share": 5 / 20.5})
    assert not set(CPU) & set(fio_columns.METRICS)  # a fio tenant has no client or server


def test_a_run_from_before_the_cpu_was_recorded_has_no_shares(tmp_path: Path) -> None:
    redis_facts(tmp_path, None)
    assert redis_cpu(tmp_path, "kv") == {}


@pytest.mark.parametrize("cpu, message", [
    ([1, 2], "'cpu' is not an object"),
    ({"client_s": 1.0, "client_wall_s": 0, "server_s": 1.0, "server_wall_s": 1.0},
     "cpu client_s 1.0 over client_wall_s 0"),
    ({"client_s": 1.0, "client_wall_s": 1.0, "server_s": 1.0}, "server_wall_s"),
])
def test_bad_cpu_facts_name_the_file(tmp_path: Path, cpu: object, message: str) -> None:
    path = redis_facts(tmp_path, cpu)
    with pytest.raises(ParseError) as error:
        redis_cpu(tmp_path, "kv")
    assert message in assert_names_file(error, path)
