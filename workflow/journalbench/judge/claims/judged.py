"""A campaign's ledger tables kept beside its tidy tables (data/processed/<campaign>/): the
pipeline judges every campaign once (`judge`: in the notebooks' kernel before the notebooks,
report/notebooks.py; on its own, `journalbench claims --tables-only`), and the notebooks
and the ledger's documents read the result instead of judging again. Judging is the slow part
of a notebook; the tables also make every notebook show the ledger's own verdicts (judged with
every campaign's runs as evidence of the device's journal regime)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from journalbench.judge import memo
from journalbench.judge.claims.verdicts import host_tests, tests_view
from journalbench.tidy.tables import JUDGED as TABLES
from journalbench.tidy.tables import read as read_table
from journalbench.tidy.tables import read_tidy, tidy_paths


def paths(processed: Path | str) -> list[Path]:
    return [Path(processed) / f"{name}.parquet" for name in TABLES]


def write(processed: Path | str, tables: tuple[pd.DataFrame, ...]) -> None:
    """The tables as parquet files, their strings stored as pyarrow's whatever the storage the
    process chose (report/notebooks.py: the kernel's are Python's), so that the files are the
    same either way."""
    for path, table in zip(paths(processed), tables, strict=True):
        as_arrow = {name: pd.StringDtype("pyarrow", na_value=dtype.na_value)
                    for name, dtype in table.dtypes.items()
                    if isinstance(dtype, pd.StringDtype) and dtype.storage != "pyarrow"}
        (table.astype(as_arrow) if as_arrow else table).to_parquet(path, index=False)


def read(processed: Path | str) -> tuple[pd.DataFrame, ...] | None:
    """The judged tables, or None when the campaign was not judged (or not all of them are
    there)."""
    found = paths(processed)
    if not all(path.is_file() for path in found):
        return None
    # read once per process while the files stay the same (memo.py): in the notebooks' kernel
    # the claims notebook, the headline beside it and the ledgers after them read every
    # campaign's judged tables
    return memo.tables("judged", found, lambda: [read_table(path) for path in found])


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


def tidy_tables(processed: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A campaign's runs, samples and experiments, read once per process while their files
    stay the same (memo.py): judged in the notebooks' kernel, they are the notebooks' own."""
    return memo.tables("tidy", tidy_paths(processed), lambda: read_tidy(processed))


def judge(processed: list[Path], reuse: bool = False, validation: list[Path] | None = None,
          seconds: dict[str, float] | None = None) -> list[tuple[str, tuple, Path]]:
    """(campaign, (claims, checks, starved, evidence), dir) of each campaign's processed dir
    with runs (`journalbench claims`, and the notebooks' runner before the notebooks); `reuse`:
    the tables `--tables-only` kept there, where they are; `validation`: dirs of campaigns
    testing no claim whose validation pairs measure other campaigns' weights; `seconds`, if
    given, gets how long each campaign's ledger took."""
    from journalbench.judge.claims.contrasts import measured
    from journalbench.judge.claims.division import divisions
    from journalbench.judge.claims.verdicts import Unrun, ledger, with_family
    from journalbench.plan.plan import validates

    processed = [Path(folder) for folder in processed]
    validation = [Path(folder) for folder in validation or []]
    judged_before = {folder: read(folder) if reuse else None for folder in processed}
    if reuse and None not in judged_before.values():  # the tidy tables need not be loaded
        return [(str(tables[0]["campaign"].iloc[0]), tables, folder)
                for folder, tables in judged_before.items()]
    loaded = []
    for folder in processed:
        tables = tidy_tables(folder)
        if tables[0].empty:
            print(f"claims: {folder / 'runs.parquet'}: no runs, skipped", file=sys.stderr)
            continue
        loaded.append((folder, tables))
    # every campaign's runs may show a device's journal regime (preconditions.py)
    devices = (pd.concat([runs for _, (runs, _, _) in loaded], ignore_index=True)
               if loaded else None)
    # what each family's weights divide, from every campaign's validation pairs (division.py)
    beside = [tidy_tables(folder) for folder in validation]
    every = [tables for _, tables in loaded] + [t for t in beside if not t[0].empty]
    measured_by = {} if not every else divisions(
        with_family(pd.concat([t[0] for t in every], ignore_index=True)),
        pd.concat([t[2] for t in every], ignore_index=True),
        {str(t[0]["campaign"].iloc[0]): validates(str(t[0]["campaign"].iloc[0]))
         for t in every})
    results = []
    seen = Unrun()  # the checks without runs are alike in every campaign (verdicts.Unrun)
    for folder, (runs, samples, experiments) in loaded:
        tables = judged_before[folder]
        if tables is None:
            started = time.monotonic()
            tables = ledger(runs, samples, experiments, devices, measured_by, seen)
            if seconds is not None:
                seconds[str(runs["campaign"].iloc[0])] = time.monotonic() - started
        results.append((str(runs["campaign"].iloc[0]), tables[:3], folder))
    # what every campaign's studies measured of the testbed factors, applied to all
    folders = {campaign: folder for campaign, _, folder in results}
    return [(campaign, tables, folders[campaign]) for campaign, tables in
            measured([(campaign, tables) for campaign, tables, _ in results])]
