"""Parser of fsync.bt summaries, on real bpftrace 0.17 traces of fio and MariaDB; and fsync.bt
itself, run for real around a process that fsyncs (root)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.checks import FIXTURES, assert_names_file

from journalbench.formats import ParseError
from journalbench.formats.fio import parse_fio, summarise
from journalbench.formats.fsync import bucket_width, midpoint, parse_fsync

FSYNC = FIXTURES / "fsync"
FIO_TRACE = FSYNC / "fio-fsync5-pid.txt"
IDLE_TRACE = FSYNC / "fio-nofsync-pid.txt"
MARIADB_TRACE = FSYNC / "mariadbd-sysbench-pid.txt"
SCRIPT = (Path(__file__).resolve().parent.parent / "workflow" / "journalbench" / "agent"
          / "workloads" / "fsync.bt")


def test_fio_trace_agrees_with_fio() -> None:
    trace = parse_fsync(FIO_TRACE)
    fio = summarise(parse_fio(FIXTURES / "fio" / "traced-fsync5-jsonplus.json"))
    assert trace.pids == (11010,) and trace.cgroup == 0
    assert set(trace.syscalls) == {"fsync"}
    # the same run seen from both sides: same calls; fio times them from user space, around
    # the syscall the kernel-side trace times, so its mean can only be larger
    assert trace.count == fio.fsync_count == 12
    assert trace.mean_ns == pytest.approx(2567996 / 12)
    assert trace.mean_ns <= fio.fsync_mean_ns
    assert trace.per_s == pytest.approx(12 / 7.390946807)


def test_percentiles_are_bucket_midpoints_within_min_and_max() -> None:
    trace = parse_fsync(FIO_TRACE)
    fsync = trace.syscalls["fsync"]
    assert fsync.min_ns <= trace.percentile_ns(50) <= trace.percentile_ns(99) <= fsync.max_ns
    # 12 calls: p50 is the 6th smallest, which sits in bucket [139264, 139264 + 8192)
    assert trace.percentile_ns(50) == midpoint(139264) == 139264 + (8192 - 1) / 2
    # p99 is the 12th: the slowest call, alone in bucket [917504, 917504 + 32768)
    assert trace.percentile_ns(99) == midpoint(917504) == 917504 + (32768 - 1) / 2
    assert 917504 <= fsync.max_ns < 917504 + 32768


def test_percentile_clamped_to_the_slowest_call(tmp_path: Path) -> None:
    # a midpoint above the slowest call seen would report a latency nobody had
    text = FIO_TRACE.read_text().replace("@max_ns[fsync]: 939417", "@max_ns[fsync]: 920000")
    path = tmp_path / "fsync-a.txt"
    path.write_text(text)
    assert parse_fsync(path).percentile_ns(99) == 920000


def test_mariadb_trace_fdatasync_only() -> None:
    trace = parse_fsync(MARIADB_TRACE)
    assert set(trace.syscalls) == {"fdatasync"}
    entry = trace.syscalls["fdatasync"]
    assert entry.calls == trace.count == 16245 and entry.errors == 0
    assert sum(entry.buckets.values()) == entry.calls
    assert trace.mean_ns == pytest.approx(1028151799 / 16245)
    assert entry.min_ns <= trace.percentile_ns(50) <= trace.mean_ns * 2


def test_no_calls_gives_none_not_zero() -> None:
    trace = parse_fsync(IDLE_TRACE)
    assert trace.count == 0 and trace.per_s == 0
    assert trace.mean_ns is None and trace.percentile_ns(99) is None


@pytest.mark.parametrize("path", sorted(FSYNC.iterdir()), ids=lambda p: p.name)
def test_bucket_bounds_follow_the_scripts_rule(path: Path) -> None:
    for entry in parse_fsync(path).syscalls.values():
        for low in entry.buckets:
            width = bucket_width(low)
            assert low % width == 0 and (low < 16 or 16 <= low // width < 32)


def test_bucket_width() -> None:
    assert [bucket_width(v) for v in (1, 15, 16, 31, 32, 63, 64, 1 << 20)] == [
        1, 1, 1, 1, 2, 2, 4, 1 << 16]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_truncated_without_footer(tmp_path: Path) -> None:
    lines = FIO_TRACE.read_text().splitlines()
    path = write_lines(tmp_path / "fsync-a.txt", lines[: lines.index("end")])
    with pytest.raises(ParseError) as error:
        parse_fsync(path)
    assert "truncated" in assert_names_file(error, path, lines.index("end"))


def test_inconsistent_buckets(tmp_path: Path) -> None:
    lines = [line for line in FIO_TRACE.read_text().splitlines()
             if "@bucket_ns[fsync, 172032]" not in line]
    path = write_lines(tmp_path / "fsync-a.txt", lines)
    with pytest.raises(ParseError) as error:
        parse_fsync(path)
    assert "12 calls but 11 in buckets" in assert_names_file(error, path)


def test_unexpected_line(tmp_path: Path) -> None:
    lines = FIO_TRACE.read_text().splitlines()
    lines.insert(3, "@calls[sync]: 4")
    path = write_lines(tmp_path / "fsync-a.txt", lines)
    with pytest.raises(ParseError) as error:
        parse_fsync(path)
    assert "unexpected line" in assert_names_file(error, path, 4)


def test_unknown_version(tmp_path: Path) -> None:
    lines = FIO_TRACE.read_text().splitlines()
    lines[0] = lines[0].replace("journalbench-fsync 1", "journalbench-fsync 9")
    path = write_lines(tmp_path / "fsync-a.txt", lines)
    with pytest.raises(ParseError) as error:
        parse_fsync(path)
    assert "version 9" in assert_names_file(error, path, 1)


@pytest.mark.parametrize("foreign", ["sysbench/oltp_insert-t1-interval1.log",
                                     "fio/seqwrite-fsync5-jsonplus.json"])
def test_foreign_file(foreign: str) -> None:
    with pytest.raises(ParseError) as error:
        parse_fsync(FIXTURES / foreign)
    assert "not an fsync.bt summary" in assert_names_file(error, FIXTURES / foreign, 1)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "fsync-a.txt"
    path.write_text("")
    with pytest.raises(ParseError) as error:
        parse_fsync(path)
    assert "empty" in assert_names_file(error, path)


FSYNCER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
sys.stdin.readline()  # wait until bpftrace is attached
for i in range(20):
    os.write(fd, b"x" * 4096)
    os.fsync(fd) if i % 2 else os.fdatasync(fd)
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def tracefs():
    """bpftrace finds tracepoints through tracefs, which a fresh machine may not mount; mount it
    the way the agent does, and unmount it afterwards if we mounted it."""
    from journalbench.agent.sampler import TRACEFS, ensure_tracefs

    mounted = ensure_tracefs()
    yield
    if mounted:
        subprocess.run(["umount", str(TRACEFS)], check=True)


@pytest.mark.root
def test_script_traces_a_real_process(tmp_path: Path, tracefs) -> None:
    bpftrace = shutil.which("bpftrace")
    assert bpftrace, "bpftrace is not installed (make test installs it)"
    child = subprocess.Popen([sys.executable, "-c", FSYNCER, str(tmp_path / "data")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out = tmp_path / "fsync-a.txt"
    with out.open("w") as handle:
        tracer = subprocess.Popen([bpftrace, "-q", str(SCRIPT), "0", str(child.pid)],
                                  stdout=handle, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while "journalbench-fsync" not in out.read_text():
            assert tracer.poll() is None, tracer.stderr.read()
            assert time.monotonic() < deadline, "bpftrace did not start"
            time.sleep(0.1)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done\n"
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)
        child.stdin.close()
        child.wait(timeout=10)
    trace = parse_fsync(out)
    assert trace.pids == (child.pid,)
    assert trace.syscalls["fsync"].calls == 10 and trace.syscalls["fdatasync"].calls == 10
    assert trace.count == 20 and trace.mean_ns > 0
    assert os.path.getsize(tmp_path / "data") == 20 * 4096


def test_a_second_whose_min_bpftrace_did_not_print_is_restored() -> None:
    """A real trace (Redis's AOF beside a buffered no-fsync writer on the emulated HDD): the
    second holding a 6.79 s fdatasync has its calls, sum, max and bucket but no min line, as
    bpftrace prints no min() of 2^32 ns or more; one call's min is its sum."""
    path = FSYNC / "redis-aof-hdd-stall.txt"
    assert "@sec_min_ns[fdatasync, 14]" not in path.read_text()
    summary = parse_fsync(path)
    stalled = summary.seconds[14]["fdatasync"]
    assert stalled.calls == 1 and stalled.min_ns == stalled.max_ns == 6788828211
    whole = summary.within(summary.t0_ns, summary.t0_ns + 30 * 10**9)
    assert whole.count == 8 and whole.syscalls["fdatasync"].min_ns == 46769315
    assert whole.syscalls["fdatasync"].max_ns == 6788828211
