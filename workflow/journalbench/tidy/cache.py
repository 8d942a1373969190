"""tidy's rows as Arrow tables, and its cache: the rows of every run parsed before, so a
re-run parses only new or changed run folders (data/SCHEMA.md, "Cache").

OUT/cache/ holds `runs.arrow` and `samples.arrow` (Arrow IPC, uncompressed): the tables'
columns plus `cache_key` (the run's key: the sha256 of its MANIFEST.json, which pins every byte
of the run, the parser version and the columns) and `cache_folder` (the run folder, relative to
RAW_DIR); and `unusable.json`, key -> the one-line reason of a run that did not parse (parsing
it again could only fail again). The three name the write that made them: a cache whose files
are of different writes (one cut short) is not used. One file per table, written once per
tidy and only when it changed: a file per run cost more to write than the run's parsing.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

KEY, FOLDER = "cache_key", "cache_folder"
TABLES = ("runs", "samples")
UNUSABLE = "unusable.json"
WRITE = "write"  # the id of the write that made a cache file
Columns = tuple[tuple[str, str], ...]


@cache
def arrow_schema(columns: Columns) -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    return pa.schema([(name, types[kind]) for name, kind in columns])


def to_table(rows: list[dict[str, Any]], columns: Columns) -> Any:
    """The rows as a table of exactly `columns`; RuntimeError if a row has others."""
    import pyarrow as pa

    names = {name for name, _ in columns}
    # every key is a column and every row has as many keys as columns: every row has them all
    if set().union(*rows) - names or any(len(row) != len(names) for row in rows):
        row = next(row for row in rows if row.keys() != names)
        extra, missing = set(row) - names, names - set(row)
        raise RuntimeError(f"row columns disagree with the schema: extra {sorted(extra)}, "
                           f"missing {sorted(missing)}")
    # column by column: a quarter of from_pylist's time, which converts row by row
    return pa.Table.from_pydict({name: [row[name] for row in rows] for name, _ in columns},
                                schema=arrow_schema(columns))


def cached_schema(columns: Columns) -> Any:
    import pyarrow as pa

    return (arrow_schema(columns).append(pa.field(KEY, pa.string()))
            .append(pa.field(FOLDER, pa.string())))


class Cache:
    """OUT/cache/'s rows and reasons, the runs parsed this time, and the runs whose rows to
    keep."""

    def __init__(self, folder: Path, columns: dict[str, Columns],
                 samples_table: Callable[[list[Any]], Any]) -> None:
        """`samples_table` makes the samples table of the runs parsed this time from their
        parts (tidy/samples.py's `table` of its RunSamples)."""
        self.folder, self.columns, self.samples_table = folder, columns, samples_table
        self.tables, self.before = self.read()
        runs = self.tables["runs"]
        self.ids: dict[str, tuple] = {}  # key -> (campaign, host, run_id)
        for key, *run in zip(*(runs.column(c).to_pylist()
                               for c in (KEY, "campaign", "host", "run_id")), strict=True):
            self.ids.setdefault(key, tuple(run))
        self.unusable: dict[str, str] = {}  # of the runs seen this time
        # the runs parsed this time: their runs rows, their parts of the samples table
        self.new_runs: list[dict[str, Any]] = []
        self.new_samples: list[Any] = []
        self.new_keys: dict[str, list[str]] = {name: [] for name in TABLES}
        self.kept: dict[str, str] = {}  # key -> folder, of every run that parsed

    def read(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The cached tables and reasons: empty when a file is missing, unreadable, of other
        columns, or of another write than the others (a write cut short between files)."""
        from pyarrow import ArrowInvalid, feather

        empty = {name: cached_schema(self.columns[name]).empty_table() for name in TABLES}
        try:
            tables = {name: feather.read_table(self.folder / f"{name}.arrow") for name in TABLES}
            reasons = json.loads((self.folder / UNUSABLE).read_text())
        except (OSError, ValueError, ArrowInvalid):  # ArrowInvalid: not an Arrow file
            return empty, {}
        writes = {(table.schema.metadata or {}).get(WRITE.encode(), b"").decode()
                  for table in tables.values()}
        if (not isinstance(reasons, dict) or writes != {reasons.get(WRITE)}
                or not all(tables[name].schema.equals(cached_schema(self.columns[name]))
                           for name in TABLES)):
            return empty, {}
        return tables, reasons.get("unusable", {})

    def reason(self, key: str) -> str | None:
        """Why the run of `key` did not parse before (None: it did, or was never seen)."""
        return self.before.get(key)

    def failed(self, key: str, reason: str) -> None:
        self.unusable[key] = reason

    def ids_of(self, key: str, folder: str) -> tuple | None:
        """(campaign, host, run_id) of a cached run, kept; None when it is not cached."""
        if key not in self.ids:
            return None
        self.kept.setdefault(key, folder)  # a copy of a run folder has the same key
        return self.ids[key]

    def add(self, key: str, folder: str, runs: list[dict[str, Any]], samples: Any) -> tuple:
        """Keep the rows of a run parsed this time; its (campaign, host, run_id)."""
        self.new_runs += runs
        self.new_samples.append(samples)
        self.new_keys["runs"] += [key] * len(runs)
        self.new_keys["samples"] += [key] * samples.rows
        self.kept[key] = folder
        first = runs[0]
        self.ids[key] = (first["campaign"], first["host"], first["run_id"])
        return self.ids[key]

    def save(self) -> dict[str, Any]:
        """The kept runs' rows of each table (KEY and FOLDER columns included), cached and
        new; the cache rewritten when they or the reasons changed."""
        import pyarrow as pa
        import pyarrow.compute as pc

        tables, changed = {}, self.unusable != self.before
        made = {"runs": to_table(self.new_runs, self.columns["runs"]),
                "samples": self.samples_table(self.new_samples)}
        for name in TABLES:
            keys = self.new_keys[name]
            new = made[name].append_column(
                KEY, pa.array(keys, pa.string())).append_column(
                FOLDER, pa.array([self.kept[k] for k in keys], pa.string()))
            cached = self.tables[name]
            cached = cached.filter(pc.is_in(cached.column(KEY), pa.array(list(self.kept),
                                                                         pa.string())))
            changed |= new.num_rows > 0 or cached.num_rows < self.tables[name].num_rows
            tables[name] = pa.concat_tables([cached, new])
        if changed:
            self.write(tables)
        return tables

    def write(self, tables: dict[str, Any]) -> None:
        from pyarrow import feather

        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.iterdir():  # an older tidy's folder per run: nothing reads it
            if old.is_dir():
                shutil.rmtree(old)
        write = uuid.uuid4().hex  # the files of one write name it: read() takes no mix
        for name, table in tables.items():
            tmp = self.folder / f"{name}.arrow.tmp"
            feather.write_feather(table.replace_schema_metadata({WRITE: write}), tmp,
                                  compression="uncompressed")
            tmp.rename(self.folder / f"{name}.arrow")
        tmp = self.folder / f"{UNUSABLE}.tmp"
        tmp.write_text(json.dumps({WRITE: write, "unusable": self.unusable}, indent=1,
                                  sort_keys=True) + "\n")
        tmp.rename(self.folder / UNUSABLE)


def in_order(table: Any, keys: list[str]) -> Any:
    """The rows of `table` whose KEY is in `keys`, run by run in that order (each run's rows
    as they were), without KEY and FOLDER."""
    import numpy as np

    position = {key: i for i, key in enumerate(keys)}
    rank = np.array([position.get(key, -1) for key in table.column(KEY).to_pylist()], dtype=int)
    chosen = np.flatnonzero(rank >= 0)
    chosen = chosen[np.argsort(rank[chosen], kind="stable")]
    # without the cache's write id: the tables are the same bytes whether cached or parsed
    return table.take(chosen).drop_columns([KEY, FOLDER]).replace_schema_metadata(None)
