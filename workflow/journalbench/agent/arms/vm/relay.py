"""On the host: run one command inside a VM guest, as if it ran here.

`python3 -m journalbench.agent.arms.vm.relay <guest folder> <argv...>` claims a free command port
of the guest (a lock file per port), sends the command, and copies the guest's frames to its own
stdout and stderr; it exits with the command's exit code. So `Arm.spawn` can return an ordinary
`subprocess.Popen` for a guest's command. SIGTERM/SIGINT kill the command in the guest, SIGUSR1
is passed on to it; if the relay itself is killed, its socket closes and the guest kills the
command.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import IO

from journalbench.agent.arms.vm.side import ID_BYTES, request

CONNECT_S = 10.0
GUEST_GONE = 255
NO_PORT = 125
NOT_STARTED = 127


def port_sockets(folder: Path) -> list[Path]:
    return sorted(folder.glob("p*.sock"))


def claim(folder: Path) -> tuple[Path, IO[str]] | None:
    """The first port nobody else holds; the lock lasts as long as this process."""
    for sock in port_sockets(folder):
        handle = sock.with_suffix(".lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return sock, handle
    return None


def connect(path: Path) -> socket.socket:
    """QEMU listens again only once the previous client's close is processed: retry briefly."""
    deadline = time.monotonic() + CONNECT_S
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(str(path))
            return conn
        except OSError:
            conn.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def read_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def relay(conn: socket.socket, ident: bytes) -> int:
    """Copy this request's frames to stdout/stderr until its exit frame; the exit code."""
    while True:
        try:
            kind = read_exact(conn, 1)
            frame_id = read_exact(conn, ID_BYTES)
            (size,) = struct.unpack(">I", read_exact(conn, 4))
            payload = read_exact(conn, size)
        except EOFError:
            os.write(2, b"guest channel closed before the command ended (guest gone?)\n")
            return GUEST_GONE
        if frame_id != ident:
            continue  # left over from an earlier client of this port
        if kind == b"O":
            write_all(1, payload)
        elif kind == b"E":
            write_all(2, payload)
        elif kind == b"X":
            return int(payload)
        elif kind == b"F":
            write_all(2, payload + b"\n")
            return NOT_STARTED


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def main(folder: Path, argv: list[str]) -> int:
    claimed = claim(folder)
    if claimed is None:
        os.write(2, f"all {len(port_sockets(folder))} command ports of {folder} busy\n".encode())
        return NO_PORT
    sock, _lock = claimed
    conn = connect(sock)

    def stop(_signum: int, _frame: object) -> None:
        conn.sendall(b"K\n")

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGUSR1, lambda _signum, _frame: conn.sendall(b"U\n"))
    ident = os.urandom(ID_BYTES)
    conn.sendall(request(argv, ident))
    return relay(conn, ident)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
