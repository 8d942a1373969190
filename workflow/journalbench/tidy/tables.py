"""Reading the tidy and judged parquet tables into pandas."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def read(path: Path | str, selected: bool = True) -> pd.DataFrame:
    """A table; `selected` (a table whose rows the claims select thousands of times: runs,
    experiments, the judged tables), its strings held as Python objects in one NumPy block. A
    string column of pandas's own string dtype is a block of its own, and taking rows costs
    once per block (half of judging every shipped campaign). Otherwise (the per-second
    samples: filtered and grouped a few times, but large) Arrow's strings, which read in a
    tenth of the time."""
    import pandas as pd  # not at the top: the Snakefile reads the table names without pandas

    if selected:
        frame = pd.read_parquet(path)
        strings = {name: object for name, kind in frame.dtypes.items()
                   if isinstance(kind, pd.StringDtype)}
        frame = frame.astype(strings).copy()  # the copy joins a dtype's columns in one block
    else:  # Arrow's strings even where a kernel holds pandas's as Python objects (notebooks.py)
        with pd.option_context("mode.string_storage", "pyarrow"):
            frame = pd.read_parquet(path)
    frame.columns = pd.Index(list(frame.columns))  # labels as any other frame's
    return frame


TIDY = ("runs", "samples", "experiments")
# the judge's tables, kept beside a campaign's tidy tables: the notebooks and the ledger's
# documents read them (journalbench/judge/claims/judged.py); evidence: what the campaign's
# contrasts measured of the testbed factors (judge/claims/contrasts.py)
JUDGED = ("claims", "checks", "starved", "evidence")


def tidy_paths(processed: Path | str) -> list[Path]:
    return [Path(processed) / f"{name}.parquet" for name in TIDY]


def read_tidy(processed: Path | str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A campaign's runs, samples and experiments tables (the samples with Arrow's strings)."""
    runs, samples, experiments = (read(path, selected=name != "samples")
                                  for name, path in zip(TIDY, tidy_paths(processed),
                                                        strict=True))
    return runs, samples, experiments
