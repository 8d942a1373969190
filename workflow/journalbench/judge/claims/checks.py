"""One test of a claim (a `Check`): which values it compares, how, in which direction, the
thesis's own figure for it, and the preconditions it needs; and its evaluation.

Kinds (each a t statistic, journalbench.judge.stats.TStat, read in both directions):
- RATIO: a vs b from different runs, on the log scale (Welch): effect = ratio of geometric
  means; the claim says a > b (direction +1) or a < b (-1).
- PAIRED: a and b from the same runs (two tenants of one run): per-run log ratio a/b, one-sample
  t; effect = geometric mean of the per-run ratios.
- TREND: values over ordered conditions (no/low/high neighbour = 0/1/2), least-squares slope of
  the log; effect = ratio per step.
- EQUIVALENT: a vs b on the log scale, TOST: reproduced when the ratio is within
  [1/margin, margin], contradicted when it lies entirely outside.
- SHARE: mean share against target +- margin, TOST likewise.
- LEVEL: mean share against a fixed level (what the weight promises), one-sided: the claim says
  the share lies below (direction -1) or above (+1) it.
- NOT_WORSE: a vs b on the log scale (Welch), one-sided against the margin: "not worse" when
  the ratio is above 1/margin, contradicted when it lies entirely below (the lower half of
  EQUIVALENT's TOST).
- DIFFERENCE: a vs b from different runs on the share scale (Welch): effect = a's mean share
  minus b's; for shares that may be 0 (a starved tenant), which no log takes.

On a pool (runs with a `member`, two members or more) each statistic is stratified by member,
each member a block (judge/blocked.py: the same test within members, combined); with one
member, or none, it is the test above unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pandas as pd

from journalbench.judge import blocked, stats
from journalbench.judge.claims import scope
from journalbench.judge.claims.margins import INTEREST_RATIO, SHARE_MARGIN, STABLE_RATIO

RATIO, PAIRED, TREND, EQUIVALENT, SHARE = "ratio", "paired", "trend", "equivalent", "share"
LEVEL, NOT_WORSE, DIFFERENCE = "level", "not-worse", "difference"
SHARE_KINDS = (SHARE, LEVEL, DIFFERENCE)  # effects on the share scale; the others are ratios
TWO_SAMPLE = (RATIO, EQUIVALENT, NOT_WORSE, DIFFERENCE)
MARGIN_KINDS = (EQUIVALENT, SHARE, NOT_WORSE)  # judged against a margin, with a 90% interval
ALPHA = 0.05
TEST_NAMES = {
    RATIO: "Welch t on log values, one-sided",
    PAIRED: "paired t on per-run log ratios, one-sided",
    TREND: "trend: least-squares slope of the log over no/low/high, one-sided",
    EQUIVALENT: "TOST on the log ratio",
    SHARE: "TOST on the mean share",
    LEVEL: "one-sample t of the mean share against the level, one-sided",
    NOT_WORSE: "Welch t on log values against the margin, one-sided (non-inferiority)",
    DIFFERENCE: "Welch t on shares, one-sided",
}


CONTAINER = "container"  # the container half of a claim (the other: "vm")


@dataclass
class Check:
    claim: str
    label: str  # what is compared, for the reader
    kind: str
    rows: pd.DataFrame  # the tenant rows the values come from (run ids, arms, flags)
    a: np.ndarray
    b: np.ndarray = field(default_factory=lambda: np.array([]))
    levels: np.ndarray = field(default_factory=lambda: np.array([]))  # TREND: level of each a
    direction: int = 1  # +1: effect > 0 on the log/share scale is what the claim says
    target: float = np.nan  # SHARE
    margin: float = np.nan  # EQUIVALENT: ratio; SHARE: share points
    interest: float = INTEREST_RATIO  # smallest effect of interest (ratio, or share points)
    thesis: str = ""  # the thesis's figure for this effect
    unit: str = ""
    needs: tuple[str, ...] = ()  # preconditions (journalbench.judge.claims.preconditions)
    part: str = CONTAINER  # which half of the claim: CONTAINER or "vm"
    missing: str = "no runs of this condition in the campaign"
    excluded: tuple[str, ...] = ()  # runs of its conditions left out (preconditions.DB_CPU)
    # a database's VM half: per run of its conditions (those left out too), its busiest guest's
    # vCPU busy mean and saturated share (dbruns.Screen; preconditions.vm_db_busy_unmet)
    guests: dict[str, tuple[float, float]] = field(default_factory=dict)
    # the same over each MariaDB client's whole run (rule vm-db-threads's predecessor)
    guests_client: dict[str, tuple[float, float]] = field(default_factory=dict)
    column: str = ""  # the runs-table column its values come from (their unit)
    since: str = ""  # the rule (rules.py) that brought it in; "" for always
    until: str = ""  # the rule that replaced it: judged only to list what that rule changed
    # on a pool: the member that made each value of a (and b): the blocks of its statistic
    members_a: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    members_b: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))

    @property
    def members(self) -> list[str]:
        """The pool members its values come from (none off a pool), sorted."""
        return sorted({str(m) for m in (*self.members_a, *self.members_b)})

    @property
    def blocked(self) -> bool:
        """Whether its statistic is stratified by member: values of two members or more."""
        return len(self.members) >= 2

    @cached_property
    def testbed(self) -> scope.Testbed:
        """Its rows' testbed columns as arrays, made once: the scope and the preconditions
        read them for every check."""
        return scope.Testbed(self.rows)


@dataclass
class Result:
    effect: float  # ratio (RATIO, PAIRED, TREND per step, EQUIVALENT) or mean share (SHARE)
    low: float  # 95% interval of the effect
    high: float
    tost_low: float  # the 90% interval a TOST at alpha = 0.05 reads (EQUIVALENT, SHARE)
    tost_high: float
    p_for: float  # one-sided p of the claimed effect (TOST p for equivalence)
    p_against: float  # one-sided p of the opposite (of "outside the margin" for equivalence)
    detectable: float  # smallest effect these runs detect at 80% power (same scale as effect)
    n: str  # sample sizes, e.g. "5/5"
    sd: float  # spread on the test's scale (log values, or shares)
    design: str  # for power: "two-sample", "one-sample" or "slope"
    # the t statistic's standard error and degrees of freedom, on the test's scale (log values,
    # or shares): what a change of the effect between testbeds is tested with (contrasts.py)
    se: float = np.nan
    df: float = np.nan


def values(column: pd.Series) -> np.ndarray:
    """A check's values: the column without its gaps. A value <= 0 is kept even for a test on
    the log scale, which then is not judged (`off_log_scale`): dropping it would bias the
    test, and one run must not stop the ledger of every claim."""
    data = column.to_numpy()  # NumPy, not a Series per call: thousands of checks call this
    return data[~pd.isna(data)].astype(float)


def off_log_scale(check: Check) -> str:
    """Why a test on the log scale cannot take the check's values ("" when it can): a share
    of 0 (a tenant with no byte counted) has no log."""
    if check.kind in SHARE_KINDS:
        return ""
    bad = int((check.a <= 0).sum() + (check.b <= 0).sum())
    return (f"{bad} value(s) <= 0 among its runs: a test on the log scale cannot take them"
            if bad else "")


def members_of(rows: pd.DataFrame, column: str) -> np.ndarray:
    """The pool member of each value `values(rows[column])` keeps; empty off a pool (no
    `member` column, or no member recorded)."""
    if "member" not in rows:
        return np.array([], dtype=object)
    member = rows["member"].to_numpy()
    if pd.isna(member).all():
        return np.array([], dtype=object)
    return member[~pd.isna(rows[column].to_numpy())].astype(object)


def ratio(claim: str, label: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame, column: str,
          direction: int = 1, **options: object) -> Check:
    # concat costs ~1 ms even of empty frames, and most checks of a family have a side empty
    rows = (rows_a if rows_b.empty else rows_b if rows_a.empty
            else pd.concat([rows_a, rows_b]))
    return Check(claim, label, RATIO, rows, values(rows_a[column]),
                 values(rows_b[column]), direction=direction, column=column,
                 members_a=members_of(rows_a, column), members_b=members_of(rows_b, column),
                 **options)


def paired(claim: str, label: str, rows: pd.DataFrame, column: str, tenant_a: str,
           tenant_b: str, direction: int = 1, **options: object) -> Check:
    """Tenant a against tenant b of the same runs (runs missing either are left out)."""
    wide = rows.pivot_table(index="run_id", columns="tenant", values=column, aggfunc="first")
    wide = wide.reindex(columns=[tenant_a, tenant_b]).dropna()
    used = rows[rows["run_id"].isin(wide.index)]
    members = np.array([], dtype=object)
    if "member" in rows and not rows["member"].isna().all():
        by_run = used.groupby("run_id")["member"].first()
        members = by_run.reindex(wide.index).to_numpy(dtype=object)
    return Check(claim, label, PAIRED, used, values(wide[tenant_a]),
                 values(wide[tenant_b]), direction=direction, column=column,
                 members_a=members, members_b=members, **options)


def trend(claim: str, label: str, rows: pd.DataFrame, column: str, by: str,
          order: list[str], direction: int, **options: object) -> Check:
    used = rows[rows[by].isin(order)].dropna(subset=[column])
    levels = np.array([order.index(v) for v in used[by]], dtype=float)
    return Check(claim, label, TREND, used, values(used[column]),
                 levels=levels, direction=direction, column=column,
                 members_a=members_of(used, column), **options)


def margined(kind: str, claim: str, label: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame,
             column: str, margin: float, **options: object) -> Check:
    """The ratio a/b judged against a margin (equivalent, not worse), which is also the
    smallest effect of interest."""
    check = ratio(claim, label, rows_a, rows_b, column, **options)
    check.kind, check.margin, check.interest = kind, margin, margin
    return check


def equivalent(claim: str, label: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame,
               column: str, margin: float = STABLE_RATIO, **options: object) -> Check:
    return margined(EQUIVALENT, claim, label, rows_a, rows_b, column, margin, **options)


def share(claim: str, label: str, rows: pd.DataFrame, column: str, target: float,
          margin: float = SHARE_MARGIN, **options: object) -> Check:
    return Check(claim, label, SHARE, rows, values(rows[column]),
                 target=target, margin=margin, interest=margin, column=column,
                 members_a=members_of(rows, column), **options)


def level(claim: str, label: str, rows: pd.DataFrame, column: str, target: float,
          direction: int, **options: object) -> Check:
    return Check(claim, label, LEVEL, rows, values(rows[column]),
                 target=target, direction=direction, interest=SHARE_MARGIN, column=column,
                 members_a=members_of(rows, column), **options)


def difference(claim: str, label: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame,
               column: str, direction: int = 1, **options: object) -> Check:
    """a's mean share against b's, from different runs, on the share scale."""
    check = ratio(claim, label, rows_a, rows_b, column, direction, **options)
    check.kind, check.interest = DIFFERENCE, SHARE_MARGIN
    return check


def not_worse(claim: str, label: str, rows_a: pd.DataFrame, rows_b: pd.DataFrame,
              column: str, margin: float = STABLE_RATIO, **options: object) -> Check:
    """a not worse than b: the ratio a/b above 1/margin."""
    return margined(NOT_WORSE, claim, label, rows_a, rows_b, column, margin, **options)


def enough(check: Check) -> bool:
    if check.kind in TWO_SAMPLE:
        found = check.a.size >= 2 and check.b.size >= 2
    elif check.kind == TREND:
        found = check.a.size >= 3 and np.unique(check.levels).size >= 2
    else:
        found = check.a.size >= 2
    return found and (not check.blocked or blocked_enough(check))


def blocked_enough(check: Check) -> bool:
    """Whether a pool's check has what its blocked statistic needs: a member with runs of both
    sides and a degree of freedom within members (a trend: levels varying within one)."""
    try:
        statistic(check)
    except ValueError:
        return False
    return True


def statistic(check: Check) -> tuple[stats.TStat, str]:
    if check.blocked:
        return blocked_statistic(check)
    if check.kind == DIFFERENCE:
        return stats.welch_t(check.a, check.b), "two-sample"
    if check.kind in (RATIO, EQUIVALENT, NOT_WORSE):
        return stats.welch_t(np.log(check.a), np.log(check.b)), "two-sample"
    if check.kind == PAIRED:
        return stats.one_sample_t(np.log(check.a / check.b)), "one-sample"
    if check.kind == TREND:
        return stats.slope_t(check.levels, np.log(check.a)), "slope"
    return stats.one_sample_t(check.a), "one-sample"


def blocked_statistic(check: Check) -> tuple[stats.TStat, str]:
    """statistic() with each pool member a block (judge/blocked.py)."""
    a, b = check.members_a, check.members_b
    if check.kind == DIFFERENCE:
        return blocked.blocked_two_sample(check.a, check.b, a, b), "two-sample"
    if check.kind in (RATIO, EQUIVALENT, NOT_WORSE):
        return (blocked.blocked_two_sample(np.log(check.a), np.log(check.b), a, b),
                "two-sample")
    if check.kind == PAIRED:
        return blocked.blocked_one_sample(np.log(check.a / check.b), a), "one-sample"
    if check.kind == TREND:
        return blocked.blocked_slope(check.levels, np.log(check.a), a), "slope"
    return blocked.blocked_one_sample(check.a, a), "one-sample"


def of_members(check: Check, keep: set[str]) -> Check:
    """The check on the values of the members `keep` alone (the agreement check's member, or
    the others)."""
    in_a = np.isin(check.members_a.astype(str), list(keep))
    in_b = (np.isin(check.members_b.astype(str), list(keep)) if check.members_b.size
            else np.array([], dtype=bool))
    return replace(check, a=check.a[in_a], b=check.b[in_b] if check.b.size else check.b,
                   levels=check.levels[in_a] if check.levels.size else check.levels,
                   members_a=check.members_a[in_a],
                   members_b=check.members_b[in_b] if check.members_b.size
                   else check.members_b)


def evaluate(check: Check, alpha: float = ALPHA) -> Result:
    """The check's effect with its intervals, both one-sided p-values, and the smallest effect
    the runs could have detected (at 80% power, one-sided, at `alpha` before Holm's
    correction, so the effect the ledger's verdict needed is at least this)."""
    t, design = statistic(check)
    n = f"{check.a.size}/{check.b.size}" if check.kind in TWO_SAMPLE else str(t.n)
    n_a = check.a.size if design == "two-sample" else None
    low, high = t.interval(1 - 2 * alpha)
    if check.kind == SHARE:
        band = (check.target - check.margin, check.target + check.margin)
        p_for, p_against = t.within(*band), t.outside(*band)
        # equivalence: the margin the runs could establish (each one-sided test at 90% power
        # gives the two together at least 80%)
        reach = stats.detectable(design, t, alpha, 1 - (1 - stats.POWER) / 2, n_a)
        return Result(t.estimate, *t.interval(), low, high, p_for, p_against, reach, n, t.sd,
                      design, t.se, t.df)
    if check.kind == EQUIVALENT:
        band = (-np.log(check.margin), np.log(check.margin))
        p_for, p_against = t.within(*band), t.outside(*band)
        reach = stats.detectable(design, t, alpha, 1 - (1 - stats.POWER) / 2, n_a)
        return Result(float(np.exp(t.estimate)), *np.exp(t.interval()), float(np.exp(low)),
                      float(np.exp(high)), p_for, p_against, float(np.exp(reach)), n, t.sd,
                      design, t.se, t.df)
    if check.kind == NOT_WORSE:
        floor = -np.log(check.margin)
        reach = stats.detectable(design, t, alpha, stats.POWER, n_a)
        return Result(float(np.exp(t.estimate)), *np.exp(t.interval()), float(np.exp(low)),
                      float(np.exp(high)), t.p_above(floor), t.p_below(floor),
                      float(np.exp(reach)), n, t.sd, design, t.se, t.df)
    null = check.target if check.kind == LEVEL else 0.0
    up, down = t.p_above(null), t.p_below(null)
    p_for, p_against = (up, down) if check.direction > 0 else (down, up)
    reach = stats.detectable(design, t, alpha, stats.POWER, n_a, check.levels)
    if check.kind == LEVEL:  # the mean share the runs could tell from the level
        return Result(t.estimate, *t.interval(), np.nan, np.nan, p_for, p_against,
                      check.target + check.direction * reach, n, t.sd, design, t.se, t.df)
    if check.kind == DIFFERENCE:  # share points the runs could tell apart
        return Result(t.estimate, *t.interval(), np.nan, np.nan, p_for, p_against,
                      check.direction * reach, n, t.sd, design, t.se, t.df)
    return Result(float(np.exp(t.estimate)), *np.exp(t.interval()), np.nan, np.nan, p_for,
                  p_against, float(np.exp(check.direction * reach)), n, t.sd, design, t.se,
                  t.df)


def interest_scale(check: Check) -> float:
    """The smallest effect of interest on the statistic's own scale (log, or share points)."""
    if check.kind in SHARE_KINDS:
        return check.interest
    return abs(float(np.log(check.interest)))
