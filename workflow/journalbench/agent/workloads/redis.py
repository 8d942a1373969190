"""Redis with an append-only file, driven by YCSB 0.17.0 through the project's own binding
(workflow/ycsb-redis, built by `make ycsb` into the `ycsb/` folder beside this module).

Redis runs inside the tenant (container or guest): its own redis-server, data and AOF on the
tenant's volume, `appendfsync everysec`, no RDB snapshots, no AOF rewrite, and no TCP port: a
unix socket in the tenant's data folder, so no other Redis (the host's service included) is ever
reached. Everything the workload does inside the tenant (start Redis, PING it, read INFO and the
AOF's size, shut it down) goes through the arm's command channel, so it is the same on every
arm. The YCSB client runs on the host, outside every tenant's cgroup, as the thesis's client ran
on another machine. It reaches Redis's socket through the tenant's data folder as the host sees
it (the shell's `host_path`: container arms), or, when the tenant offers a byte tunnel instead
(the shell's `tunnel`: the vm arm, whose guests have no network and share no writable folder
with the host; agent/arms/vm/tunnel.py: a virtio-serial port whose host end is a unix socket,
and socat inside the guest between the port and Redis's socket), through that. The tunnel
carries one connection at a time, so a tunnelled Redis takes YCSB with one thread (the
default), and its bridge is guest CPU the container arms do not spend (the vm arm's vCPU
report flags a saturated guest). The AOF's fdatasync is traced on the host unless the tenant
runs its own kernel (the shell's `guest_kernel`), which then makes that call: no fsync trace is
kept.

`prepare` starts Redis (and on the vm arm the tunnel's bridge) and loads the records (not
measured), `start` runs the INSERT workload (the measured phase, status every second), `finish`
keeps the AOF size and Redis's own persistence counters, `stop` shuts Redis down. While a YCSB
client runs, a watcher stops it as soon as redis-server (or the bridge) ends: over the tunnel
the client would otherwise wait for a reply forever; the run then fails naming both.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import shutil
import subprocess
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench.agent.arms.base import TenantShell, Tunnel
from journalbench.agent.probes import FsyncTracer
from journalbench.agent.requires import Tool
from journalbench.agent.system import (
    kill_wait,
    log,
    process_files,
    processes_naming,
    tool_version,
)
from journalbench.agent.workloads.base import Process, Workload
from journalbench.errors import AgentError
from journalbench.formats import ParseError
from journalbench.formats.fsync import fsync_file
from journalbench.formats.redis import redis_file
from journalbench.formats.ycsb import (
    YcsbResult,
    failed_operations,
    parse_ycsb,
    ycsb_file,
    ycsb_stderr,
)

DEFAULTS: dict[str, int] = {"records": 200_000, "operations": 200_000, "threads": 1}
YCSB_VERSION = "0.17.0"
BINDING_CLASS = "journalbench.ycsb.RedisClient"
BINDING_PROPERTIES = "ycsb-redis.properties"
JARS = "ycsb"  # folder of jars beside this module (built, not committed)
FOLDER = "redis"  # in the tenant's data folder: the AOF, Redis's working dir and its socket
SOCKET = "redis.sock"
TUNNEL = "redis"  # the byte tunnel into a tenant that offers one (the vm arm's guests)
START_TIMEOUT_S = 30
BRIDGE_TIMEOUT_S = 60  # socat's start, through a TCG guest's 9p root
WATCH_S = 0.2
LOAD_TIMEOUT_S = 3600
STOP_TIMEOUT_S = 60
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # /proc/<pid>/stat's unit
SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the terminating NUL
# The INSERT workload of CoreWorkload: every operation inserts a new record after the loaded ones.
INSERT_ONLY = ("-p", "readproportion=0", "-p", "updateproportion=0", "-p", "scanproportion=0",
               "-p", "readmodifywriteproportion=0", "-p", "insertproportion=1")


def settings_of(workload: dict[str, Any]) -> dict[str, int]:
    return {key: int(workload.get(key, default)) for key, default in DEFAULTS.items()}


def server_argv(directory: str) -> list[str]:
    """redis-server in the foreground, configured on its command line only (no config file, so
    nothing of the host's /etc/redis applies)."""
    return [
        "redis-server", "--port", "0", "--unixsocket", f"{directory}/{SOCKET}",
        "--unixsocketperm", "700", "--dir", directory, "--daemonize", "no",
        "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
        # a rewrite forks and rewrites the whole AOF mid-run: not the workload under study
        "--auto-aof-rewrite-percentage", "0", "--logfile", "", "--loglevel", "notice",
        "--always-show-logo", "no",
    ]


def jar_dir(root: Path) -> Path:
    """Where the agent puts the YCSB jars for its runs: below the host's state folder, so a
    client's command line names that folder and teardown finds it after kill -9."""
    return root / JARS


def install_jars(root: Path) -> Path:
    """Copy the built jars (a folder of this package, or of the zipapp) to jar_dir(root)."""
    source = importlib.resources.files("journalbench.agent.workloads").joinpath(JARS)
    jars = [j for j in (source.iterdir() if source.is_dir() else []) if j.name.endswith(".jar")]
    if not any(j.name.startswith("ycsb-redis-") for j in jars):
        raise AgentError("redis workload: the YCSB binding is not built (no ycsb-redis-*.jar in "
                         "journalbench/agent/workloads/ycsb): run `make ycsb`")
    target = jar_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    for jar in jars:
        (target / jar.name).write_bytes(jar.read_bytes())
    return target


def binding_info(jars: Path) -> dict[str, str]:
    """The binding's version and source hash as its build recorded them, and its jar's sha256."""
    jar = next(iter(sorted(jars.glob("ycsb-redis-*.jar"))))
    with zipfile.ZipFile(jar) as archive:
        text = archive.read(BINDING_PROPERTIES).decode()
    info = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {"version": info.get("version", "unknown"),
            "source_sha256": info.get("source_sha256", "unknown"),
            "jar": jar.name, "jar_sha256": hashlib.sha256(jar.read_bytes()).hexdigest()}


def ycsb_argv(jars: Path, phase: str, socket: Path, settings: dict[str, int],
              duration_s: int | None) -> list[str]:
    """The YCSB client: `-load` the records, or `-t` the INSERT workload (status every second,
    stopped after duration_s at the latest)."""
    argv = [
        "java", "-cp", f"{jars}/*", "site.ycsb.Client", phase, "-db", BINDING_CLASS,
        "-p", "workload=site.ycsb.workloads.CoreWorkload",
        "-p", f"recordcount={settings['records']}", "-p", f"redis.socket={socket}",
        "-threads", str(settings["threads"]), "-s", "-p", "status.interval=1",
    ]
    if phase == "-t":
        argv += ["-p", f"operationcount={settings['operations']}", *INSERT_ONLY]
        if duration_s is not None:
            argv += ["-p", f"maxexecutiontime={duration_s}"]
    return argv


def host_pids(comm: str, cgroup: str) -> list[int]:
    """Processes named `comm` in the cgroup or one below it (any hierarchy), as the host numbers
    them: on cgroup v2, LXC runs the container's processes in a group below the tenant's."""
    found = []
    for pid, path in process_files("comm"):
        try:
            if path.read_text().strip() != comm:
                continue
            lines = (path.parent / "cgroup").read_text().splitlines()
        except OSError:
            continue
        paths = [line.split(":", 2)[2].rstrip("/") + "/" for line in lines]
        if any(f"/{cgroup}/" in path for path in paths):
            found.append(pid)
    return found


def aof_argv(folder: str) -> list[str]:
    """Sizes of every part of Redis 7's multi-part AOF, one per line (run inside the tenant)."""
    return ["find", folder, "-name", "appendonly.aof*", "-type", "f", "-printf", "%s\n"]


def info_fields(text: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def used_cpu(info: dict[str, str]) -> float:
    try:
        return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    except (KeyError, ValueError):
        raise AgentError("redis INFO has no used_cpu_sys/used_cpu_user") from None


@dataclass
class Client(Process):
    """A YCSB client; `cause` says why the watcher stopped it (Redis or the bridge ended).
    The watcher also keeps the client's CPU time (`cpu_s`, all its threads) as last read,
    `cpu_wall_s` after it started: a dead process's /proc entry is gone."""

    cause: str | None = None
    started: float = field(default_factory=time.monotonic)
    cpu_s: float | None = None
    cpu_wall_s: float | None = None

    def sample_cpu(self) -> None:
        try:
            stat = Path(f"/proc/{self.popen.pid}/stat").read_text()
        except OSError:  # exited between the poll and the read
            return
        utime, stime = stat.rsplit(")", 1)[1].split()[11:13]
        self.cpu_s = (int(utime) + int(stime)) / CLOCK_TICKS
        self.cpu_wall_s = time.monotonic() - self.started

    def check(self, code: int) -> None:
        if self.cause is not None:
            raise AgentError(f"{self.cause}; YCSB stopped ({self.stdout})")
        super().check(code)


def spawn_logged(shell: TenantShell, argv: list[str], what: str, log_file: Path) -> Process:
    """Start argv in the tenant with stdout and stderr in one run-folder file."""
    handle = log_file.open("wb")
    try:
        popen = shell.spawn(argv, handle, handle)
    except BaseException:
        handle.close()
        raise
    return Process(what, popen, log_file, log_file, [handle])


class Redis(Workload):
    TOOL = "redis"
    TOOLS = (
        Tool("redis-server", "redis-server", False, "redis workloads (inside the tenant)"),
        Tool("redis-cli", "redis-tools", False, "redis workloads (readiness, counters)"),
        Tool("java", "default-jre-headless", False, "YCSB client of redis workloads"),
        Tool("socat", "socat", False, "redis workloads on the vm arm (the tunnel's guest end)"),
    )
    PRESETS: dict[str, dict[str, Any]] = {}

    def __init__(self, tenant: str, settings: dict[str, Any], duration_s: int) -> None:
        super().__init__(tenant, settings, duration_s)
        self.config = settings_of(settings)
        self.server: Process | None = None
        self.bridge: Process | None = None  # the tunnel's end inside the tenant
        self.jars: Path | None = None
        self.client_socket: Path | None = None  # Redis's socket as the host's client sees it
        self.tunnel: Tunnel | None = None  # how the client reaches Redis, when not by a folder
        self.guest = False  # Redis runs behind the tenant's own kernel: no fsync trace
        self.cgroup = ""
        self.out: Path | None = None
        self.root: Path | None = None
        self.facts: dict[str, Any] = {}
        self.clients: list[Process] = []
        self.server_cpu_start = (0.0, 0.0)  # (redis-server's CPU s, monotonic) as YCSB starts

    # -- where things are ----------------------------------------------------------------------

    def tenant_folder(self, shell: TenantShell) -> str:
        return f"{shell.data_dir}/{FOLDER}"

    def socket(self) -> Path:
        assert self.client_socket is not None
        return self.client_socket

    def guest_tunnels(self) -> list[str]:
        return [TUNNEL]

    def where(self, shell: TenantShell) -> None:
        """Where the host's client reaches Redis: the end of the tenant's tunnel when it
        offers one (the vm arm's guests), else the tenant's data folder as the host sees it."""
        self.guest = shell.guest_kernel
        self.tunnel = shell.tunnel(TUNNEL)
        if self.tunnel is not None:
            if self.config["threads"] != 1:
                raise AgentError(f"tenant {self.tenant}: the redis workload through a tunnel "
                                 f"takes threads: 1, not {self.config['threads']} (the tunnel "
                                 "carries one connection at a time)")
            self.client_socket = self.tunnel.host_end
            return
        folder = shell.host_path
        if folder is None:
            raise AgentError(f"tenant {self.tenant}: the host can reach Redis neither through "
                             "the tenant's data folder nor through a tunnel")
        self.client_socket = folder / FOLDER / SOCKET
        if len(str(self.socket()).encode()) > SOCKET_PATH_MAX:
            raise AgentError(f"tenant {self.tenant}: socket path {self.socket()} is longer than "
                             f"{SOCKET_PATH_MAX} bytes: use a shorter state_dir")

    # -- the interface -----------------------------------------------------------------------------

    def versions(self) -> dict[str, str]:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
        versions = {"redis-server": tool_version("redis-server", "--version"),
                    "java": (java.stderr.strip().splitlines() or ["unknown"])[0],
                    "ycsb": YCSB_VERSION}
        if self.tunnel is not None:  # `socat -V`: a banner line, then the version
            lines = subprocess.run(["socat", "-V"], capture_output=True, text=True,
                                   check=False).stdout.splitlines()
            versions["socat"] = next((line.strip() for line in lines if "version" in line),
                                     "unknown")
        if self.jars is not None:
            info = binding_info(self.jars)
            versions["ycsb-redis"] = (f"{info['version']} source {info['source_sha256'][:16]} "
                                      f"jar {info['jar_sha256'][:16]}")
        return versions

    def prepare(self, shell: TenantShell) -> None:
        self.where(shell)
        out = self.out = shell.out
        self.cgroup = shell.cgroup
        self.root = shell.state_root
        self.jars = install_jars(shell.state_root)
        self.facts["binding"] = binding_info(self.jars)
        folder = self.tenant_folder(shell)
        shell.run(["mkdir", "-p", folder])
        log_file = out / f"redis-{self.tenant}.log"
        self.server = spawn_logged(shell, server_argv(folder), f"redis-server in {self.tenant}",
                                   log_file)
        self.wait_ready(shell, log_file)
        if self.tunnel is not None:
            self.bridge = self.start_bridge(shell, self.tunnel,
                                            out / f"redis-{self.tenant}-tunnel.log")
        self.load(out)
        self.facts["aof_bytes_loaded"] = self.aof_bytes(shell)

    def wait_ready(self, shell: TenantShell, log_file: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        socket = f"{self.tenant_folder(shell)}/{SOCKET}"
        while time.monotonic() < deadline:
            assert self.server is not None
            code = self.server.popen.poll()
            if code is not None:
                lines = log_file.read_text(errors="replace").strip().splitlines()
                raise AgentError(f"tenant {self.tenant}: redis-server exited {code} at start "
                                 f"(see {log_file}): {lines[-1] if lines else 'no output'}")
            try:
                if shell.run(["redis-cli", "-s", socket, "ping"], timeout=10).strip() == "PONG":
                    return
            except AgentError:
                pass  # listening soon
            time.sleep(0.1)
        raise AgentError(f"tenant {self.tenant}: redis-server did not answer PING within "
                         f"{START_TIMEOUT_S} s (see {log_file})")

    def start_bridge(self, shell: TenantShell, tunnel: Tunnel, log_file: Path) -> Process:
        """The tunnel's end inside the tenant: a bridge (the vm arm's: socat between the
        tunnel's port and Redis's socket), ready once it has opened both (its log says so)."""
        argv = tunnel.bridge(f"{self.tenant_folder(shell)}/{SOCKET}")
        bridge = spawn_logged(shell, argv, f"tunnel bridge of {self.tenant}", log_file)
        deadline = time.monotonic() + BRIDGE_TIMEOUT_S
        while tunnel.ready not in log_file.read_text(errors="replace"):
            if bridge.popen.poll() is not None or time.monotonic() > deadline:
                bridge.kill()
                lines = log_file.read_text(errors="replace").strip().splitlines()
                raise AgentError(f"tenant {self.tenant}: the tunnel's bridge (socat) did not "
                                 f"start (see {log_file}): {lines[-1] if lines else 'no output'}")
            time.sleep(0.05)
        return bridge

    def aof_bytes(self, shell: TenantShell) -> int:
        folder = self.tenant_folder(shell)
        sizes = shell.run(aof_argv(folder), timeout=60).split()
        if not sizes:
            raise AgentError(f"tenant {self.tenant}: no append-only file below {folder}")
        return sum(int(size) for size in sizes)

    def watch(self, client: Client) -> None:
        """Stop the client as soon as Redis (or the tunnel's bridge) ends while it runs."""
        def run() -> None:
            while client.popen.poll() is None:
                client.sample_cpu()
                for part in (self.server, self.bridge):
                    if part is not None and part.popen.poll() is not None:
                        client.cause = (f"tenant {self.tenant}: {part.what} exited "
                                        f"{part.popen.returncode} while {client.what} ran "
                                        f"(see {part.stdout})")
                        client.popen.kill()
                        return
                time.sleep(WATCH_S)

        threading.Thread(target=run, name=f"watch-{self.tenant}", daemon=True).start()

    def load(self, out: Path) -> None:
        """Load the records (YCSB -load): before the measured phase, checked like it."""
        assert self.jars is not None
        report = out / f"ycsb-load-{self.tenant}.log"
        errors = out / f"ycsb-load-{self.tenant}.stderr"
        argv = ycsb_argv(self.jars, "-load", self.socket(), self.config, None)
        t0 = time.monotonic()
        with report.open("wb") as stdout, errors.open("wb") as stderr:
            proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr)
            client = Client(f"YCSB load of {self.tenant}", proc, report, errors)
            self.clients.append(client)
            self.watch(client)
            try:
                code = proc.wait(timeout=LOAD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise AgentError(f"tenant {self.tenant}: YCSB load did not finish within "
                                 f"{LOAD_TIMEOUT_S} s ({report})") from None
            finally:
                client.kill()
        self.facts["load_s"] = round(time.monotonic() - t0, 3)
        if client.cause is not None:
            client.check(code)
        result = self.checked(code, report, errors, "load")
        done = result.operations["INSERT"].operations if "INSERT" in result.operations else 0
        if done != self.config["records"]:
            raise AgentError(f"tenant {self.tenant}: YCSB loaded {done} of "
                             f"{self.config['records']} records ({report})")
        log.info("redis in %s: %d records loaded in %.1f s", self.tenant, done,
                 self.facts["load_s"])

    def checked(self, code: int, report: Path, errors: Path, phase: str) -> YcsbResult:
        """The parsed YCSB output of a phase; one line naming tenant and file otherwise."""
        if code != 0:
            lines = errors.read_text(errors="replace").strip().splitlines()
            raise AgentError(f"tenant {self.tenant}: YCSB {phase} exited {code} (see {errors}): "
                             f"{lines[-1] if lines else 'no output'}")
        try:
            result = parse_ycsb(report, errors)
        except ParseError as error:
            raise AgentError(f"tenant {self.tenant}: YCSB {phase}: {error}") from None
        failed = failed_operations(result)
        if failed:
            raise AgentError(f"tenant {self.tenant}: YCSB {phase} reported {failed} failed "
                             f"operation(s) (Return other than OK) in {report}")
        return result

    def start(self, shell: TenantShell, out: Path) -> list[Process]:
        assert self.jars is not None
        report = out / ycsb_file(self.tenant)
        errors = out / ycsb_stderr(self.tenant)
        stdout, stderr = report.open("wb"), errors.open("wb")
        argv = ycsb_argv(self.jars, "-t", self.socket(), self.config, self.duration_s)
        self.server_cpu_start = (self.server_cpu(shell), time.monotonic())
        try:
            proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr)
        except BaseException:
            stdout.close()
            stderr.close()
            raise
        client = Client(f"YCSB in {self.tenant}", proc, report, errors, [stdout, stderr])
        self.clients.append(client)
        self.watch(client)
        return [client]

    def finish(self, shell: TenantShell, out: Path) -> None:
        report = out / ycsb_file(self.tenant)
        self.checked(0, report, out / ycsb_stderr(self.tenant), "run")
        socket = f"{self.tenant_folder(shell)}/{SOCKET}"
        info = self.info(shell, "all")
        if info.get("aof_last_write_status") != "ok":
            raise AgentError(f"tenant {self.tenant}: Redis reports aof_last_write_status "
                             f"{info.get('aof_last_write_status')!r} (see redis-{self.tenant}.log)")
        facts = {
            "tenant": self.tenant, **self.config, "cpu": self.cpu_facts(info),
            "config": {"appendonly": "yes", "appendfsync": "everysec", "save": "",
                       "auto-aof-rewrite-percentage": "0", "socket": socket},
            "redis_version": info.get("redis_version"),
            # how the host's client reached Redis, and whether the AOF's fdatasync was traced
            "client_socket": str(self.client_socket),
            "client_via": "tunnel" if self.tunnel is not None else "data folder",
            "fsync_tracer": None if self.guest else "pids",
            **self.facts,
            "aof_bytes_end": self.aof_bytes(shell),
            "info": {key: info.get(key) for key in (
                "aof_delayed_fsync", "aof_last_write_status", "aof_rewrites",
                "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "total_commands_processed",
                "used_memory", "used_cpu_sys", "used_cpu_user", "db0")},
        }
        (out / redis_file(self.tenant)).write_text(
            json.dumps(facts, indent=1, sort_keys=True) + "\n")

    def info(self, shell: TenantShell, section: str) -> dict[str, str]:
        """Redis's INFO `section`, read inside the tenant."""
        return info_fields(shell.run(["redis-cli", "-s", f"{self.tenant_folder(shell)}/{SOCKET}",
                                      "info", section]))

    def server_cpu(self, shell: TenantShell) -> float:
        """redis-server's CPU seconds so far (INFO's used_cpu_sys + used_cpu_user)."""
        return used_cpu(self.info(shell, "cpu"))

    def cpu_facts(self, info: dict[str, str]) -> dict[str, float]:
        """CPU seconds of the server and of the measured phase's client, each with the wall
        seconds they were used in: a client and a server that take turns on one request
        chain and together use a core leave the disk no say in the pace (runs.cpu_bound)."""
        started, at = self.server_cpu_start
        client = self.clients[-1]
        assert isinstance(client, Client)
        if client.cpu_s is None or client.cpu_wall_s is None:
            raise AgentError(f"tenant {self.tenant}: the YCSB client's CPU time was never read "
                             f"(it ran under {WATCH_S} s?)")
        return {"server_s": round(used_cpu(info) - started, 3),
                "server_wall_s": round(time.monotonic() - at, 3),
                "client_s": client.cpu_s, "client_wall_s": round(client.cpu_wall_s, 3)}

    def stop(self, shell: TenantShell) -> None:
        for client in self.clients:
            client.kill()
        if self.server is None:
            return  # the bridge starts after the server
        if self.server.popen.poll() is None:
            try:
                shell.run(["redis-cli", "-s", f"{self.tenant_folder(shell)}/{SOCKET}",
                           "shutdown", "nosave"], timeout=STOP_TIMEOUT_S)
            except AgentError as error:  # it may already be gone; the wait below decides
                log.debug("redis shutdown in %s: %s", self.tenant, error)
            try:
                self.server.popen.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.error("redis-server in %s did not stop; killing it", self.tenant)
        self.server.kill()
        if self.bridge is not None:  # socat idles on the port: its relay's end kills it
            self.bridge.kill()

    def outputs(self) -> list[str]:
        files = [ycsb_file(self.tenant), ycsb_stderr(self.tenant),
                 redis_file(self.tenant)]
        return files if self.guest else [*files, fsync_file(self.tenant)]

    def probes(self) -> list[Any]:
        """fdatasync of Redis's AOF (its background thread calls it once a second), traced
        over every thread of the tenant's redis-server as the host numbers it: that works on
        cgroup v1 and v2 hosts alike, and nothing else in the tenant syncs. None in a guest:
        its kernel, not the host's, makes that call."""
        if self.server is None or self.out is None or self.root is None or self.guest:
            return []
        pids = host_pids("redis-server", self.cgroup)
        if len(pids) != 1:
            raise AgentError(f"tenant {self.tenant}: expected one redis-server in cgroup "
                             f"{self.cgroup}, found {pids}")
        return [FsyncTracer(self.out / fsync_file(self.tenant), self.root,
                            pids=(pids[0],))]

    # -- clean-up by discovery (also after kill -9 of the agent) ----------------------------------

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        found = [f"YCSB client {pid}" for pid in processes_naming(jar_dir(root))]
        if jar_dir(root).exists():
            found.append(f"YCSB jars {jar_dir(root)}")
        return found

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        """Kill the clients of this host's runs; Redis itself dies with its tenant."""
        kill_wait(processes_naming(jar_dir(root)), "YCSB clients")
        shutil.rmtree(jar_dir(root), ignore_errors=True)
