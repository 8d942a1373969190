"""`journalbench tidy`: run folders -> the tidy tables (journalbench/tidy/build.py)."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from journalbench.errors import DamagedRunFolders
from journalbench.tidy.build import tidy


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tidy", help="turn complete run folders into parquet tables",
        description="Read every complete run folder below RAW_DIR and write runs.parquet, "
                    "samples.parquet, skipped.parquet and experiments.parquet "
                    "(data/SCHEMA.md). Interrupted or unusable runs are listed on stderr, one "
                    "line each. A damaged run folder (no MANIFEST.json, or a checksum that "
                    "fails) is named with how to restore it, and stops: exit 2, only "
                    "skipped.parquet written.")
    parser.add_argument("raw_dir", metavar="RAW_DIR", type=Path)
    parser.add_argument("--out", type=Path, default=Path("data/processed"),
                        help="directory for the tables (default: data/processed)")
    parser.add_argument("--campaign", metavar="FILE", type=Path, action="append", default=[],
                        help="campaign file the runs' experiments come from (repeatable; "
                             "default: workflow/campaigns/<campaign>.yaml)")
    parser.add_argument("--also", nargs=3, metavar=("RAW_DIR", "OUT", "CAMPAIGN_FILE"),
                        type=Path, action="append", default=[],
                        help="one more campaign to tidy in the same process (repeatable)")
    parser.add_argument("--plans", type=Path, default=None,
                        help="folder of the campaigns' plans (default: the repository's "
                             "data/plan; the pipeline gives its working directory's)")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Tidy every campaign given, then stop if one holds a damaged run folder: each is named
    (tidy/build.py), whichever campaign it is of."""
    # the garbage collector off while the runs are parsed: their rows and lines hold no
    # reference cycles, and its collections walked them as they piled up, freeing nothing
    # (frozen after the imports and after each campaign, it still took 0.4 s of 10.5: four
    # alternating rounds; the peak memory is the same)
    gc.disable()
    try:
        return tidy_each(args)
    finally:
        gc.enable()


def tidy_each(args: argparse.Namespace) -> int:
    """command's work, campaign by campaign."""
    damaged: list[Path] = []
    for raw_dir, out, campaigns in [(args.raw_dir, args.out, args.campaign),
                                    *((raw, out, [file]) for raw, out, file in args.also)]:
        started = time.monotonic()
        outcome = tidy(raw_dir, out, campaigns, args.plans)
        damaged += outcome.damaged
        if outcome.stopped:
            print(f"tidy: {len(outcome.damaged)} damaged run folder(s) in {raw_dir}: only "
                  f"{out / 'skipped.parquet'} written", file=sys.stderr)
            continue
        print(f"tidy: {len(outcome.parsed)} run(s) parsed, {len(outcome.cached)} from cache, "
              f"{len(outcome.skipped)} skipped; {outcome.rows['runs']} tenant rows, "
              f"{outcome.rows['samples']} sample rows -> {out} "
              f"({time.monotonic() - started:.2f} s)", file=sys.stderr)
    if damaged:
        raise DamagedRunFolders(
            f"stopped the analysis: {len(damaged)} damaged run folder(s), each named above "
            "with how to restore it (status damaged in skipped.parquet)")
    return 0
