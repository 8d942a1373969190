"""How long a landed campaign took to measure, from its run folders (a script, not a test).

    .venv/bin/python benchmarks/campaign_time.py [data/raw/thesis-hdd]

Each run's wall time is the span of its run.log (the agent's first and last line: set-up,
workload and teardown). Runs whose start follows the previous run's end within --gap seconds
belong to one chunk (one Snakemake invocation); a chunk's span less its runs' time is what the
controller cost (Snakemake, dispatch, fetching the run folder). Each chunk is listed with the
kernel(s) its runs recorded, so a campaign resumed on another machine shows where it moved.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

STAMP = "%Y-%m-%d %H:%M:%S,%f"


@dataclass
class Run:
    start: datetime
    end: datetime
    kernel: str


@dataclass
class Chunk:
    runs: list[Run] = field(default_factory=list)

    @property
    def span_s(self) -> float:
        return (self.runs[-1].end - self.runs[0].start).total_seconds()

    @property
    def measuring_s(self) -> float:
        return sum((r.end - r.start).total_seconds() for r in self.runs)


def stamp(line: str) -> datetime:
    return datetime.strptime(line[:23], STAMP)


def read_run(folder: Path) -> Run:
    lines = [line for line in (folder / "run.log").read_text().splitlines() if line[:2] == "20"]
    if not lines:
        raise SystemExit(f"{folder / 'run.log'}: no timestamped line")
    kernel = json.loads((folder / "host.json").read_text()).get("kernel", "?")
    return Run(stamp(lines[0]), stamp(lines[-1]), kernel)


def chunks(runs: list[Run], gap_s: float) -> list[Chunk]:
    found: list[Chunk] = []
    for run in sorted(runs, key=lambda r: r.start):
        if not found or (run.start - found[-1].runs[-1].end).total_seconds() > gap_s:
            found.append(Chunk())
        found[-1].runs.append(run)
    return found


def hours(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", nargs="?", default="data/raw/thesis-hdd", type=Path)
    parser.add_argument("--gap", type=float, default=600.0,
                        help="seconds between runs that start a new chunk (default 600)")
    args = parser.parse_args()
    folders = sorted(p.parent for p in args.campaign.glob("*/*/MANIFEST.json"))
    if not folders:
        sys.exit(f"{args.campaign}: no landed run folder (*/*/MANIFEST.json)")
    found = chunks([read_run(f) for f in folders], args.gap)
    for number, chunk in enumerate(found, 1):
        kernels = ", ".join(dict.fromkeys(r.kernel for r in chunk.runs))
        print(f"chunk {number}: {chunk.runs[0].start:%Y-%m-%d %H:%M} .. "
              f"{chunk.runs[-1].end:%H:%M}, {len(chunk.runs)} runs, {hours(chunk.span_s)}"
              f" (kernel {kernels})")
    span = sum(c.span_s for c in found)
    measuring = sum(c.measuring_s for c in found)
    print(f"{len(folders)} runs in {len(found)} chunks: {hours(span)} of wall time, "
          f"{span / len(folders):.1f} s per run; inside runs {hours(measuring)}, "
          f"controller between runs {100 * (span - measuring) / span:.0f}%")


if __name__ == "__main__":
    main()
