"""1 Hz disk I/O samples per tenant cgroup, per jbd2 thread and for the whole device.

Tenant bytes come from the cgroup counters the run's I/O control reads (IoControl.counters,
the files host.json's io_control.counter_files names). jbd2 bytes come from tracefs
`block:block_bio_queue` events in a private trace instance, filtered in the kernel to the jbd2
pids, so tracing costs a few events per journal commit and nothing for tenant I/O.

Requests and device time (a second and third currency of disk shares) come from bpftrace
running devtime.bt, which sums them in the kernel per (kernel thread, io cgroup) and prints
the totals every 50 ms: a tenant's are those of its cgroup (and the cgroups below it), a jbd2
thread's those it submitted, wherever it sat, so a journal in the tenant's cgroup (the
journal-accounted arm) is told apart from the tenant by its pid.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import IO

from journalbench.agent.cgroups import Backend
from journalbench.agent.iocontrol.base import IoControl
from journalbench.agent.iocounters import (
    COST_COUNTERS,
    COST_VRATE,
    IoCounters,
    device_counters,
)
from journalbench.agent.journals import EVENT, TRACEFS, Jbd2, JournalTracer, trace_instance
from journalbench.agent.requires import Tool
from journalbench.agent.system import log, mounts, processes_where, read, sh, write
from journalbench.errors import AgentError

TOOLS = (Tool("bpftrace", "bpftrace", True, "requests and device time per tenant and jbd2"),)


def ensure_tracefs() -> bool:
    """Mount tracefs if needed; True when we mounted it (and so must unmount it)."""
    if (TRACEFS / "instances").is_dir():
        return False
    sh("mount", "-t", "tracefs", "nodev", str(TRACEFS))
    if not (TRACEFS / "instances").is_dir():
        raise AgentError(f"tracefs at {TRACEFS} has no instances directory")
    return True


def remove_trace_instance(host: str) -> None:
    instance = trace_instance(host)
    if instance.is_dir():
        write(instance / EVENT / "enable", 0)
        instance.rmdir()


def tracefs_mounted() -> bool:
    return any(fstype == "tracefs" and Path(t) == TRACEFS for _, t, fstype, _ in mounts())


@dataclass(frozen=True)
class DeviceTime:
    """Requests and device time (devtime.bt's definitions), cumulative or per interval."""

    requests: int = 0
    time_ns: int = 0
    inflight_ns: int = 0
    wait_ns: int = 0

    def __add__(self, other: DeviceTime) -> DeviceTime:
        return DeviceTime(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def __sub__(self, other: DeviceTime) -> DeviceTime:
        return DeviceTime(*(a - b for a, b in zip(astuple(self), astuple(other), strict=True)))


Owner = tuple[int, int]  # (pid of a kernel thread, else 0; inode of the io cgroup directory)
DEVTIME_SCRIPT = "devtime.bt"
DEVTIME_HEADER = "journalbench-devtime 2"
DEVTIME_TICK = "journalbench-devtime tick"  # ends each batch of map prints
DEVTIME_MAPS = {"@requests": "requests", "@time_ns": "time_ns", "@inflight_ns": "inflight_ns",
                "@wait_ns": "wait_ns"}
# @owner holds a bio per request in flight; room for far more than a queue's depth
DEVTIME_MAP_KEYS = 65536


# The owner of a bio, as devtime.bt names it (cgroup v1: the io cgroup of the submitting task,
# read through task_struct) and as it is named on cgroup v2 (the task's one cgroup; the pid of
# a jbd2 thread, found by its name, as the sampler reads no other kernel thread's pid).
V1_OWNER = ("\t$kthread = (curtask->flags & 0x00200000) != 0;  /* PF_KTHREAD */\n"
            "\t$owner = ($kthread ? pid : 0, curtask->cgroups->subsys[$2]->cgroup->kn->id);\n")
V2_OWNER = ('\t$kthread = strncmp(comm, "jbd2/", 5) == 0;  /* cgroup v2: the journal\'s */\n'
            "\t$owner = ($kthread ? pid : 0, cgroup);\n")


def devtime_source(cgroup_version: int) -> str:
    """devtime.bt as bpftrace runs it on a host of this cgroup version: on v2 without
    task_struct, whose types bpftrace resolves with clang at every start (0.4 of its 0.9 s
    of CPU on this machine, and a TCG guest runs that 10-20 times slower)."""
    text = importlib.resources.files("journalbench.agent").joinpath(DEVTIME_SCRIPT).read_text()
    if cgroup_version == 1:
        return text
    if text.count(V1_OWNER) != 1:
        raise AgentError(f"{DEVTIME_SCRIPT}: its owner lines changed; update sampler.V1_OWNER")
    return text.replace(V1_OWNER, V2_OWNER)


def io_subsys_index() -> int:
    """Index of the io (v1: blkio) controller in task->cgroups->subsys: its row of
    /proc/cgroups, which lists the controllers in the kernel's order."""
    names = [line.split()[0] for line in read("/proc/cgroups").splitlines()
             if line and not line.startswith("#")]
    if "blkio" not in names:
        raise AgentError("/proc/cgroups lists no blkio (io) controller")
    return names.index("blkio")


def kernel_devnum(devnum: str) -> int:
    """'7:1' -> the dev_t block events carry (major << 20 | minor)."""
    major, minor = (int(part) for part in devnum.split(":"))
    return major << 20 | minor


def devtime_script(root: Path) -> Path:
    """Where a run of this state root keeps the running script (named in bpftrace's argv, so
    a tracer left by a killed agent is found by its command line)."""
    return root / DEVTIME_SCRIPT


def devtime_tracers(root: Path) -> list[int]:
    """Pids of bpftrace processes running this state root's devtime.bt."""
    script = str(devtime_script(root))
    return processes_where(lambda argv: script in argv)


def tracers_under(root: Path) -> list[int]:
    """Pids of bpftrace processes running a script of this state root: kept directly under it
    (the device-time tracer) or marked with its name (the workloads' fsync tracers, written
    beside their run folder's summary as `.<file>.<host>.bt`): what a killed agent may leave."""
    def ours(argv: list[str]) -> bool:
        return Path(argv[0]).name == "bpftrace" and any(
            arg.endswith(".bt") and (Path(arg).parent == root or arg.endswith(f".{root.name}.bt"))
            for arg in argv)

    return processes_where(ours)


def remove_tracers_under(root: Path) -> None:
    """Kill every tracer of this state root and remove the scripts kept in it (teardown after
    kill -9; an fsync tracer's script stays in its run folder, which is never landed)."""
    for pid in tracers_under(root):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while tracers_under(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    for script in [*root.glob("*.bt"), *root.glob("*.bt.err")]:
        script.unlink(missing_ok=True)


def remove_devtime_tracers(root: Path) -> None:
    """Kill what a killed agent left running, and the script beside it."""
    for pid in devtime_tracers(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 5
    while devtime_tracers(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    for name in (DEVTIME_SCRIPT, f"{DEVTIME_SCRIPT}.err"):
        (root / name).unlink(missing_ok=True)


def read_devtime_line(raw: bytes | str, batch: dict[str, dict[str, int]],
                      maps: dict[str, dict[str, int]]) -> str | None:
    """Take one line of devtime.bt's JSON output: a map's print goes into `batch`; the tick
    that ends a batch makes it `maps` (cumulative totals: each batch replaces the last; a map
    not printed is empty). Returns "header" or "tick" for those lines, else None."""
    try:
        record = json.loads(raw)
    except json.JSONDecodeError:
        return None  # bpftrace's own notices
    if not isinstance(record, dict):
        return None
    data = record.get("data")
    if record.get("type") == "printf":
        if DEVTIME_TICK in str(data):
            for name in maps:
                maps[name] = batch.get(name, {})
            batch.clear()
            return "tick"
        return "header" if DEVTIME_HEADER in str(data) else None
    if record.get("type") == "map" and isinstance(data, dict):
        for name, values in data.items():
            if name in maps and isinstance(values, dict):
                batch[name] = values
    return None


def parse_owner(key: str) -> Owner:
    pid, cgroup = key.split(",")
    return int(pid), int(cgroup)


class DeviceTimeTracer:
    """bpftrace running devtime.bt on the test disk. Launched early (it takes about a second
    to compile and attach) and read while it runs: the latest totals it printed."""

    def __init__(self, root: Path, devnum: str, cgroup_version: int = 1) -> None:
        self.root = root
        self.cgroup_version = cgroup_version
        self.argv = [str(kernel_devnum(devnum)), str(io_subsys_index())]
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.maps: dict[str, dict[str, int]] = {name: {} for name in DEVTIME_MAPS}
        self.batch: dict[str, dict[str, int]] = {}
        self.header = False
        self.ticked = threading.Condition(self.lock)  # notified at the end of every batch
        self.reader: threading.Thread | None = None
        self.launched = 0.0

    def launch(self) -> None:
        script = devtime_script(self.root)
        script.write_text(devtime_source(self.cgroup_version))
        env = {**os.environ, "BPFTRACE_MAP_KEYS_MAX": str(DEVTIME_MAP_KEYS)}
        # -B none: bpftrace buffers a pipe fully otherwise, and its prints would arrive in
        # bursts seconds late
        argv = ["bpftrace", "-B", "none", "-f", "json", "-q", str(script), *self.argv]
        log.debug("$ %s", " ".join(argv))
        with (self.root / f"{DEVTIME_SCRIPT}.err").open("wb") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env)
        self.launched = time.monotonic()
        self.reader = threading.Thread(target=self.read_output, name="devtime", daemon=True)
        self.reader.start()

    def read_output(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self.lock:
                kind = read_devtime_line(raw, self.batch, self.maps)
                self.header = self.header or kind == "header"
                if kind == "tick":
                    if self.header:  # every probe is attached: the interval one is last
                        self.ready.set()
                    self.ticked.notify_all()

    def wait_ready(self, timeout_s: float = 60) -> None:
        """Until the probes are attached: the script printed its header and then a batch
        (the interval probe, last in the script, fires once every probe is attached)."""
        assert self.proc is not None
        if self.ready.is_set():
            return
        log.debug("waiting for the device-time tracer to attach")
        deadline = time.monotonic() + timeout_s
        while not self.ready.wait(0.05):
            if self.proc.poll() is not None:
                raise AgentError(f"bpftrace {DEVTIME_SCRIPT} exited {self.proc.returncode}: "
                                 f"{self.stderr_tail()}")
            if time.monotonic() > deadline:
                raise AgentError(f"bpftrace {DEVTIME_SCRIPT} did not attach within "
                                 f"{timeout_s:.0f} s")
        log.info("device-time tracer ready %.2f s after its launch",
                 time.monotonic() - self.launched)

    def stderr_tail(self) -> str:
        err = self.root / f"{DEVTIME_SCRIPT}.err"
        lines = [line for line in (err.read_text(errors="replace") if err.is_file() else "")
                 .splitlines() if "RLIMIT_MEMLOCK" not in line]
        return lines[-1] if lines else "no message"

    def totals(self, fresh: bool = False) -> dict[Owner, DeviceTime]:
        """Cumulative requests and times per owner, as last printed; `fresh`: as printed
        after this call (a baseline must not be a print older than the set-up's I/O)."""
        with self.lock:
            if fresh:  # a whole batch printed after now
                if not self.ticked.wait(timeout=5):
                    state = ("running" if self.proc is None or self.proc.poll() is None
                             else f"exited {self.proc.returncode}")
                    raise AgentError(f"bpftrace {DEVTIME_SCRIPT} stopped printing "
                                     f"({state}): {self.stderr_tail()}")
            keys = {key for values in self.maps.values() for key in values}
            return {parse_owner(key): DeviceTime(**{field: self.maps[name].get(key, 0)
                                                    for name, field in DEVTIME_MAPS.items()})
                    for key in keys}

    def interrupt(self) -> None:
        """Start ending bpftrace, without waiting: its probes take ~0.5 s to detach, which
        the rest of stopping overlaps. SIGKILL: its totals were read already, and the kernel
        drops its programs and maps with its last file descriptor."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()

    def stop(self) -> None:
        self.interrupt()
        if self.proc is not None:
            self.proc.wait()
        if self.reader is not None:
            self.reader.join(timeout=5)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        remove_devtime_tracers(self.root)
        self.proc = None


def cost_fields(now: dict[str, float], before: dict[str, float]) -> dict[str, float | int]:
    """A line's iocost statistics: each cumulative counter's microseconds in the interval
    (`cost_usage_us`, ...), the vrate as it stands (`cost_vrate_pct`); none where the kernel
    printed none (iocost off, or the counter behind blkcg_debug_stats)."""
    row: dict[str, float | int] = {}
    for key in COST_COUNTERS:
        if key in now:
            name = "cost_" + key.split(".", 1)[1] + "_us"
            row[name] = max(0, round(now[key] - before.get(key, now[key])))
    if COST_VRATE in now:
        row["cost_vrate_pct"] = now[COST_VRATE]
    return row


class CgroupIds:
    """Which tenant an io cgroup (by inode number) belongs to: its own directory or one
    below it (containers nest groups). Looked up again when an unknown cgroup appears."""

    def __init__(self, backend: Backend, tenants: dict[str, str]) -> None:
        self.backend = backend
        self.tenants = tenants
        self.owner: dict[int, str | None] = {}

    def scan(self) -> None:
        for name, rel in self.tenants.items():
            for directory, _, _ in os.walk(self.backend.path(rel)):
                try:
                    self.owner[os.stat(directory).st_ino] = name
                except FileNotFoundError:
                    continue  # a group removed meanwhile

    def tenant(self, cgroup: int) -> str | None:
        if cgroup not in self.owner:
            self.scan()
            # not a tenant's (the root, a daemon's); kernfs never reuses an inode number
            self.owner.setdefault(cgroup, None)
        return self.owner[cgroup]


class Sampler:
    """Writes io-samples.jsonl: deltas per interval for every tenant, jbd2 thread and device."""

    def __init__(self, out: Path, control: IoControl, device_name: str, devnum: str,
                 tenants: dict[str, str], weights: dict[str, int], jbd2: list[Jbd2],
                 host: str, devtime: DeviceTimeTracer | None = None,
                 interval: float = 1.0, journal_groups: dict[str, str] | None = None) -> None:
        """`devtime`, when given, is launched already and adds requests and device time to
        every line; the sampler stops it. `journal_groups`: jbd2 thread name -> the cgroup of
        its own it sits in (the journal-cgroup arm), whose controller statistics its lines
        carry."""
        self.out = out
        self.control = control  # reads the tenants' counters
        self.backend = control.backend
        self.device_name = device_name
        self.devnum = devnum
        self.tenants = tenants
        self.weights = weights
        self.jbd2 = jbd2
        self.journal_groups = journal_groups or {}
        self.interval = interval
        self.tracer = JournalTracer(host, jbd2, write)  # the host logs its writes
        self.devtime = devtime
        self.cgroup_ids = CgroupIds(control.backend, tenants)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="sampler", daemon=True)
        self.error: BaseException | None = None

    def read_costs(self) -> dict[tuple[str, str], dict[str, float]]:
        """The I/O control's own statistics: each tenant group's, a journal's group of its own
        on its jbd2 line, and the root group's on the device line (iocost: cost.* of io.stat;
        nothing under BFQ)."""
        values = {("tenant", name): self.control.controller_stats(rel, self.devnum)
                  for name, rel in self.tenants.items()}
        values.update({("jbd2", name): self.control.controller_stats(rel, self.devnum)
                       for name, rel in self.journal_groups.items()})
        values[("device", self.device_name)] = self.control.controller_stats("", self.devnum)
        return values

    def read_all(self) -> dict[tuple[str, str], IoCounters]:
        values = {("tenant", name): self.control.counters(rel, self.devnum)
                  for name, rel in self.tenants.items()}
        for thread in self.jbd2:
            values[("jbd2", thread.name)] = self.tracer.snapshot(thread)
        values[("device", self.device_name)] = device_counters(self.device_name)
        return values

    def read_times(self, fresh: bool = False) -> dict[tuple[str, str], DeviceTime]:
        """Requests and device time per line: a tenant's cgroups (jbd2 threads sitting in
        them included, as the cgroup counters include them), a jbd2 thread's own, and every
        owner's on the device line."""
        if self.devtime is None:
            return {}
        totals = self.devtime.totals(fresh)
        values = {("tenant", name): DeviceTime() for name in self.tenants}
        for thread in self.jbd2:
            values[("jbd2", thread.name)] = DeviceTime()
        device = DeviceTime()
        for (pid, cgroup), value in totals.items():
            device += value
            tenant = self.cgroup_ids.tenant(cgroup)
            if tenant is not None:
                values[("tenant", tenant)] += value
            for thread in self.jbd2:
                if pid == thread.pid:
                    values[("jbd2", thread.name)] += value
        values[("device", self.device_name)] = device
        return values

    def start(self) -> None:
        self.tracer.start()
        if self.devtime is not None:
            self.devtime.wait_ready()
        self.start_time = time.monotonic()
        self.previous = self.read_all()
        self.previous_costs = self.read_costs()
        self.previous_times = self.read_times(fresh=True)
        self.previous_time = self.start_time
        self.thread.start()

    def loop(self) -> None:
        try:
            with self.out.open("w") as handle:
                next_tick = self.start_time + self.interval
                while not self.stopping.wait(max(0.0, next_tick - time.monotonic())):
                    self.sample(handle)
                    next_tick += self.interval
                self.sample(handle)
        except BaseException as error:  # reported by stop(), never lost in the thread
            self.error = error

    def sample(self, handle: IO[str]) -> None:
        now = time.monotonic()
        current, times, costs = self.read_all(), self.read_times(), self.read_costs()
        base = {"t": round(now - self.start_time, 3), "dt": round(now - self.previous_time, 3)}
        for (kind, source), value in current.items():
            delta = value - self.previous[(kind, source)]
            row = {**base, "kind": kind, "source": source, **delta.__dict__}
            if times:
                row.update((times[(kind, source)] - self.previous_times[(kind, source)]).__dict__)
            if (kind, source) in costs:
                row.update(cost_fields(costs[(kind, source)],
                                       self.previous_costs[(kind, source)]))
            row.update(self.extra(kind, source))
            handle.write(json.dumps(row) + "\n")
        handle.flush()
        self.previous, self.previous_times, self.previous_time = current, times, now
        self.previous_costs = costs

    def extra(self, kind: str, source: str) -> dict[str, object]:
        if kind == "tenant":
            return {"cgroup": "/" + self.tenants[source], "weight": self.weights[source]}
        if kind == "jbd2":
            thread = next(t for t in self.jbd2 if t.name == source)
            return {"tenant": thread.tenant, "pid": thread.pid,
                    "cgroup": self.backend.cgroup_of(thread.pid)}
        return {"device": f"/dev/{source}"}

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.ident is not None:  # start() may have failed before the thread ran
            self.thread.join(timeout=10)
        if self.devtime is not None:
            self.devtime.interrupt()
        self.tracer.stop()
        if self.devtime is not None:
            self.devtime.stop()
        if self.error is not None:
            raise AgentError(f"sampler failed: {self.error}") from self.error
        log.info("sampler stopped")
