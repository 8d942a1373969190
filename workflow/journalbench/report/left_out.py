"""The runs a reader must know about beside the verdicts: run folders tidy left out
(skipped.parquet: damaged, incomplete, unusable, duplicate) and runs kept with a note (the
runs table's `counter_note`: counters that disagree within what sampling explains, SCHEMA.md),
each named by campaign and run id. The ledger, results/summary.md, the report's index and the
README's run counts list them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

SKIPPED = ["campaign", "run_id", "folder", "status", "reason"]
NOTED = ["campaign", "run_id", "note"]


def beside(processed: Iterable[Path]) -> list[Path]:
    """The given campaigns' processed folders and every campaign folder beside them."""
    return sorted({p for folder in processed for p in Path(folder).parent.iterdir()
                   if p.is_dir()})


def run_id(folder: str) -> str:
    """A run folder's run id (an interrupted one's `<run id>.partial` without its suffix)."""
    return Path(folder).name.removesuffix(".partial")


def skipped_folders(processed: Iterable[Path]) -> pd.DataFrame:
    """Every run folder tidy left out of the given campaigns' processed folders and the
    campaigns beside them, by campaign (its processed folder's name) and run id."""
    tables = []
    for folder in beside(processed):
        path = folder / "skipped.parquet"
        if not path.is_file():
            continue
        table = pd.read_parquet(path)
        if table.empty:
            continue
        table.insert(0, "run_id", [run_id(f) for f in table["folder"]])
        table.insert(0, "campaign", folder.name)
        tables.append(table)
    if not tables:
        return pd.DataFrame(columns=SKIPPED)
    return (pd.concat(tables, ignore_index=True)[SKIPPED]
            .sort_values(["campaign", "run_id"], ignore_index=True))


def noted_runs(processed: Iterable[Path]) -> pd.DataFrame:
    """Every run kept with a note (a tenant row's `counter_note`), one row per run and
    note."""
    import pyarrow.parquet as pq

    rows = []
    for folder in beside(processed):
        path = folder / "runs.parquet"
        if not path.is_file() or "counter_note" not in pq.read_schema(path).names:
            continue
        table = pq.read_table(path, columns=["campaign", "run_id", "counter_note"]).to_pydict()
        rows += [(c, r, n) for c, r, n in zip(table["campaign"], table["run_id"],
                                              table["counter_note"], strict=True) if n]
    return pd.DataFrame(rows, columns=NOTED).drop_duplicates(ignore_index=True)


def analysed(processed: Iterable[Path]) -> dict[str, int]:
    """Campaign -> its runs in the analysis (the runs table's run ids), of the given campaigns'
    processed folders."""
    import pyarrow.parquet as pq

    found = {}
    for folder in processed:
        path = Path(folder) / "runs.parquet"
        if path.is_file():
            table = pq.read_table(path, columns=["campaign", "run_id"]).to_pydict()
            for campaign in set(table["campaign"]):
                found[str(campaign)] = len({r for c, r in zip(table["campaign"], table["run_id"],
                                                              strict=True) if c == campaign})
    return found


def counts(runs: dict[str, int], skipped: pd.DataFrame) -> str:
    """"thesis-hdd 1,071; thesis-nested 345, 3 unusable: journal-accounted-... (jbd2 bytes
    ...)": each campaign's run folders (those analysed and those left out) and those not in
    the analysis, named (after "Runs: ")."""
    said = []
    for campaign, used in runs.items():
        mine = skipped[skipped["campaign"] == campaign]
        text = f"{campaign} {used + len(mine):,}"
        for status, group in mine.groupby("status", sort=True):
            text += (f", {len(group)} {status}: "
                     + "; ".join(f"{r.run_id} ({r.reason})" for r in group.itertuples()))
        said.append(text)
    return "; ".join(said)
