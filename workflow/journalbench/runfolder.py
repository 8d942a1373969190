"""The run folder: file names, the stable run id, and the manifest that marks a run complete.

A run folder is complete when MANIFEST.json exists, lists every other file in the folder, and
every sha256 matches. Anything else is incomplete: never analysed, re-run by a resumed campaign.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

MANIFEST = "MANIFEST.json"
SPEC = "spec.json"
HOST = "host.json"
SAMPLES = "io-samples.jsonl"
RUN_LOG = "run.log"


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


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
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
    target = folder / MANIFEST
    if not target.is_file():
        return [f"{folder}: no {MANIFEST} (run incomplete)"]
    try:
        listed = json.loads(target.read_text())["files"]
    except (ValueError, KeyError, TypeError) as error:
        return [f"{target}: unreadable manifest ({error})"]
    problems = []
    present = set(files_below(folder)) - {MANIFEST}
    for name in sorted(present - set(listed)):
        problems.append(f"{folder / name}: not listed in {MANIFEST}")
    for name, entry in sorted(listed.items()):
        path = folder / name
        if name not in present:
            problems.append(f"{path}: listed in {MANIFEST} but missing")
        elif sha256_file(path) != entry.get("sha256"):
            problems.append(f"{path}: sha256 does not match {MANIFEST}")
    return problems


def is_complete(folder: Path) -> bool:
    return not manifest_problems(folder)
