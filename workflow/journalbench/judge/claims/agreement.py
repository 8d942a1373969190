"""A pool's members judged against each other: whether they agree, and whether they may be one
family at all.

The agreement check. A pool's checks are stratified by member (judge/blocked.py), which assumes
that a condition's effect is the same on every member. For each check and each member, the
check's effect on that member's runs alone is compared with its effect on the other members'
runs (blocked): the difference, on the check's own scale (the log of a ratio, or share points),
with Welch-Satterthwaite's degrees of freedom, judged against a stated margin, the one the
ledger uses where the thesis gives no number:

- x1.2 (STABLE_RATIO) for an effect that is a ratio (a ratio, a paired ratio, a trend's ratio
  per step, an equivalence or non-inferiority ratio): the member's effect within x1.2 of the
  others';
- 0.10 share points (SHARE_MARGIN) for an effect on the share scale.

A member *differs* where the 90% interval of the difference lies entirely outside the margin,
with Holm's correction over every member and check of the family (TOST's other half, as
EQUIVALENT reads it); it *agrees* where the interval lies within the margin; *undetermined*
otherwise, including where a member has too few runs of the check's conditions for a test of
its own. A check with a member that differs is not pooled silently: it is not testable here
("the pool's members disagree"), and the ledger lists every member's comparison.

Recorded facts. A pool's members must be the same machine in every fact a run records that
the claims depend on: the kernel, the I/O scheduler, the BFQ settings read back, and the device
reference each member calibrated (its high-fsync writer's fsyncs per second) within the
emulated disk's drift limit (10%: a run whose own probe drifts further from its reference
fails). A pool whose members differ in one is refused in one line (`refuse_unlike`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from journalbench.errors import ConfigError
from journalbench.judge import blocked, stats
from journalbench.judge.claims.checks import (
    ALPHA,
    SHARE_KINDS,
    SHARE_MARGIN,
    STABLE_RATIO,
    Check,
    of_members,
    statistic,
)

AGREES, DIFFERS, UNDETERMINED = "agrees", "differs", "undetermined"
REFERENCE_TOLERANCE = 0.10  # agent/devices/hdd.py DRIFT_LIMIT: a run's probe vs its reference
# the facts a pool's members must share (tidy's runs columns) and the reference column
SAME_FACTS = ("kernel", "scheduler", "bfq")
REFERENCE = "ref_high_fsync_per_s"


def margin(check: Check) -> float:
    """The agreement margin on the statistic's own scale."""
    return SHARE_MARGIN if check.kind in SHARE_KINDS else float(np.log(STABLE_RATIO))


def compare(check: Check) -> list[dict[str, Any]]:
    """Each member of a pool's check against the others (a row each: member, its effect and
    the others', the difference with its 90% interval, and the p-values of "outside the
    margin" and "within it"); none off a pool."""
    if not check.blocked:
        return []
    band = margin(check)
    rows = []
    for member in check.members:
        row: dict[str, Any] = {"member": member, "difference": np.nan, "low": np.nan,
                               "high": np.nan, "p_outside": np.nan, "p_within": np.nan}
        try:
            mine, _ = statistic(of_members(check, {member}))
            others, _ = statistic(of_members(check, set(check.members) - {member}))
        except ValueError:  # too few of its runs for a test of their own
            rows.append(row)
            continue
        diff = blocked.difference(mine, others)
        low, high = diff.interval(1 - 2 * ALPHA)
        row.update(difference=diff.estimate, low=low, high=high,
                   p_outside=diff.outside(-band, band), p_within=diff.within(-band, band))
        rows.append(row)
    return rows


def judge(compared: list[list[dict[str, Any]]]) -> None:
    """Each comparison's outcome, Holm's correction over all of them (a family's checks'
    members): sets `outcome` on every row."""
    flat = [row for rows in compared for row in rows]
    tested = [row for row in flat if not np.isnan(row["p_outside"])]
    if tested:
        adjusted = stats.holm([row["p_outside"] for row in tested], ALPHA)[1]
        for row, p in zip(tested, adjusted, strict=True):
            row["p_outside_holm"] = float(p)
    for row in flat:
        if row.get("p_outside_holm", 1.0) < ALPHA:
            row["outcome"] = DIFFERS
        elif row["p_within"] < ALPHA:
            row["outcome"] = AGREES
        else:
            row["outcome"] = UNDETERMINED


def shown(check_kind: str, row: dict[str, Any]) -> str:
    """One comparison for the reader: "m2 differs: x1.41 [1.30, 1.52] of the others' effect"."""
    if np.isnan(row["difference"]):
        return f"{row['member']} {row['outcome']} (too few of its runs for a test of its own)"
    if check_kind in SHARE_KINDS:
        return (f"{row['member']} {row['outcome']}: {row['difference']:+.3f} "
                f"[{row['low']:+.3f}, {row['high']:+.3f}] share points from the others'")
    return (f"{row['member']} {row['outcome']}: x{np.exp(row['difference']):.3g} "
            f"[{np.exp(row['low']):.3g}, {np.exp(row['high']):.3g}] of the others' effect")


def summary(check_kind: str, rows: list[dict[str, Any]]) -> str:
    """The check's agreement line: every member's comparison, "; "-joined."""
    return "; ".join(shown(check_kind, row) for row in rows)


def disagreement(check_kind: str, rows: list[dict[str, Any]]) -> str:
    """Why a check is not pooled ("" when no member differs)."""
    differing = [row for row in rows if row.get("outcome") == DIFFERS]
    if not differing:
        return ""
    bound = "0.10 share points" if check_kind in SHARE_KINDS else f"x{STABLE_RATIO:g}"
    return (f"the pool's members disagree beyond {bound} (agreement check, Holm): "
            + "; ".join(shown(check_kind, row) for row in differing))


def blocks(check: Check) -> str:
    """The member blocks of a check: "m1 6, m2 5" (its values per member)."""
    counts: dict[str, int] = {}
    for member in (*check.members_a, *(check.members_b if check.kind != "paired" else ())):
        counts[str(member)] = counts.get(str(member), 0) + 1
    return ", ".join(f"{member} {n}" for member, n in sorted(counts.items()))


def refuse_unlike(family: pd.DataFrame, labels: dict[str, Any]) -> None:
    """Refuse, in one line, a pool family whose members recorded different facts."""
    if "member" not in family or family["member"].nunique() < 2:
        return
    where = f"campaign {labels['campaign']}, pool {labels['host']}"
    by_member = family.groupby("member", sort=True)
    for fact in SAME_FACTS:
        if fact not in family:
            continue
        seen = {str(m): sorted({str(v) for v in runs[fact].dropna()}) for m, runs in by_member}
        if len({tuple(v) for v in seen.values()}) > 1:
            listed = "; ".join(f"{m}: {', '.join(v) or 'none'}" for m, v in seen.items())
            raise ConfigError(f"{where}: field {fact}: the members recorded different values "
                              f"({listed}); a pool's members must be identical: judge them "
                              "as separate hosts (docs/hosts.md)")
    if REFERENCE in family:
        references = by_member[REFERENCE].median().dropna()
        if len(references) >= 2:
            low, high = float(references.min()), float(references.max())
            if low > 0 and high / low - 1 > REFERENCE_TOLERANCE:
                listed = ", ".join(f"{m}: {v:.4g}" for m, v in references.items())
                raise ConfigError(
                    f"{where}: field {REFERENCE}: the members' device references differ by "
                    f"{high / low - 1:.0%} ({listed}), beyond the {REFERENCE_TOLERANCE:.0%} "
                    "a run may drift from its own; a pool's members must be identical: judge "
                    "them as separate hosts (docs/hosts.md)")
