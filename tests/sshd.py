"""Real OpenSSH servers for the tests: one on 127.0.0.1, one inside its own network namespace.

Each server has its own host key, its own authorized client key, its own port and config
(`sshd -D -e -f cfg`, no PAM), and is stopped afterwards. The namespace host is reached over a
veth pair with addresses from 10.200.0.0/16 that only these tests use. Teardown kills the
servers and every process left inside the namespace, deletes the namespace and the veth, and
`residue()` reports anything that survived, so tests can assert nothing is left.

sshd is started in the namespace with `nsenter --net` rather than `ip netns exec`: the latter
also gives the process a private mount namespace with a fresh /sys (no /sys/fs/cgroup), so
the agent would neither find its cgroups nor leave its mounts visible to the host.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench.agent.system import process_files

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")  # compiled into Debian's sshd; normally made by systemd
_live_servers: list[SshServer] = []
_made_privsep = False
_netns_counter = itertools.count()


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=check)


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def keygen(path: Path, comment: str) -> str:
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path))
    return path.with_suffix(".pub").read_text().strip()


def children_of(pid: int) -> list[int]:
    kids = []
    for _, status in process_files("status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            kids.append(int(status.parent.name))
    return kids


def pids_matching(token: str, exclude: str | None = None) -> list[int]:
    """Processes whose command line contains token (tests put a unique one in their commands)."""
    found = []
    for _, cmdline in process_files("cmdline"):
        try:
            text = cmdline.read_bytes()
            if exclude is not None and exclude.encode() in text:
                continue
            if token.encode() in text and int(cmdline.parent.name) != os.getpid():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def pids_in_netns(ns_file: Path) -> list[int]:
    try:
        wanted = ns_file.stat().st_ino
    except OSError:
        return []
    found = []
    for _, link in process_files("ns/net"):
        try:
            if link.stat().st_ino == wanted:
                found.append(int(link.parent.parent.name))
        except OSError:
            continue
    return found


def kill_pids(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass
class NetNS:
    """A network namespace with a veth pair: host side .1, namespace side .2 of a /30."""

    name: str
    host_if: str
    ns_if: str
    subnet: int
    created: list[str] = field(default_factory=list)

    @property
    def host_address(self) -> str:
        return f"10.200.{self.subnet}.1"

    @property
    def ns_address(self) -> str:
        return f"10.200.{self.subnet}.2"

    @property
    def path(self) -> Path:
        return Path("/run/netns") / self.name

    @classmethod
    def create(cls) -> NetNS:
        # pid-derived names and subnets keep two concurrent test sessions apart.
        index = next(_netns_counter) % 4
        tag = f"{os.getpid() % 100000}{index}"
        ns = cls(f"jbt-{tag}", f"jbh{tag}", f"jbn{tag}", (os.getpid() % 60) * 4 + index)
        try:
            _run("ip", "netns", "add", ns.name)
            ns.created.append("netns")
            _run("ip", "link", "add", ns.host_if, "type", "veth", "peer", "name", ns.ns_if)
            ns.created.append("veth")
            _run("ip", "link", "set", ns.ns_if, "netns", ns.name)
            _run("ip", "addr", "add", f"{ns.host_address}/30", "dev", ns.host_if)
            _run("ip", "link", "set", ns.host_if, "up")
            inside = ("ip", "-n", ns.name)
            _run(*inside, "addr", "add", f"{ns.ns_address}/30", "dev", ns.ns_if)
            _run(*inside, "link", "set", ns.ns_if, "up")
            _run(*inside, "link", "set", "lo", "up")
        except BaseException:
            ns.remove()
            raise
        return ns

    def link(self, up: bool) -> None:
        """Cut or restore the wire (host side): packets are dropped, no RST is sent."""
        _run("ip", "link", "set", self.host_if, "up" if up else "down")

    def remove(self) -> None:
        kill_pids(pids_in_netns(self.path))
        _run("ip", "netns", "del", self.name, check=False)
        _run("ip", "link", "del", self.host_if, check=False)

    def residue(self) -> list[str]:
        left = []
        if self.name in _run("ip", "netns", "list").stdout.split():
            left.append(f"netns {self.name}")
        if _run("ip", "link", "show", self.host_if, check=False).returncode == 0:
            left.append(f"link {self.host_if}")
        left += [f"pid {pid} in netns {self.name}" for pid in pids_in_netns(self.path)]
        return left


def stop_all(servers: list[SshServer], namespaces: list[NetNS]) -> list[str]:
    """Stop the servers, then remove the namespaces (theirs among them), then read what is
    left of both (a server's residue includes its namespace's: read it before the namespace
    is removed and it is always there)."""
    for server in servers:
        server.stop()
    for ns in namespaces:
        ns.remove()
    return [*(x for server in servers for x in server.residue()),
            *(x for ns in namespaces for x in ns.residue())]


@dataclass
class SshServer:
    name: str
    address: str
    port: int
    dir: Path
    client_key: Path
    host_key_line: str
    known_hosts: Path
    proc: subprocess.Popen | None = None
    netns: NetNS | None = None

    @property
    def log(self) -> Path:
        return self.dir / "sshd.log"

    def host_file(
        self,
        state_dir: Path | str,
        *,
        name: str | None = None,
        ssh: dict[str, Any] | None = None,
        drop: tuple[str, ...] = (),
        **extra: Any,
    ) -> Path:
        """Write a host file (JSON, which is YAML) that reaches this server."""
        section: dict[str, Any] = {
            "address": self.address,
            "port": self.port,
            "user": "root",
            "key_file": str(self.client_key),
            "known_hosts": str(self.known_hosts),
            "connect_timeout_s": 5,
            "keepalive_s": 2,
            "keepalive_count_max": 3,
            "connect_attempts": 2,
        }
        section.update(ssh or {})
        for key in drop:
            section.pop(key, None)
        host = {
            "name": name or self.name,
            "transport": "ssh",
            "python": "/usr/bin/python3",
            "ssh": section,
            "state_dir": str(state_dir),
            "device": {"kind": "image", "size_gb": 2},
            **extra,
        }
        path = self.dir / f"{host['name']}-{len(list(self.dir.glob('*.host.json')))}.host.json"
        path.write_text(json.dumps(host, indent=1))
        return path

    def connections(self) -> list[int]:
        """pids of the per-connection sshd processes (children of the listener)."""
        return children_of(self.proc.pid) if self.proc else []

    def kill_connections(self) -> list[int]:
        pids = self.connections()
        kill_pids(pids)
        return pids

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            kill_pids(self.connections())
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self in _live_servers:
            _live_servers.remove(self)
        _drop_privsep_dir()

    def residue(self) -> list[str]:
        left = []
        if self.proc is not None and self.proc.poll() is None:
            left.append(f"sshd {self.proc.pid} still running")
        if self.netns is not None:
            left += self.netns.residue()
        return left


def _ensure_privsep_dir() -> None:
    global _made_privsep
    if not PRIVSEP_DIR.exists():
        PRIVSEP_DIR.mkdir(mode=0o755)
        _made_privsep = True


def _drop_privsep_dir() -> None:
    global _made_privsep
    if _made_privsep and not _live_servers:
        try:
            PRIVSEP_DIR.rmdir()
        except OSError:
            pass
        _made_privsep = False


def start_sshd(
    workdir: Path,
    name: str,
    *,
    netns: NetNS | None = None,
    path_env: str | None = None,
) -> SshServer:
    """Start sshd on 127.0.0.1 (free port) or on port 22 inside netns; wait until it listens."""
    workdir.mkdir(parents=True, exist_ok=True)
    address = netns.ns_address if netns else "127.0.0.1"
    port = 22 if netns else free_port(address)
    host_pub = keygen(workdir / "host_ed25519", f"{name}-host")
    client_pub = keygen(workdir / "client_ed25519", f"{name}-client")
    (workdir / "authorized_keys").write_text(client_pub + "\n")
    key_type, key_b64 = host_pub.split()[:2]
    entry = f"{address if port == 22 else f'[{address}]:{port}'} {key_type} {key_b64}"
    known_hosts = workdir / "known_hosts"
    known_hosts.write_text(entry + "\n")
    lines = [
        f"Port {port}",
        f"ListenAddress {address}",
        f"HostKey {workdir / 'host_ed25519'}",
        "PidFile none",
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",
        "MaxStartups 50",
        "MaxSessions 50",
        "LogLevel VERBOSE",
    ]
    if path_env:
        lines.append(f"SetEnv PATH={path_env}")
    config = workdir / "sshd_config"
    config.write_text("\n".join(lines) + "\n")
    _ensure_privsep_dir()
    server = SshServer(
        name, address, port, workdir, workdir / "client_ed25519", entry, known_hosts, netns=netns
    )
    argv = [SSHD, "-D", "-e", "-f", str(config)]
    if netns:
        argv = ["nsenter", f"--net={netns.path}", *argv]
    with server.log.open("w") as log:
        server.proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    _live_servers.append(server)
    deadline = time.monotonic() + 15
    while "Server listening" not in server.log.read_text():
        if server.proc.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"sshd {name} did not start: {server.log.read_text()[-500:]}")
        time.sleep(0.05)
    return server


def no_fio_path(workdir: Path) -> str:
    """A PATH with every command of /usr/bin and /usr/sbin except fio (usr is merged here)."""
    target = workdir / "bin-without-fio"
    target.mkdir(parents=True, exist_ok=True)
    for folder in (Path("/usr/sbin"), Path("/usr/bin")):
        for tool in folder.iterdir():
            link = target / tool.name
            if tool.name != "fio" and not link.exists():
                link.symlink_to(tool)
    return str(target)
