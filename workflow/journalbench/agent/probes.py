"""Probes a workload may run beside its measured phase. One so far: the bpftrace fsync tracer
(`workloads/fsync.bt`), which summarises fsync/fdatasync latency of a cgroup (v2 id) or of up to
eight processes into `fsync-<tenant>.txt` (parsed by journalbench.formats.fsync)."""

from __future__ import annotations

import importlib.resources
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from journalbench.agent.requires import Tool
from journalbench.agent.sampler import ensure_tracefs
from journalbench.agent.system import log
from journalbench.errors import AgentError

TOOLS = (Tool("bpftrace", "bpftrace", False, "fsync latency of database workloads"),)
SCRIPT = "fsync.bt"  # in journalbench.agent.workloads, read as a resource: the agent is a zipapp
MAX_PIDS = 8
HEADER = "journalbench-fsync"
TRACER_SUFFIX = ".bt"
# fsync.bt keeps its latency buckets per second (for the measurement window): an hour of a
# database's fsyncs spread over 30-odd buckets outgrows bpftrace's default 4096 keys a map; a
# map that still fills is caught by the parser (the seconds no longer add up to the whole)
MAP_KEYS = {"BPFTRACE_MAP_KEYS_MAX": "262144"}


def script_name(out: Path, root: Path) -> str:
    """`.fsync-<tenant>.<host>.bt`: beside the run folder's summary (a script kept in the state
    root itself made bpftrace miss SIGINT beside a database tenant), marked with the host."""
    return f".{out.stem}.{root.name}{TRACER_SUFFIX}"


class FsyncTracer:
    """bpftrace running fsync.bt on a cgroup v2 id, or (id 0) on the given pids."""

    def __init__(self, out: Path, root: Path, cgroup_id: int = 0,
                 pids: tuple[int, ...] = ()) -> None:
        """`out` is the run-folder file of the summary; the script is written beside it, named
        for the host's state root `root` (so teardown finds a tracer a killed agent left by
        bpftrace's command line), and removed when the tracer stops."""
        if not cgroup_id and not 1 <= len(pids) <= MAX_PIDS:
            raise AgentError(f"fsync tracer: give a cgroup id or 1-{MAX_PIDS} pids, got {pids}")
        self.out = out
        self.root = root
        self.argv = [str(cgroup_id), *(str(p) for p in pids)]
        self.proc: subprocess.Popen[str] | None = None
        self.script: Path | None = None

    def start(self, timeout_s: float = 60) -> None:
        """Start bpftrace and wait until its probes are attached (it prints its header)."""
        bpftrace = shutil.which("bpftrace")
        if bpftrace is None:
            raise AgentError("fsync tracer: bpftrace is not installed (Debian package bpftrace)")
        ensure_tracefs()
        script = self.out.with_name(script_name(self.out, self.root))
        script.write_text(
            importlib.resources.files("journalbench.agent.workloads").joinpath(SCRIPT).read_text())
        self.script = script
        with self.out.open("w") as handle:
            self.proc = subprocess.Popen([bpftrace, "-q", str(script), *self.argv],
                                         stdout=handle, stderr=subprocess.PIPE, text=True,
                                         env={**os.environ, **MAP_KEYS})
        deadline = time.monotonic() + timeout_s
        while HEADER not in self.out.read_text():
            if self.proc.poll() is not None:
                raise AgentError(f"fsync tracer exited {self.proc.returncode}: "
                                 f"{self.proc.stderr.read().strip() if self.proc.stderr else ''}")
            if time.monotonic() > deadline:
                self.stop()
                raise AgentError(f"fsync tracer did not attach within {timeout_s:.0f} s")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGINT makes bpftrace print its summary (the END block) and exit."""
        if self.script is not None:
            self.script.unlink(missing_ok=True)
        if self.proc is None or self.proc.poll() is not None:
            return
        for wait_s in (5, 25):  # now and then bpftrace misses a SIGINT: a second one ends it
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                log.warning("fsync tracer for %s still runs %d s after SIGINT", self.out, wait_s)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            raise AgentError(f"fsync tracer did not stop on SIGINT; {self.out} is incomplete"
                             ) from None
