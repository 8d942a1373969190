"""`journalbench claims` (the ledgers) and `journalbench power` (runs needed): registered by
cli/main.py; the claims package is imported only when a command runs (it pulls in pandas/scipy)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    claims = subparsers.add_parser(
        "claims", help="judge every claim and write the ledgers",
        description="Read the tidy tables of each PROCESSED dir (one campaign each) and write "
                    "RESULTS/<campaign>/claims.{md,html,csv} and the combined "
                    "RESULTS/claims.{md,html,csv} (docs/claims.md explains the verdicts).")
    claims.add_argument("processed", metavar="PROCESSED", type=Path, nargs="+")
    claims.add_argument("--validation", metavar="DIR", type=Path, nargs="*", default=[],
                        help="processed dirs of campaigns that test no claim, read for their "
                             "validation pairs: what the weights of the testbeds they validate "
                             "divide (judge/claims/division.py)")
    claims.add_argument("--results", type=Path, default=Path("results"))
    claims.add_argument("--tables-only", action="store_true",
                        help="only judge, and keep the ledger's tables in each PROCESSED dir "
                             "(claims, checks, starved .parquet: what the notebooks read)")
    claims.add_argument("--reuse", action="store_true",
                        help="write the ledgers from the tables --tables-only kept, judging "
                             "only the campaigns without them")
    claims.add_argument("--report", metavar="CAMPAIGN",
                        help="also write RESULTS/summary.md and the HTML report RESULTS/report/ "
                             "of CAMPAIGN (one of the PROCESSED dirs): its results at a glance, "
                             "a page per claim with the figures and tables its notebooks wrote "
                             "(in RESULTS/../figures/CAMPAIGN and RESULTS/CAMPAIGN), a page per "
                             "other campaign and per study")
    claims.set_defaults(func=cmd_claims)
    power = subparsers.add_parser(
        "power", help="repetitions per condition each claim needs",
        description="For each measured check of the campaigns' claims: the spread of its runs, "
                    "its smallest effect of interest, and the repetitions per condition needed "
                    "to detect that effect with 80% power at alpha / (claims in the family).")
    power.add_argument("processed", metavar="PROCESSED", type=Path, nargs="+")
    power.add_argument("--together", action="store_true",
                       help="plan the campaigns as one (their pilots for a campaign that runs "
                            "all their experiments): one family, so alpha / (all their claims)")
    power.set_defaults(func=cmd_power)


def judged(processed: list[Path], reuse: bool = False,
           validation: list[Path] | None = None) -> list[tuple[str, tuple, Path]]:
    """(campaign, (claims, checks, starved), dir) of each PROCESSED dir with runs
    (journalbench/judge/claims/judged.py: the notebooks' runner judges with it too)."""
    from journalbench.judge.claims import judged as kept

    return kept.judge(processed, reuse, validation)


def cmd_claims(args: argparse.Namespace) -> int:
    from journalbench.judge.claims import judged as kept
    from journalbench.report import ledgers

    results = judged(args.processed, reuse=args.reuse, validation=args.validation)
    if args.tables_only:
        for campaign, tables, folder in results:
            kept.write(folder, tables)
            print(f"claims: {campaign} judged -> {folder}/{{{','.join(kept.TABLES)}}}.parquet")
        return 0
    return ledgers.write(results, args.results, args.report)


def cmd_power(args: argparse.Namespace) -> int:
    import pandas as pd

    from journalbench.judge.claims import power

    found = [tables[:2] for _, tables, _ in judged(args.processed)]
    if args.together and found:
        name = "+".join(folder.name for folder in args.processed)
        found = [power.together(found, name)]
    plans = [power.plan(claims, checks) for claims, checks in found]
    table = pd.concat(plans, ignore_index=True) if plans else pd.DataFrame()
    if table.empty:
        print("power: no measured check")
        return 1
    print(table.round({"sd": 3, "interest": 3, "alpha": 4}).to_string(index=False))
    return 0
