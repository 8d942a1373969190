"""`journalbench teardown` of a nested host: whatever runs left inside the guest first (the
agent's own teardown over SSH, which checks that nothing is left there), then the machine
itself (QEMU, the disks' emulators, its folder), checked for residue by discovery on this
machine. A guest that no longer answers is stopped all the same: nothing of it outlives QEMU
but its folder, which goes too.
"""

from __future__ import annotations

import fcntl
import logging
from collections.abc import Callable
from typing import Any

from journalbench.control.deploy import deploy
from journalbench.control.nested.machine import Machine
from journalbench.control.nested.transport import NestedTransport
from journalbench.control.runremote import reap_and_teardown
from journalbench.control.transport import CommandFailed, TransportError
from journalbench.errors import AgentError

log = logging.getLogger("journalbench.remote")
Echo = Callable[[str, str], None]


def teardown(host: dict[str, Any], echo: Echo | None = None) -> list[str]:
    """Tear the nested host down inside and out; returns what was done, one line each."""
    machine = Machine(host)
    done = []
    with machine.locked("use", fcntl.LOCK_EX | fcntl.LOCK_NB):
        if machine.state() is not None:
            done.append(inside(host, echo))
            done.append("machine stopped")
        machine.stop(remove_locks=True)
    left = machine.residue()
    if left:
        raise AgentError(f"teardown of nested host {host['name']} incomplete: {'; '.join(left)}")
    return done + ["nothing left on this machine"]


def inside(host: dict[str, Any], echo: Echo | None) -> str:
    lines: list[str] = []

    def keep(stream: str, line: str) -> None:
        lines.append(line)
        if echo is not None:
            echo(stream, line)

    try:
        with NestedTransport(host, boot=False, lease=False) as transport:
            reap_and_teardown(deploy(host, transport), keep)
    except CommandFailed as error:
        log.warning("%s: the teardown inside the guest failed (%s); stopping the machine "
                    "removes everything in it", host["name"], error)
        return f"inside: teardown failed ({error})"
    except (TransportError, AgentError) as error:
        log.warning("%s: could not tear down inside the guest (%s); stopping it removes "
                    "everything in it", host["name"], error)
        return f"inside: not reached ({error})"
    said = [line for line in lines if line.startswith("teardown of host")]
    return f"inside: {said[-1] if said else 'torn down'}"


def stop_all(hosts: list[dict[str, Any]]) -> None:
    """At the end of a campaign chunk: tear down every nested host of it that still runs."""
    for host in hosts:
        if host.get("transport") != "nested" or Machine(host).state() is None:
            continue
        try:
            for line in teardown(host):
                print(f"journalbench: nested host {host['name']}: {line}")
        except (AgentError, OSError) as error:
            print(f"journalbench: nested host {host['name']}: not torn down: {error}")
