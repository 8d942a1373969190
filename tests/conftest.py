"""Shared test set-up: paths, and the rule that root-only tests never silently skip in CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.geteuid() == 0:
        return
    # In CI (root) these run; a non-root developer sees them skipped, but CI never does.
    if os.environ.get("CI"):
        raise pytest.UsageError("CI must run as root: the root-marked tests cannot be skipped")
    skip = pytest.mark.skip(reason="needs root (loop devices, cgroups, containers)")
    for item in items:
        if "root" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
