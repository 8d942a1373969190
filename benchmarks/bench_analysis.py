"""How long the analysis of all shipped data takes from raw (a script, not a test).

    .venv/bin/python benchmarks/bench_analysis.py

Goal: 30 s on a 2-core host, never more than 60 s. It removes the build outputs (data/processed,
figures, results: all rebuilt from data/raw, never committed) and times `snakemake --cores 1`
in two steps: tidy (every campaign's raw logs to tables, its per-run cache empty) and the rest
(the notebooks, the ledger). Run it with nothing else heavy on the machine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUTPUTS = ("data/processed", "figures", "results")
AIM_S, LIMIT_S = 30.0, 60.0


def clear_outputs() -> None:
    for name in OUTPUTS:
        folder = REPO / name
        for child in folder.iterdir():
            if child.name != ".gitkeep":
                shutil.rmtree(child) if child.is_dir() else child.unlink()


def timed_snakemake(*targets: str) -> float:
    command = [sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all", *targets]
    start = time.monotonic()
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main() -> None:
    clear_outputs()
    tidy = timed_snakemake("--until", "tidy")
    rest = timed_snakemake()
    total = tidy + rest
    notebooks = sorted(p.stem for p in (REPO / "results").glob("*/notebooks/*.ipynb"))
    print(f"analysis from raw: {total:.1f} s (tidy {tidy:.1f} s, notebooks and ledger "
          f"{rest:.1f} s; {len(notebooks)} notebooks: {', '.join(notebooks)})")
    print(f"aim {AIM_S:.0f} s: {'met' if total <= AIM_S else 'missed'}; "
          f"limit {LIMIT_S:.0f} s: {'within' if total <= LIMIT_S else 'PASSED'}")


if __name__ == "__main__":
    main()
