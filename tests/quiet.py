"""A nested test that measures its guest's emulated disk has the machine to itself.

`make test` runs the nested host's tests beside the tests whose outcome is no measurement
(Makefile; BESIDE set in the latter's environment). The speed of a nested guest's emulated disk
is the machine's below (its CPUs run the guest and the disk model), so a nested test that
measures it takes the machine for itself (the `quiet` fixture): the tests beside wait, between
two of theirs, until it is done. At the lowest CPU priority alone they still moved the guest's
disk by up to 35% between its reference and its run's probe (two pre-checks in six on
2026-11-30), where the profile's drift limit is 10% and the quiet runs of that disk in
data/raw/thesis-nested drift by at most 4.4%.

The protocol, two flock(2) files in FOLDER: a test beside passes the gate (held by a quiet test
meanwhile), then runs with its set-up and teardown under the lock, shared; a quiet test holds
the gate, then takes the lock exclusively, once the test beside that holds it has ended.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

log = logging.getLogger("journalbench.tests.quiet")  # into logs/tests/nested.log under make test
BESIDE = "JOURNALBENCH_TESTS_BESIDE"  # "1": this pytest runs beside the nested host's tests
FOLDER = "JOURNALBENCH_TESTS_QUIET_DIR"  # where the two locks are (default: logs/tests/)


def locks() -> tuple[Path, Path]:
    """(the gate, the lock)."""
    folder = Path(os.environ.get(FOLDER) or Path(__file__).resolve().parent.parent / "logs" /
                  "tests")
    return folder / "quiet-gate.lock", folder / "quiet.lock"


@contextlib.contextmanager
def flocked(path: Path, operation: int) -> Iterator[None]:
    """`path` flock'ed with `operation` (fcntl.LOCK_SH or LOCK_EX) until the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, operation)
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Beside the nested host's tests (BESIDE set), a test with its fixtures' set-up and
    teardown runs while no quiet test does."""
    if os.environ.get(BESIDE) != "1" or "quiet" in getattr(item, "fixturenames", ()):
        return (yield)
    gate, lock = locks()
    with flocked(gate, fcntl.LOCK_EX):
        pass
    with flocked(lock, fcntl.LOCK_SH):
        return (yield)


@pytest.fixture
def quiet() -> Iterator[None]:
    """The machine for this test alone while tests run beside it: it waits for the test beside
    to end, which then waits for this one."""
    gate, lock = locks()
    started = time.monotonic()
    with flocked(gate, fcntl.LOCK_EX), flocked(lock, fcntl.LOCK_EX):
        log.info("the machine is this test's: the tests beside paused after %.1f s",
                 time.monotonic() - started)
        try:
            yield
        finally:
            log.info("the tests beside go on")
