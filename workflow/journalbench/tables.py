"""Reading the tidy and judged parquet tables into pandas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def read(path: Path | str) -> pd.DataFrame:
    """A table with its strings held as Python objects, not Arrow: the claims select rows of
    the same frames thousands of times, and taking rows of an Arrow-backed string column costs
    several times a NumPy one's (a quarter of judging every shipped campaign)."""
    with pd.option_context("mode.string_storage", "python"):
        frame = pd.read_parquet(path)
    frame.columns = pd.Index(list(frame.columns))  # labels as any other frame's
    return frame
