"""The fsync tracer probe (bpftrace running fsync.bt) on a real process, as a workload uses it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from journalbench.agent.probes import FsyncTracer
from journalbench.agent.sampler import remove_tracers_under, tracers_under
from journalbench.errors import AgentError
from journalbench.formats.fsync import parse_fsync

pytestmark = pytest.mark.root

FSYNCER = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
sys.stdin.readline()
for i in range(12):
    os.write(fd, b"x" * 4096)
    os.fsync(fd) if i % 3 else os.fdatasync(fd)
print("done", flush=True)
sys.stdin.readline()
"""


def test_tracer_summarises_the_fsyncs_of_a_process(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", FSYNCER, str(tmp_path / "data")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tracer = FsyncTracer(tmp_path / "fsync-a.txt", tmp_path, pids=(child.pid,))
    try:
        tracer.start()
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done\n"
    finally:
        tracer.stop()
        child.stdin.close()
        child.wait(timeout=10)
    assert tracer.proc is not None and tracer.proc.poll() is not None  # no bpftrace left
    trace = parse_fsync(tmp_path / "fsync-a.txt")
    assert trace.pids == (child.pid,)
    assert trace.syscalls["fdatasync"].calls == 4 and trace.syscalls["fsync"].calls == 8


def test_tracer_needs_a_target(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="cgroup id or 1-8 pids"):
        FsyncTracer(tmp_path / "x.txt", tmp_path)
    with pytest.raises(AgentError, match="cgroup id or 1-8 pids"):
        FsyncTracer(tmp_path / "x.txt", tmp_path, pids=tuple(range(1, 10)))


def test_teardown_finds_a_tracer_a_killed_agent_left(tmp_path: Path) -> None:
    """A tracer whose agent died (kill -9 leaves bpftrace running) is found by its script under
    the state root, and removed with it; one of another root is not touched."""
    root, other = tmp_path / "root", tmp_path / "other"
    root.mkdir()
    other.mkdir()
    left = FsyncTracer(root / "fsync-a.txt", root, pids=(os.getpid(),))
    kept = FsyncTracer(other / "fsync-b.txt", other, pids=(os.getpid(),))
    try:
        left.start()
        kept.start()
        assert tracers_under(root) == [left.proc.pid]
        remove_tracers_under(root)
        assert left.proc.wait(timeout=10) is not None
        assert tracers_under(root) == []
        assert kept.proc.poll() is None and tracers_under(other) == [kept.proc.pid]
    finally:  # as teardown does: SIGKILL, not stop()'s SIGINT and summary
        remove_tracers_under(root)
        remove_tracers_under(other)
    assert tracers_under(root) == tracers_under(other) == []
