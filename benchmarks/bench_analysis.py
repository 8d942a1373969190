"""How long the analysis of all shipped data takes from raw (a script, not a test).

    .venv/bin/python benchmarks/bench_analysis.py

    .venv/bin/python benchmarks/bench_analysis.py --runs 5

Goal: 30 s on a 2-core host, never more than 60 s; a rerun with nothing new under 3 s. Each
run removes the build outputs (data/plan, data/processed, figures, results: all rebuilt from
the campaign files and data/raw, never committed) and times one `snakemake --cores 1` (what
`make reproduce` runs first), listing each notebook's own time from the notebook runner's log;
then the same command is timed again, which finds nothing to do. A shared machine's speed
drifts by a few seconds between runs: quote the median, and the aim as met in how many runs.
Run it with nothing else heavy on the machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUTPUTS = ("data/plan", "data/processed", "figures", "results")
AIM_S, LIMIT_S, RERUN_S = 30.0, 60.0, 3.0


def clear_outputs() -> None:
    for name in OUTPUTS:
        if not (REPO / name).is_dir():
            continue
        for child in (REPO / name).iterdir():
            if child.name != ".gitkeep":
                shutil.rmtree(child) if child.is_dir() else child.unlink()


def notebook_times(since: float) -> list[str]:
    """The runner's '<notebook>: <seconds> s' lines of the notebook logs written since `since`
    (logs of campaigns not run this time stay from earlier runs)."""
    return [line for log in sorted((REPO / "logs" / "notebooks").glob("*.log"))
            if log.stat().st_mtime >= since
            for line in log.read_text().splitlines() if line.endswith(" s") and ": " in line]


def snakemake() -> float:
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet"], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="analyses from raw (default 3)")
    runs = parser.parse_args().runs
    totals = []
    for run in range(1, runs + 1):
        clear_outputs()
        since = time.time()
        totals.append(snakemake())
        print(f"analysis from raw, run {run}: {totals[-1]:.1f} s "
              f"(notebooks: {'; '.join(notebook_times(since))})")
    met = sum(total <= AIM_S for total in totals)
    print(f"median {statistics.median(totals):.1f} s (min {min(totals):.1f}, max "
          f"{max(totals):.1f}); aim {AIM_S:.0f} s: met in {met} of {runs} runs; limit "
          f"{LIMIT_S:.0f} s: {'within' if max(totals) <= LIMIT_S else 'PASSED'}")
    again = snakemake()
    print(f"rerun with nothing new: {again:.1f} s (aim {RERUN_S:.0f} s: "
          f"{'met' if again <= RERUN_S else 'missed'})")


if __name__ == "__main__":
    main()
