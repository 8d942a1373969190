"""Teardown by discovery: the classes of a registry (arms, device profiles) each find and
remove what their runs leave (`leftovers(root)`, `clean(...)`), without any run's state, so
teardown also works after kill -9 of the agent. Classes that inherit one clean-up run it once."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any


def distinct(classes: Iterable[Any]) -> list[Any]:
    """One class per distinct `clean` classmethod, in the registry's order."""
    seen: dict[object, Any] = {}
    for cls in classes:
        seen.setdefault(cls.clean.__func__, cls)
    return list(seen.values())


def leftovers(classes: Iterable[Any], root: Path) -> list[str]:
    """What the classes' runs left under root, each item once."""
    return list(dict.fromkeys(item for cls in distinct(classes) for item in cls.leftovers(root)))
