"""Reach a test host: run a command (timeout, streamed output), put a file, get a file or a tree.

One interface, two implementations: `LocalTransport` (this machine, no SSH) and `SSHTransport`
(paramiko). Commands are argument lists, never shell strings: on SSH each argument is
`shlex.quote`d, and the only shell text we send is the constant scripts below, which receive
every value as a positional parameter.

Every remote command starts by printing one marker line on stderr, `@jb-pid PID PGRP START`
(its pid, process group and start time in clock ticks), then `exec`s the real command. That is
what lets a timed-out or orphaned command be killed later, as a whole process group, without
ever killing a recycled pid: the kill script checks the start time first.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paramiko

from journalbench.errors import AgentError, ConfigError

# paramiko logs a failed connection's traceback at ERROR, a record per line, which Python's
# last-resort handler prints on stderr; the transport says what failed in one line instead.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
logging.getLogger("paramiko").propagate = False

OutputCallback = Callable[[str, str], None]
"""Called with ("stdout" | "stderr", one line without its newline) as output arrives."""

# Results keep at most this much of each stream (the tail): agent runs can talk a lot.
KEEP_BYTES = 4 << 20
KILL_GRACE_S = 10.0

# `st PID` prints "PGRP STARTTIME" of PID; fields are counted after the last ')' because the
# command name in /proc/PID/stat may itself contain spaces or parentheses.
STAT_FN = (
    "st() { s=$(cat /proc/$1/stat 2>/dev/null) || return 1; r=${s##*) }; "
    'set -- $r; g=$3; shift 19; echo "$g $1"; }; '
)
WRAP_SCRIPT = STAT_FN + 'echo "@jb-pid $$ $(st $$)" >&2; exec "$@"'
# `kg PID START GRACE`: if PID is still the process that started at START (clock ticks), TERM
# its whole process group, wait up to GRACE seconds for it to go, then KILL what is left.
# Zombies don't count as alive (`kill -0` would count them; a parent may be slow to reap).
# dash's kill needs `-s 0`: it misreads `kill -0 -- -PGID`.
KILL_FN = (
    "alive() { if command -v ps >/dev/null 2>&1; then ps -e -o pgid=,stat= | "
    "awk -v g=\"$1\" '$1 == g && $2 !~ /^Z/ {f = 1} END {exit !f}'; "
    'else kill -s 0 -- "-$1" 2>/dev/null; fi; }; '
    'kg() { now=$(st "$1") || return 1; [ "${now#* }" = "$2" ] || return 1; g=${now%% *}; '
    'kill -s TERM -- "-$g" 2>/dev/null; i=0; while alive "$g"; do '
    '[ "$i" -ge "$(($3 * 5))" ] && { kill -s KILL -- "-$g" 2>/dev/null; sleep 0.2; break; }; '
    'i=$((i + 1)); sleep 0.2; done; echo "killed $g"; }; '
)
KILL_SCRIPT = STAT_FN + KILL_FN + 'kg "$1" "$2" "$3"; exit 0'
# Write stdin to $1 atomically (temp sibling, then rename), creating the parent; mode $2.
PUT_SCRIPT = (
    'd=$(dirname "$1"); mkdir -p "$d" && t="$1.part.$$" && cat > "$t" && chmod "$2" "$t" '
    '&& mv -f "$t" "$1" || { rm -f "$t"; exit 1; }'
)
MARKER = "@jb-pid "


class TransportError(AgentError):
    """A host could not be reached or a command could not be run there; the message says why."""


class ConnectionLost(TransportError):
    """The connection died while a command ran: the command's outcome is unknown."""

    def __init__(self, message: str, pid: tuple[int, int, int] | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class CommandTimeout(TransportError):
    """A command ran past its timeout and was killed (its whole process group)."""


class CommandFailed(TransportError):
    def __init__(self, message: str, result: Result) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class Result:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    where: str = ""

    def check(self) -> Result:
        if self.returncode != 0:
            lines = (self.stderr.strip() or self.stdout.strip()).splitlines()
            detail = lines[-1] if lines else "no output"
            raise CommandFailed(
                f"{self.where}: {shlex.join(self.argv)[:200]} exited {self.returncode}: {detail}",
                self,
            )
        return self


def command_line(argv: Sequence[str], sudo: bool = False) -> str:
    """The one shell string sent over SSH for argv: wrapper, then every argument quoted."""
    if not argv:
        raise ValueError("empty command")
    words = ["sh", "-c", WRAP_SCRIPT, "jb", *map(str, argv)]
    if sudo:
        words = ["sudo", "-n", "--", *words]
    return shlex.join(words)


def parse_marker(line: str) -> tuple[int, int, int] | None:
    if not line.startswith(MARKER):
        return None
    parts = line[len(MARKER) :].split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


class _Streams:
    """Split byte chunks into lines for the callback, keep a bounded tail, eat the pid marker."""

    def __init__(self, on_output: OutputCallback | None) -> None:
        self.on_output = on_output
        self.partial = {"stdout": b"", "stderr": b""}
        self.kept = {"stdout": bytearray(), "stderr": bytearray()}
        self.pid: tuple[int, int, int] | None = None
        self.lock = threading.Lock()

    def feed(self, stream: str, data: bytes) -> None:
        with self.lock:
            buffer = self.partial[stream] + data
            *lines, self.partial[stream] = buffer.split(b"\n")
            for raw in lines:
                self._line(stream, raw)

    def finish(self) -> None:
        with self.lock:
            for stream, rest in self.partial.items():
                if rest:
                    self._line(stream, rest)
                self.partial[stream] = b""

    def _line(self, stream: str, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if stream == "stderr" and self.pid is None:
            marker = parse_marker(text)
            if marker is not None:
                self.pid = marker
                return
        kept = self.kept[stream]
        kept += raw + b"\n"
        if len(kept) > 2 * KEEP_BYTES:
            del kept[: len(kept) - KEEP_BYTES]
        if self.on_output is not None:
            self.on_output(stream, text)

    def text(self, stream: str) -> str:
        return bytes(self.kept[stream]).decode("utf-8", errors="replace")


class Transport:
    """Run commands on a host and move files to and from it. Subclasses implement `_exec`."""

    label = "host"
    sudo = False
    attempts = 1

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = 300,
        on_output: OutputCallback | None = None,
        stdin: bytes | None = None,
        check: bool = True,
        retry: bool = False,
    ) -> Result:
        """Run argv; raise CommandFailed (if check), CommandTimeout or ConnectionLost.

        retry=True is only for idempotent commands: after a lost connection the command is run
        again on a fresh one, because it may or may not have finished.
        """
        argv = [str(a) for a in argv]
        attempts = self.attempts if retry else 1
        for attempt in range(1, attempts + 1):
            try:
                result = self._exec(argv, timeout, on_output, stdin, None)
                break
            except ConnectionLost:
                if attempt == attempts:
                    raise
                self.reconnect()
        return result.check() if check else result

    def put(self, local: Path | str, remote: str, mode: int = 0o644) -> None:
        """Copy a local file to the host atomically (temp sibling, rename), parents created."""
        data = Path(local).read_bytes()
        self.put_bytes(data, remote, mode)

    def put_bytes(self, data: bytes, remote: str, mode: int = 0o644) -> None:
        self.run(["sh", "-c", PUT_SCRIPT, "jb-put", remote, f"{mode:o}"], stdin=data, retry=True)

    def get(self, remote: str, local: Path | str) -> None:
        """Copy one file from the host; the local file appears complete or not at all."""
        local = Path(local)
        local.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            dir=local.parent, prefix=f".{local.name}.", delete=False
        ) as tmp:
            try:
                self._to_file(["cat", "--", remote], tmp)
                tmp.close()
                os.replace(tmp.name, local)
            except BaseException:
                Path(tmp.name).unlink(missing_ok=True)
                raise

    def get_tree(self, remote_dir: str, local_dir: Path | str) -> None:
        """Copy a directory's contents from the host into local_dir (created, must be new)."""
        local_dir = Path(local_dir)
        local_dir.mkdir(parents=True)
        with tempfile.TemporaryFile() as archive:
            self._to_file(["tar", "-C", remote_dir, "-cf", "-", "."], archive)
            archive.seek(0)
            with tarfile.open(fileobj=archive, mode="r:") as tar:
                # The "data" filter refuses absolute paths, links out of the tree and devices.
                tar.extractall(local_dir, filter="data")

    def _to_file(self, argv: list[str], handle: Any) -> None:
        for attempt in range(1, self.attempts + 1):
            handle.seek(0)
            handle.truncate()
            try:
                result = self._exec(argv, 600, None, None, handle)
                break
            except ConnectionLost:
                if attempt == self.attempts:
                    raise
                self.reconnect()
        result.check()

    def kill(self, pid: tuple[int, int, int], grace_s: float = KILL_GRACE_S) -> bool:
        """Kill the process group of a marker (pid, pgrp, start) if that process still runs."""
        result = self.run(
            ["sh", "-c", KILL_SCRIPT, "jb-kill", pid[0], pid[2], int(grace_s)],
            timeout=grace_s + 30,
            check=False,
            retry=True,
        )
        return "killed" in result.stdout

    def reconnect(self) -> None:
        pass

    def close(self) -> None:
        pass

    def prepare_for(self, spec: dict[str, Any]) -> None:
        """What a run about to start needs of the host before the transport connects (a nested
        host boots as the cgroup version it asks for); nothing, for a host that is as it is."""

    def watch(self, on_output: OutputCallback | None) -> OutputCallback | None:
        """The callback the agent's run streams its output to: `on_output`, or one that also
        reads it first (a nested host's controller reads its own machine at the workload
        phase's start and end)."""
        return on_output

    def after_run(self, dest: Path) -> None:
        """Once a run's folder is fetched complete to `dest`: what the transport adds of its
        own (a nested host: outer.json), nothing here."""

    def agent_host(self, host: dict[str, Any]) -> dict[str, Any]:
        """The host document the agent on the other end gets (deploy writes it there): the
        host file itself, unless the host is a machine seen differently from inside."""
        return host

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _exec(
        self,
        argv: list[str],
        timeout: float | None,
        on_output: OutputCallback | None,
        stdin: bytes | None,
        sink: Any,
    ) -> Result:
        raise NotImplementedError


class LocalTransport(Transport):
    """This machine: a subprocess per command in its own session (so a timeout kills it all)."""

    label = "local"

    def _exec(self, argv, timeout, on_output, stdin, sink) -> Result:
        streams = _Streams(on_output)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            return Result(argv, 127, "", f"{argv[0]}: command not found\n", 0.0, self.label)

        def pump(stream: str, pipe: Any) -> None:
            for chunk in iter(lambda: pipe.read1(65536), b""):
                if sink is not None and stream == "stdout":
                    sink.write(chunk)
                else:
                    streams.feed(stream, chunk)

        readers = [
            threading.Thread(target=pump, args=("stdout", proc.stdout), daemon=True),
            threading.Thread(target=pump, args=("stderr", proc.stderr), daemon=True),
        ]
        for reader in readers:
            reader.start()
        if stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _killpg(proc)
            raise CommandTimeout(
                f"{self.label}: {shlex.join(argv)[:200]} timed out after {timeout:.0f} s (killed)"
            ) from None
        except BaseException:
            # Ctrl-C or a killed campaign: the command's whole session goes with us.
            _killpg(proc)
            raise
        for reader in readers:
            # A daemon the command started may hold the pipes open; don't wait for it.
            reader.join(timeout=5)
        streams.finish()
        rc = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        return Result(
            argv,
            rc,
            streams.text("stdout"),
            streams.text("stderr"),
            time.monotonic() - started,
            self.label,
        )


def _killpg(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------------------------
# SSH


@dataclass
class SSHSettings:
    """The `ssh` section of a host file, with defaults applied and paths resolved."""

    address: str
    port: int = 22
    user: str = "root"
    key_file: Path | None = None
    use_agent: bool = False
    sudo: bool = False
    known_hosts: Path = field(default_factory=lambda: Path("~/.ssh/known_hosts").expanduser())
    trust_on_first_use: bool = False
    connect_timeout_s: float = 15.0
    keepalive_s: float = 15.0
    keepalive_count_max: int = 4
    connect_attempts: int = 3
    source: str = "host file"

    @classmethod
    def from_host(cls, host: dict[str, Any]) -> SSHSettings:
        source = host.get("_file", f"host {host.get('name', '?')}")
        ssh = host.get("ssh")
        if not isinstance(ssh, dict) or "address" not in ssh:
            raise ConfigError(f"{source}: field ssh.address: required when transport is ssh")
        base = Path(source).parent if "_file" in host else Path.cwd()

        def path(value: str) -> Path:
            p = Path(os.path.expanduser(value))
            return p if p.is_absolute() else (base / p)

        settings = cls(address=ssh["address"], source=source)
        for name in (
            "port",
            "user",
            "use_agent",
            "sudo",
            "trust_on_first_use",
            "connect_timeout_s",
            "keepalive_s",
            "keepalive_count_max",
            "connect_attempts",
        ):
            if name in ssh:
                setattr(settings, name, ssh[name])
        if ssh.get("key_file"):
            settings.key_file = path(ssh["key_file"])
        if ssh.get("known_hosts"):
            settings.known_hosts = path(ssh["known_hosts"])
        if settings.key_file is None and not settings.use_agent:
            raise ConfigError(f"{source}: field ssh: give key_file or set use_agent: true")
        return settings

    @property
    def host_key_name(self) -> str:
        return known_hosts_name(self.address, self.port)


def known_hosts_name(address: str, port: int) -> str:
    """How OpenSSH names a host in known_hosts: bare on port 22, else `[address]:port`."""
    return address if port == 22 else f"[{address}]:{port}"


def fingerprint(key_bytes: bytes) -> str:
    """OpenSSH-style SHA256 fingerprint of a public key blob."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key_bytes).digest()).decode().rstrip("=")


def known_hosts_line(name: str, key_type: str, key_bytes: bytes) -> str:
    return f"{name} {key_type} {base64.b64encode(key_bytes).decode()}\n"


# Errors after which a connect attempt is worth repeating (network hiccups, a busy sshd that
# drops the banner, MaxStartups); authentication and host-key errors are not among them.
def _transient(error: BaseException) -> bool:
    if isinstance(error, (paramiko.AuthenticationException, paramiko.BadHostKeyException)):
        return False
    return isinstance(error, (OSError, EOFError, paramiko.SSHException))


class SSHTransport(Transport):
    def __init__(self, host: dict[str, Any], settings: SSHSettings | None = None) -> None:
        self.host = host
        self.settings = settings or SSHSettings.from_host(host)
        s = self.settings
        self.sudo = s.sudo and s.user != "root"
        self.attempts = max(1, int(s.connect_attempts))
        self.label = f"{host.get('name', s.address)} ({s.user}@{s.address}:{s.port})"
        self._client: Any = None
        self.warn: Callable[[str], None] = lambda msg: print(
            f"journalbench: warning: {msg}", file=sys.stderr
        )

    # -- connection ---------------------------------------------------------------------------

    def connect(self) -> None:
        if self._client is not None and self._client.get_transport() is not None:
            if self._client.get_transport().is_active():
                return
        self.drop_client()  # not close(): a subclass's close lets go of more (a nested lease)
        s = self.settings
        if s.key_file is not None and not s.key_file.is_file():
            raise ConfigError(f"{s.source}: field ssh.key_file: {s.key_file}: no such file")
        delay = 1.0
        for attempt in range(1, self.attempts + 1):
            try:
                self._client = self._connect_once()
                return
            except (TransportError, ConfigError):
                raise
            except Exception as error:  # noqa: BLE001 - classified just below
                if not _transient(error):
                    raise self._explain(error) from None
                if attempt == self.attempts:
                    raise TransportError(
                        f"{self.label}: cannot connect after {attempt} attempts: "
                        f"{type(error).__name__}: {error}"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 8.0)

    def _connect_once(self) -> Any:
        s = self.settings
        client = paramiko.SSHClient()
        if s.known_hosts.is_file():
            try:
                client.get_host_keys().load(str(s.known_hosts))
            except (paramiko.SSHException, ValueError) as error:
                raise ConfigError(f"{s.known_hosts}: unreadable known_hosts ({error})") from None
        client.set_missing_host_key_policy(_HostKeyPolicy(self))
        sock = socket.create_connection((s.address, s.port), timeout=s.connect_timeout_s)
        _tune_socket(sock, s.keepalive_s, s.keepalive_count_max)
        try:
            client.connect(
                hostname=s.address,
                port=s.port,
                username=s.user,
                key_filename=str(s.key_file) if s.key_file else None,
                allow_agent=s.use_agent,
                look_for_keys=False,
                sock=sock,
                timeout=s.connect_timeout_s,
                banner_timeout=s.connect_timeout_s,
                auth_timeout=s.connect_timeout_s,
                channel_timeout=s.connect_timeout_s,
            )
        except BaseException:
            client.close()
            sock.close()
            raise
        client.get_transport().set_keepalive(max(1, int(s.keepalive_s)))
        return client

    def _explain(self, error: Exception) -> TransportError:
        s = self.settings
        if isinstance(error, paramiko.BadHostKeyException):
            return TransportError(
                f"{self.label}: host key of {s.host_key_name} does not match {s.known_hosts} "
                f"(offered {error.key.get_name()} {fingerprint(error.key.asbytes())}, known "
                f"{fingerprint(error.expected_key.asbytes())}): refusing to connect; if the host "
                f"was reinstalled, remove the old entry (ssh-keygen -R '{s.host_key_name}' "
                f"-f {s.known_hosts})"
            )
        if isinstance(error, paramiko.AuthenticationException):
            how = f"key {s.key_file}" if s.key_file else "the SSH agent"
            return TransportError(f"{self.label}: authentication as {s.user} with {how} failed")
        return TransportError(f"{self.label}: {type(error).__name__}: {error}")

    def reconnect(self) -> None:
        self.close()
        self.connect()

    def close(self) -> None:
        self.drop_client()

    def drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- commands -----------------------------------------------------------------------------

    def _exec(self, argv, timeout, on_output, stdin, sink) -> Result:
        self.connect()
        ssh_transport = self._client.get_transport()
        started = time.monotonic()
        streams = _Streams(on_output)
        try:
            channel = ssh_transport.open_session(timeout=self.settings.connect_timeout_s)
            channel.exec_command(command_line(argv, self.sudo))
        except Exception as error:  # noqa: BLE001 - a dead transport shows up as many types
            if not ssh_transport.is_active():
                raise ConnectionLost(f"{self.label}: connection lost ({error})") from None
            raise TransportError(f"{self.label}: cannot start command: {error}") from None
        writer = None
        if stdin is not None:
            writer = threading.Thread(target=_send_all, args=(channel, stdin), daemon=True)
            writer.start()
        else:
            channel.shutdown_write()
        deadline = None if timeout is None else started + timeout
        selector = selectors.DefaultSelector()
        selector.register(channel.fileno(), selectors.EVENT_READ)
        drain_until = 0.0
        silent = 0.0
        heard = time.monotonic()  # when the server last sent output or answered a probe
        silent_limit = self.settings.keepalive_s * self.settings.keepalive_count_max
        try:
            while True:
                got = False
                while channel.recv_ready():
                    data = channel.recv(65536)
                    got = True
                    if sink is not None:
                        sink.write(data)
                    else:
                        streams.feed("stdout", data)
                while channel.recv_stderr_ready():
                    streams.feed("stderr", channel.recv_stderr(65536))
                    got = True
                # sshd may send the exit status before the last output; EOF comes after
                # both streams are drained. A daemon the command left holding the streams
                # would keep EOF away for ever, so wait for it only briefly.
                if channel.exit_status_ready() and not (
                    channel.recv_ready() or channel.recv_stderr_ready()
                ):
                    if channel.eof_received or channel.closed:
                        break
                    drain_until = drain_until or time.monotonic() + 2.0
                    if time.monotonic() > drain_until:
                        break
                if got:
                    heard = time.monotonic()
                elif time.monotonic() - heard >= self.settings.keepalive_s:
                    if self._answers(ssh_transport):
                        heard = time.monotonic()
                    elif time.monotonic() - heard > silent_limit:
                        silent = time.monotonic() - heard
                        ssh_transport.close()  # read below as a lost connection
                if not ssh_transport.is_active():
                    break
                if deadline is not None and time.monotonic() > deadline:
                    self._kill_after_timeout(streams)
                    raise CommandTimeout(
                        f"{self.label}: {shlex.join(argv)[:200]} timed out after "
                        f"{timeout:.0f} s (killed)"
                    )
                if not got and selector.select(timeout=1.0):
                    # Ready but nothing to read: the stream hit EOF while the command still
                    # runs, and paramiko's pipe then stays readable; don't spin on it.
                    if not (channel.recv_ready() or channel.recv_stderr_ready()):
                        time.sleep(0.05)
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, SystemExit)) and streams.pid:
                # A killed campaign must not leave the command running on the host.
                try:
                    self.kill(streams.pid, grace_s=5)
                except Exception:  # noqa: BLE001 - best effort while already failing
                    pass
            raise
        finally:
            selector.close()
        streams.finish()
        status = channel.exit_status if channel.exit_status_ready() else -1
        channel.close()
        if status == -1 and not ssh_transport.is_active():
            why = f" (no answer for {silent:.0f} s)" if silent else ""
            raise ConnectionLost(
                f"{self.label}: connection lost{why} while running {shlex.join(argv)[:120]}",
                streams.pid,
            )
        if status == -1:
            status = 255  # killed by a signal; sshd sent exit-signal, which paramiko ignores
        if writer is not None:
            writer.join(timeout=5)
        return Result(
            argv,
            status,
            streams.text("stdout"),
            streams.text("stderr"),
            time.monotonic() - started,
            self.label,
        )

    def _answers(self, ssh_transport: Any) -> bool:
        """Whether the server answers now: it confirms (or refuses) a channel opened (and
        closed at once) within keepalive_s. The TCP link can outlive the server behind it:
        QEMU's user network acknowledges for a guest whose kernel locked up until it gives up
        minutes later, and paramiko's keepalive never waits for a reply."""
        try:
            probe = ssh_transport.open_session(timeout=self.settings.keepalive_s)
        except paramiko.ChannelException:
            return True  # refused (e.g. MaxSessions): an answer all the same
        except Exception:  # noqa: BLE001 - a timeout, or a transport that died meanwhile
            return False
        probe.close()
        return True

    def _kill_after_timeout(self, streams: _Streams) -> None:
        if streams.pid is None:
            return
        try:
            self.kill(streams.pid)
        except TransportError as error:
            self.warn(f"could not kill timed-out command: {error}")


def _send_all(channel: Any, data: bytes) -> None:
    try:
        channel.sendall(data)
        channel.shutdown_write()
    except (OSError, EOFError):
        pass  # the reader sees the dead channel and reports it


def _tune_socket(sock: socket.socket, interval_s: float, count: int) -> None:
    """TCP keepalive plus TCP_USER_TIMEOUT, so a silently dead link (no RST) is noticed.

    paramiko's keepalive only sends packets; it never waits for a reply. With unacknowledged
    data outstanding for interval*count seconds the kernel now drops the connection, and the
    reader sees it as lost instead of waiting for ever.
    """
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (
        ("TCP_KEEPIDLE", int(interval_s)),
        ("TCP_KEEPINTVL", int(interval_s)),
        ("TCP_KEEPCNT", int(count)),
        ("TCP_USER_TIMEOUT", int(interval_s * count * 1000)),
    ):
        if hasattr(socket, option):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), max(1, value))


class _HostKeyPolicy:
    """Unknown host key: refuse, saying how to fix it, or (opt-in) trust it and record it."""

    def __init__(self, transport: SSHTransport) -> None:
        self.transport = transport

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        s = self.transport.settings
        name = s.host_key_name
        described = f"{key.get_name()} {fingerprint(key.asbytes())}"
        if not s.trust_on_first_use:
            raise TransportError(
                f"{self.transport.label}: host key of {name} ({described}) is not in "
                f"{s.known_hosts}; refusing unknown host. Check the fingerprint on the host "
                f"(ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub) and add it (ssh-keyscan -p {s.port} "
                f"{s.address} >> {s.known_hosts}), or set ssh.trust_on_first_use: true in "
                f"{s.source}"
            )
        s.known_hosts.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with s.known_hosts.open("a") as handle:
            handle.write(known_hosts_line(name, key.get_name(), key.asbytes()))
        client.get_host_keys().add(name, key.get_name(), key)
        self.transport.warn(
            f"trusting new host key of {name} ({described}) on first use "
            f"(ssh.trust_on_first_use in {s.source}); recorded in {s.known_hosts}"
        )


__all__ = [
    "CommandFailed",
    "CommandTimeout",
    "ConnectionLost",
    "LocalTransport",
    "Result",
    "SSHSettings",
    "SSHTransport",
    "Transport",
    "TransportError",
    "command_line",
    "fingerprint",
    "known_hosts_line",
    "known_hosts_name",
]
