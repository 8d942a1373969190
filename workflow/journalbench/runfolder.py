"""The run folder: file names, the stable run id, and the manifest that marks a run complete.

A run folder is complete when MANIFEST.json exists, lists every other file in the folder, and
every sha256 matches. A run is measured into `<run id>.partial` and lands whole, renamed once its
manifest verifies: a `.partial` left behind is an interrupted measurement (never analysed, re-run
by a resumed campaign), while a run folder holding files without a valid manifest is damaged
(the analysis stops and names it; no campaign measures over it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path
from typing import Any, NamedTuple

from journalbench.errors import ConfigError

MANIFEST = "MANIFEST.json"
SPEC = "spec.json"
HOST = "host.json"
SAMPLES = "io-samples.jsonl"
RUN_LOG = "run.log"
PARTIAL = ".partial"  # suffix of the folder a run is measured into (control/dispatch.py)
# a nested host's run: what the machine below measured of it (control/nested/outer.py), added
# by the controller, which then writes the manifest again over every file
OUTER = "outer.json"
# the agent's log lines that open and close a run's workload phase (warm-up and window): the
# controller of a nested host reads its own machine's CPU at each
WORKLOADS_START, WORKLOADS_DONE = "workloads start", "workloads done"


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def run_id(spec: dict[str, Any]) -> str:
    """Stable id of a run: the arm plus a hash of the whole spec (repetition included).

    Fields the agent adds (run_id, campaign, host) are left out so the same matrix point maps
    to the same folder wherever and whenever it runs.
    """
    core = {k: v for k, v in spec.items() if k not in ("run_id", "campaign", "host")}
    digest = hashlib.sha256(canonical_json(core).encode()).hexdigest()[:12]
    return f"{spec['arm']}-{digest}"


class RunKey(NamedTuple):
    """What identifies a run: its id alone does not, as the same spec run by two campaigns, or
    on two hosts, has the same id and different data (data/raw/<campaign>/<host>/<run id>)."""
    campaign: str
    host: str
    run_id: str

    def __str__(self) -> str:
        return f"{self.campaign}/{self.host}/{self.run_id}"


RUN_KEY = RunKey._fields  # the tidy tables' columns that identify a run


def locate(raw: Path, run: str, campaign: str | None = None,
           host: str | None = None) -> Path:
    """The folder of the one landed run `run` names (a run id, or campaign/host/run id) in
    `raw`; refuses an id that names none, or several without a campaign and host to choose."""
    parts = run.split("/")
    if len(parts) == 3:
        campaign, host, run = parts
    found = sorted(folder for folder in raw.glob(f"{campaign or '*'}/{host or '*'}/{run}")
                   if folder.is_dir())
    if not found:
        raise ConfigError(f"{raw}: no run {run}"
                          + (f" in campaign {campaign}" if campaign else "")
                          + (f" on host {host}" if host else ""))
    if len(found) > 1:
        keys = ", ".join(str(RunKey(f.parent.parent.name, f.parent.name, f.name))
                         for f in found)
        raise ConfigError(f"run id {run} is ambiguous: it names {len(found)} runs ({keys}); "
                          "give its campaign and host")
    return found[0]


def sha256_file(path: Path) -> str:
    # os.read without Python's file objects: tidy checks every run's files against their
    # manifest (30,475 shipped files: 0.55 -> 0.40 s)
    digest = hashlib.sha256()
    handle = os.open(path, os.O_RDONLY)
    try:
        while block := os.read(handle, 1 << 22):
            digest.update(block)
    finally:
        os.close(handle)
    return digest.hexdigest()


def write_manifest(folder: Path) -> Path:
    """Write MANIFEST.json last: sha256 and size of every other file in the folder."""
    files = {
        name: {"sha256": sha256_file(folder / name), "bytes": (folder / name).stat().st_size}
        for name in sorted(files_below(folder))
        if name != MANIFEST
    }
    target = folder / MANIFEST
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"files": files}, indent=1, sort_keys=True) + "\n")
    tmp.rename(target)
    return target


def files_below(folder: Path, prefix: str = "") -> list[str]:
    """The files below `folder`, as paths relative to it. os.scandir's entries know their
    type without another stat: tidy lists every run folder of every campaign."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found += files_below(Path(entry.path), f"{prefix}{entry.name}/")
            elif entry.is_file():
                found.append(prefix + entry.name)
    return found


def manifest_problems(folder: Path) -> list[str]:
    """Why a run folder is not complete; empty when its manifest is valid."""
    return [f"{folder / name}: {why}" if name else f"{folder}: {why}"
            for name, why in problems_by_file(folder)]


def problems_by_file(folder: Path) -> list[tuple[str, str]]:
    """manifest_problems as (file name in the folder, "" for the folder itself; why)."""
    target = folder / MANIFEST
    if not target.is_file():
        return [("", f"no {MANIFEST}")]
    try:
        listed = json.loads(target.read_text())["files"]
    except (ValueError, KeyError, TypeError) as error:
        return [(MANIFEST, f"unreadable manifest ({error})")]
    present = set(files_below(folder)) - {MANIFEST}
    problems = [(name, f"not listed in {MANIFEST}") for name in sorted(present - set(listed))]
    for name, entry in sorted(listed.items()):
        if name not in present:
            problems.append((name, f"listed in {MANIFEST} but missing"))
        elif sha256_file(folder / name) != entry.get("sha256"):
            problems.append((name, f"sha256 does not match {MANIFEST}"))
    return problems


def is_complete(folder: Path) -> bool:
    return not manifest_problems(folder)


def in_flight(folder: Path) -> bool:
    """A folder a measurement writes before its run lands: `<run id>.partial` (dispatch) or a
    fetch's hidden `.<name>.fetch-*` copy (runremote). Left behind, it is an interrupted
    measurement, which a resumed campaign removes and runs again: never analysed, not damage."""
    return folder.name.endswith(PARTIAL) or folder.name.startswith(".")


def holds_files(folder: Path) -> bool:
    """Whether a run's folder holds anything: a run lands whole (renamed from its .partial
    once its manifest verifies), so one that holds files but no valid manifest is damaged;
    an empty one is Snakemake's (made for a job's output before it ran) and still missing."""
    return folder.is_dir() and bool(files_below(folder))


def damage_line(folder: Path, why: str) -> str:
    """The one line a user reads about a damaged run folder: which, why, how to get it back.
    Only git knows whether a run was shipped, so both ways are named."""
    shown = shlex.quote(shown_path(folder))
    return (f"damaged run folder {shown}: {why}; `git checkout -- {shown}` restores a shipped "
            "run (a run measured here and never shipped: delete the folder and its campaign "
            "measures it again)")


def first_damage(folder: Path) -> str | None:
    """Why a landed run folder is damaged, in the folder's own terms ("no MANIFEST.json",
    "io-samples.jsonl: sha256 does not match MANIFEST.json"); None when it verifies."""
    problems = problems_by_file(folder)
    if not problems:
        return None
    name, why = problems[0]
    return f"{name}: {why}" if name else why


def shown_path(path: Path) -> str:
    """`path` as a user types it here: relative to the working directory when below it."""
    absolute = Path(os.path.abspath(path))  # symlinks kept: the path as the user has it
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)
