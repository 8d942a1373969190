"""Every judged campaign's ledger, the combined ledger and the configured campaign's report,
written from the judged tables: by `journalbench claims` (cli/claims.py) and, in the
pipeline, in the notebooks' kernel after the notebooks (report/notebooks.py), which has the
libraries imported already."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from journalbench.report import ledger as document
from journalbench.report import left_out

Judged = tuple[str, tuple[pd.DataFrame, ...], Path]  # (campaign, tables, processed dir)


def pandas_defaults() -> None:
    """pandas' display options back at their defaults: the notebooks set theirs for a reader
    (views.readable: 3 decimals), and ledgers written after them in their kernel must read as
    `journalbench claims` writes them (DataFrame.to_html follows display.precision)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deprecated option says so when reset
        pd.reset_option("display")


def write(results: list[Judged], out: Path, report: str | None = None) -> int:
    """OUT/<campaign>/claims.{md,html,csv} per campaign and OUT/claims.{md,html,csv} of them
    all; with `report`, also OUT/summary.md and OUT/report/ of that campaign. 1 (and why, on
    stderr) when the report cannot be written."""
    folders = [folder for _, _, folder in results]  # the runs left out: report/left_out.py
    left = (left_out.skipped_folders(folders), left_out.noted_runs(folders))
    for campaign, (claims, checks, starved, evidence), _ in results:
        document.write(out / campaign / "claims", f"Claims ledger: campaign {campaign}",
                       claims, checks, starved, "../../figures", evidence, left=left)
    moved = None
    if results:
        parts = list(zip(*(tables for _, tables, _ in results), strict=True))
        found = [p for p in parts[3] if not p.empty]
        combined = [*(pd.concat(p, ignore_index=True) for p in parts[:3]),
                    pd.concat(found, ignore_index=True) if found else parts[3][0]]
        names = ", ".join(campaign for campaign, _, _ in results)
        moved = headline_moves(combined[0], combined[1], folders)
        written = document.write(out / "claims", f"Claims ledger: campaigns {names}",
                                 *combined[:3], "../figures", combined[3], moved, left)
        print(f"claims: {len(combined[0])} verdicts -> {written[0]}")
    if report:
        return write_report(out, report, results, moved)
    return 0


def headline_moves(claims: pd.DataFrame, checks: pd.DataFrame,
                   processed: list[Path]) -> list[tuple[str, str, str]]:
    """Every headline the latest rules moved (judge/claims/headline.moves), over the
    campaigns judged here."""
    from journalbench.judge.claims.headline import moves
    from journalbench.plan.plan import headline_claims
    from journalbench.report.headline import run_seconds

    return moves(claims, checks, headline_claims, run_seconds(processed))


def write_report(out: Path, campaign: str, results: list[Judged],
                 moved: list[tuple[str, str, str]] | None = None) -> int:
    """The results at a glance and the HTML report, from the tables judged above; `moved`:
    the headlines the latest rules moved, as the combined ledger found them from the same
    tables (None: found again)."""
    started = time.monotonic()  # with the report's imports (Jinja2): all it adds
    from journalbench.report import site

    try:
        pages = site.build(out, campaign, {name: tables for name, tables, _ in results},
                           [folder for _, _, folder in results], moved)
    except ValueError as error:
        print(f"claims: --report: {error}", file=sys.stderr)
        return 1
    print(f"claims: report of {campaign} -> {pages[0]}, {out / 'report'}/ "
          f"({len(pages) - 1} pages, {time.monotonic() - started:.2f} s)")
    return 0
