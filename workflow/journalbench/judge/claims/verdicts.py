"""From checks to verdicts, one family at a time (the runs of one campaign, host, device
profile, cgroup version, BFQ setting and I/O control: runs of different hosts, devices,
cgroup versions or schedulers are never pooled).

A claim is the intersection of its checks: its p-value for "reproduced" is the largest of its
checks' (an intersection-union test), its p-value for "contradicted" the smallest of its
checks' opposite p-values times their number (Bonferroni within the claim). Holm's correction
then runs over the claims of the family, once for each question. Each check (a *part* of its
claim) gets an outcome at its claim's level: its own p-value in its claim's place in Holm's
step-down. Verdicts, fixed before data except where rules.py dates a change:

- reproduced: every check of the claim is measured and the claim is significant;
- contradicted: the claim's opposite is significant (a check goes significantly the other way,
  or an equivalence interval lies entirely outside its margin);
- mixed: parts disagree: a check significantly for the claim, another against it;
- partially measured: what was measured is significant, but a part is missing or not testable
  here; also a claim with nothing measured yet because its runs or checks do not exist yet;
- inconclusive: measured, neither reproduced nor contradicted; each check gives the smallest
  effect its runs could have detected;
- not testable here: nothing measured could be judged because a precondition of the testbed is
  not met (preconditions.py).

A pool (runs with a `member`: docs/hosts.md) is one family: its checks' statistics take each
member as a block (judge/blocked.py), its members recorded the same facts or it is refused
(agreement.refuse_unlike), and a check whose members disagree beyond its margin is not pooled
but not testable here (agreement.py); its rows name the member blocks and every member's
comparison (`members`, `agreement`, only in a ledger with a pool).

Every verdict on measured parts carries its testbed (rule symmetric, 2026-11-27): "like the
thesis's" when the parts it rests on differ from the thesis's testbed in no factor their
claim depends on (scope.py), else the factors in which it differs, whichever way the result
went. ("Not reproduced here", the scope rule's name for a result against the thesis where the
testbed differed, is judged only to list what the symmetric rule changed.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from journalbench.judge import stats, tuples
from journalbench.judge.claims import (
    agreement,
    dbruns,
    division,
    legacy,
    preconditions,
    registry,
    rules,
    scope,
)
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import (
    ALPHA,
    DIFFERENCE,
    EQUIVALENT,
    LEVEL,
    MARGIN_KINDS,
    NOT_WORSE,
    SHARE,
    SHARE_KINDS,
    TEST_NAMES,
    TREND,
    Check,
    enough,
    evaluate,
    off_log_scale,
)
from journalbench.judge.starved import starvation
from journalbench.plan.experiments import CLAIM_SEPARATOR
from journalbench.vocabulary import DEFAULT_IO_CONTROL

REPRODUCED, CONTRADICTED, INCONCLUSIVE = "reproduced", "contradicted", "inconclusive"
PARTIAL, UNTESTABLE = "partially measured", "not testable here"
NOT_REPRODUCED, MIXED = "not reproduced here", "mixed"
VERDICTS = (REPRODUCED, MIXED, CONTRADICTED, NOT_REPRODUCED, INCONCLUSIVE, PARTIAL,
            UNTESTABLE)
MEASURED, MISSING, NOT_TESTABLE = "measured", "missing", "not testable"
# the testbed a verdict rests on (the claims' `testbed`): like the thesis's in every factor its
# parts depend on, or differing in some (named in `factors`); ours (C24) has no thesis testbed
LIKE, DIFFERS, OURS = "like the thesis's", "differs", "ours"
# iocost_qos: an iocost QoS procedure other than the default ("" for the default, BFQ and
# every run before the field existed: their families are what they were)
FAMILY = ["campaign", "host", "device_profile", "cgroup_version", "bfq", "io_control",
          "iocost_qos"]
UNRECORDED = "unrecorded"  # a table without BFQ settings (made by hand) is one family


def control_label(io_control: object, iocost_qos: object) -> str:
    """An I/O control as a family's name says it: its name, and iocost's QoS procedure in
    brackets unless the default's ("", or no column: NaN)."""
    qos = iocost_qos if isinstance(iocost_qos, str) else ""
    return str(io_control) + (f" ({qos})" if qos else "")


UNKNOWN_VERSION = 0  # the cgroup version of runs whose table does not record it
ALL_RULES = frozenset(rules.NAMES)
# precondition rules that make a check not testable, in the order their reasons are given
PRECONDITION_RULES = {rules.GUEST_FSYNC: preconditions.guest_fsync_unmet,
                      rules.TCG: preconditions.tcg_unmet,
                      rules.VM_DB_BUSY: preconditions.vm_db_busy_unmet,
                      rules.VM_DB_THREADS: preconditions.vm_db_threads_unmet,
                      rules.WRITEBACK: preconditions.writeback_unmet,
                      rules.HOST_CPU: preconditions.host_cpu_unmet,
                      rules.TUNED_ON: preconditions.tuned_on_unmet,
                      rules.WEIGHTS_IN_PLAY: preconditions.weights_unmet}
# a later precondition rule that judges anew what an earlier one refused, for the checks it
# applies to (its test gives a reason or "", not None): the earlier one's reason is lifted there
RELAXES = {rules.VM_DB_BUSY: rules.TCG, rules.VM_DB_THREADS: rules.VM_DB_BUSY}
# the rules in force before the latest rule date: the state the latest changes are listed
# against (each claim's `*_before` columns; the headline's moves, report/headline.py)
BEFORE = frozenset(rule.name for rule in rules.RULES if rule.date < rules.LATEST)


def run_flags(starved: pd.DataFrame) -> dict[str, str]:
    """run id -> why it is flagged starved ("victim: 7 s with no byte"), for starved runs."""
    flags: dict[str, list[str]] = {}
    for row in starved[starved["starved"]].itertuples():
        why = (f"{row.zero_seconds} s with no byte" if row.zero_seconds
               else f"share {row.achieved_share:.2f} < a quarter of {row.target_share:.2f}")
        flags.setdefault(row.run_id, []).append(f"{row.tenant}: {why}")
    return {run: "; ".join(parts) for run, parts in flags.items()}


def base_status(check: Check, regime: preconditions.Regime) -> tuple[str, str]:
    """The check's status under the rules fixed before data (rules.py lists the later ones)."""
    left_out = preconditions.too_few_left(check)
    if left_out:
        return NOT_TESTABLE, "; ".join(left_out)
    if not enough(check):
        return MISSING, check.missing
    unmet = preconditions.unmet(check, regime)
    if unmet:
        return NOT_TESTABLE, "; ".join(unmet)
    log_problem = off_log_scale(check)
    if log_problem:
        return NOT_TESTABLE, log_problem
    return MEASURED, ""


def absolute(check: Check) -> dict[str, float]:
    """The values an effect is computed from, in their own unit, so that they give it: a
    ratio's geometric means of the two sides (their quotient is the ratio: Welch's and the
    paired t work on logs); a trend's fitted geometric means at its first and last level (their
    quotient is the ratio per step to the power of the steps); a difference's means. A share's
    or a level's mean is the effect itself: none."""
    if check.kind in (SHARE, LEVEL) or not check.a.size:
        return {"ours_a": np.nan, "ours_b": np.nan}
    if check.kind == DIFFERENCE:
        return {"ours_a": float(np.mean(check.a)),
                "ours_b": float(np.mean(check.b)) if check.b.size else np.nan}
    if (check.a <= 0).any() or (check.b <= 0).any():  # not judged: off the log scale
        return {"ours_a": np.nan, "ours_b": np.nan}
    if check.kind == TREND:
        first, last = check.levels.min(), check.levels.max()
        if first == last:
            return {"ours_a": np.nan, "ours_b": np.nan}
        slope, intercept = np.polyfit(check.levels, np.log(check.a), 1)
        return {"ours_a": float(np.exp(intercept + slope * last)),
                "ours_b": float(np.exp(intercept + slope * first))}
    return {"ours_a": float(np.exp(np.mean(np.log(check.a)))),
            "ours_b": float(np.exp(np.mean(np.log(check.b)))) if check.b.size else np.nan}


def check_row(claim: str, check: Check, starved: dict[str, str],
              regime: preconditions.Regime) -> dict[str, Any]:
    bed = check.testbed
    ids = bed.values("run_id")
    differing = scope.differs(CLAIMS[claim].scope, bed)  # before any measured drop
    described = " | ".join(scope.described(f, bed) for f in differing)
    named = scope.differs(CLAIMS[claim].scope, bed, named=True)  # before weights-measured
    row = {"claim": claim, "part": check.part, "test": check.label, "kind": check.kind,
           "test_name": TEST_NAMES[check.kind], "thesis": check.thesis,
           "interest": check.interest, "unit": check.unit, "direction": check.direction,
           "target": check.target, "margin": check.margin, "column": check.column,
           "since": check.since, "until": check.until,
           "runs": " ".join(ids), "starved_runs": " ".join(r for r in ids if r in starved),
           "excluded_runs": " ".join(check.excluded),
           "differs": described, "differs_short": ", ".join(f.short for f in differing),
           # the same before any measured drop (contrasts.py makes `differs` from these)
           "factors": ", ".join(f.name for f in differing), "dropped": "",
           "factor_text": described,
           "named_factors": ", ".join(f.name for f in named),
           "legacy_factors": ", ".join(legacy.differs(claim, bed)),
           **absolute(check)}
    row["base_status"], row["base_why"] = base_status(check, regime)
    row["rule_why"] = {rule: why for rule, test in PRECONDITION_RULES.items()
                       if (why := test(check)) is not None}  # "": met; None: not its concern
    if check.blocked:  # a pool's: its member blocks, each member against the others
        row["members"] = agreement.blocks(check)
        row[COMPARED] = agreement.compare(check) if row["base_status"] == MEASURED else []
    if row["base_status"] == MEASURED:
        row.update(vars(evaluate(check)))
    return row


COMPARED = "_compared"  # a pool check's member comparisons, until the family is judged


def pool_agreement(rows: list[dict]) -> None:
    """A pool family's agreement check (agreement.py), Holm over its checks' members: each
    pool check's `agreement` line; a check whose members differ is not testable here."""
    pooled = [row for row in rows if COMPARED in row]
    agreement.judge([row[COMPARED] for row in pooled])
    for row in pooled:
        compared = row.pop(COMPARED)
        row["agreement"] = agreement.summary(row["kind"], compared)
        why = agreement.disagreement(row["kind"], compared)
        if why and row["base_status"] == MEASURED:
            row["base_status"], row["base_why"] = NOT_TESTABLE, why


@dataclasses.dataclass
class Unrun:
    """What judging makes once for the checks without runs, shared by the families of every
    campaign judged together: `rows`, each such check's row by its empty_key; `unnamed`, per
    claim no experiment of a family names (its builders then select no row: every builder
    picks its runs through selection.runs_for with its claim) and per what the checks' rows
    can depend on (unnamed_key), the empty_keys of the checks its builders made."""

    rows: dict[tuple, dict[str, Any]] = dataclasses.field(default_factory=dict)
    unnamed: dict[tuple, list[tuple]] = dataclasses.field(default_factory=dict)


def check_rows(runs: pd.DataFrame, experiments: pd.DataFrame, starved: dict[str, str],
               regime: preconditions.Regime, measured: division.Division | None = None,
               record: division.Record | None = None,
               seen: Unrun | None = None) -> list[dict]:
    """A row per check of every claim; each check's testbed carries what the family's
    weights were measured to divide and its controller's record (division.py). `seen`: the
    rows of checks without runs made for earlier families (empty_key), made once, and the
    checks of the claims no experiment names, built once (Unrun)."""
    rows = []
    named = ({c for claims in experiments["claims"] for c in str(claims).split(CLAIM_SEPARATOR)}
             if seen is not None else set(CLAIMS))
    shape = table_shape(runs) if set(CLAIMS) - named else None
    for claim in CLAIMS:
        unnamed = unnamed_key(claim, shape, measured, record) if claim not in named else None
        if unnamed is not None and unnamed in seen.unnamed:
            rows += [dict(seen.rows[key]) for key in seen.unnamed[unnamed]]
            continue
        keys = []
        for check in registry.build(claim, runs, experiments):
            check.testbed.division, check.testbed.record = measured, record
            key = empty_key(claim, check) if seen is not None else None
            keys.append(key)
            if key is None:
                rows.append(check_row(claim, check, starved, regime))
                continue
            if key not in seen.rows:
                seen.rows[key] = check_row(claim, check, starved, regime)
            rows.append(dict(seen.rows[key]))
        if unnamed is not None and None not in keys:
            seen.unnamed[unnamed] = keys
    return rows


def table_shape(runs: pd.DataFrame) -> tuple:
    """A runs table's columns, their names and types: all an empty selection of it holds."""
    return tuple(runs.columns), tuple(str(kind) for kind in runs.dtypes)


def unnamed_key(claim: str, shape: tuple | None, measured: division.Division | None,
                record: division.Record | None) -> tuple:
    """What the checks of a claim no experiment names depend on: its builders select no row
    of the family's runs, so their checks are made of empty selections of its columns (their
    table_shape), and their rows read the division and whether a record was given
    (empty_key)."""
    return claim, shape, division_key(measured), record is None


def division_key(measured: division.Division | None) -> object:
    """A division as a key: itself, or its identity if it cannot be hashed."""
    try:
        hash(measured)
    except TypeError:  # pragma: no cover - a division holding a list: its own only
        return id(measured)
    return measured


def empty_key(claim: str, check: Check) -> tuple | None:
    """What the row of a check without runs depends on, or None for a check with any: no
    values, no rows, none left out, no guests, no pool members (a claim's condition its
    family ran none of: four checks in five of the shipped ledger). check_row reads of such a
    check its fields, its testbed of no rows (their columns) and the division it was given
    (the record and the flags name runs it has none of; its status is missing before the
    regime is read), so checks alike in all of those have the same row in every family. Every
    field of the Check is in the key, so one added later is too."""
    if (len(check.rows) or check.a.size or check.b.size or check.levels.size or check.excluded
            or check.guests or check.guests_client or check.members):
        return None
    fields: list[tuple[str, object]] = []
    for field in dataclasses.fields(check):
        value = getattr(check, field.name)
        if isinstance(value, pd.DataFrame):
            value = tuple(value.columns)
        elif isinstance(value, np.ndarray):
            value = value.size
        elif isinstance(value, dict):
            value = tuple(sorted(value.items()))
        elif isinstance(value, float):
            value = repr(value)  # NaN equals itself only by its text
        fields.append((field.name, value))
    return (claim, tuple(fields), division_key(check.testbed.division),
            check.testbed.record is None)


def in_force(row: Mapping[str, Any], active: frozenset[str]) -> bool:
    """Whether a check is one of its claim's under the rules `active`."""
    return ((not row["since"] or row["since"] in active)
            and not (row["until"] and row["until"] in active))


def status(row: Mapping[str, Any], active: frozenset[str]) -> tuple[str, str]:
    """The check's status and why under the rules `active`: a later precondition rule makes a
    check not testable (a missing check stays missing, but for an untraceable fsync)."""
    lifted = {RELAXES[rule] for rule in RELAXES if rule in active and rule in row["rule_why"]}
    for rule in PRECONDITION_RULES:
        why = row["rule_why"].get(rule)
        if rule in active and why and rule not in lifted and (
                row["base_status"] != MISSING
                or rule in (rules.GUEST_FSYNC, rules.TCG, rules.VM_DB_BUSY,
                            rules.VM_DB_THREADS)):
            return NOT_TESTABLE, why
    return row["base_status"], row["base_why"]


def claim_p(checks: list[dict]) -> dict[str, float]:
    """The claim's p for "reproduced" (the largest of its measured checks') and for
    "contradicted" (the smallest opposite p times their number); NaN when nothing was
    measured. A check's NaN p is skipped, as pandas's max and min skip it."""
    measured = [row for row in checks if row["status"] == MEASURED]
    p_for = [row["p_for"] for row in measured if not np.isnan(row["p_for"])]
    p_against = [row["p_against"] for row in measured if not np.isnan(row["p_against"])]
    return {"p_for": float(max(p_for)) if p_for else np.nan,
            "p_against": (min(1.0, float(min(p_against)) * len(measured)) if p_against
                          else np.nan)}


def holm_in_place(others: np.ndarray, p: float) -> float:
    """The Holm-adjusted p a claim would get with `p` in its place among the family's other
    claims' p-values (`others`, no NaN)."""
    if np.isnan(p):
        return np.nan
    return float(stats.holm(np.append(others, p), ALPHA)[1][-1])


def factor_names(text: object) -> list[str]:
    """", "-joined factor names ("weights, platform") as a list."""
    return [name for name in str(text or "").split(", ") if name]


def in_force_factors(row: Mapping[str, Any], active: frozenset[str]) -> list[str]:
    """The factors (names) in which a check's testbed differs from the thesis's under the rules
    `active`: the legacy scope's before the rule reasons; each claim's mechanisms' after it,
    less those a measurement dropped for the check once the rule measured is in force."""
    if rules.REASONS not in active:
        return factor_names(row["legacy_factors"])
    if rules.WEIGHTS_MEASURED in active:
        names = factor_names(row["factors"])
        drops = "dropped" if rules.CONTRAST_WELCH in active else "dropped_normal"
    else:  # the weights by the controller's name, the drops their contrasts gave
        names = factor_names(row.get("named_factors", row["factors"]))
        drops = "dropped_named"
    if rules.MEASURED in active:
        dropped = set(factor_names(row.get(drops, "")))
        names = [name for name in names if name not in dropped]
    return names


def softened(row: Mapping[str, Any], active: frozenset[str]) -> bool:
    """Whether a result against the thesis is "not reproduced here": only under the scope rule
    before the symmetric rule, where the check's testbed differed in a (legacy) factor."""
    return (rules.SCOPE in active and rules.SYMMETRIC not in active
            and bool(factor_names(row["legacy_factors"])))


def outcomes(claims: pd.DataFrame, mine: dict[str, list[dict]],
             active: frozenset[str] = ALL_RULES) -> None:
    """Each measured check's outcome at its claim's level (its own p, Bonferroni-scaled
    against, in its claim's place in Holm's step-down): reproduced, contradicted or
    inconclusive (the scope rule's "not reproduced here" before the symmetric rule). Sets
    `outcome` on the check rows."""
    ps = {side: dict(zip(claims["claim"], claims[side], strict=True))
          for side in ("p_for", "p_against")}

    def others(side: str, claim: str) -> np.ndarray:
        return np.array([p for c, p in ps[side].items() if c != claim and not np.isnan(p)])

    for claim, rows in mine.items():
        measured = [row for row in rows if row["status"] == MEASURED]
        if measured:
            against_others, for_others = others("p_against", claim), others("p_for", claim)
        for row in rows:
            if row["status"] != MEASURED:
                row["outcome"] = row["status"]
                continue
            against = min(1.0, row["p_against"] * len(measured))
            if holm_in_place(against_others, against) < ALPHA:
                row["outcome"] = NOT_REPRODUCED if softened(row, active) else CONTRADICTED
            elif holm_in_place(for_others, row["p_for"]) < ALPHA:
                row["outcome"] = REPRODUCED
            else:
                row["outcome"] = INCONCLUSIVE


AGAINST = (CONTRADICTED, NOT_REPRODUCED)


def deciding_parts(verdict: str, checks: list[dict]) -> list[dict]:
    """The measured parts a verdict rests on: those against it for a contradiction, those
    for or against it for a mixed verdict, every measured part otherwise."""
    measured = [row for row in checks if row["status"] == MEASURED]
    if verdict in AGAINST:
        return [row for row in measured if row["outcome"] in AGAINST]
    if verdict == MIXED:
        return [row for row in measured if row["outcome"] in (REPRODUCED, *AGAINST)]
    return measured


def qualifier(claim: str, verdict: str, checks: list[dict],
              active: frozenset[str] = ALL_RULES) -> tuple[str, list[str]]:
    """(testbed, factors) of a claim's verdict: LIKE or DIFFERS with the factors its deciding
    parts' testbed differs in, OURS for a claim with no thesis testbed, "" when nothing was
    measured."""
    deciding = deciding_parts(verdict, checks)
    if not deciding:
        return "", []
    if not CLAIMS[claim].scope:
        return OURS, []
    names = list(dict.fromkeys(n for row in deciding for n in in_force_factors(row, active)))
    return (DIFFERS if names else LIKE), names


def qualified(verdict: str, testbed: str, factors: Iterable[str], legacy: bool = False) -> str:
    """A verdict with its testbed, as the rule changes list it: "contradicted (testbed differs
    in weights, Ploop)", "reproduced (like the thesis's testbed)"; `legacy`: the factors as the
    scope rule of 2026-11-25 had them."""
    if testbed == LIKE:
        return f"{verdict} (like the thesis's testbed)"
    if testbed == DIFFERS:
        return f"{verdict} (testbed differs in {', '.join(tag(f, legacy) for f in factors)})"
    return verdict


def tag(factor: str, legacy: bool = False) -> str:
    """A factor's word (the README's); the legacy platform factor's is "platform" (the
    container platform then, the per-container volume since the rule reasons)."""
    if legacy and factor == scope.PLATFORM:
        return "platform"
    return scope.FACTORS[factor].tag if factor in scope.FACTORS else factor


def judge(rows: list[dict], flags: dict[str, str], regime: preconditions.Regime,
          active: frozenset[str], qualify: bool = True) -> tuple[pd.DataFrame, list[dict]]:
    """(claims, their checks' rows) of one family under the rules `active`; `qualify`: with
    each verdict's testbed (rule_changes needs it only from the symmetric rule on)."""
    checks = []
    for row in rows:
        if in_force(row, active):
            row = dict(row)
            row["status"], row["why_not"] = status(row, active)
            if row["status"] != MEASURED:  # judged, if at all, only under other rules
                row.update(dict.fromkeys(RESULT_COLUMNS, np.nan))
            checks.append(row)
    mine = by_claim(checks)
    out = pd.DataFrame([{"claim": claim, "where": info.where, "statement": info.statement,
                         **claim_p(mine[claim]), "checks": len(mine[claim]),
                         "measured": sum(row["status"] == MEASURED for row in mine[claim]),
                         "regime": regime.describe()}
                        for claim, info in CLAIMS.items()])
    for side in ("p_for", "p_against"):
        out[f"{side}_holm"] = np.nan
        tested = out[side].notna()
        if tested.any():
            out.loc[tested, f"{side}_holm"] = stats.holm(out.loc[tested, side], ALPHA)[1]
    outcomes(out, mine, active)
    verdicts = [verdict(row, mine[row.claim], flags, active) for row in tuples.rows(out)]
    out["verdict"] = [v for v, _ in verdicts]
    out["why"] = [w for _, w in verdicts]
    out["parts"] = [parts_text(mine[claim]) for claim in out["claim"]]
    if qualify:
        set_testbeds(out, mine, active)
    return out, checks


def by_claim(checks: list[dict]) -> dict[str, list[dict]]:
    """The check rows of each claim of the catalogue, in order."""
    found: dict[str, list[dict]] = {claim: [] for claim in CLAIMS}
    for row in checks:
        found[row["claim"]].append(row)
    return found


def set_testbeds(claims: pd.DataFrame, mine: Mapping[str, list[dict]],
                 active: frozenset[str] = ALL_RULES) -> None:
    """Each claim's testbed (`testbed`, `factors` by name, `differs` by the factors' short
    names), from the parts its verdict rests on: a reproduction on a testbed unlike the
    thesis's says so, as a contradiction does."""
    found = [qualifier(claim, verdict, mine[claim], active)
             for claim, verdict in zip(claims["claim"], claims["verdict"], strict=True)]
    claims["testbed"] = [testbed for testbed, _ in found]
    claims["factors"] = [", ".join(names) for _, names in found]
    claims["differs"] = [", ".join(scope.FACTORS[n].short for n in names) for _, names in found]


RESULT_COLUMNS = ("effect", "low", "high", "tost_low", "tost_high", "p_for", "p_against",
                  "detectable", "n", "sd", "design", "se", "df")
# the results a contrast reads (contrasts.py), kept as judged before the latest rules too
BEFORE_RESULTS = ("effect", "low", "high", "se", "df")


def family_verdicts(runs: pd.DataFrame, experiments: pd.DataFrame, starved: pd.DataFrame,
                    regime: preconditions.Regime, measured: division.Division | None = None,
                    record: division.Record | None = None,
                    seen: Unrun | None = None
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(claims, checks) of one family under every rule in force: a row per claim with its
    verdict and why, and a row per check with its effect, intervals, p-values, detectable
    effect and outcome; the claims' `changes` say what each dated rule changed. `seen`: the
    checks without runs, shared by the families judged together (check_rows, Unrun)."""
    flags = run_flags(starved)
    rows = check_rows(runs, experiments, flags, regime, measured, record, seen)
    pool_agreement(rows)
    claims, checks = judge(rows, flags, regime, ALL_RULES)
    claims["changes"] = rule_changes(rows, flags, regime, claims)
    old, old_checks = judge(rows, flags, regime, BEFORE)  # before the latest rules
    claims["verdict_before"] = old["verdict"].to_numpy()
    claims["testbed_before"], claims["factors_before"] = old["testbed"], old["factors"]
    table = pd.DataFrame(checks).drop(columns=["rule_why", "base_status", "base_why"])
    was = {(row["claim"], row["part"], row["test"]): row for row in old_checks}
    keys = list(zip(table["claim"], table["part"], table["test"], strict=True))
    for column in ("status", "outcome"):
        table[f"{column}_before"] = [was[key][column] if key in was else "" for key in keys]
    for column in BEFORE_RESULTS:  # what a contrast reads, as measured before them
        table[f"{column}_before"] = [was[key][column] if key in was else np.nan
                                     for key in keys]
    return claims, table


def rule_changes(rows: list[dict], flags: dict[str, str], regime: preconditions.Regime,
                 final: pd.DataFrame) -> list[str]:
    """Per claim, what the dated rules changed, in their order: "tcg: contradicted -> not
    testable here; ..." (rules.py); "" where none changed its verdict. A rule that only
    qualifies verdicts (rules.QUALIFYING) is listed where it changed a verdict's testbed;
    from the symmetric rule on, verdicts are shown with their testbed. The measured rule's
    drops come from every campaign's studies, so contrasts.py adds what it changed."""
    changes: dict[str, list[str]] = {claim: [] for claim in final["claim"]}
    before, checks = judge(rows, flags, regime, frozenset(), qualify=False)
    active: frozenset[str] = frozenset()
    for rule in rules.NAMES:
        previous, active = active, active | {rule}
        if rule in rules.CONTRASTED:  # listed with every campaign's drops: contrasts.apply
            continue
        if active == ALL_RULES:
            after = final
        elif inert(rule, rows):  # judging anew would give the same tables
            after = before
        elif rule in rules.QUALIFYING:  # the same outcomes, only their testbed anew
            after = before.copy()
            set_testbeds(after, by_claim(checks), active)
        elif rule == rules.SYMMETRIC:  # no statistic changes: the softened name goes
            after = before.copy()
            after["verdict"] = after["verdict"].replace(NOT_REPRODUCED, CONTRADICTED)
            set_testbeds(after, by_claim(checks), active)
        else:
            after, checks = judge(rows, flags, regime, active,
                                  qualify=rules.SYMMETRIC in active)
        for old, new in zip(tuples.rows(before, SHOWN), tuples.rows(after, SHOWN),
                            strict=True):
            if rule in rules.QUALIFYING:
                moved = (old.verdict, old.testbed, old.factors) != (
                    new.verdict, new.testbed, new.factors)
            else:
                moved = old.verdict != new.verdict
            if moved:
                changes[old.claim].append(
                    f"{rule}: {shown(old, previous)} -> {shown(new, active)}")
        before = after
    return ["; ".join(changes[claim]) for claim in final["claim"]]


def inert(rule: str, rows: list[dict]) -> bool:
    """Whether taking `rule` in can change nothing of a family's judgement: a precondition
    rule that gave none of its checks a reason (one that relaxes another: that applied to
    none, as it lifts the other's reason wherever it applies) and brings in or retires no
    check. status() is then the same for every check, and nothing else reads such a rule."""
    if rule not in PRECONDITION_RULES or any(rule in (row["since"], row["until"])
                                             for row in rows):
        return False
    if rule in RELAXES:
        return not any(rule in row["rule_why"] for row in rows)
    return not any(row["rule_why"].get(rule) for row in rows)


# what rule_changes reads of a claims table's row: its claim, then what `shown` shows (a table
# judged before the symmetric rule has no testbed nor factors)
SHOWN = ("claim", "verdict", "testbed", "factors")


def shown(row: Any, active: frozenset[str]) -> str:
    """A claim's verdict as the rules `active` showed it: with its testbed from the symmetric
    rule on, alone before."""
    if rules.SYMMETRIC not in active:
        return str(row.verdict)
    return qualified(row.verdict, row.testbed, factor_names(row.factors),
                     legacy=rules.REASONS not in active)


def parts_text(checks: list[dict]) -> str:
    """Each part's outcome, counted: "2 reproduced, 1 not reproduced here, 1 inconclusive"."""
    counts: dict[str, int] = {}
    for row in checks:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    order = [*VERDICTS[:5], MISSING, NOT_TESTABLE]
    return ", ".join(f"{counts[o]} {o}" for o in order if o in counts)


def effect_text(row: Mapping[str, Any]) -> str:
    if row["kind"] in SHARE_KINDS:
        return f"{row['effect']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
    return f"x{row['effect']:.3g} [{row['low']:.3g}, {row['high']:.3g}]"


@cache
def units() -> dict[str, str]:
    """Column -> unit: each tool's metrics declare theirs (tidy/parse/)."""
    from journalbench.tidy.parse import metrics

    return {m.column: m.unit for m in metrics()}


def unit_of(row: Mapping[str, Any]) -> str:
    if row["unit"]:
        return str(row["unit"]).strip()
    if str(row["column"]).endswith("share"):
        return "of the disk"
    return units().get(str(row["column"]), "")


def values_text(row: Mapping[str, Any]) -> str:
    """The values an effect is computed from, in their unit ("" for a share, whose effect is
    one)."""
    if row["kind"] in (SHARE, LEVEL) or np.isnan(row["ours_a"]) or np.isnan(row["ours_b"]):
        return ""
    unit = unit_of(row)
    a, b = f"{row['ours_a']:.3g}", f"{row['ours_b']:.3g}"
    if row["kind"] == TREND:
        return f"{b} -> {a} {unit} (the fit's geometric means at the first and last level)"
    if row["kind"] == DIFFERENCE:
        return f"{a} minus {b} {unit} (means)"
    return f"{a} over {b} {unit} (geometric means)"


def detectable_text(row: Mapping[str, Any]) -> str:
    if row["kind"] == SHARE:
        return f"the share within +-{row['detectable']:.3f} of {row['target']:.2f}"
    if row["kind"] == LEVEL:
        return f"a mean share of {row['detectable']:.3f} against {row['target']:.2f}"
    if row["kind"] == DIFFERENCE:
        return f"a difference of {row['detectable']:.3f} in share"
    if row["kind"] == EQUIVALENT:
        return f"equivalence within x{row['detectable']:.3g}"
    if row["kind"] == NOT_WORSE:
        return f"not worse within x{row['detectable']:.3g}"
    return f"x{row['detectable']:.3g}" + (" per step" if row["kind"] == "trend" else "")


def gaps_of(checks: list[dict], pending: list[str]) -> list[str]:
    return [*dict.fromkeys(f"{row['part']} half: {row['why_not']}" for row in checks
                           if row["status"] == MISSING),  # each once, in order
            *(f"not testable here ({row['why_not']}): {row['test']}" for row in checks
              if row["status"] == NOT_TESTABLE),
            *pending]


def runs_note(checks: list[dict], flags: dict[str, str]) -> str:
    starved = sorted({run for row in checks for run in row["starved_runs"].split()})
    note = ("; starved runs among those used: "
            + ", ".join(f"{run} ({flags[run]})" for run in starved)) if starved else ""
    left_out = sorted({run for row in checks for run in row["excluded_runs"].split()})
    if left_out:
        note += "; runs left out as CPU-bound: " + ", ".join(left_out)
    return note


def against_text(claim: object, measured: list[dict]) -> str:
    worst = min((row for row in measured if not np.isnan(row["p_against"])),
                key=lambda row: row["p_against"])
    how = ("lies entirely outside its margin" if worst["kind"] in MARGIN_KINDS
           else "goes significantly the other way")
    interval = (f" 90% interval [{worst['tost_low']:.3g}, {worst['tost_high']:.3g}]"
                if worst["kind"] in MARGIN_KINDS else "")
    return (f"{worst['test']}: {effect_text(worst)}{interval} {how} "
            f"(Holm p = {claim.p_against_holm:.3g}; thesis {worst['thesis']})")


def verdict(claim: object, checks: list[dict], flags: dict[str, str],
            active: Iterable[str] = ALL_RULES) -> tuple[str, str]:
    """(verdict, why) of one claim from its Holm-corrected p-values and its checks (rows of
    check_rows, with their status and outcome under the rules `active`)."""
    active = frozenset(active)
    pending = registry.PENDING.get(claim.claim, [])
    if not checks:
        return PARTIAL, "nothing measured yet: " + "; ".join(pending or ["no checks encoded"])
    measured = [row for row in checks if row["status"] == MEASURED]
    gaps = gaps_of(checks, pending)
    note = runs_note(checks, flags)
    if not measured:
        if any(row["status"] == NOT_TESTABLE for row in checks):
            return UNTESTABLE, "; ".join(gaps) + note
        return PARTIAL, "nothing measured yet: " + "; ".join(gaps)
    if claim.p_against_holm < ALPHA:
        against = [row for row in measured if row["outcome"] in (CONTRADICTED, NOT_REPRODUCED)]
        supporting = [row for row in measured if row["outcome"] == REPRODUCED]
        if rules.PARTS in active and supporting:
            return MIXED, (f"parts disagree ({parts_text(checks)}): for it, "
                           + "; ".join(row["test"] for row in supporting) + "; against it, "
                           + against_text(claim, measured) + note)
        if all(row["outcome"] == NOT_REPRODUCED for row in against):  # the scope rule's
            factors = dict.fromkeys(tag(f) for row in against
                                    for f in factor_names(row["legacy_factors"]))
            return NOT_REPRODUCED, (against_text(claim, measured) + "; this testbed differs "
                                    "from the thesis's in: " + ", ".join(factors) + note)
        return CONTRADICTED, against_text(claim, measured) + note
    if claim.p_for_holm < ALPHA:
        if gaps:
            return PARTIAL, (f"what was measured supports it (Holm p = {claim.p_for_holm:.3g});"
                             " missing: " + "; ".join(gaps) + note)
        return REPRODUCED, f"every check supports it (Holm p = {claim.p_for_holm:.3g})" + note
    weak = [row for row in measured if row["p_for"] >= ALPHA]
    reach = "; ".join(f"{r['test']}: ours {effect_text(r)}, smallest detectable "
                      f"{detectable_text(r)}, thesis {r['thesis']}" for r in weak)
    also = f"; also missing: {'; '.join(gaps)}" if gaps else ""
    return INCONCLUSIVE, (f"neither reproduced nor contradicted (Holm p = "
                          f"{claim.p_for_holm:.3g} for, {claim.p_against_holm:.3g} against); "
                          + (reach or "each check alone passes, not all together after Holm")
                          + also + note)


def family_facts(family: pd.DataFrame) -> dict[str, str]:
    """What a family's runs ran on beyond its labels: the machines (hostnames) and kernels,
    each ", "-joined (contrasts.py compares families only where both are the same)."""
    def joined(column: str) -> str:
        if column not in family:
            return ""
        return ", ".join(sorted({str(v) for v in family[column].dropna()}))
    return {"hostnames": joined("hostname"), "kernels": joined("kernel")}


def pool_facts(family: pd.DataFrame) -> dict[str, str]:
    """A pool family's members with their runs ("m1 (40 runs), m2 (39 runs)"); nothing for a
    host not pooled (its tables keep their columns)."""
    if "member" not in family or family["member"].nunique() < 2:
        return {}
    runs = family.groupby("member", sort=True)["run_id"].nunique()
    return {"members": ", ".join(f"{m} ({n} runs)" for m, n in runs.items())}


def same_device(runs: pd.DataFrame, host: str, profile: str) -> pd.DataFrame:
    """Runs of one device: the same host, machine (hostname) and device profile. Its journal
    regime is the device's, not the campaign's (the calibration is kept per host and profile
    too), so any campaign's runs on it may show it."""
    hostnames = set(runs.loc[runs["host"] == host, "hostname"].dropna())
    return runs[(runs["host"] == host) & runs["hostname"].isin(hostnames)
                & (runs["device_profile"].fillna("native") == profile)]


def with_family(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs with every FAMILY column filled: a table without them (made by hand, or before
    a column existed) is one family of the defaults."""
    return runs.assign(device_profile=runs["device_profile"].fillna("native"),
                       bfq=runs.get("bfq", pd.Series(index=runs.index, dtype="object"))
                       .astype("object").fillna(UNRECORDED),
                       io_control=runs.get("io_control", pd.Series(index=runs.index,
                                                                   dtype="object"))
                       .astype("object").fillna(DEFAULT_IO_CONTROL),
                       iocost_qos=runs.get("iocost_qos", pd.Series(index=runs.index,
                                                                   dtype="object"))
                       .astype("object").fillna(""),
                       cgroup_version=runs.get("cgroup_version",
                                               pd.Series(index=runs.index, dtype="float"))
                       .fillna(UNKNOWN_VERSION).astype("int64"))


def ledger(runs: pd.DataFrame, samples: pd.DataFrame, experiments: pd.DataFrame,
           devices: pd.DataFrame | None = None,
           divisions: Mapping[tuple, division.Division] | None = None,
           seen: Unrun | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(claims, checks, starved) of every family in the runs, with the family's columns.
    `devices`: runs (of any campaign) that may show each device's journal regime; the runs
    themselves by default. `divisions`: what each family's weights were measured to divide
    (division.divisions, over every campaign's validation pairs); the runs' own by default.
    `seen`: what judging other campaigns made of the checks without runs (Unrun)."""
    starved = starvation(runs, samples)
    runs = with_family(runs)
    if divisions is None:
        divisions = division.divisions(runs, experiments, {})
    runs = dbruns.with_swing(runs, samples)  # the per-second share statistic (C6)
    # one block per dtype (the merge left one per column): the builders take rows of these
    # frames thousands of times, at a cost per block
    runs = runs.copy()
    devices = runs if devices is None else devices
    claims, checks = [], []
    seen = Unrun() if seen is None else seen  # the checks without runs (check_rows)
    for key, family in runs.groupby(FAMILY, sort=True):
        labels = dict(zip(FAMILY, key, strict=True))
        mine = starved[starved["run_id"].isin(set(family["run_id"]))
                       & (starved["campaign"] == labels["campaign"])
                       & (starved["host"] == labels["host"])]
        device = same_device(devices[devices["hostname"].isin(set(family["hostname"]))],
                             labels["host"], labels["device_profile"])
        regime = preconditions.journal_regime(device)
        agreement.refuse_unlike(family, labels)
        measured = divisions.get(key)
        record = (division.Record(samples[(samples["campaign"] == labels["campaign"])
                                          & samples["run_id"].isin(set(family["run_id"]))])
                  if division.past_budget(str(labels["io_control"])) else None)
        claim_table, check_table = family_verdicts(family, experiments, mine, regime,
                                                   measured, record, seen)
        control = str(labels["io_control"])
        weights = (measured.describe() if measured is not None
                   else division.not_measured(control))
        short = (measured.short() if measured is not None
                 else division.not_measured_short(control))
        word = measured.word() if measured is not None else division.UNMEASURED
        claims.append(claim_table.assign(**labels, **family_facts(family),
                                         **pool_facts(family), division=weights,
                                         division_short=short, division_word=word))
        checks.append(check_table.assign(**labels))
    if not claims:
        raise ValueError("no runs: nothing to judge")
    return (pd.concat(claims, ignore_index=True), pd.concat(checks, ignore_index=True),
            starved)


def host_tests(runs: pd.DataFrame, experiments: pd.DataFrame,
               samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """The notebooks' view: a row per check with its family, `ours` (effect and 95% interval,
    or why it was not measured), the claim's Holm p and the claim's verdict as `outcome`."""
    if samples is None:  # no per-second samples: no starvation flags
        samples = pd.DataFrame(columns=["campaign", "host", "run_id", "tenant", "kind", "dt",
                                        "t", "bytes"])
    claims, checks, _ = ledger(runs, samples, experiments)
    return tests_view(claims, checks)


def tests_view(claims: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """host_tests' table from a ledger's claims and checks (judged once by the pipeline)."""
    keys = [*FAMILY, "claim"]
    table = checks.rename(columns={"outcome": "part_outcome"}).merge(
        claims[[*keys, "verdict", "p_for_holm"]], on=keys)
    table["ours"] = [effect_text(r) if r["status"] == MEASURED else r["why_not"]
                     for _, r in table.iterrows()]
    return table.rename(columns={"p_for_holm": "p_holm", "verdict": "outcome"})
