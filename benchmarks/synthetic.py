"""A synthetic dataset of N times the shipped runs, for benchmarks/bench_analysis.py: a scratch
copy of the repository (its code, notebooks and campaign files; never its data/raw) whose
data/raw holds every shipped run folder and, for each, N - 1 copies under new run ids, and
whose campaign files ask for N times each experiment's repetitions, so that every copy is a
planned run of its experiment and the analysis treats it as one.

A copy of a run of repetition r (of n planned) is the same run as repetition r + k n
(k = 1 .. N - 1): its spec.json says so, its run id is the hash of that spec
(runfolder.run_id) and its MANIFEST.json lists the new spec's checksum; every other file is
the shipped one (hard-linked: the copy costs no disk). The repository's data/raw is only read.

    .venv/bin/python benchmarks/synthetic.py SCRATCH [--times N]

makes it (what the benchmark does); the pipeline then runs in SCRATCH with PYTHONPATH set to
SCRATCH/workflow, so that the copy's campaign files are the ones planned.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
# what the pipeline needs of the repository besides data/raw (the working tree's own files,
# so a change not yet committed is what runs)
TREE = ("Snakefile", "workflow", "notebooks", "profiles", "hosts", "environment.yml",
        "pyproject.toml")


def copy_tree(scratch: Path) -> None:
    """The repository's pipeline files (tracked or new, not ignored) into `scratch`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", *TREE],
                            cwd=REPO, check=True, capture_output=True, text=True).stdout
    for name in listed.splitlines():
        source = REPO / name
        if not source.is_file():
            continue  # deleted in the working tree
        target = scratch / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for name in ("data/plan", "data/processed", "results", "figures"):
        (scratch / name).mkdir(parents=True, exist_ok=True)


def link_tree(source: Path, target: Path) -> None:
    """`source`'s files hard-linked below `target` (copied across file systems)."""
    for top, _, names in os.walk(source):
        folder = target / Path(top).relative_to(source)
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            try:
                os.link(Path(top, name), folder / name)
            except OSError:
                shutil.copy2(Path(top, name), folder / name)


def spec_key(spec: dict[str, Any]) -> str:
    """A run spec without its repetition (nor what the agent adds): the runs of one condition
    share it."""
    return json.dumps({k: v for k, v in spec.items()
                       if k not in ("repetition", "run_id", "campaign", "host")}, sort_keys=True)


def multiplied_campaign(source: Path, target: Path, times: int) -> None:
    """The campaign file with every experiment's repetitions multiplied by `times`."""
    campaign = yaml.safe_load(source.read_text())
    for experiment in campaign["experiments"]:
        experiment["repetitions"] = times * int(experiment.get("repetitions",
                                                               campaign["repetitions"]))
    target.write_text(yaml.safe_dump(campaign, sort_keys=False))


def copy_run(folder: Path, target: Path, spec: dict[str, Any]) -> None:
    """Run `folder` as the run of `spec` in `target`: its files linked, its spec and manifest
    rewritten."""
    from journalbench import runfolder

    link_tree(folder, target)
    spec_file = target / runfolder.SPEC
    spec_file.unlink()  # a link to the shipped file: never written through
    spec_file.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n")
    manifest_file = target / runfolder.MANIFEST
    manifest = json.loads(manifest_file.read_text())
    manifest["files"][runfolder.SPEC] = {"sha256": runfolder.sha256_file(spec_file),
                                         "bytes": spec_file.stat().st_size}
    manifest_file.unlink()
    manifest_file.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def make(scratch: Path, times: int = 2, raw: Path = REPO / "data" / "raw") -> dict[str, int]:
    """Build the synthetic repository in `scratch` (emptied first); its run folders per
    campaign."""
    from journalbench import runfolder
    from journalbench.plan import campaign as campaigns

    if scratch.exists():
        shutil.rmtree(scratch)
    copy_tree(scratch)
    counts = {}
    for campaign_raw in sorted(p for p in raw.iterdir() if p.is_dir()):
        name = campaign_raw.name
        source = REPO / "workflow" / "campaigns" / f"{name}.yaml"
        link_tree(campaign_raw, scratch / "data" / "raw" / name)
        if not source.is_file():
            continue
        multiplied_campaign(source, scratch / "workflow" / "campaigns" / f"{name}.yaml", times)
        planned = campaigns.expand(campaigns.load_campaign(str(source)), str(source))
        repetitions: dict[str, int] = defaultdict(int)
        for spec in planned:
            key = spec_key(spec)
            repetitions[key] = max(repetitions[key], spec["repetition"])
        made = 0
        for manifest in sorted(campaign_raw.glob(f"*/*/{runfolder.MANIFEST}")):
            folder = manifest.parent
            spec = json.loads((folder / runfolder.SPEC).read_text())
            n = repetitions.get(spec_key(spec))
            if n is None:  # a run of no experiment of its campaign file: not planned
                continue
            for k in range(1, times):
                copy = {**spec, "repetition": spec["repetition"] + k * n}
                copy["run_id"] = runfolder.run_id(copy)
                copy_run(folder, scratch / "data" / "raw" / name / folder.parent.name
                         / copy["run_id"], copy)
                made += 1
        counts[name] = len(list((scratch / "data" / "raw" / name).glob(
            f"*/*/{runfolder.MANIFEST}")))
        print(f"{name}: {counts[name] - made} shipped runs, {made} copies")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--times", type=int, default=2)
    args = parser.parse_args()
    counts = make(args.scratch.resolve(), args.times)
    print(f"{sum(counts.values())} runs in {args.scratch}/data/raw")


if __name__ == "__main__":
    main()
