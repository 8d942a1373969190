"""Tables made from parquet files once per process while the files' bytes stay the same. The
notebooks run one after another in one kernel (journalbench/report/notebooks.py) and each
loads its campaign's tables: five of them load thesis-hdd's. Files are told apart by a hash of
their contents (a few ms for a campaign's), not by timestamps, so a table rewritten meanwhile
is read anew; every caller gets shallow copies, which pandas' copy-on-write keeps from
changing the frames kept here."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

KEPT = 32  # sets of tables: each shipped campaign's tidy and judged ones
Key = tuple[str, ...]
kept: OrderedDict[Key, tuple[pd.DataFrame, ...]] = OrderedDict()


def digest(path: Path | str) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "blake2b").hexdigest()


def key(kind: str, paths: Sequence[Path | str]) -> Key:
    return (kind, *(digest(path) for path in paths))


def tables(kind: str, paths: Sequence[Path | str],
           make: Callable[[], Sequence[pd.DataFrame]]) -> tuple[pd.DataFrame, ...]:
    """What `make` returns from the files `paths` (`kind` names how it reads them, as the same
    file may be read two ways): made once while the files hold the same bytes."""
    found = key(kind, paths)
    if found not in kept:
        made = tuple(make())
        if key(kind, paths) != found:  # rewritten while being read: keep nothing
            return made
        kept[found] = made
        while len(kept) > KEPT:
            kept.popitem(last=False)
    kept.move_to_end(found)
    return tuple(frame.copy(deep=False) for frame in kept[found])
