"""What the package's own studies measured of the testbed factors (rule measured, 2026-11-27;
its statistics since rule contrast-welch, 2026-11-29).

A *contrast* is two families of one campaign and host (same machine and kernel) that differ in
one factor's value alone: the device profile (the device-class study: quick, and the bfq
campaign per BFQ setting), the I/O controller (BFQ against iocost: the controller study's
v2/bfq and v2/iocost) or the cgroup version (v1/bfq against v2/bfq on the nested host, booted
as either: the write-back factor). Families that differ in more (another host, kernel or disk
path, as thesis-hdd's cgroup v1 on this machine against thesis-v2's v2 in a guest) are no
contrast.

For each check measured in both families of a contrast, the change of its effect from one to
the other: a ratio effect on the log scale (the change is a ratio of ratios), a share or a
difference of shares on its own scale. It is a t statistic: the difference of the two checks'
own estimates, its standard error from theirs (each the check's own t statistic: Welch's,
the one-sample t's, the slope's, or a pool's blocked one) and Welch-Satterthwaite's degrees of
freedom from theirs, so a share's change is exactly Welch's two-sample test on the two
families' runs. Two tests of the change, at alpha = 0.05, Holm over the claims of the contrast:

- dependence: the change differs from none (two-sided; Bonferroni within the claim);
- equivalence (TOST, t tails): the change lies within a margin that is at most the check's
  own smallest effect of interest (a wider one is refused); a claim's checks are equivalent
  together when each is (intersection-union: the largest TOST p).

Each check is decided at its own p of each test, in its claim's place in Holm's step-down (as
a check's outcome in a verdict), so an unchanged check is not called dependent because
another check of its claim moved.

One decision per check and contrast, the same wherever it is shown (the ledger, the
controller study, the notebooks): *depends* where the change is significant, whatever the
equivalence test says; else *equivalent* where the equivalence holds; else *inconclusive*.
Per claim and factor, over the contrasts in which the factor differs from the thesis's on one
side only (`decides`): *dropped* for the checks a contrast showed equivalent (and none showed
dependent), *kept* where one showed a dependence (the measurement then is the reason),
*undecided* otherwise (the mechanism stands). A contrast whose controller was tuned on a
claim's own condition cannot speak for that claim (TUNED_ON).

Before 2026-11-29 (kept only to list what rule contrast-welch changed: `Basis`): each effect's
standard error was read off its 95% interval with normal tails, only the deciding checks were
compared, and an equivalence dropped a factor even where the change was significant."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from journalbench.judge import tuples
from journalbench.judge.claims import division, rules, scope
from journalbench.judge.claims.checks import ALPHA, SHARE_KINDS
from journalbench.judge.claims.preconditions import TUNED_ON
from journalbench.judge.claims.verdicts import (
    ALL_RULES,
    BEFORE,
    BEFORE_RESULTS,
    FAMILY,
    MEASURED,
    control_label,
    factor_names,
    holm_in_place,
    qualified,
    set_testbeds,
)

Z95 = 1.959964  # the normal quantile of a 95% interval
DROPPED, KEPT, UNDECIDED = "dropped", "kept", "undecided"
# the family columns a factor's value is read from; every other column of FAMILY, and the
# family's machine and kernel (FACTS), must be equal in a contrast
VARIED = {scope.DEVICE: {"device_profile"}, scope.WEIGHTS: {"io_control", "bfq", "iocost_qos"},
          scope.WRITEBACK: {"cgroup_version"}}
FACTS = ("hostnames", "kernels")
EVIDENCE_COLUMNS = [
    "campaign", "host", "factor", "from", "to", "claim", "test", "kind", "margin", "scale",
    "effect_from", "low_from", "high_from", "effect_to", "low_to", "high_to", "change", "low",
    "high", "se", "df", "p_change", "p_equivalent", "claim_p_equivalent", "claim_p_change",
    "claim_p_equivalent_holm", "claim_p_change_holm", "p_change_holm", "p_equivalent_holm",
    "outcome", "decides", "excluded"]


@dataclass(frozen=True)
class Basis:
    """Which of a check's columns a contrast reads and how it tests: the rules in force, or
    those before 2026-11-29 (kept to list what the rules of that day changed)."""
    factors: str  # the column of the factors the check's testbed differs in
    status: str  # the column of its status
    welch: bool  # t tails with Welch-Satterthwaite (else normal tails off the intervals)
    every: bool  # every check of the contrast compared (else only those it decides)
    significance_first: bool  # a significant change is never dropped as equivalent
    suffix: str = ""  # "_before": the results as judged before the latest rules
    per_check: bool = False  # each check decided at its own p, in its claim's Holm place

    def row(self, check: Mapping[str, Any]) -> dict[str, Any]:
        """A check's row with the results this basis reads under their plain names."""
        if not self.suffix:
            return dict(check)
        return {**check, **{c: check[f"{c}{self.suffix}"] for c in BEFORE_RESULTS}}


FINAL = Basis("factors", "status", True, True, True, per_check=True)
NORMAL = Basis("factors", "status", False, False, False)  # before rule contrast-welch
NAMED = Basis("named_factors", "status_before", False, False, False,  # before weights-measured
              "_before")


def change(first: Mapping[str, Any], other: Mapping[str, Any],
           share: bool = False) -> dict[str, float]:
    """The change of one check's effect from `first` to `other` with its 95% interval and a
    two-sided p: a t statistic whose estimate is the difference of the two checks' estimates
    (a ratio effect on the log scale, the change a ratio of ratios; a share effect, `share`,
    on its own scale, the change a difference), whose standard error comes from their
    standard errors (`se`) and whose degrees of freedom are Welch-Satterthwaite's from theirs
    (`df`). `diff`, `se`, `df`: the change on its test's scale."""
    from scipy import stats as sps

    diff, shown = scaled(first, other, share)
    v1, v2 = float(first["se"]) ** 2, float(other["se"]) ** 2
    se = float(np.sqrt(v1 + v2))
    df = satterthwaite((v1, v2), (float(first["df"]), float(other["df"])))
    if not (se > 0 and df > 0):
        return {"change": shown(diff), "low": np.nan, "high": np.nan, "p": np.nan,
                "diff": float(diff), "se": se, "df": df}
    half = float(sps.t.ppf(0.975, df)) * se
    return {"change": shown(diff), "low": shown(diff - half), "high": shown(diff + half),
            "p": float(2 * sps.t.sf(abs(diff) / se, df)), "diff": float(diff), "se": se,
            "df": df}


def scaled(first: Mapping[str, Any], other: Mapping[str, Any], share: bool) -> tuple:
    """(the change on the test's scale, the function showing it on the effect's)."""
    if share:
        return float(other["effect"] - first["effect"]), float
    return float(np.log(other["effect"]) - np.log(first["effect"])), np.exp


def satterthwaite(variances: tuple[float, ...], dfs: tuple[float, ...]) -> float:
    """Welch-Satterthwaite's degrees of freedom of a sum of independent variance estimates,
    each with its own degrees of freedom (for two Welch statistics: the four groups')."""
    total = sum(variances)
    parts = sum(v * v / d for v, d in zip(variances, dfs, strict=True) if v > 0)
    if not (total > 0 and parts > 0) or any(not d > 0 for d in dfs):
        return np.nan
    return float(total * total / parts)


def normal_change(first: Mapping[str, Any], other: Mapping[str, Any],
                  share: bool = False) -> dict[str, float]:
    """The change as computed before rule contrast-welch (2026-11-29), kept only to list what
    that rule changed: each standard error read off its own 95% interval (width / 3.92),
    normal tails."""
    from scipy import stats as sps

    diff, shown = scaled(first, other, share)
    if share:
        width = [r["high"] - r["low"] for r in (first, other)]
    else:
        width = [np.log(r["high"] / r["low"]) for r in (first, other)]
    se = float(np.hypot(*(w / (2 * Z95) for w in width)))
    return {"change": shown(diff), "low": shown(diff - Z95 * se),
            "high": shown(diff + Z95 * se),
            "p": 2 * sps.norm.sf(abs(diff) / se) if se > 0 else np.nan,
            "diff": float(diff), "se": se, "df": np.inf}


def equivalence_p(diff: float, se: float, margin: float, interest: float | None = None,
                  df: float = np.inf) -> float:
    """TOST p of "the change lies within +-margin" (on the test's scale), with t tails on
    `df` degrees of freedom (np.inf: the normal tails used before 2026-11-29). A margin wider
    than the check's smallest effect of interest (`interest`, on the same scale) is refused:
    an equivalence that wide would drop a factor whose change the check itself would call
    an effect."""
    from scipy import stats as sps

    if interest is not None and margin > interest + 1e-12:
        raise ValueError(f"an equivalence margin of {margin:.4g} is wider than the check's "
                         f"smallest effect of interest ({interest:.4g})")
    if not se > 0 or not margin > 0 or not df > 0:
        return np.nan
    tail = sps.norm if np.isinf(df) else sps.t(df)
    return float(max(tail.sf((diff + margin) / se), tail.cdf((diff - margin) / se)))


def margin_of(check: Mapping[str, Any]) -> float:
    """A check's margin for a change of its effect, on the test's scale: its smallest effect
    of interest (share points, or the log of a ratio)."""
    if check["kind"] in SHARE_KINDS:
        return float(check["interest"])
    return abs(float(np.log(check["interest"])))


@dataclass(frozen=True)
class Contrast:
    factor: str
    campaign: str
    host: str
    first: tuple  # a family (FAMILY's values): the one unlike the thesis's in the factor
    other: tuple  # the one like it

    def label(self, family: tuple) -> str:
        values = dict(zip(FAMILY, family, strict=True))
        if self.factor == scope.DEVICE:
            return str(values["device_profile"])
        if self.factor == scope.WRITEBACK:
            return f"cgroup v{values['cgroup_version']}"
        return control_label(values["io_control"], values.get("iocost_qos"))


def family_facts(claims: pd.DataFrame) -> pd.DataFrame:
    """A row per family: its FAMILY values, FACTS and what its weights were measured to
    divide (`division_word`; blank where a table has none)."""
    # as objects first: a blank in a number's column would otherwise change its dtype (which
    # pandas 4 will refuse)
    return (claims.reindex(columns=[*FAMILY, *FACTS, "division_word"]).astype(object)
            .fillna("").drop_duplicates(FAMILY).reset_index(drop=True))


def both_measured(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether both families' weights were measured on validation pairs (division.py): two
    settings of one controller (BFQ's tunables, iocost's QoS procedure) are a contrast of the
    weights factor only then (rule contrast-welch, 2026-11-29, fixed before weights-nested's
    first run): what each divides is then known, not assumed from the setting's name."""
    unknown = ("", division.UNMEASURED)
    return (str(a.get("division_word", "")) not in unknown
            and str(b.get("division_word", "")) not in unknown)


def contrasts(claims: pd.DataFrame) -> list[Contrast]:
    """The contrasts among the families of a claims table (module doc)."""
    found = []
    families = family_facts(claims)
    for (_, a), (_, b) in combinations(families.iterrows(), 2):
        same = ["campaign", "host", *FACTS]
        if any(a[k] != b[k] for k in same) or not a["hostnames"]:
            continue
        varied = {k for k in ("device_profile", "io_control", "bfq", "iocost_qos",
                              "cgroup_version") if a[k] != b[k]}
        for factor, columns in VARIED.items():
            if varied and varied <= columns and (factor != scope.WEIGHTS
                                                 or "io_control" in varied
                                                 or both_measured(a, b)):
                found.append(Contrast(factor, a["campaign"], a["host"],
                                      tuple(a[k] for k in FAMILY), tuple(b[k] for k in FAMILY)))
    return found


def compared(contrast: Contrast, checks: pd.DataFrame,
             basis: Basis = FINAL) -> list[dict[str, Any]]:
    """A row per check measured in both families of the contrast: every one (`basis.every`,
    oriented from `first`) or only those whose factor differs from the thesis's on exactly
    one side (`decides`, oriented from the side unlike the thesis's)."""
    if basis.status not in checks or basis.factors not in checks:
        return []
    measured = checks[checks[basis.status] == MEASURED]
    sides = {side: measured[np.logical_and.reduce(
        [measured[k] == v for k, v in zip(FAMILY, family, strict=True)])]
        for side, family in (("a", contrast.first), ("b", contrast.other))}
    other = {(r["claim"], r["test"]): basis.row(r) for r in tuples.records(sides["b"])}
    rows = []
    for first in map(basis.row, tuples.records(sides["a"])):
        second = other.get((first["claim"], first["test"]))
        if second is None:
            continue
        here = contrast.factor in factor_names(first[basis.factors])
        there = contrast.factor in factor_names(second[basis.factors])
        if here == there and not basis.every:
            continue
        flip = there and not here
        start, end = (second, first) if flip else (first, second)
        share = start["kind"] in SHARE_KINDS
        moved = (change if basis.welch else normal_change)(start, end, share)
        margin = margin_of(start)
        rows.append({"campaign": contrast.campaign, "host": contrast.host,
                     "factor": contrast.factor,
                     "from": contrast.label(contrast.other if flip else contrast.first),
                     "to": contrast.label(contrast.first if flip else contrast.other),
                     "claim": start["claim"], "test": start["test"], "kind": start["kind"],
                     "margin": float(start["interest"]),
                     "scale": "difference" if share else "ratio",
                     "effect_from": start["effect"], "low_from": start["low"],
                     "high_from": start["high"], "effect_to": end["effect"],
                     "low_to": end["low"], "high_to": end["high"],
                     "change": moved["change"], "low": moved["low"], "high": moved["high"],
                     "se": moved["se"], "df": moved["df"], "p_change": moved["p"],
                     "p_equivalent": equivalence_p(moved["diff"], moved["se"], margin,
                                                   margin_of(start), moved["df"]),
                     "decides": here != there})
    return rows


def tuned_on(row: Mapping[str, Any], contrast: Contrast) -> str:
    for family in (contrast.first, contrast.other):
        control = dict(zip(FAMILY, family, strict=True))["io_control"]
        why = TUNED_ON.get((contrast.campaign, control), {}).get(row["claim"])
        if why:
            return why
    return ""


def judged_contrast(contrast: Contrast, checks: pd.DataFrame,
                    basis: Basis = FINAL) -> pd.DataFrame:
    """The contrast's checks with each claim's two tests after Holm and its outcome."""
    from journalbench.judge.stats import holm

    rows = compared(contrast, checks, basis)
    if not rows:
        return pd.DataFrame(columns=EVIDENCE_COLUMNS)
    for row in rows:
        row["excluded"] = tuned_on(row, contrast)
    table = pd.DataFrame(rows)
    tested = table[table["excluded"] == ""]
    per_claim = tested.groupby("claim").agg(
        claim_p_equivalent=("p_equivalent", lambda p: float(p.fillna(1.0).max())),
        claim_p_change=("p_change", lambda p: min(1.0, float(p.fillna(1.0).min()) * len(p))))
    if not per_claim.empty:
        per_claim["claim_p_equivalent_holm"] = holm(per_claim["claim_p_equivalent"])[1]
        per_claim["claim_p_change_holm"] = holm(per_claim["claim_p_change"])[1]
    table = table.merge(per_claim, left_on="claim", right_index=True, how="left")
    table["p_change_holm"], table["p_equivalent_holm"] = checks_in_place(table, per_claim)
    table["outcome"] = [outcome(row, basis) for row in tuples.rows(table)]
    return table.reindex(columns=EVIDENCE_COLUMNS)


def checks_in_place(table: pd.DataFrame, per_claim: pd.DataFrame) -> tuple[list, list]:
    """Each check's own p of a change (Bonferroni within its claim) and of equivalence, each
    in its claim's place in Holm's step-down over the claims of the contrast (as a check's
    outcome in a verdict: verdicts.outcomes); NaN where the contrast cannot speak for it."""
    sizes = table[table["excluded"] == ""].groupby("claim").size()
    changes, equivalents = [], []
    for row in tuples.rows(table):
        if row.excluded or row.claim not in per_claim.index:
            changes.append(np.nan)
            equivalents.append(np.nan)
            continue
        others = per_claim.drop(index=row.claim)
        own = 1.0 if pd.isna(row.p_change) else row.p_change
        changes.append(holm_in_place(others["claim_p_change"].to_numpy(float),
                                     min(1.0, own * int(sizes[row.claim]))))
        equivalents.append(holm_in_place(others["claim_p_equivalent"].to_numpy(float),
                                         1.0 if pd.isna(row.p_equivalent)
                                         else row.p_equivalent))
    return changes, equivalents


def outcome(row: Any, basis: Basis = FINAL) -> str:
    """A check's one decision in a contrast (module doc): "depends", "equivalent",
    "inconclusive", or "" where the contrast cannot speak for its claim."""
    if row.excluded:
        return ""
    if basis.per_check:
        depends, equivalent = row.p_change_holm < ALPHA, row.p_equivalent_holm < ALPHA
    else:  # before 2026-11-29: the claim's decision for each of its checks
        depends = row.claim_p_change_holm < ALPHA
        equivalent = row.claim_p_equivalent_holm < ALPHA
    if basis.significance_first:
        return "depends" if depends else "equivalent" if equivalent else "inconclusive"
    return "equivalent" if equivalent else "depends" if depends else "inconclusive"


def evidence(claims: pd.DataFrame, checks: pd.DataFrame, basis: Basis = FINAL) -> pd.DataFrame:
    """Every contrast among a campaign's families, judged (EVIDENCE_COLUMNS)."""
    tables = [judged_contrast(c, checks, basis) for c in contrasts(claims)]
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=EVIDENCE_COLUMNS)
    return pd.concat(tables, ignore_index=True)


def decisions(found: pd.DataFrame) -> pd.DataFrame:
    """Per claim and factor: `decision` (DROPPED, KEPT or UNDECIDED), the checks whose factor
    is dropped (`dropped`: tests, " | "-joined) and the contrasts behind it (`by`)."""
    rows = []
    judged = found[(found["excluded"].fillna("") == "")
                   & found["decides"].fillna(True).astype(bool)]
    for (claim, factor), group in judged.groupby(["claim", "factor"], sort=False):
        equivalent = group[group["outcome"] == "equivalent"]
        depends = group[group["outcome"] == "depends"]
        decision = KEPT if not depends.empty else DROPPED if not equivalent.empty else UNDECIDED
        behind = depends if decision == KEPT else equivalent if decision == DROPPED else group
        rows.append({"claim": claim, "factor": factor, "decision": decision,
                     "dropped": " | ".join(dict.fromkeys(equivalent["test"]))
                     if decision == DROPPED else "",
                     "by": "; ".join(dict.fromkeys(
                         f"{r.campaign} {r['from']} -> {r.to}" for _, r in behind.iterrows()))})
    return pd.DataFrame(rows, columns=["claim", "factor", "decision", "dropped", "by"])


def dropped_checks(decided: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """(claim, test) -> the factors a measurement dropped for that check."""
    found: dict[tuple[str, str], list[str]] = {}
    for row in decided[decided["decision"] == DROPPED].itertuples():
        for test in row.dropped.split(" | "):
            found.setdefault((row.claim, test), []).append(row.factor)
    return found


def without(described: str, names: list[str], dropped: Iterable[str]) -> str:
    """`described` (" | "-joined, one part per factor of `names`) less the dropped factors."""
    parts = str(described or "").split(" | ") if names else []
    gone = set(dropped)
    return " | ".join(p for p, n in zip(parts, names, strict=True) if n not in gone)


def apply(claims: pd.DataFrame, checks: pd.DataFrame,
          drops: Mapping[Basis, Mapping[tuple[str, str], list[str]]]
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A campaign's claims and checks with the measured drops applied: each check's `dropped`
    (the rules in force), `dropped_normal` (before rule contrast-welch) and `dropped_named`
    (before rule weights-measured), `differs` and `differs_short`; each claim's testbed, its
    testbed before the latest rules (`testbed_before`, `factors_before`), and in its
    `changes` what the rules listed here changed (rules.CONTRASTED: made anew each time, so
    tables applied before come out the same)."""
    checks = checks.copy()
    keys = list(zip(checks["claim"], checks["test"], strict=True))
    for column, basis, names in (("dropped", FINAL, "factors"),
                                 ("dropped_normal", NORMAL, "factors"),
                                 ("dropped_named", NAMED, "named_factors")):
        found = drops.get(basis, {})
        checks[column] = [", ".join(f for f in found.get(key, []) if f in factor_names(n))
                          for key, n in zip(keys, checks[names].fillna(""), strict=True)]
    names = [factor_names(f) for f in checks["factors"]]
    gone = [factor_names(g) for g in checks["dropped"]]
    checks["differs"] = [without(d, n, g) for d, n, g in
                         zip(checks["factor_text"], names, gone, strict=True)]
    checks["differs_short"] = [", ".join(scope.FACTORS[f].short for f in n if f not in g)
                               for n, g in zip(names, gone, strict=True)]
    claims = claims.copy()
    keys_of = [*FAMILY, "claim"]
    grouped: dict[tuple, list[dict]] = {}
    for row in tuples.records(checks):
        grouped.setdefault(tuple(row[k] for k in keys_of), []).append(row)
    states = {"now": ALL_RULES, rules.MEASURED: ALL_RULES - {rules.MEASURED},
              rules.CONTRAST_WELCH: ALL_RULES - {rules.CONTRAST_WELCH},
              rules.WEIGHTS_MEASURED: ALL_RULES - {rules.WEIGHTS_MEASURED,
                                                   rules.CONTRAST_WELCH}}
    columns = ["testbed", "factors", "differs"]
    frames = {state: claims.copy() for state in states}
    before = claims.copy()
    for _, family in claims.groupby(FAMILY, sort=False):
        mine = {claim: grouped.get(key, []) for claim, key in zip(
            family["claim"], family[keys_of].itertuples(index=False, name=None), strict=True)}
        for state, active in states.items():
            here = family.copy()
            set_testbeds(here, mine, active)
            frames[state].loc[family.index, columns] = here[columns]
        if "verdict_before" in family:  # as judged before the latest rules
            then = family.assign(verdict=family["verdict_before"])
            set_testbeds(then, {c: [{**r, "status": r.get("status_before", r["status"]),
                                     "outcome": r.get("outcome_before", r["outcome"])}
                                    for r in rows] for c, rows in mine.items()}, BEFORE)
            before.loc[family.index, ["testbed_before", "factors_before"]] = \
                then[["testbed", "factors"]].to_numpy()
    now = frames["now"]
    claims[columns] = now[columns]
    if "verdict_before" in claims:
        claims[["testbed_before", "factors_before"]] = before[["testbed_before",
                                                               "factors_before"]]
    # each rule's entry: the state without it against the state with it, in the rules' order
    steps = ((rules.MEASURED, frames[rules.MEASURED], now),
             (rules.WEIGHTS_MEASURED, frames[rules.WEIGHTS_MEASURED],
              frames[rules.CONTRAST_WELCH]),
             (rules.CONTRAST_WELCH, frames[rules.CONTRAST_WELCH], now))
    changes = [[c for c in str(text).split("; ")
                if c and not any(c.startswith(f"{rule}: ") for rule in rules.CONTRASTED)]
               for text in claims["changes"].fillna("")]
    for rule, old, new in steps:
        for entries, was, is_ in zip(changes, tuples.rows(old), tuples.rows(new), strict=True):
            if (was.testbed, was.factors) != (is_.testbed, is_.factors):
                entries.append(f"{rule}: {said(was)} -> {said(is_)}")
    claims["changes"] = ["; ".join(entries) for entries in changes]
    return claims, checks


def said(row: Any) -> str:
    """A claim's verdict with its testbed, as a rule's entry lists it."""
    return qualified(row.verdict, row.testbed, factor_names(row.factors))


def measured(results: list[tuple[str, tuple]]) -> list[tuple[str, tuple]]:
    """Every campaign's judged tables (claims, checks, starved[, evidence]) with what every
    campaign's contrasts measured applied to all of them, and each campaign's own evidence
    as its fourth table. Drops are computed under the rules in force and, to list what the
    latest rules changed, under those before them (Basis)."""
    drops = {}
    found: dict[str, pd.DataFrame] = {}
    for basis in (FINAL, NORMAL, NAMED):
        tables = {campaign: evidence(t[0], t[1], basis) for campaign, t in results}
        if basis == FINAL:
            found = tables
        every = [t for t in tables.values() if not t.empty]
        drops[basis] = dropped_checks(decisions(pd.concat(every, ignore_index=True) if every
                                                else pd.DataFrame(columns=EVIDENCE_COLUMNS)))
    out = []
    for campaign, tables in results:
        claims, checks = apply(tables[0], tables[1], drops)
        out.append((campaign, (claims, checks, tables[2], found[campaign])))
    return out
