"""How long the pipeline's notebooks stage takes (a script, not a test).

    .venv/bin/python benchmarks/bench_notebooks.py [--repeat 3] [--campaign thesis-hdd]

Runs what the `notebooks` rule runs (`python -m journalbench.report.notebooks CAMPAIGN ROOT
NAMES...`) several times on the tidy and judged tables already in data/processed (build them
first: `snakemake --cores 1`), and prints each run's wall time and CPU time (user + sys of the
runner and of its kernel, which the runner waits for). On a shared machine wall time follows
the neighbours' load; CPU time much less so: compare both, over several runs. The notebooks
rewrite their figures and tables in place (the same bytes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))

from journalbench.report import notebooks  # noqa: E402


def present_campaigns(campaign: str) -> list[str]:
    return [p.name for p in sorted((REPO / "data" / "raw").iterdir())
            if p.is_dir() and p.name != campaign]


def one_run(campaign: str, names: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of the notebook runner."""
    before = os.times()
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "journalbench.report.notebooks", campaign, str(REPO),
                    *names], cwd=REPO, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                          - before.children_system)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--campaign", default="thesis-hdd")
    args = parser.parse_args()
    names = notebooks.runnable(args.campaign, present_campaigns(args.campaign))
    if not (REPO / "data" / "processed" / args.campaign / "claims.parquet").exists():
        sys.exit("no judged tables in data/processed: run `snakemake --cores 1` first")
    walls, cpus = [], []
    for i in range(args.repeat):
        wall, cpu = one_run(args.campaign, names)
        walls.append(wall)
        cpus.append(cpu)
        print(f"run {i + 1}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)
    print(f"{len(names)} notebooks of {args.campaign}: wall median {statistics.median(walls):.2f} s"
          f" (min {min(walls):.2f}), cpu median {statistics.median(cpus):.2f} s "
          f"(min {min(cpus):.2f})")


if __name__ == "__main__":
    main()
