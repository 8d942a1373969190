"""How long the analysis of all shipped data takes from raw (a script, not a test).

    .venv/bin/python benchmarks/bench_analysis.py

Goal: 30 s on a 2-core host, never more than 60 s; a rerun with nothing new under 3 s. It
removes the build outputs (data/plan, data/processed, figures, results: all rebuilt from the
campaign files and data/raw, never committed), times one `snakemake --cores 1` (what `make
reproduce` runs first), lists each notebook's own time from the notebook runner's log, then
times the same command again, which finds nothing to do. Run it with nothing else heavy on the
machine.
"""

from __future__ import annotations

import shutil
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
    clear_outputs()
    since = time.time()
    total = snakemake()
    print(f"analysis from raw: {total:.1f} s (notebooks: {'; '.join(notebook_times(since))})")
    print(f"aim {AIM_S:.0f} s: {'met' if total <= AIM_S else 'missed'}; "
          f"limit {LIMIT_S:.0f} s: {'within' if total <= LIMIT_S else 'PASSED'}")
    again = snakemake()
    print(f"rerun with nothing new: {again:.1f} s (aim {RERUN_S:.0f} s: "
          f"{'met' if again <= RERUN_S else 'missed'})")


if __name__ == "__main__":
    main()
