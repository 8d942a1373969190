"""Inside a VM guest: PID 1 after the initramfs, serving commands on virtio-serial ports.

Each port (`jb.<n>`) carries one command at a time. The host's relay (`agent/arms/vm/relay.py`)
connects to the port's unix socket, sends the command as one line with a fresh id (`request`:
R, the id and each argument hex-encoded, space-separated), and reads frames back: a type byte
(O stdout, E stderr, X exit code, F could not start), the request's 8-byte id, a 4-byte
big-endian length, the payload. The id matters because QEMU keeps
what the guest wrote while no host was connected (a killed relay's last frames) and hands it to
the next client of the port. A line `K` kills the command; so does the host side going away. A
line `U` sends the command SIGUSR1 (a go signal: the guest report waits for it to take its first
reading). virtio-serial needs no kernel module on the host and no guest network, unlike SSH.
A port whose host side is not connected reads EOF at once, so an idle port waits; the guest's
driver signals (SIGIO) when a host connects, which ends the wait at once: a command does not sit
out a polling interval (~0.2 s each under TCG, several per run's set-up).
PID 1 itself only reaps orphans; the server runs in a child so that `subprocess` keeps the exit
status of its own commands.
Python imports slowly in a TCG guest and this module starts every boot: it imports no json,
pathlib or re (~0.2 s).
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import sys
import threading
import time

PORT_PREFIX = "jb."
READY = "journalbench-guest-ready"
KILL_GRACE_S = 3.0
IDLE_POLL_S = 0.2  # an idle port's wait when no SIGIO comes (a missed one costs this much)
# Commands see the agent package too (the guest report is one of its modules).
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
       "PYTHONPATH": os.environ.get("PYTHONPATH", "")}


ID_BYTES = 8


class Wakeup:
    """Counts SIGIOs (a host connected to or left a port): idle ports wait for the count to
    change. The signal's C handler writes to a pipe whichever thread it lands on; a thread
    reads it, since Python runs signal handlers in the main thread only, which waits in join."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.count = 0

    def install(self) -> None:
        """From the main thread, before any port asks for SIGIO."""
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        signal.set_wakeup_fd(write_end)
        signal.signal(signal.SIGIO, lambda _signum, _frame: None)
        threading.Thread(target=self.pump, args=(read_end,), daemon=True).start()

    def pump(self, read_end: int) -> None:
        while os.read(read_end, 512):
            with self.changed:
                self.count += 1
                self.changed.notify_all()

    def wait(self, seen: int, timeout: float) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.count != seen, timeout)


WAKEUP = Wakeup()


def frame(kind: bytes, ident: bytes, payload: bytes) -> bytes:
    return kind + ident + struct.pack(">I", len(payload)) + payload


def request(argv: list[str], ident: bytes) -> bytes:
    """The request line: any bytes in an argument (a newline, a space) pass unharmed."""
    fields = [b"R", ident.hex().encode(), *(os.fsencode(a).hex().encode() for a in argv)]
    return b" ".join(fields) + b"\n"


def parse_request(line: bytes) -> tuple[list[str], bytes]:
    """(argv, id) of a request line; ValueError if it is none. A relay that went away while
    sending leaves the start of a line, which the next request's line completes: its R is no
    hex digit, so the two together are refused, never run."""
    mark, ident, *args = line.split(b" ")
    if mark != b"R" or len(ident) != 2 * ID_BYTES or not args:
        raise ValueError("not a request line")
    argv = [os.fsdecode(bytes.fromhex(a.decode())) for a in args]
    return argv, bytes.fromhex(ident.decode())


def ports() -> list[str]:
    found, base = [], "/sys/class/virtio-ports"
    for name in sorted(os.listdir(base) if os.path.isdir(base) else []):
        if not name.startswith("vport"):
            continue
        with open(f"{base}/{name}/name") as port_name:
            if port_name.read().strip().startswith(PORT_PREFIX):
                found.append(f"/dev/{name}")
    return found


class Port:
    """One command channel: reads requests and kill lines, runs one command at a time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDWR)
        fcntl.fcntl(self.fd, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) | os.O_ASYNC)
        self.lock = threading.Lock()
        self.current: subprocess.Popen[bytes] | None = None

    def send(self, kind: bytes, ident: bytes, payload: bytes) -> None:
        data = frame(kind, ident, payload)
        with self.lock:
            try:
                while data:
                    data = data[os.write(self.fd, data):]
            except OSError:
                pass  # the host went away; the reader kills the command

    def kill(self, grace_s: float = 0) -> None:
        """SIGTERM first when asked (`K`), so the command can write its last output; SIGKILL
        at once when the host went away."""
        proc = self.current
        if proc is None or proc.poll() is not None:
            return
        try:
            if grace_s:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=grace_s)
                    return
                except subprocess.TimeoutExpired:
                    pass
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def send_signal(self, signum: int) -> None:
        proc = self.current
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signum)
            except ProcessLookupError:
                pass

    def serve(self) -> None:
        pending = b""
        while True:
            seen = WAKEUP.count  # before the read: a host connecting after it changes the count
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.kill()  # no host on the other end: nobody waits for the output
                WAKEUP.wait(seen, IDLE_POLL_S)
                continue
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self.handle(line)

    def handle(self, line: bytes) -> None:
        if line.strip() == b"K":
            threading.Thread(target=self.kill, args=(KILL_GRACE_S,), daemon=True).start()
            return
        if line.strip() == b"U":
            self.send_signal(signal.SIGUSR1)
            return
        try:
            argv, ident = parse_request(line)
        except ValueError:
            return  # bytes left from a relay that went away mid-line
        threading.Thread(target=self.run, args=(argv, ident), daemon=True).start()

    def run(self, argv: list[str], ident: bytes) -> None:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=ENV, cwd="/tmp",
                                    start_new_session=True)
        except OSError as error:
            self.send(b"F", ident, f"cannot start {argv[0]}: {error.strerror}".encode())
            return
        self.current = proc
        pumps = [threading.Thread(target=self.pump, args=(stream, kind, ident), daemon=True)
                 for stream, kind in ((proc.stdout, b"O"), (proc.stderr, b"E"))]
        for pump in pumps:
            pump.start()
        code = proc.wait()
        for pump in pumps:
            pump.join()
        self.send(b"X", ident, str(code if code >= 0 else 128 - code).encode())

    def pump(self, stream: object, kind: bytes, ident: bytes) -> None:
        while chunk := os.read(stream.fileno(), 65536):  # type: ignore[attr-defined]
            self.send(kind, ident, chunk)


def serve() -> None:
    found = ports()
    if not found:
        print("journalbench guest: no jb.* virtio-serial ports", flush=True)
        return
    WAKEUP.install()
    threads = [threading.Thread(target=Port(p).serve, daemon=True) for p in found]
    for thread in threads:
        thread.start()
    print(f"{READY} ports={len(found)}", flush=True)
    for thread in threads:
        thread.join()


def init() -> None:
    """PID 1: start the server, then reap whatever exits (orphans are reparented here)."""
    server = os.fork()
    if server == 0:
        serve()
        os._exit(1)
    while True:
        try:
            pid, _ = os.wait()
        except ChildProcessError:
            time.sleep(1)
            continue
        if pid == server:
            print("journalbench guest: server exited", flush=True)


if __name__ == "__main__":
    init() if os.getpid() == 1 else serve()
    sys.exit(0)
