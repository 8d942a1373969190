"""`journalbench tidy RAW_DIR --out data/processed/`: run folders -> parquet tables.

Every folder below RAW_DIR holding a spec.json or a MANIFEST.json is a run. Interrupted
measurements (`<run id>.partial`: status incomplete), unusable runs (a file that does not parse)
and duplicates are listed on stderr, one line each, and in skipped.parquet; the others become
rows of runs.parquet and samples.parquet. experiments.parquet says which experiment (and
claims) of its campaign file every planned run belongs to (columns: data/SCHEMA.md).

A damaged run folder (no MANIFEST.json, or a file that does not match it) stops the analysis:
each is named on stderr with how to restore it and listed in skipped.parquet (status damaged),
and no other table is written (a stale one is removed), so nothing downstream reads tables that
silently lack a run. The checksums are verified here, on every tidy (0.5 s for the 2,139 shipped
runs, 1.5 s from a cold page cache), not in the Snakefile, which every invocation parses.

Incremental: the runs' rows are cached in OUT/cache/ (tidy/cache.py), each run's keyed by the
sha256 of its MANIFEST.json (which pins every file of the run) and the parser version, so a
re-run parses only new or changed run folders.

What a run folder holds is read by tidy/rows.py, each tool's files by its module in
tidy/parse/.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journalbench import runfolder
from journalbench.errors import ConfigError
from journalbench.plan import experiments
from journalbench.tidy import cache as rowcache
from journalbench.tidy import samples as sample_table
from journalbench.tidy.rows import RUNS_COLUMNS
from journalbench.tidy.samples import SAMPLES_COLUMNS

if TYPE_CHECKING:
    from journalbench.plan.plan import Plan

# bump when a parser changes: every cached run is then parsed again (a change of the
# columns does so by itself: they are part of the key)
PARSER_VERSION = "11"
CACHE = "cache"

SKIPPED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("folder", "string"), ("status", "string"), ("reason", "string"),
)
TABLES = {"runs": RUNS_COLUMNS, "samples": SAMPLES_COLUMNS, "skipped": SKIPPED_COLUMNS,
          "experiments": experiments.COLUMNS}


@dataclass
class Outcome:
    parsed: list[Path] = field(default_factory=list)  # parsed this time (not from the cache)
    cached: list[Path] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    damaged: list[Path] = field(default_factory=list)  # their tables were not written

    @property
    def stopped(self) -> bool:
        return bool(self.damaged)


def run_folders(raw_dir: Path) -> list[Path]:
    """The folders below `raw_dir` that hold a spec.json or a MANIFEST.json: every run folder,
    a damaged one that lost either file included (a folder that lost both is caught by the
    plan step, common.smk, when its campaign is planned)."""
    if not raw_dir.is_dir():
        raise ConfigError(f"{raw_dir}: no such directory")
    found = []
    for top, subfolders, files in os.walk(raw_dir):
        if runfolder.SPEC in files or runfolder.MANIFEST in files:
            found.append(Path(top))
            subfolders.clear()  # a run's own subfolders (guest/) hold no run
    # the cache may live below RAW_DIR's parent but never holds a spec.json or a manifest
    return sorted(found)


# what every run's key shares: the parser version and the columns (made once, not per run)
KEY_SUFFIX = PARSER_VERSION.encode() + repr((RUNS_COLUMNS, SAMPLES_COLUMNS)).encode()


def cache_key(folder: Path) -> str:
    digest = hashlib.sha256((folder / runfolder.MANIFEST).read_bytes())
    digest.update(KEY_SUFFIX)
    return digest.hexdigest()[:24]


def parse_cached(folder: Path, key: str, raw_dir: Path, cache: rowcache.Cache,
                 outcome: Outcome) -> tuple:
    """The run's (campaign, host, run_id), its rows kept in `cache`: the cached ones when its
    manifest is unchanged, else parsed now. A run that does not parse is cached too (its
    one-line reason): the manifest pins every byte of it, so parsing it again could only fail
    again."""
    from journalbench.formats import ParseError
    from journalbench.tidy.rows import read_run

    name = str(folder.relative_to(raw_dir))
    reason = cache.reason(key)
    if reason is not None:
        outcome.cached.append(folder)
        cache.failed(key, reason)
        raise ParseError(reason)
    ids = cache.ids_of(key, name)
    if ids is not None:
        outcome.cached.append(folder)
        return ids
    outcome.parsed.append(folder)
    try:
        runs, samples = read_run(folder)
    except ConfigError as error:  # ParseError included
        cache.failed(key, str(error))
        raise
    return cache.add(key, name, runs, samples)


def named(folder: Path) -> str:
    """A run by campaign and run id, with its host: "thesis-nested journal-accounted-3044e54aa1b5
    (host nested)", from its spec.json, else from where it lies
    (data/raw/<campaign>/<host>/<run id>)."""
    import json

    try:
        spec = json.loads((folder / runfolder.SPEC).read_text())
        return f"{spec['campaign']} {spec['run_id']} (host {spec['host']})"
    except (OSError, ValueError, KeyError, TypeError):
        return (f"{folder.parent.parent.name} {folder.name.removesuffix(runfolder.PARTIAL)} "
                f"(host {folder.parent.name})")


def skip(outcome: Outcome, folder: Path, status: str, reason: str) -> None:
    """A run left out, listed in skipped.parquet and named on stderr by campaign and run id;
    its reason names the run's files relative to its folder."""
    reason = reason.replace(f"{folder}/", "").replace(str(folder), "its folder")
    outcome.skipped.append({"folder": runfolder.shown_path(folder), "status": status,
                            "reason": reason})
    print(f"tidy: {status} run skipped: {named(folder)}: {reason}", file=sys.stderr)


def unverified(outcome: Outcome, folder: Path) -> bool:
    """Whether a run folder cannot be analysed as it is: an interrupted measurement (skipped,
    a resumed campaign runs it again) or a damaged run (recorded: it stops the analysis)."""
    if runfolder.in_flight(folder):
        skip(outcome, folder, "incomplete", "an interrupted measurement, never analysed (a "
                                            "resumed campaign runs it again)")
        return True
    why = runfolder.first_damage(folder)
    if why is None:
        return False
    line = runfolder.damage_line(folder, why)
    outcome.skipped.append({"folder": runfolder.shown_path(folder), "status": "damaged",
                            "reason": line})
    outcome.damaged.append(folder)
    print(f"tidy: {line}", file=sys.stderr)
    return True


def write(table: Any, target: Path) -> None:
    """Write a parquet file atomically."""
    import pyarrow.parquet as pq

    tmp = target.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.rename(target)


def stop(outcome: Outcome, out: Path) -> Outcome:
    """Write only skipped.parquet, the damaged runs in it, and remove the other tables."""
    skipped = rowcache.to_table(outcome.skipped, SKIPPED_COLUMNS)
    write(skipped, out / "skipped.parquet")
    for name in TABLES.keys() - {"skipped"}:
        (out / f"{name}.parquet").unlink(missing_ok=True)
    outcome.rows = {"skipped": skipped.num_rows}
    return outcome


def campaign_plans(names: set[str], given: list[Path],
                   folder: Path | None = None) -> dict[str, Plan]:
    """Campaign name -> its plan (plan/plan.py, kept in `folder`, else the repository's
    data/plan): of the files given, else of workflow/campaigns/<name>.yaml."""
    from journalbench.plan import plan
    from journalbench.plan.campaign import campaign_path

    folder = plan.PLAN_DIR if folder is None else folder
    plans = {found.campaign: found
             for found in (plan.current(str(path), folder) for path in given)}
    for name in sorted(names - set(plans)):
        path = campaign_path(name)
        if not path.is_file():
            print(f"tidy: no campaign file {path}: the runs of campaign {name} belong to no "
                  "experiment (give it with --campaign FILE)", file=sys.stderr)
            continue
        plans[name] = plan_of(name, path, folder)
    return plans


def plan_of(name: str, path: Path, folder: Path) -> Plan:
    """The plan of campaign `name` from its file (kept in `folder`); ConfigError if the file
    names another."""
    from journalbench.plan import plan

    found = plan.current(str(path), folder)
    if found.campaign != name:
        raise ConfigError(f"{path}: field name: is {found.campaign!r}, but the runs are of "
                          f"campaign {name!r}")
    return found


def experiment_table(runs: Any, given: list[Path], folder: Path | None = None) -> Any:
    """The experiments table of the runs' campaigns (and of the campaigns given), from their
    plans."""
    names = {name for name in runs.column("campaign").to_pylist() if name is not None}
    plans = campaign_plans(names, given, folder)
    rows = [row for found in plans.values() for row in found.experiments]
    planned = {(row["campaign"], row["run_id"]) for row in rows}
    ids = zip(runs.column("campaign").to_pylist(), runs.column("run_id").to_pylist(),
              strict=True)
    stray = {key for key in ids if key[0] in plans and key not in planned}
    if stray:
        print(f"tidy: {len(stray)} run(s) in no experiment of their campaign file (the file "
              f"changed after they ran?), e.g. {sorted(stray)[0][1]}", file=sys.stderr)
    return rowcache.to_table(rows, experiments.COLUMNS)


def tidy(raw_dir: Path, out: Path, campaigns: list[Path] | None = None,
         plans: Path | None = None) -> Outcome:
    """Write OUT/runs.parquet, OUT/samples.parquet, OUT/skipped.parquet and
    OUT/experiments.parquet from RAW_DIR (experiments from the `campaigns` files, else from
    workflow/campaigns/<name>.yaml; their plans kept in `plans`, else the repository's
    data/plan)."""
    raw_dir, out = raw_dir.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    cache = rowcache.Cache(out / CACHE, {"runs": RUNS_COLUMNS, "samples": SAMPLES_COLUMNS},
                           sample_table.table)
    outcome = Outcome()
    order: list[str] = []  # the keys of the runs in the tables, in folder order
    seen: dict[tuple, Path] = {}
    for folder in run_folders(raw_dir):
        if folder.is_relative_to(cache.folder):
            continue
        if unverified(outcome, folder):
            continue
        key = cache_key(folder)
        try:
            ids = parse_cached(folder, key, raw_dir, cache, outcome)
        except ConfigError as error:  # ParseError included
            skip(outcome, folder, "unusable", str(error))
            continue
        if ids in seen:
            skip(outcome, folder, "duplicate", f"same run as {runfolder.shown_path(seen[ids])}")
            continue
        seen[ids] = folder
        order.append(key)
    kept = cache.save()  # the runs parsed are kept, damage or not
    if outcome.stopped:
        return stop(outcome, out)
    run_table = rowcache.in_order(kept["runs"], order)
    tables = {
        "runs": run_table,
        "samples": rowcache.in_order(kept["samples"], order),
        "skipped": rowcache.to_table(outcome.skipped, SKIPPED_COLUMNS),
        "experiments": experiment_table(run_table, campaigns or [], plans),
    }
    for name, table in tables.items():
        write(table, out / f"{name}.parquet")
        outcome.rows[name] = table.num_rows
    return outcome
