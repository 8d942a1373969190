"""MariaDB + sysbench oltp_insert, the thesis's database workload (it ran MySQL 5.7).

Per tenant: the prepared data directory (`mariadb_server.prepared_datadir`, built once per host)
is unpacked onto the tenant's volume, a private server starts inside the tenant (container or
guest) on it, and the measured phase runs sysbench inside the same tenant, so the client shares
the tenant's one core (its CPU use is recorded, and a run whose tenant saturated its core is
flagged at tidy time). The thread count comes from the spec, from the host's I/O calibration
(`mariadb_calibrate`, without `threads`) or, with `threads: guest`, from the host's guest
operating point (`guest_point`: the count at which the vm arm's emulated guest keeps up, the
same for every arm). Run-folder files per tenant:

- `sysbench-<t>.log`           sysbench's report (per-second lines, histogram, summary);
- `mariadb-<t>-counters.txt`   SHOW GLOBAL STATUS and the server's CPU time before and after,
                               and the client's CPU time (parsed by journalbench.formats.mariadb);
- `mariadb-<t>.json`           set-up facts: versions, threads and where they came from, the
                               copy and start times, where the client ran, the server's options;
- `mariadb-<t>.log`            the server's own log;
- `fsync-<t>.txt`              fsync/fdatasync latency of the tenant's cgroup (containers).
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

from journalbench.agent import cgroups
from journalbench.agent.probes import FsyncTracer
from journalbench.agent.requires import Tool
from journalbench.agent.system import sh
from journalbench.agent.workloads import guest_point, mariadb_calibrate
from journalbench.agent.workloads.base import Process, TenantShell, Workload, spawn_into
from journalbench.agent.workloads.mariadb_server import (
    BUFFER_POOL_MB,
    DATA_NAME,
    PID_FILE,
    TABLE_SIZE,
    TABLES,
    TENANT_RUN_DIR,
    Server,
    kill_ours,
    our_processes,
    prepared_datadir,
    server_argv,
    sql_argv,
    sysbench_argv,
    versions,
)
from journalbench.errors import AgentError, ConfigError
from journalbench.formats.fsync import fsync_file
from journalbench.formats.mariadb import mariadb_counters_file, mariadb_facts_file
from journalbench.formats.sysbench import sysbench_file

COPY_TIMEOUT_S = 1800
COUNTERS = f"{TENANT_RUN_DIR}/mariadb-counters.txt"
WARMUP_LOG = f"{TENANT_RUN_DIR}/sysbench-warmup.log"
CLIENT_LOCATION = "tenant"  # sysbench runs inside the tenant, beside its server
# where a guest cannot see the host's files: its own tmpfs mounts hide them
GUEST_HIDDEN = ("/tmp", "/run")


def settings_of(workload: dict[str, Any]) -> dict[str, Any]:
    return {"tables": workload.get("tables", TABLES),
            "table_size": workload.get("table_size", TABLE_SIZE),
            "threads": workload.get("threads")}


def measured_script(run_dir: str, tables: int, table_size: int, threads: int,
                    duration_s: int, warmup_s: int = 0) -> str:
    """bash: a warm-up sysbench of `warmup_s` (sysbench 1.0.20 has no --warmup-time; its
    report is shown only if it fails), then status and server CPU before, the measured sysbench
    under `time`, status and CPU after. Only the measured sysbench's report reaches stdout;
    the counters go to COUNTERS (format: formats/mariadb.py). /proc/uptime is read (by bash's
    own `read`: no process started) right before and after the measured sysbench: a VM's guest
    report reads the same clock, so its busy seconds are those of the client's run, not of
    the snapshots around it (under TCG each starts a mariadb client: a second of the vCPU)."""
    status = shlex.join(sql_argv(run_dir, "SHOW GLOBAL STATUS"))
    bench = shlex.join(sysbench_argv(run_dir, tables, table_size, "run", threads, duration_s))
    lines = ["set -e -o pipefail"]
    if warmup_s:
        warm = shlex.join(sysbench_argv(run_dir, tables, table_size, "run", threads, warmup_s))
        lines.append(f"{warm} > {WARMUP_LOG} 2>&1 || {{ cat {WARMUP_LOG}; exit 1; }}")
    return "\n".join([
        *lines,
        "snap() {",
        '  echo "$1 clock $(date +%s.%N)"',
        f'  echo "$1 server_stat $(cat /proc/$(cat {run_dir}/{PID_FILE})/stat)"',
        f'  {status} | sed "s/^/$1 status /"',
        "}",
        "uptime() { read -r up _ < /proc/uptime; echo \"$1 uptime $up\"; }",
        f'{{ echo "journalbench-mariadb-counters 1"; echo "clk_tck $(getconf CLK_TCK)"; '
        f"snap before; uptime before; }} > {COUNTERS}",
        "TIMEFORMAT='client_cpu %R %U %S'",
        f"{{ time {bench} 2>&1 ; }} 2>> {COUNTERS}",
        f"{{ uptime after; snap after; echo end; }} >> {COUNTERS}",
    ])


class SysbenchProcess(Process):
    """A failed sysbench is reported by its own log's first problem, naming tenant and file."""

    def check(self, code: int) -> None:
        if code == 0:
            return
        from journalbench.formats import ParseError
        from journalbench.formats.sysbench import parse_sysbench

        try:
            parse_sysbench(self.stdout)
        except ParseError as error:
            raise AgentError(f"{self.what}: {error}") from None
        detail = self.stderr.read_text(errors="replace").strip().splitlines()
        raise AgentError(f"{self.what} exited {code} ({self.stderr}: "
                         f"{detail[-1] if detail else 'no output'})")


class MariaDB(Workload):
    TOOL = "mariadb"
    TOOLS = (
        Tool("mariadbd", "mariadb-server-core", True, "mariadb workload: the server"),
        Tool("mariadb-install-db", "mariadb-server-core", True,
             "mariadb workload: the prepared data directory"),
        Tool("mariadb", "mariadb-client-core", True, "mariadb workload: status counters"),
        Tool("sysbench", "sysbench", True, "mariadb workload: the oltp_insert client"),
        Tool("bash", "bash", True, "mariadb workload: the client's CPU time"),
    )

    def __init__(self, tenant: str, settings: dict[str, Any], duration_s: int) -> None:
        super().__init__(tenant, settings, duration_s)
        self.params = settings_of(settings)
        given = self.params["threads"]
        self.point = given == guest_point.GUEST  # the host's guest operating point
        self.threads: int | None = None if self.point else given
        self.threads_from = "spec" if self.threads else None
        self.server: Server | None = None
        self.out: Path | None = None  # the run folder, once prepared
        self.root: Path | None = None  # the host's state folder, once prepared
        self.cgroup_id = 0
        self.facts: dict[str, Any] = {}

    def versions(self) -> dict[str, str]:
        return versions()

    def calibrate(self, host: dict[str, Any], profile: Any, device: Any,
                  mount: Path) -> dict[str, Any]:
        """Threads from the host's calibration when the spec gives none: its guest operating
        point when the spec asks for it (measured before, by `journalbench guest-point`), else
        its I/O calibration (measured here when missing)."""
        if self.threads:
            return {}
        if self.point:
            point = guest_point.read(host, profile, self.params["tables"],
                                     self.params["table_size"])
            self.threads = int(point["threads"])
            self.threads_from = f"guest point {point['file']}"
            return {guest_point.RECORD: point}
        record = mariadb_calibrate.threads(host, profile, device, mount,
                                           self.params["tables"], self.params["table_size"])
        self.threads = int(record["threads"])
        self.threads_from = f"calibration {record['file']}"
        return {"mariadb_threads": record}

    def prepare(self, shell: TenantShell) -> None:
        self.out, self.root = shell.out, shell.state_root
        t0 = time.monotonic()
        tarball, record = prepared_datadir(shell.state_dir, shell.state_root,
                                           self.params["tables"], self.params["table_size"])
        t1 = time.monotonic()
        self.unpack(shell, tarball)
        t2 = time.monotonic()
        self.server = Server(shell, f"tenant {self.tenant}", f"{shell.data_dir}/{DATA_NAME}",
                             TENANT_RUN_DIR, shell.out / f"mariadb-{self.tenant}.log")
        self.server.start()
        t3 = time.monotonic()
        self.server.preload(self.params["tables"])
        t4 = time.monotonic()
        self.cgroup_id = self.tracer_cgroup(shell)
        self.facts = {
            "version": 1, "tenant": self.tenant, **self.params, "threads": self.threads,
            "threads_from": self.threads_from, "client_location": CLIENT_LOCATION,
            "buffer_pool_mb": BUFFER_POOL_MB, "tools": versions(),
            "server_argv": server_argv(f"{shell.data_dir}/{DATA_NAME}", TENANT_RUN_DIR),
            "datadir_cache": {"file": str(tarball), **record},
            "setup_s": {"cache": round(t1 - t0, 3), "copy": round(t2 - t1, 3),
                        "server_start": round(t3 - t2, 3), "preload": round(t4 - t3, 3),
                        "total": round(t4 - t0, 3)},
            "fsync_tracer": "cgroup" if self.cgroup_id else None,
        }

    def unpack(self, shell: TenantShell, tarball: Path) -> None:
        """The prepared data directory onto the tenant's volume: from the host when it sees the
        tenant's folder (a container's), else from inside the tenant (a guest, through its
        read-only view of the host's root)."""
        target = shell.host_path
        if target is not None:
            sh("tar", "-xf", str(tarball), "-C", str(target), timeout=COPY_TIMEOUT_S)
            # written back now, not during the measured phase
            sh("sync", "-f", str(target), timeout=COPY_TIMEOUT_S)
            return
        if any(tarball.is_relative_to(hidden) for hidden in GUEST_HIDDEN):
            raise AgentError(f"tenant {self.tenant}: a guest cannot read {tarball} (its own "
                             f"{'/'.join(GUEST_HIDDEN)} hide the host's): give the host a "
                             "state_dir outside them")
        shell.run(["tar", "-xf", str(tarball), "-C", shell.data_dir], timeout=COPY_TIMEOUT_S)
        shell.run(["sync", "-f", shell.data_dir], timeout=COPY_TIMEOUT_S)

    def tracer_cgroup(self, shell: TenantShell) -> int:
        """The cgroup v2 id of the tenant's server (what fsync.bt filters on: one group, not
        its children; LXC puts attached commands in a child `.lxc`, so the server's own group
        is read from /proc); 0 when the server runs behind the tenant's own kernel, where the
        host's tracer cannot see its syscalls."""
        if shell.guest_kernel:
            return 0
        marker = f"/{shell.cgroup}"
        v2 = cgroups.v2_root()
        for pid, comm in our_processes(shell.state_root):
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
            group = next((line[3:] for line in lines if line.startswith("0::")), "")
            if comm == "mariadbd" and v2 is not None and f"{group}/".startswith(f"{marker}/"):
                return (v2 / group.lstrip("/")).stat().st_ino
        raise AgentError(f"tenant {self.tenant}: its mariadbd is in no cgroup v2 group under "
                         f"{marker} (the fsync tracer needs one)")

    def probes(self) -> list[Any]:
        if not self.cgroup_id:
            return []
        assert self.out is not None and self.root is not None
        return [FsyncTracer(self.out / fsync_file(self.tenant), self.root,
                            cgroup_id=self.cgroup_id)]

    def start(self, shell: TenantShell, out: Path) -> list[Process]:
        if not self.threads:
            raise AgentError(f"tenant {self.tenant}: no sysbench thread count (neither in the "
                             "spec nor from the host's calibration)")
        script = measured_script(TENANT_RUN_DIR, self.params["tables"],
                                 self.params["table_size"], self.threads, self.duration_s,
                                 self.warmup_s)
        proc = spawn_into(shell, ["bash", "-c", script], f"sysbench in {self.tenant}",
                          out / sysbench_file(self.tenant),
                          out / f"sysbench-{self.tenant}.stderr")
        return [SysbenchProcess(proc.what, proc.popen, proc.stdout, proc.stderr, proc.handles)]

    def finish(self, shell: TenantShell, out: Path) -> None:
        """The counters into the run folder, and every output checked: a truncated or failed
        one fails the run here, naming the tenant and the file."""
        from journalbench.formats import ParseError
        from journalbench.formats.mariadb import parse_counters, parse_facts
        from journalbench.formats.sysbench import parse_sysbench

        counters = out / mariadb_counters_file(self.tenant)
        counters.write_text(shell.run(["cat", COUNTERS], timeout=60))
        facts = out / mariadb_facts_file(self.tenant)
        facts.write_text(json.dumps(self.facts, indent=1, sort_keys=True) + "\n")
        try:
            parse_sysbench(out / sysbench_file(self.tenant))
            parse_counters(counters)
            parse_facts(facts)
        except (ParseError, ConfigError) as error:
            raise AgentError(f"tenant {self.tenant}: {error}") from None

    def stop(self, shell: TenantShell) -> None:
        if self.server is not None:
            self.server.kill()

    def outputs(self) -> list[str]:
        return [sysbench_file(self.tenant), mariadb_counters_file(self.tenant),
                mariadb_facts_file(self.tenant), f"mariadb-{self.tenant}.log"]

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        return [f"{comm} process {pid}" for pid, comm in our_processes(root)]

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        kill_ours(root)
