"""Repetitions per condition each check needs to detect the claim's smallest effect of interest
(the thesis's own effect where it gives one, else x1.2 or the equivalence margin) with 80%
power, from the spread the campaign's runs show. The level is alpha / m, m the number of claims
measured in the family: the strictest step of Holm's correction, so the figure is enough
whatever the other claims' p-values."""

from __future__ import annotations

import math

import pandas as pd

from journalbench.judge import stats
from journalbench.judge.claims.checks import ALPHA, EQUIVALENT, SHARE, SHARE_KINDS, TREND
from journalbench.judge.claims.verdicts import FAMILY, MEASURED

LEVELS = 3  # a trend runs over no/low/high


def needed(row: pd.Series, alpha: float) -> int:
    interest = (row["interest"] if row["kind"] in SHARE_KINDS
                else abs(math.log(row["interest"])))
    power = stats.POWER
    if row["kind"] in (EQUIVALENT, SHARE):
        power = 1 - (1 - stats.POWER) / 2  # each of TOST's two one-sided tests
    return stats.runs_needed(row["design"], interest, row["sd"], alpha, power,
                             levels=LEVELS if row["kind"] == TREND else 2)


def plan(claims: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """A row per measured check: its spread, its smallest effect of interest, the runs per
    condition it has and the runs per condition it needs."""
    rows = []
    measured = checks[checks["status"] == MEASURED]
    for key, family in measured.groupby(FAMILY):
        m = family["claim"].nunique()
        alpha = ALPHA / m
        for _, row in family.iterrows():
            rows.append({**dict(zip(FAMILY, key, strict=True)), "claim": row["claim"],
                         "test": row["test"], "design": row["design"], "sd": row["sd"],
                         "interest": row["interest"], "n_now": row["n"],
                         "alpha": alpha, "runs_needed": needed(row, alpha)})
    return pd.DataFrame(rows)


def together(judged: list[tuple[pd.DataFrame, pd.DataFrame]], name: str
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Several campaigns' (claims, checks) as the one campaign `name` that would run all their
    experiments: one family per host, device and BFQ setting, so alpha / all their claims."""
    return tuple(pd.concat([tables[i] for tables in judged], ignore_index=True)
                 .assign(campaign=name) for i in (0, 1))
