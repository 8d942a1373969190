"""`journalbench claims` (the ledgers) and `journalbench power` (runs needed): registered by
cli.py; the claims package is imported only when a command runs (it pulls in pandas/scipy)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    claims = subparsers.add_parser(
        "claims", help="judge every claim and write the ledgers",
        description="Read the tidy tables of each PROCESSED dir (one campaign each) and write "
                    "RESULTS/<campaign>/claims.{md,html,csv} and the combined "
                    "RESULTS/claims.{md,html,csv} (docs/claims.md explains the verdicts).")
    claims.add_argument("processed", metavar="PROCESSED", type=Path, nargs="+")
    claims.add_argument("--results", type=Path, default=Path("results"))
    claims.set_defaults(func=cmd_claims)
    power = subparsers.add_parser(
        "power", help="repetitions per condition each claim needs",
        description="For each measured check of the campaigns' claims: the spread of its runs, "
                    "its smallest effect of interest, and the repetitions per condition needed "
                    "to detect that effect with 80% power at alpha / (claims in the family).")
    power.add_argument("processed", metavar="PROCESSED", type=Path, nargs="+")
    power.set_defaults(func=cmd_power)


def judged(processed: list[Path]) -> list[tuple[str, tuple]]:
    import pandas as pd

    from journalbench.claims import ledger

    loaded = []
    for folder in processed:
        tables = [pd.read_parquet(folder / f"{name}.parquet")
                  for name in ("runs", "samples", "experiments")]
        if tables[0].empty:
            print(f"claims: {folder / 'runs.parquet'}: no runs, skipped", file=sys.stderr)
            continue
        loaded.append(tables)
    # every campaign's runs may show a device's journal regime (preconditions.py)
    devices = pd.concat([runs for runs, _, _ in loaded], ignore_index=True) if loaded else None
    return [(str(runs["campaign"].iloc[0]), ledger(runs, samples, experiments, devices))
            for runs, samples, experiments in loaded]


def cmd_claims(args: argparse.Namespace) -> int:
    import pandas as pd

    from journalbench.claims import document

    results = judged(args.processed)
    for campaign, (claims, checks, starved) in results:
        document.write(args.results / campaign / "claims",
                       f"Claims ledger: campaign {campaign}", claims, checks, starved,
                       "../../figures")
    if results:
        parts = list(zip(*(tables for _, tables in results), strict=True))
        combined = [pd.concat(p, ignore_index=True) for p in parts]
        names = ", ".join(campaign for campaign, _ in results)
        written = document.write(args.results / "claims", f"Claims ledger: campaigns {names}",
                                 *combined, "../figures")
        print(f"claims: {len(combined[0])} verdicts -> {written[0]}")
    return 0


def cmd_power(args: argparse.Namespace) -> int:
    import pandas as pd

    from journalbench.claims import power

    plans = [power.plan(claims, checks) for _, (claims, checks, _) in judged(args.processed)]
    table = pd.concat(plans, ignore_index=True) if plans else pd.DataFrame()
    if table.empty:
        print("power: no measured check")
        return 1
    print(table.round({"sd": 3, "interest": 3, "alpha": 4}).to_string(index=False))
    return 0
