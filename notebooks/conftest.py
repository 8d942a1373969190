"""`pytest notebooks --nbval-lax` runs each committed notebook as it is; a notebook whose runs
are not shipped yet (its campaign is measured in chunks across sessions, and ships whole) is
skipped with that reason, and runs here once its run folders are in data/raw."""

from __future__ import annotations

from pathlib import Path

import pytest

from journalbench.report import notebooks

REPO = Path(__file__).resolve().parent.parent


def unshipped(name: str) -> str | None:
    """The campaign notebook `name` draws by default, if none of its runs are in data/raw."""
    declared = notebooks.declared(name)
    wanted = declared.get("otherwise")
    if wanted is None or any((REPO / "data" / "raw" / wanted).glob("*/*/MANIFEST.json")):
        return None
    return wanted


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb" and (campaign := unshipped(path.stem)):
            item.add_marker(pytest.mark.skip(
                reason=f"{path.name} draws campaign {campaign}, whose runs are not shipped yet"))
