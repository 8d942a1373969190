"""The transport a loaded host file asks for: this machine (`local`), a host over SSH (`ssh`),
or a nested machine this machine boots and reaches over SSH (`nested`)."""

from __future__ import annotations

from typing import Any

from journalbench.control.nested.transport import NestedTransport
from journalbench.control.transport import LocalTransport, SSHTransport, Transport


def for_host(host: dict[str, Any]) -> Transport:
    kind = host.get("transport")
    if kind == "ssh":
        return SSHTransport(host)
    if kind == "nested":
        return NestedTransport(host)
    return LocalTransport()
