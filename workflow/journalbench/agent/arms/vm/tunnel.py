"""Byte tunnels from the host into a VM guest, for a workload whose client runs on the host and
whose server listens on a unix socket inside the guest (redis: YCSB on the host, Redis in the
guest; guests have no network and share no writable folder with the host).

A tunnel is one more virtio-serial port of the guest, named PREFIX + name, whose QEMU end is a
unix socket in the guest's folder on the host (`socket_path`): the vm arm adds the port before
the guest boots, for every tunnel the tenant's workload asks for (Workload.guest_tunnels).
Inside the guest a bridge (`bridge_argv`, socat) copies bytes between the port and the
server's own unix socket.

What a port is and is not:
- one byte stream, so one connection at a time: QEMU accepts one client per socket, and a
  second one waits unanswered while the first is connected (redis: YCSB with one thread);
- the bridge holds one connection to the server across host clients, one after the other (YCSB
  load, then run): a client that ends after its last reply leaves nothing for the next one;
- with no host client connected the port reads end-of-file at once: `ignoreeof` makes socat
  poll it (socat 1.7 does so about once a second, so a new client's first reply may wait that
  long) instead of exiting;
- when the server goes away, socat ends on its next write, but a host client waiting for a
  reply is not told (QEMU keeps its connection): whoever runs the client must watch the server
  and the bridge and stop the client when either ends.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

PREFIX = "jb-tunnel."  # not "jb.": the guest's command server (guest_side) serves those ports
READY = "starting data transfer loop"  # socat -d -d: both ends are open
NAME = re.compile(r"[a-z][a-z0-9]*")  # usable in a QEMU id, a port name and a file name
SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the terminating NUL


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise ValueError(f"tunnel name {name!r} is not lower-case letters and digits")
    return name


def socket_path(folder: Path, name: str) -> Path:
    """The host's end of the tunnel: QEMU listens there (not p*.sock: the command ports')."""
    return folder / f"tunnel-{check_name(name)}.sock"


def qemu_args(folder: Path, name: str) -> list[str]:
    """The port and its chardev, beside the guest's command ports."""
    path = socket_path(folder, name)
    return ["-chardev", f"socket,id=t{name},path={path},server=on,wait=off",
            "-device", f"virtserialport,chardev=t{name},name={PREFIX}{name}"]


def bridge_argv(name: str, target: str) -> list[str]:
    """The guest's end: find the port's device by its name (the guest has no udev, so no
    /dev/virtio-ports links) and copy bytes between it and `target`, a unix socket."""
    port = shlex.quote(PREFIX + check_name(name))
    script = ('for p in /sys/class/virtio-ports/*; do '
              f'if [ "$(cat "$p/name" 2>/dev/null)" = {port} ]; then '
              f'exec socat -d -d "OPEN:/dev/${{p##*/}},ignoreeof" '
              f'{shlex.quote(f"UNIX-CONNECT:{target}")}; fi; done; '
              f'echo "no virtio-serial port "{port} >&2; exit 1')
    return ["sh", "-c", script]
