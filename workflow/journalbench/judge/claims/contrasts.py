"""What the package's own studies measured of the testbed factors (rule measured, 2026-11-27).

A *contrast* is two families of one campaign and host (same machine and kernel) that differ in
one factor's value alone: the device profile (the device-class study: quick, and the bfq
campaign per BFQ setting), the I/O controller (BFQ against iocost: the controller study's
v2/bfq and v2/iocost) or the cgroup version (v1/bfq against v2/bfq on the nested host, booted
as either: the write-back factor). Families that differ in more (another host, kernel or disk
path, as thesis-hdd's cgroup v1 on this machine against thesis-v2's v2 in a guest) are no
contrast.

For each check measured in both families whose claim ties it to the factor (scope.py lists the
factor among its differing ones on one side and not on the other), the change of its effect
from one family to the other, each effect's standard error read off its own 95% interval (a
normal approximation of the check's t interval): a ratio effect on the log scale (the change
is a ratio of ratios), a share or a difference of shares on its own scale. Two tests of the
change, at alpha = 0.05:

- equivalence (TOST): the change lies within the check's smallest effect of interest (its
  margin: x1.2 where the thesis gives no number, +-0.10 for a share); a claim's checks are
  equivalent together when each is (intersection-union: the largest TOST p), Holm over the
  claims of the contrast;
- dependence: the change differs from none (two-sided), Bonferroni within the claim, Holm over
  the claims of the contrast.

Per claim and factor, over its contrasts: *dropped* for the checks a contrast showed
equivalent (and none showed dependent), *kept* where one showed a dependence beyond the
margin (the measurement then is the reason), *undecided* otherwise (the mechanism stands).
A contrast whose controller was tuned on a claim's own condition cannot speak for that claim
(TUNED_ON)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from journalbench.judge.claims import rules, scope
from journalbench.judge.claims.checks import ALPHA, SHARE_KINDS
from journalbench.judge.claims.preconditions import TUNED_ON
from journalbench.judge.claims.verdicts import (
    ALL_RULES,
    FAMILY,
    MEASURED,
    factor_names,
    qualified,
    set_testbeds,
)

Z95 = 1.959964  # the normal quantile of a 95% interval
DROPPED, KEPT, UNDECIDED = "dropped", "kept", "undecided"
# the family columns a factor's value is read from; every other column of FAMILY, and the
# family's machine and kernel (FACTS), must be equal in a contrast
VARIED = {scope.DEVICE: {"device_profile"}, scope.WEIGHTS: {"io_control", "bfq"},
          scope.WRITEBACK: {"cgroup_version"}}
FACTS = ("hostnames", "kernels")
EVIDENCE_COLUMNS = [
    "campaign", "host", "factor", "from", "to", "claim", "test", "kind", "margin", "scale",
    "effect_from", "low_from", "high_from", "effect_to", "low_to", "high_to", "change", "low",
    "high", "p_change", "p_equivalent", "claim_p_equivalent", "claim_p_change",
    "claim_p_equivalent_holm", "claim_p_change_holm", "outcome", "excluded"]


def change(first: Mapping[str, Any], other: Mapping[str, Any],
           share: bool = False) -> dict[str, float]:
    """The change of one check's effect from `first` to `other` with its 95% interval and a
    two-sided p, each effect's standard error read off its own 95% interval: a ratio effect
    (1 = none) on the log scale, the change a ratio of ratios; a share effect (`share`) on its
    own scale, the change a difference. `diff` and `se`: the change on its test's scale."""
    from scipy import stats as sps

    if share:
        diff, shown = other["effect"] - first["effect"], float
        width = [r["high"] - r["low"] for r in (first, other)]
    else:
        diff, shown = np.log(other["effect"]) - np.log(first["effect"]), np.exp
        width = [np.log(r["high"] / r["low"]) for r in (first, other)]
    se = float(np.hypot(*(w / (2 * Z95) for w in width)))
    return {"change": shown(diff), "low": shown(diff - Z95 * se),
            "high": shown(diff + Z95 * se),
            "p": 2 * sps.norm.sf(abs(diff) / se) if se > 0 else np.nan,
            "diff": float(diff), "se": se}


def equivalence_p(diff: float, se: float, margin: float) -> float:
    """TOST p of "the change lies within +-margin" (on the test's scale, normal)."""
    from scipy import stats as sps

    if not se > 0 or not margin > 0:
        return np.nan
    return float(max(sps.norm.sf((diff + margin) / se), sps.norm.cdf((diff - margin) / se)))


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
        return str(values["io_control"])


def family_facts(claims: pd.DataFrame) -> pd.DataFrame:
    """A row per family: its FAMILY values and FACTS (blank where a table has none)."""
    return (claims.reindex(columns=[*FAMILY, *FACTS]).fillna("")
            .drop_duplicates(FAMILY).reset_index(drop=True))


def contrasts(claims: pd.DataFrame) -> list[Contrast]:
    """The contrasts among the families of a claims table (module doc)."""
    found = []
    families = family_facts(claims)
    for (_, a), (_, b) in combinations(families.iterrows(), 2):
        same = ["campaign", "host", *FACTS]
        if any(a[k] != b[k] for k in same) or not a["hostnames"]:
            continue
        varied = {k for k in ("device_profile", "io_control", "bfq", "cgroup_version")
                  if a[k] != b[k]}
        for factor, columns in VARIED.items():
            if varied and varied <= columns and (factor != scope.WEIGHTS
                                                 or "io_control" in varied):
                found.append(Contrast(factor, a["campaign"], a["host"],
                                      tuple(a[k] for k in FAMILY), tuple(b[k] for k in FAMILY)))
    return found


def compared(contrast: Contrast, checks: pd.DataFrame) -> list[dict[str, Any]]:
    """A row per check measured in both families of the contrast whose factor differs from
    the thesis's on exactly one side, oriented from the side unlike the thesis's."""
    measured = checks[checks["status"] == MEASURED]
    sides = {side: measured[np.logical_and.reduce(
        [measured[k] == v for k, v in zip(FAMILY, family, strict=True)])]
        for side, family in (("a", contrast.first), ("b", contrast.other))}
    other = {(r["claim"], r["test"]): r for r in sides["b"].to_dict("records")}
    rows = []
    for first in sides["a"].to_dict("records"):
        second = other.get((first["claim"], first["test"]))
        if second is None:
            continue
        here = contrast.factor in factor_names(first["factors"])
        there = contrast.factor in factor_names(second["factors"])
        if here == there:
            continue
        start, end = (first, second) if here else (second, first)
        share = start["kind"] in SHARE_KINDS
        moved = change(start, end, share)
        margin = margin_of(start)
        rows.append({"campaign": contrast.campaign, "host": contrast.host,
                     "factor": contrast.factor,
                     "from": contrast.label(contrast.first if here else contrast.other),
                     "to": contrast.label(contrast.other if here else contrast.first),
                     "claim": start["claim"], "test": start["test"], "kind": start["kind"],
                     "margin": float(start["interest"]),
                     "scale": "difference" if share else "ratio",
                     "effect_from": start["effect"], "low_from": start["low"],
                     "high_from": start["high"], "effect_to": end["effect"],
                     "low_to": end["low"], "high_to": end["high"],
                     "change": moved["change"], "low": moved["low"], "high": moved["high"],
                     "p_change": moved["p"],
                     "p_equivalent": equivalence_p(moved["diff"], moved["se"], margin)})
    return rows


def tuned_on(row: Mapping[str, Any], contrast: Contrast) -> str:
    for family in (contrast.first, contrast.other):
        control = dict(zip(FAMILY, family, strict=True))["io_control"]
        why = TUNED_ON.get((contrast.campaign, control), {}).get(row["claim"])
        if why:
            return why
    return ""


def judged_contrast(contrast: Contrast, checks: pd.DataFrame) -> pd.DataFrame:
    """The contrast's checks with each claim's two tests after Holm and its outcome."""
    from journalbench.judge.stats import holm

    rows = compared(contrast, checks)
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
    table["outcome"] = [
        "" if row.excluded else
        "equivalent" if row.claim_p_equivalent_holm < ALPHA else
        "depends" if row.claim_p_change_holm < ALPHA else "inconclusive"
        for row in table.itertuples()]
    return table.reindex(columns=EVIDENCE_COLUMNS)


def evidence(claims: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Every contrast among a campaign's families, judged (EVIDENCE_COLUMNS)."""
    tables = [judged_contrast(c, checks) for c in contrasts(claims)]
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=EVIDENCE_COLUMNS)
    return pd.concat(tables, ignore_index=True)


def decisions(found: pd.DataFrame) -> pd.DataFrame:
    """Per claim and factor: `decision` (DROPPED, KEPT or UNDECIDED), the checks whose factor
    is dropped (`dropped`: tests, " | "-joined) and the contrasts behind it (`by`)."""
    rows = []
    judged = found[found["excluded"].fillna("") == ""]
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
          drops: Mapping[tuple[str, str], list[str]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A campaign's claims and checks with the measured drops applied: each check's `dropped`,
    `differs` and `differs_short`; each claim's testbed, and in its `changes` what the
    measured rule changed (made anew each time: the tables may have been applied before, so
    every claim with a check dropped now or before is qualified again)."""
    checks = checks.copy()
    names = [factor_names(f) for f in checks["factors"]]
    gone = [[f for f in drops.get((c, t), []) if f in n]
            for c, t, n in zip(checks["claim"], checks["test"], names, strict=True)]
    had = checks["dropped"].fillna("").astype(str) != ""
    checks["dropped"] = [", ".join(g) for g in gone]
    checks["differs"] = [without(d, n, g) for d, n, g in
                         zip(checks["factor_text"], names, gone, strict=True)]
    checks["differs_short"] = [", ".join(scope.FACTORS[f].short for f in n if f not in g)
                               for n, g in zip(names, gone, strict=True)]
    keys = [*FAMILY, "claim"]
    touched = checks[had | (checks["dropped"] != "")]
    redo = set(touched[keys].itertuples(index=False, name=None))
    claims = claims.copy()
    mine = [i for i, key in zip(claims.index, claims[keys].itertuples(index=False, name=None),
                                strict=True) if key in redo]
    if not mine:
        return claims, checks
    grouped: dict[tuple, list[dict]] = {}
    inside = [key in redo for key in checks[keys].itertuples(index=False, name=None)]
    for row in checks[inside].to_dict("records"):
        grouped.setdefault(tuple(row[k] for k in keys), []).append(row)
    part = claims.loc[mine]
    new, old = part.copy(), part.copy()
    columns = ["testbed", "factors", "differs"]
    for _, family in part.groupby(FAMILY, sort=False):
        of_claim = {claim: grouped.get(key, []) for claim, key in zip(
            family["claim"], family[keys].itertuples(index=False, name=None), strict=True)}
        for frame, active in ((new, ALL_RULES), (old, ALL_RULES - {rules.MEASURED})):
            here = family.copy()
            set_testbeds(here, of_claim, active)
            frame.loc[family.index, columns] = here[columns]
    claims.loc[mine, columns] = new[columns]
    claims.loc[mine, "changes"] = [
        with_measured(text, before, after) for text, before, after in zip(
            new["changes"].fillna(""), old.itertuples(), new.itertuples(), strict=True)]
    return claims, checks


def with_measured(changes: str, old: Any, new: Any) -> str:
    """A claim's `changes` with the measured rule's entry, if it changed the testbed."""
    kept = [c for c in str(changes).split("; ") if c and not c.startswith(f"{rules.MEASURED}:")]
    if (old.testbed, old.factors) != (new.testbed, new.factors):
        kept.append(f"{rules.MEASURED}: "
                    f"{qualified(old.verdict, old.testbed, factor_names(old.factors))} -> "
                    f"{qualified(new.verdict, new.testbed, factor_names(new.factors))}")
    return "; ".join(kept)


def measured(results: list[tuple[str, tuple]]) -> list[tuple[str, tuple]]:
    """Every campaign's judged tables (claims, checks, starved[, evidence]) with what every
    campaign's contrasts measured applied to all of them, and each campaign's own evidence
    as its fourth table."""
    found = {campaign: evidence(tables[0], tables[1]) for campaign, tables in results}
    every = [t for t in found.values() if not t.empty]
    decided = decisions(pd.concat(every, ignore_index=True) if every
                        else pd.DataFrame(columns=EVIDENCE_COLUMNS))
    drops = dropped_checks(decided)
    out = []
    for campaign, tables in results:
        claims, checks = apply(tables[0], tables[1], drops)
        out.append((campaign, (claims, checks, tables[2], found[campaign])))
    return out
