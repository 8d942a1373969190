"""The repository's sizes and `make reproduce`'s times, measured the way the README and
docs/data.md state them, so their numbers are a measurement anyone can repeat:

    python3 benchmarks/footprint.py            # sizes of this checkout's data/raw
    python3 benchmarks/footprint.py --time     # and a fresh clone's make reproduce, timed

It prints what it measured and, with --time, keeps it in benchmarks/footprint.json (the last
output; tests/test_docs.py compares the README and docs/data.md with it, and data/raw's sizes
with the data itself). Sizes are apparent sizes (the bytes of the files, as `du -s
--apparent-size -B1`), so they do not depend on the file system; times are wall times on this
machine, with its load beside them.

--time clones the repository's HEAD into a scratch folder and there runs `make venv` (uv
without a cache, as every clone finds it), then the analysis
(`snakemake --cores 1`) and `snakemake --report`, as `make reproduce` does; then it measures
the clone before the build, the venv and the outputs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEPT = REPO / "benchmarks" / "footprint.json"
OUTPUTS = ("data/processed", "data/plan", "figures", "results")


def apparent(path: Path) -> int:
    """The bytes of every file below `path` (symlinks not followed)."""
    if path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def size_text(size: int) -> str:
    """"299 MB", "5.1 MB", "1.1 GB" (powers of 1,000, three significant digits at most)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} B"


def seconds_text(seconds: float) -> str:
    """"69 s", "3 min 06 s"."""
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def runs_of(folder: Path) -> int:
    return len(list(folder.glob("*/*/MANIFEST.json")))


def raw_sizes(root: Path = REPO) -> dict[str, dict[str, int]]:
    """Each shipped campaign's runs and bytes (data/raw/<campaign>)."""
    raw = root / "data" / "raw"
    return {p.name: {"runs": runs_of(p), "bytes": apparent(p)}
            for p in sorted(raw.iterdir()) if p.is_dir()}


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.monotonic()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"footprint: {' '.join(command)} failed in {cwd}:\n{result.stderr[-2000:]}")
    return time.monotonic() - started


def reproduce(scratch: Path) -> dict[str, object]:
    """A fresh clone's make reproduce, timed step by step, and its sizes."""
    clone = scratch / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)],
                   check=True)
    clone_bytes = apparent(clone)
    env = {**os.environ, "HOME": os.environ.get("HOME", str(scratch))}
    load = os.getloadavg()[0]
    venv_s = timed(["make", "venv"], clone, env)
    analysis_s = timed([str(clone / ".venv/bin/snakemake"), "--cores", "1"], clone, env)
    report_s = timed([str(clone / ".venv/bin/snakemake"), "--report", "results/report.html"],
                     clone, env)
    return {
        "measured": datetime.date.today().isoformat(),
        "load_before": round(load, 2), "cores": os.cpu_count(),
        "venv_s": round(venv_s, 1), "analysis_s": round(analysis_s, 1),
        "report_s": round(report_s, 1), "reproduce_s": round(venv_s + analysis_s + report_s, 1),
        "clone_bytes": clone_bytes, "venv_bytes": apparent(clone / ".venv"),
        "outputs_bytes": {name: apparent(clone / name) for name in OUTPUTS},
    }


def lines(found: dict[str, object]) -> list[str]:
    """What the docs state, as they state it."""
    raw = found["raw"]
    said = [f"data/raw: {sum(c['runs'] for c in raw.values()):,} runs, "
            f"{size_text(sum(c['bytes'] for c in raw.values()))}"]
    said += [f"  {name}: {c['runs']:,} runs, {size_text(c['bytes'])}" for name, c in raw.items()]
    if "venv_s" in found:
        outputs = found["outputs_bytes"]
        said += [
            f"make reproduce on a fresh clone ({found['measured']}, {found['cores']} cores, "
            f"load {found['load_before']} before): {seconds_text(found['reproduce_s'])} "
            f"({seconds_text(found['venv_s'])} venv, {seconds_text(found['analysis_s'])} "
            f"analysis, {seconds_text(found['report_s'])} snakemake --report)",
            f"clone {size_text(found['clone_bytes'])}, .venv {size_text(found['venv_bytes'])}, "
            f"outputs {size_text(sum(outputs.values()))}",
            *(f"  {name}: {size_text(size)}" for name, size in outputs.items())]
    return said


def readme_phrases(found: dict) -> list[str]:
    """What the README says of the runs, make reproduce's time and the sizes, as it says it
    (whitespace aside; its analysis: the pipeline and its report, `snakemake --cores 1` and
    `--report`)."""
    runs = sum(c["runs"] for c in found["raw"].values())
    return [f"The artifact: {runs:,} runs (`data/raw/`)",
            f"fresh clone: {seconds_text(found['venv_s'])} venv, "
            f"{seconds_text(found['analysis_s'] + found['report_s'])} analysis",
            f"No root, {seconds_text(found['reproduce_s'])}: `make reproduce`",
            f"clone {size_text(found['clone_bytes'])}, `.venv` {size_text(found['venv_bytes'])}, "
            f"outputs {size_text(sum(found['outputs_bytes'].values()))}"]


def data_md_phrases(found: dict) -> list[str]:
    """What docs/data.md says of the sizes: data/raw's (from the data itself: raw_sizes) and
    the outputs' (from the last --time)."""
    raw = found["raw"]
    said = [f"{sum(c['runs'] for c in raw.values()):,} run folders, "
            f"{size_text(sum(c['bytes'] for c in raw.values()))}"]
    said += [f"| `{name}` | {c['runs']:,} | {size_text(c['bytes'])} |" for name, c in raw.items()]
    outputs = found.get("outputs_bytes", {})
    said += [f"| `{name}/` | {size_text(size)} |" for name, size in outputs.items()]
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time", action="store_true",
                        help="also time make reproduce on a fresh clone, and keep the result "
                             f"in {KEPT.relative_to(REPO)}")
    args = parser.parse_args(argv)
    found: dict[str, object] = {"raw": raw_sizes()}
    if args.time:
        scratch = Path(tempfile.mkdtemp(prefix="footprint-"))
        try:
            found.update(reproduce(scratch))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        KEPT.write_text(json.dumps(found, indent=1) + "\n")
    print("\n".join(lines(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
