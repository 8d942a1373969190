"""pytest fixtures for the sshd test hosts: `pytest_plugins = ["sshd_fixtures"]` in a module.

Module-scoped: each test module gets its own servers, so a module's fault tests (killed
connections, cut wires) cannot disturb another module's hosts. Teardown asserts that neither
the servers nor the namespace, its veth or any process inside it is left.
"""

from __future__ import annotations

import pytest
from sshd import NetNS, start_sshd


@pytest.fixture(scope="module")
def sshd_local(tmp_path_factory: pytest.TempPathFactory):
    server = start_sshd(tmp_path_factory.mktemp("sshd-local"), "jbt-local")
    try:
        yield server
    finally:
        server.stop()
    assert server.residue() == []


@pytest.fixture(scope="module")
def sshd_netns(tmp_path_factory: pytest.TempPathFactory):
    netns = NetNS.create()
    server = None
    try:
        server = start_sshd(tmp_path_factory.mktemp("sshd-netns"), "jbt-netns", netns=netns)
        yield server
    finally:
        if server is not None:
            server.stop()
        netns.remove()
    assert netns.residue() == []
    assert server is None or server.residue() == []
