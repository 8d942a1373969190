"""`journalbench tidy`: run folders -> the tidy tables (journalbench/tidy/build.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from journalbench.tidy.build import tidy


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tidy", help="turn complete run folders into parquet tables",
        description="Read every complete run folder below RAW_DIR and write runs.parquet, "
                    "samples.parquet, skipped.parquet and experiments.parquet "
                    "(data/SCHEMA.md). Incomplete or unusable runs are listed on stderr, one "
                    "line each.")
    parser.add_argument("raw_dir", metavar="RAW_DIR", type=Path)
    parser.add_argument("--out", type=Path, default=Path("data/processed"),
                        help="directory for the tables (default: data/processed)")
    parser.add_argument("--campaign", metavar="FILE", type=Path, action="append", default=[],
                        help="campaign file the runs' experiments come from (repeatable; "
                             "default: workflow/campaigns/<campaign>.yaml)")
    parser.add_argument("--also", nargs=3, metavar=("RAW_DIR", "OUT", "CAMPAIGN_FILE"),
                        type=Path, action="append", default=[],
                        help="one more campaign to tidy in the same process (repeatable)")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    for raw_dir, out, campaigns in [(args.raw_dir, args.out, args.campaign),
                                    *((raw, out, [file]) for raw, out, file in args.also)]:
        outcome = tidy(raw_dir, out, campaigns)
        print(f"tidy: {len(outcome.parsed)} run(s) parsed, {len(outcome.cached)} from cache, "
              f"{len(outcome.skipped)} skipped; {outcome.rows['runs']} tenant rows, "
              f"{outcome.rows['samples']} sample rows -> {out}", file=sys.stderr)
    return 0
