"""What Snakemake prints of a job, in lines a person reads. Its job blocks list every input
and output: the tidy job's inputs are every run's MANIFEST.json (one line of ~150 KB in
`make reproduce`), and a failed job lists them again. A filter on Snakemake's logger, put on it
by the Snakefile (common.smk), keeps the first few of a long list and says how many there are,
and cuts a long reason (each missing output named) to its start; `snakemake --report` names
every file it embeds ("Adding c4-....png (61 KB)."), a line each: the first few are kept and
the rest counted in one line. The jobs' own output (a campaign's progress lines, tidy's
summary) is untouched; the full lists are in the DAG (`snakemake --summary`) and the report."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

SHOWN = 3  # files of a list printed
LISTS = ("input", "output", "log")  # a job record's file lists (JOB_INFO and JOB_ERROR)
REASON_CHARS = 240
# a file `snakemake --report` embeds, as it logs it
ADDED = re.compile(r"Adding .+ \([\d.]+ (?:bytes?|[KMGTP]i?B)\)\.")
# the profile's per-host lanes, which Snakemake prints one by one when a workflow starts
LANES = re.compile(r'lane_(\d+)=Resource\("lane_\d+", 1\)(?:, lane_\d+=Resource\("lane_\d+", 1\))*')


def shortened(files: Sequence[str]) -> list[str]:
    """`files`, or its first SHOWN and how many there are in all."""
    if len(files) <= SHOWN + 1:
        return list(files)
    return [*files[:SHOWN], f"... ({len(files)} files in all)"]


class ShortLists(logging.Filter):
    """Shortens a job record's file lists and reason before any handler formats it, and
    keeps the report's first SHOWN "Adding" lines (the next one says the rest follow
    unnamed)."""

    def __init__(self) -> None:
        super().__init__()
        self.added = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and ADDED.fullmatch(record.msg):
            self.added += 1
            if self.added == SHOWN + 1:
                record.msg = "Adding the report's other files (results/report.html lists them)."
            return self.added <= SHOWN + 1
        for name in LISTS:
            files = getattr(record, name, None)
            if isinstance(files, list | tuple) and all(isinstance(f, str) for f in files):
                setattr(record, name, shortened(files))
        if isinstance(record.msg, str) and record.msg.startswith("Provided resources:"):
            record.msg = LANES.sub(lanes, record.msg)
        reason = getattr(record, "reason", None)
        if isinstance(reason, str) and len(reason) > REASON_CHARS:
            record.reason = reason[:REASON_CHARS].rsplit(" ", 1)[0] + " ..."
        return True


def lanes(found: re.Match[str]) -> str:
    """A run of the profile's lanes, named by its first and last (each 1: a run at a time)."""
    numbers = re.findall(r"lane_(\d+)=", found.group(0))
    return f"lane_{numbers[0]}..lane_{numbers[-1]}=1 (a run at a time per host)"


def install(logger: logging.Logger) -> None:
    """Put the filter on `logger` (Snakemake's), once however often the Snakefile is read."""
    if not any(isinstance(f, ShortLists) for f in logger.filters):
        logger.addFilter(ShortLists())
