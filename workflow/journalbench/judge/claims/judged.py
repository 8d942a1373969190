"""A campaign's ledger tables kept beside its tidy tables (data/processed/<campaign>/): the
pipeline judges every campaign once (`journalbench claims --tables-only`), and the notebooks
and the ledger's documents read the result instead of judging again. Judging is the slow part
of a notebook; the tables also make every notebook show the ledger's own verdicts (judged with
every campaign's runs as evidence of the device's journal regime)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from journalbench.judge import memo
from journalbench.judge.claims.verdicts import host_tests, tests_view
from journalbench.tidy.tables import JUDGED as TABLES
from journalbench.tidy.tables import read as read_table


def paths(processed: Path | str) -> list[Path]:
    return [Path(processed) / f"{name}.parquet" for name in TABLES]


def write(processed: Path | str, tables: tuple[pd.DataFrame, ...]) -> None:
    for path, table in zip(paths(processed), tables, strict=True):
        table.to_parquet(path, index=False)


def read(processed: Path | str) -> tuple[pd.DataFrame, ...] | None:
    """The judged tables, or None when the campaign was not judged (or not all of them are
    there)."""
    found = paths(processed)
    if not all(path.is_file() for path in found):
        return None
    return tuple(read_table(path) for path in found)


def judged_of(processed: Path | str, runs: pd.DataFrame, experiments: pd.DataFrame,
              samples: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """(claims, checks, starved, evidence): the pipeline's judged tables, else judged here from
    the campaign's own runs with its own contrasts (a notebook opened on its own)."""
    from journalbench.judge.claims.contrasts import measured
    from journalbench.judge.claims.verdicts import ledger

    found = read(processed)
    if found is not None:
        return found
    campaign = str(runs["campaign"].iloc[0])
    return measured([(campaign, ledger(runs, samples, experiments))])[0][1]


def tests_of(processed: Path | str, runs: pd.DataFrame, experiments: pd.DataFrame,
             samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """The notebooks' tests table: from the judged tables when the pipeline wrote them,
    else judged here from the campaign's own runs (a notebook opened on its own)."""
    found = paths(processed)
    if not all(path.is_file() for path in found):
        return host_tests(runs, experiments, samples)
    # made once per kernel: the notebooks that share one show the same campaign's tests
    tests, = memo.tables("tests", found, lambda: [tests_view(*read(processed)[:2])])
    return tests
