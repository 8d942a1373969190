"""A private MariaDB server and its sysbench client: command lines, start and stop, and the
cache of prepared data directories.

The server is started with `--no-defaults` (nothing of /etc/mysql is read) and
`--skip-networking`: it listens only on a unix socket in a folder private to it (the tenant's
own tmpfs /run, or a build folder under the host's state folder), so the host's own MariaDB
service, if any, is never used or touched. Settings that shape the I/O:

- `innodb_flush_method=O_DIRECT` and `innodb_flush_log_at_trx_commit=1` (the thesis's InnoDB:
  every commit waits for its redo log to reach the disk), autocommit (each INSERT commits);
- a 128 MiB buffer pool: the default of both MySQL 5.7 (the thesis's server) and MariaDB 10.11,
  and less than half of the ~300 MB the 10 x 100,000-row tables take, so the data set cannot
  stay in memory and dirty pages must be written back to the tenant's disk;
- no binary log (MySQL 5.7's default), and no buffer-pool dump or load, so every run starts
  from the same cold cache instead of one warmed by the previous run.

Commands run through a shell: a tenant's (`TenantShell`, inside the container or guest) or
`LocalShell` (on the host, for the one-off build of the data directory and the thread
calibration).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any, Protocol

from journalbench.agent.system import kill_wait, log, process_files, sh, tool_version, zombie
from journalbench.errors import AgentError

BUFFER_POOL_MB = 128
TABLES = 10
TABLE_SIZE = 100_000
DATABASE = "sbtest"
DATA_NAME = "mariadb"  # the data directory, in the tenant's data folder
TENANT_RUN_DIR = "/run"  # a tmpfs private to each container and guest
SOCKET = "mariadb.sock"
PID_FILE = "mariadb.pid"
START_TIMEOUT_S = 120
POLL_S = 0.25
PRELOAD_TIMEOUT_S = 600
BUILD = "mariadb-build"  # below the host's state root: teardown finds its server there
CACHE = "mariadb"  # below the host's state_dir: kept across runs, like the calibration
BUILDING = threading.Lock()
DATADIR_FORMAT = 2  # bump when the way the data directory is built changes (2: slow shutdown)


class Shell(Protocol):
    def run(self, argv: list[str], timeout: float = 600) -> str: ...

    def spawn(self, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]: ...


class LocalShell:
    """Commands on the host itself, pinned to one core like a tenant."""

    def __init__(self, cpu: int = 0) -> None:
        self.cpu = cpu

    def pin(self) -> None:
        os.sched_setaffinity(0, {self.cpu})

    def run(self, argv: list[str], timeout: float = 600) -> str:
        log.debug("$ %s", " ".join(argv))
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  preexec_fn=self.pin)
        except subprocess.TimeoutExpired as expired:
            raise CommandTimeout(f"{argv[0]} on the host timed out after {timeout:.0f} s"
                                 f"{last_words(expired.stdout)}") from None
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise AgentError(f"{argv[0]} on the host exited {done.returncode}: "
                             f"{detail[-1] if detail else 'no output'}")
        return done.stdout

    def spawn(self, argv: list[str], stdout: IO[bytes],
              stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        log.debug("$ %s &", " ".join(argv))
        return subprocess.Popen(argv, stdout=stdout, stderr=stderr, preexec_fn=self.pin)


# -- command lines ----------------------------------------------------------------------------


def server_argv(datadir: str, run_dir: str) -> list[str]:
    return [
        "mariadbd", "--no-defaults", f"--datadir={datadir}", "--user=root",
        f"--socket={run_dir}/{SOCKET}", "--skip-networking", f"--pid-file={run_dir}/{PID_FILE}",
        "--innodb-flush-method=O_DIRECT", "--innodb-flush-log-at-trx-commit=1",
        f"--innodb-buffer-pool-size={BUFFER_POOL_MB}M", "--autocommit=1", "--skip-log-bin",
        "--innodb-buffer-pool-dump-at-shutdown=OFF", "--innodb-buffer-pool-load-at-startup=OFF",
        "--skip-name-resolve",
    ]


def sql_argv(run_dir: str, statement: str) -> list[str]:
    return ["mariadb", "--no-defaults", f"--socket={run_dir}/{SOCKET}", "--user=root",
            "--batch", "--skip-column-names", "-e", statement]


class CommandTimeout(AgentError):
    """A command outlived its timeout and was killed."""


def stall_note(log_file: Path) -> str | None:
    """InnoDB's own word that its writes stalled, from the server's log: MariaDB prints
    "InnoDB: Long wait (N seconds) for ..." when a flush it waits on does not finish. 10.11
    with io_uring on this machine's loop devices, at 32-64 client threads, once in about eight
    thread calibrations: every client's INSERT held with 15 page writes pending, for good."""
    try:
        lines = log_file.read_text(errors="replace").splitlines()
    except OSError:
        return None
    return next((line.split("[Note] ", 1)[-1].strip() for line in lines
                 if "InnoDB: Long wait" in line), None)


def last_words(output: str | bytes | None) -> str:
    """The last line a command printed before it was stopped, for its error: sysbench's last
    report says whether its threads were still answered (a query the server never answers holds
    sysbench past its --time)."""
    text = output.decode(errors="replace") if isinstance(output, bytes) else output or ""
    lines = text.strip().splitlines()
    return f"; its last line: {lines[-1].strip()}" if lines else "; it printed nothing"


def sysbench_argv(run_dir: str, tables: int, table_size: int, command: str,
                  threads: int = 1, duration_s: int = 0) -> list[str]:
    """sysbench 1.0's oltp_insert: autocommitted single-row INSERTs into random tables."""
    argv = ["sysbench", "oltp_insert", "--db-driver=mysql", f"--mysql-socket={run_dir}/{SOCKET}",
            "--mysql-user=root", f"--mysql-db={DATABASE}", f"--tables={tables}",
            f"--table-size={table_size}", f"--threads={threads}"]
    if command == "run":
        argv += [f"--time={duration_s}", "--report-interval=1", "--histogram=on",
                 "--percentile=95"]
    return [*argv, command]


def versions() -> dict[str, str]:
    return {"mariadb": tool_version("mariadbd", "--version"),
            "sysbench": tool_version("sysbench", "--version")}


# -- one server -------------------------------------------------------------------------------


class Server:
    """mariadbd on `datadir`, its socket and pid file in `run_dir`, output in `log_file`."""

    def __init__(self, shell: Shell, where: str, datadir: str, run_dir: str,
                 log_file: Path) -> None:
        self.shell, self.where = shell, where
        self.datadir, self.run_dir, self.log_file = datadir, run_dir, log_file
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start mariadbd and wait until it answers on its socket."""
        with self.log_file.open("wb") as out:
            self.proc = self.shell.spawn(server_argv(self.datadir, self.run_dir), out, out)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AgentError(f"{self.where}: mariadbd exited {self.proc.returncode} at "
                                 f"start ({self.log_file.name}: {self.last_error()})")
            try:
                self.sql("SELECT 1", timeout=20)
                return
            except AgentError:
                if time.monotonic() > deadline:
                    raise AgentError(f"{self.where}: mariadbd did not answer within "
                                     f"{timeout:.0f} s ({self.log_file.name}: "
                                     f"{self.last_error()})") from None
            time.sleep(POLL_S)

    def last_error(self) -> str:
        lines = self.log_file.read_text(errors="replace").splitlines() if \
            self.log_file.exists() else []
        errors = [line for line in lines if "[ERROR]" in line]
        return " ".join((errors or lines or ["no output"])[-1].split())

    def preload(self, tables: int) -> None:
        """Read every table's secondary index `k` into the buffer pool. oltp_insert appends to
        the primary key but puts each row's random `k` anywhere in that index, so a cold server
        reads its pages one random read at a time: on the emulated HDD it took ~10-20 s to reach
        its pace (1-2,000 tps) from ~10, which a 5 s warm-up left inside the measured window.
        sysbench builds `k` after loading the rows, so a scan of it reads mostly in order."""
        self.sql("; ".join(f"SELECT COUNT(k) FROM {DATABASE}.sbtest{i} FORCE INDEX (k_{i})"
                           for i in range(1, tables + 1)), timeout=PRELOAD_TIMEOUT_S)

    def sql(self, statement: str, timeout: float = 60) -> str:
        return self.shell.run(sql_argv(self.run_dir, statement), timeout=timeout)

    def status(self) -> dict[str, str]:
        rows = self.sql("SHOW GLOBAL STATUS").splitlines()
        return dict(row.split("\t", 1) for row in rows if "\t" in row)

    def shutdown(self, timeout: float = 300) -> None:
        """A clean shutdown (for a data directory that is kept)."""
        self.sql("SHUTDOWN", timeout=timeout)
        self.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: for a data directory that is thrown away with its volume. Idempotent."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            pid_file = f"{self.run_dir}/{PID_FILE}"
            try:
                self.shell.run(["sh", "-c", f"test ! -s {pid_file} || kill -9 $(cat {pid_file})"],
                               timeout=30)
            except AgentError as error:
                log.warning("%s: killing mariadbd by its pid file failed: %s", self.where, error)
            try:
                self.wait(30)
            except AgentError:
                self.proc.kill()  # the tenant's command channel; the tenant's stop ends the rest
                self.proc.wait()

    def wait(self, timeout: float) -> None:
        assert self.proc is not None
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AgentError(f"{self.where}: mariadbd still running {timeout:.0f} s after "
                             "it was told to stop") from None


# -- the prepared data directory, built once per host and key ---------------------------------


def cache_key(tables: int, table_size: int) -> dict[str, Any]:
    """What the prepared files depend on: the server's and sysbench's versions and the tables."""
    return {**versions(), "tables": tables, "table_size": table_size,
            "buffer_pool_mb": BUFFER_POOL_MB, "format": DATADIR_FORMAT}


def cache_path(state_dir: Path, key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return state_dir / CACHE / f"datadir-{key['tables']}x{key['table_size']}-{digest}.tar"


def prepared_datadir(state_dir: Path, state_root: Path, tables: int,
                     table_size: int) -> tuple[Path, dict[str, Any]]:
    """The tarball of a data directory holding the prepared tables (folder `mariadb/` at its
    top) and its record; built on the host the first time (`sysbench prepare`, then a clean
    shutdown), in a folder below the state root that teardown removes if the agent dies."""
    key = cache_key(tables, table_size)
    tarball = cache_path(state_dir, key)
    record_file = tarball.with_suffix(".json")
    # tenants may prepare at once (the vm arm's guests): the first one builds, the others wait
    with BUILDING:
        if tarball.is_file() and record_file.is_file():
            return tarball, json.loads(record_file.read_text())
        return build_datadir(key, tarball, state_root, tables, table_size)


def build_datadir(key: dict[str, Any], tarball: Path, state_root: Path, tables: int,
                  table_size: int) -> tuple[Path, dict[str, Any]]:
    record_file = tarball.with_suffix(".json")
    log.info("preparing MariaDB tables %d x %d once for this host", tables, table_size)
    build = state_root / BUILD
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    shell = LocalShell()
    t0 = time.monotonic()
    server = Server(shell, "host (prepare)", str(build / DATA_NAME), str(build),
                    build / "mariadbd.log")
    try:
        shell.run(["mariadb-install-db", "--no-defaults", f"--datadir={build / DATA_NAME}",
                   "--user=root", "--auth-root-authentication-method=normal",
                   "--skip-test-db"], timeout=300)
        server.start()
        server.sql(f"CREATE DATABASE {DATABASE}")
        shell.run(sysbench_argv(str(build), tables, table_size, "prepare"), timeout=3600)
        # a slow shutdown purges the load's undo log and merges its change buffer now, so no
        # tenant's server starts with that work pending in its measured phase
        server.sql("SET GLOBAL innodb_fast_shutdown = 0")
        server.shutdown()
        prepare_s = time.monotonic() - t0
        tarball.parent.mkdir(parents=True, exist_ok=True)
        tmp = tarball.with_suffix(".tmp")
        sh("tar", "-cf", str(tmp), "-C", str(build), DATA_NAME, timeout=600)
        record = {**key, "prepare_s": round(prepare_s, 3), "bytes": tmp.stat().st_size,
                  "made_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        record_file.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        tmp.rename(tarball)
    finally:
        server.kill()
        shutil.rmtree(build, ignore_errors=True)
    return tarball, record


# -- clean-up by discovery --------------------------------------------------------------------


PROGRAMS = ("mariadbd", "sysbench")


def our_processes(state_root: Path) -> list[tuple[int, str]]:
    """(pid, why) of every mariadbd or sysbench of this host: in one of its tenants' cgroups,
    or naming its state root (the host-side build and calibration servers)."""
    needle = str(state_root).encode()
    marker = f"/journalbench/{state_root.name}/"
    found = []
    for pid, proc in process_files(""):
        try:
            comm = (proc / "comm").read_text().strip()
            if comm not in PROGRAMS or zombie(pid):
                continue
            if needle in (proc / "cmdline").read_bytes() or \
                    marker in (proc / "cgroup").read_text():
                found.append((pid, comm))
        except OSError:
            continue
    return found


def kill_ours(state_root: Path, timeout: float = 10) -> None:
    kill_wait([pid for pid, _ in our_processes(state_root)], "mariadbd/sysbench", timeout)
