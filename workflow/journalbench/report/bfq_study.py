"""What the thesis could not see: BFQ's settings (the thesis names no I/O scheduler; ours is
BFQ, whose tunables change what a weight buys). Two questions, their tests fixed before the `bfq`
campaign's first run:

- Does a BFQ setting remove journal accounting's starvation (C24)? Per device profile, each
  setting that changes one tunable of the baseline gets C24's verdict (each setting is its own
  family in the ledger) and a test of whether it raises the accounted victim's share: that
  share under the setting over under the baseline, one-sided on log shares (Welch), Holm over
  the settings and profiles. A setting `removes` the starvation on a profile where C24 is
  reproduced under the baseline, when its rise is significant after Holm and C24 is
  contradicted under it.
- Do the isolation claims C3, C10, C17 and C18 depend on `strict_guarantees`? Their verdicts
  per setting, and the dependence test of the device study (the ratio of a check's effects
  under two settings, Holm over the checks: journalbench.report.device_class.dependence) with the
  baseline setting in place of the first device.

A run's setting is what it read back from sysfs (tidy's `bfq` column, e.g.
"strict_guarantees=1 slice_idle_us=8000 low_latency=1"). The baseline is the centre of the
one-tunable-at-a-time design: the setting that differs from the others in the fewest tunables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
import pandas as pd

from journalbench.judge.claims import checks
from journalbench.judge.claims.headline import tunables
from journalbench.judge.claims.verdicts import MEASURED
from journalbench.judge.selection import starvation_pair
from journalbench.judge.stats import holm
from journalbench.report.device_class import dependence, numbered
from journalbench.report.views import BFQ, PROFILE, profile_order, profiled
from journalbench.vocabulary import JOURNAL_ACCOUNTED

SENSITIVE = ("C3", "C10", "C17", "C18")  # the thesis's isolation claims on container arms
STARVATION = "C24"
REPRODUCED, CONTRADICTED = "reproduced", "contradicted"
SETTING = "setting"  # a setting named by its change of the baseline ("strict_guarantees 1 -> 0")


def distance(a: str, b: str) -> int:
    one, two = tunables(a), tunables(b)
    return sum(one.get(k) != two.get(k) for k in {*one, *two})


def baseline(settings: Iterable[str]) -> str:
    """The setting nearest all the others; ties (two settings) go to the one more runs or
    checks were made under (the default, which every other setting is compared with)."""
    counts = Counter(str(s) for s in settings)
    found = sorted(counts)
    return min(found, key=lambda s: (sum(distance(s, o) for o in found), -counts[s]))


def setting_order(settings: Iterable[str], base: str | None = None) -> list[str]:
    """The settings present, the baseline first (`base`, else the baseline of these)."""
    settings = [str(s) for s in settings]
    base = base or baseline(settings)
    return [base, *(s for s in sorted(set(settings)) if s != base)]


def change(setting: str, base: str) -> str:
    """What a setting changes of the baseline: "strict_guarantees 1 -> 0" ("baseline")."""
    one, two = tunables(base), tunables(setting)
    moved = [f"{k} {one.get(k)} -> {two.get(k)}" for k in sorted({*one, *two})
             if one.get(k) != two.get(k)]
    return ", ".join(moved) or "baseline"


def by_setting(rows: pd.DataFrame, base: str | None = None) -> pd.DataFrame:
    """`rows` with each run's BFQ setting named by its change of the baseline (column
    `setting`, ordered, the baseline first) in place of the setting itself: a figure then puts
    the settings side by side in one panel per device profile, not a panel per setting."""
    if rows.empty:
        return rows.assign(**{SETTING: pd.Series(dtype=str)}).drop(columns=BFQ)
    order = setting_order(rows[BFQ], base)
    # named changes sort by name (a raw setting string sorts by its first tunable)
    names = [change(order[0], order[0]), *sorted(change(s, order[0]) for s in order[1:])]
    named = pd.Categorical([change(str(s), order[0]) for s in rows[BFQ]], names, ordered=True)
    return rows.assign(**{SETTING: named}).drop(columns=BFQ)


def verdicts(tests: pd.DataFrame, claims: Iterable[str]) -> pd.DataFrame:
    """From the notebooks' tests table: a row per claim and device profile, a column per BFQ
    setting (named by its change of the baseline) with the claim's verdict under it."""
    rows = profiled(tests[tests["claim"].isin(list(claims))])
    if rows.empty:
        return pd.DataFrame(columns=["claim", PROFILE])
    order = setting_order(rows[BFQ])
    wide = rows.pivot_table(index=["claim", PROFILE], columns=BFQ, values="outcome",
                            aggfunc="first").reindex(columns=order)
    wide.columns = [change(s, order[0]) for s in wide.columns]
    wide = wide.reset_index()
    wide["rank"] = [int(c[1:]) for c in wide["claim"]]
    wide[PROFILE] = pd.Categorical(wide[PROFILE], profile_order(wide[PROFILE]), ordered=True)
    return wide.sort_values(["rank", PROFILE]).drop(columns="rank").reset_index(drop=True)


RISE_COLUMNS = [PROFILE, "setting", BFQ, "share_setting", "share_baseline", "ratio", "low",
                "high", "n", "p", "c24_baseline", "c24_setting", "why_not", "p_holm", "rises",
                "removes"]


def starvation_rise(runs: pd.DataFrame, experiments: pd.DataFrame,
                    tests: pd.DataFrame) -> pd.DataFrame:
    """The pre-registered test of "a setting removes C24's starvation" (module docstring): a
    row per device profile and non-baseline setting."""
    rows = profiled(starvation_pair(runs, experiments))
    rows = rows[rows["arm"] == JOURNAL_ACCOUNTED]
    verdict = {(r[PROFILE], r[BFQ]): r["outcome"]
               for _, r in profiled(tests[tests["claim"] == STARVATION]).iterrows()}
    found = []
    base = campaign_baseline(tests)
    for profile in profile_order(rows[PROFILE]):
        mine = rows[rows[PROFILE] == profile]
        order = setting_order(mine[BFQ], base if base in set(mine[BFQ]) else None)
        reference = mine[mine[BFQ] == order[0]]
        for setting in order[1:]:
            check = checks.ratio(STARVATION, "accounted victim's share: setting over baseline",
                                 mine[mine[BFQ] == setting], reference, "achieved_share")
            row = {PROFILE: profile, "setting": change(setting, order[0]), BFQ: setting,
                   "share_setting": float(np.median(check.a)) if len(check.a) else np.nan,
                   "share_baseline": float(np.median(check.b)) if len(check.b) else np.nan,
                   "ratio": np.nan, "low": np.nan, "high": np.nan,
                   "n": f"{len(check.a)}/{len(check.b)}", "p": np.nan,
                   "c24_baseline": verdict.get((profile, order[0])),
                   "c24_setting": verdict.get((profile, setting)), "why_not": ""}
            if not checks.enough(check):  # no test (a campaign part-run)
                row["why_not"] = "fewer than 2 runs on a side"
            elif problem := checks.off_log_scale(check):  # a share of 0 has no log ratio
                row["why_not"] = problem
            else:
                result = checks.evaluate(check)
                row.update(ratio=result.effect, low=result.low, high=result.high, p=result.p_for)
            found.append(row)
    table = pd.DataFrame(found, columns=RISE_COLUMNS[:-3])
    if table.empty:  # a campaign without C24's pair (weights-nested): its columns, no row
        return pd.DataFrame(columns=RISE_COLUMNS)
    rejected, adjusted = holm(table["p"].fillna(1.0).to_numpy())
    removes = (rejected & (table["c24_baseline"] == REPRODUCED)
               & (table["c24_setting"] == CONTRADICTED))
    return table.assign(p_holm=adjusted, rises=rejected, removes=removes)


def sensitivity_effects(tests: pd.DataFrame, claims: Iterable[str] = SENSITIVE) -> pd.DataFrame:
    """The measured checks of the isolation claims (shares included: their effect is a share,
    compared as a ratio of shares), a row per check, device profile and setting, with the
    check's number within its claim."""
    rows = profiled(tests[tests["claim"].isin(list(claims)) & (tests["status"] == MEASURED)])
    columns = ["claim", "check", "part", "test", PROFILE, BFQ, "effect", "low", "high", "se", "df",
               "outcome"]
    return numbered(rows).reindex(columns=columns).reset_index(drop=True)


def campaign_baseline(tests: pd.DataFrame) -> str | None:
    """The baseline of every setting the campaign's tests were judged under: the isolation
    checks alone hold two settings equally often, a tie `baseline` would settle by name."""
    return baseline(profiled(tests)[BFQ]) if not tests.empty else None


def sensitivity(effects: pd.DataFrame, base: str | None = None) -> pd.DataFrame:
    """Does the setting change an isolation check's effect? device_class.dependence per device
    profile, the baseline setting first (`base`: the campaign's, campaign_baseline; else the
    effects' own); Holm over every check of every profile."""
    tables = []
    base = base or (baseline(effects[BFQ]) if not effects.empty else None)
    for profile, group in effects.groupby(PROFILE, sort=False):
        table = dependence(group, by=BFQ, order=lambda found: setting_order(
            found, base if base in set(found) else None))
        if not table.empty:
            tables.append(table.assign(**{PROFILE: profile}))
    if not tables:  # no check measured under two settings: a table of no rows, its columns
        tables = [dependence(effects.iloc[:0], by=BFQ).assign(**{PROFILE: None})]
    table = pd.concat(tables, ignore_index=True).drop(columns=["p_holm", "depends"])
    rejected, adjusted = holm(table["p"].fillna(1.0).to_numpy())
    changes = [change(to, start) for to, start in zip(table["to"], table["from"], strict=True)]
    return table.assign(change=changes, p_holm=adjusted, depends=rejected)
