"""The mariadb workload's pure parts: the thread choice, the command lines, the schema branch,
and the parser of its counters (on a real counters file of a shared-journal run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.checks import FIXTURES, assert_names_file

from journalbench.agent.workloads import guest_point, mariadb_calibrate, mariadb_server
from journalbench.agent.workloads.mariadb import measured_script
from journalbench.formats import ParseError
from journalbench.formats.fsync import parse_fsync
from journalbench.formats.mariadb import parse_counters, parse_facts
from journalbench.formats.sysbench import parse_sysbench
from journalbench.tidy.rows import CPU_BOUND_SHARE, cpu_bound

COUNTERS = FIXTURES / "mariadb" / "counters-shared-journal-t2.txt"
FACTS = FIXTURES / "mariadb" / "facts-shared-journal-t2.json"
TRACE = FIXTURES / "fsync" / "mariadb-sysbench-cgroup.txt"
REPORT = FIXTURES / "sysbench" / "oltp_insert-t2-interval1-histogram.log"
SCHEMA = Path(__file__).resolve().parent.parent / "workflow" / "schemas"


@pytest.mark.parametrize("steps, chosen", [
    ([(1, 100.0)], 1),
    ([(1, 100.0), (2, 104.9)], 1),  # under 5%: the second thread only queues
    ([(1, 100.0), (2, 105.0), (4, 150.0), (8, 151.0)], 4),
    ([(1, 100.0), (2, 90.0), (4, 300.0)], 1),  # the first doubling that does not gain ends it
])
def test_thread_choice(steps, chosen):
    assert mariadb_calibrate.choose(steps) == chosen


def test_server_listens_only_on_its_own_socket_and_reads_no_host_config():
    argv = mariadb_server.server_argv("/mnt/mariadb", "/run")
    assert argv[:2] == ["mariadbd", "--no-defaults"]  # --no-defaults must come first
    assert "--skip-networking" in argv and "--socket=/run/mariadb.sock" in argv
    assert {"--innodb-flush-method=O_DIRECT", "--innodb-flush-log-at-trx-commit=1",
            f"--innodb-buffer-pool-size={mariadb_server.BUFFER_POOL_MB}M"} <= set(argv)


def test_measured_script_warms_up_apart_and_times_the_client():
    script = measured_script("/run", 10, 100000, 4, 20, warmup_s=3)
    warm, measured = [line for line in script.splitlines() if "oltp_insert" in line]
    assert "--time=3" in warm and "> /run/sysbench-warmup.log" in warm
    assert measured.startswith("{ time sysbench") and "--time=20" in measured
    assert "--report-interval=1" in measured and "--histogram=on" in measured
    assert "--time=" not in measured_script("/run", 1, 100, 1, 5).splitlines()[0]


def test_schema_branch_defaults_are_the_modules():
    workload = json.loads((SCHEMA / "run-spec.schema.json").read_text())["$defs"]["workload"]
    (branch,) = [b["then"]["properties"] for b in workload["allOf"]
                 if b["if"]["properties"]["tool"].get("const") == "mariadb"]
    assert branch["tables"]["default"] == mariadb_server.TABLES
    assert branch["table_size"]["default"] == mariadb_server.TABLE_SIZE
    count, point = branch["threads"]["oneOf"]
    assert count["maximum"] == mariadb_calibrate.MAX_THREADS == max(guest_point.LADDER)
    assert point["const"] == guest_point.GUEST


def test_counters_of_a_real_run():
    counters = parse_counters(COUNTERS)
    assert counters.clk_tck == 100
    assert counters.data_fsyncs == 4994 - 3
    assert counters.log_fsyncs is None  # MariaDB 10.11 has no Innodb_os_log_fsyncs
    assert counters.elapsed_s == pytest.approx(1795350881.801701271 - 1795350877.746156934)
    assert counters.server_cpu_share == pytest.approx((27 + 21 - 2 - 3) / 100 /
                                                      counters.elapsed_s)
    assert counters.client_cpu_share == pytest.approx((0.078 + 0.013) / 4.026)
    # the same run's tracer saw exactly the fdatasync calls InnoDB counted
    assert parse_fsync(TRACE).count == counters.data_fsyncs
    assert parse_sysbench(REPORT).threads == parse_facts(FACTS)["threads"] == 2


def test_measured_script_reads_the_uptime_right_around_the_measured_client():
    """The client's run is bounded on /proc/uptime by bash's own `read` (no process started),
    after the snapshot before it and before the snapshot after it."""
    steps = measured_script("/run", 10, 100000, 4, 20, warmup_s=3).splitlines()
    measured = next(i for i, line in enumerate(steps) if line.startswith("{ time sysbench"))
    assert steps[measured - 2].endswith("snap before; uptime before; } > "
                                        "/run/mariadb-counters.txt")
    assert steps[measured + 1].startswith("{ uptime after; snap after; echo end; }")
    assert "read -r up _ < /proc/uptime" in next(s for s in steps if s.startswith("uptime()"))


def with_phase(tmp_path, before: str, after: str | None) -> Path:
    """The real counters with the uptime lines of a run since 2026-11-29."""
    lines = COUNTERS.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith("client_cpu"))
    lines.insert(cut, f"before uptime {before}")
    if after is not None:
        lines.insert(cut + 2, f"after uptime {after}")
    path = tmp_path / "mariadb-victim-counters.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_counters_bound_the_clients_run_on_the_uptime(tmp_path):
    assert parse_counters(COUNTERS).client_phase is None  # a run before the lines existed
    assert parse_counters(with_phase(tmp_path, "812.34", "816.40")).client_phase == (
        812.34, 816.40)
    with pytest.raises(ParseError, match="an 'uptime' line before the client without one"):
        parse_counters(with_phase(tmp_path, "812.34", None))
    with pytest.raises(ParseError, match="'after uptime' 800.0 is not after"):
        parse_counters(with_phase(tmp_path, "812.34", "800.0"))
    with pytest.raises(ParseError, match="'before uptime' is 'x'"):
        parse_counters(with_phase(tmp_path, "x", "816.40"))


def test_truncated_counters(tmp_path):
    lines = COUNTERS.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith("client_cpu"))
    path = tmp_path / "mariadb-victim-counters.txt"
    path.write_text("\n".join(lines[:cut]) + "\n")
    with pytest.raises(ParseError) as error:
        parse_counters(path)
    assert "truncated" in assert_names_file(error, path, cut)


def test_counters_without_the_fsync_counter(tmp_path):
    path = tmp_path / "mariadb-victim-counters.txt"
    path.write_text("".join(line for line in COUNTERS.read_text().splitlines(keepends=True)
                            if "Innodb_data_fsyncs" not in line))
    with pytest.raises(ParseError) as error:
        _ = parse_counters(path).data_fsyncs
    assert "Innodb_data_fsyncs" in assert_names_file(error, path)


@pytest.mark.parametrize("line, why", [
    ("before status \t ", "a status line without a name"),
    ("clk_tck", "unexpected line"),
    ("after", "unexpected line"),
])
def test_a_malformed_counters_line_is_named(tmp_path, line, why):
    """A status line without a name, or a line of neither phase nor a client's figure, is a
    ParseError naming the file and the line (before: a ValueError or an IndexError)."""
    lines = COUNTERS.read_text().splitlines()
    lines.insert(5, line)
    path = tmp_path / "mariadb-victim-counters.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as error:
        parse_counters(path)
    assert why in assert_names_file(error, path, 6)


def test_a_status_line_keeps_its_value_as_written(tmp_path):
    """SHOW GLOBAL STATUS's name, whitespace, value: the value stripped, none kept as ""; a
    name given twice keeps its last value."""
    lines = COUNTERS.read_text().splitlines()
    lines[5:5] = ["before status Spaced_value \t  a b  ", "before status Valueless",
                  "before status Twice 1", "before status Twice 2"]
    path = tmp_path / "mariadb-victim-counters.txt"
    path.write_text("\n".join(lines) + "\n")
    status = parse_counters(path).before.status
    assert (status["Spaced_value"], status["Valueless"], status["Twice"]) == ("a b", "", "2")
    assert status["Innodb_data_fsyncs"] == parse_counters(COUNTERS).before.status[
        "Innodb_data_fsyncs"]


def test_facts_missing_a_field(tmp_path):
    facts = json.loads(FACTS.read_text())
    del facts["client_location"]
    path = tmp_path / "mariadb-victim.json"
    path.write_text(json.dumps(facts))
    with pytest.raises(ParseError) as error:
        parse_facts(path)
    assert "client_location" in assert_names_file(error, path)


@pytest.mark.parametrize("guest, client, server, flag", [
    (None, None, None, None),  # a fio tenant in a container: nothing measured
    (None, 0.3, CPU_BOUND_SHARE - 0.3 - 0.01, 0),
    (None, 0.3, CPU_BOUND_SHARE - 0.3, 1),
    (1, 0.1, 0.1, 1),  # the guest's own flag stands
    (0, None, None, 0),
])
def test_cpu_bound(guest, client, server, flag):
    row = {"cpu_bound": guest, "client_cpu_share": client, "server_cpu_share": server}
    assert cpu_bound(row) == flag
