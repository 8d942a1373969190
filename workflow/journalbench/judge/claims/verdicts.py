"""From checks to verdicts, one family at a time (the runs of one campaign, host, device
profile and BFQ setting: runs of different hosts, devices or schedulers are never pooled).

A claim is the intersection of its checks: its p-value for "reproduced" is the largest of its
checks' (an intersection-union test), its p-value for "contradicted" the smallest of its
checks' opposite p-values times their number (Bonferroni within the claim). Holm's correction
then runs over the claims of the family, once for each question. Verdicts, fixed before data:

- contradicted: the claim's opposite is significant (a check goes significantly the other way,
  or an equivalence interval lies entirely outside its margin);
- reproduced: every check of the claim is measured and the claim is significant;
- partially measured: what was measured is significant, but a part is missing or not testable
  here; also a claim with nothing measured yet because its runs or checks do not exist yet;
- inconclusive: measured, neither reproduced nor contradicted; each check gives the smallest
  effect its runs could have detected;
- not testable here: nothing measured could be judged because a precondition of the testbed is
  not met (preconditions.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from journalbench.judge import stats
from journalbench.judge.claims import dbruns, preconditions, registry
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import (
    ALPHA,
    EQUIVALENT,
    LEVEL,
    MARGIN_KINDS,
    NOT_WORSE,
    SHARE,
    SHARE_KINDS,
    TEST_NAMES,
    enough,
    evaluate,
    off_log_scale,
)
from journalbench.judge.starved import starvation

REPRODUCED, CONTRADICTED, INCONCLUSIVE = "reproduced", "contradicted", "inconclusive"
PARTIAL, UNTESTABLE = "partially measured", "not testable here"
VERDICTS = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, PARTIAL, UNTESTABLE)
MEASURED, MISSING, NOT_TESTABLE = "measured", "missing", "not testable"
FAMILY = ["campaign", "host", "device_profile", "bfq"]
UNRECORDED = "unrecorded"  # a table without BFQ settings (made by hand) is one family


def run_flags(starved: pd.DataFrame) -> dict[str, str]:
    """run id -> why it is flagged starved ("victim: 7 s with no byte"), for starved runs."""
    flags: dict[str, list[str]] = {}
    for row in starved[starved["starved"]].itertuples():
        why = (f"{row.zero_seconds} s with no byte" if row.zero_seconds
               else f"share {row.achieved_share:.2f} < a quarter of {row.target_share:.2f}")
        flags.setdefault(row.run_id, []).append(f"{row.tenant}: {why}")
    return {run: "; ".join(parts) for run, parts in flags.items()}


def check_rows(runs: pd.DataFrame, experiments: pd.DataFrame, starved: dict[str, str],
               regime: preconditions.Regime) -> list[dict]:
    rows = []
    for claim in CLAIMS:
        for check in registry.build(claim, runs, experiments):
            ids = sorted(set(check.rows["run_id"])) if not check.rows.empty else []
            row = {"claim": claim, "part": check.part, "test": check.label, "kind": check.kind,
                   "test_name": TEST_NAMES[check.kind], "thesis": check.thesis,
                   "interest": check.interest, "unit": check.unit, "direction": check.direction,
                   "target": check.target, "margin": check.margin,
                   "runs": " ".join(ids), "starved_runs": " ".join(r for r in ids if r in starved),
                   "excluded_runs": " ".join(check.excluded), "why_not": ""}
            unmet = preconditions.unmet(check, regime)
            left_out = preconditions.too_few_left(check)
            if left_out:
                row.update(status=NOT_TESTABLE, why_not="; ".join(left_out))
            elif not enough(check):
                row.update(status=MISSING, why_not=check.missing)
            elif unmet:
                row.update(status=NOT_TESTABLE, why_not="; ".join(unmet))
            elif log_problem := off_log_scale(check):
                row.update(status=NOT_TESTABLE, why_not=log_problem)
            else:
                row.update(status=MEASURED, **vars(evaluate(check)))
            rows.append(row)
    return rows


def family_verdicts(runs: pd.DataFrame, experiments: pd.DataFrame, starved: pd.DataFrame,
                    regime: preconditions.Regime) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(claims, checks) of one family: a row per claim with its verdict and why, and a row per
    check with its effect, intervals, p-values and detectable effect."""
    flags = run_flags(starved)
    rows = check_rows(runs, experiments, flags, regime)
    # a claim's checks as plain rows: selecting them from a frame, claim by claim, was a
    # third of judging
    mine = {claim: [row for row in rows if row["claim"] == claim] for claim in CLAIMS}
    claims = [{"claim": claim, "where": info.where, "statement": info.statement,
               **claim_p(mine[claim]), "checks": len(mine[claim]),
               "measured": sum(row["status"] == MEASURED for row in mine[claim]),
               "regime": regime.describe()}
              for claim, info in CLAIMS.items()]
    out = pd.DataFrame(claims)
    for side in ("p_for", "p_against"):
        out[f"{side}_holm"] = np.nan
        tested = out[side].notna()
        if tested.any():
            out.loc[tested, f"{side}_holm"] = stats.holm(out.loc[tested, side], ALPHA)[1]
    verdicts = [verdict(row, mine[row.claim], flags) for row in out.itertuples()]
    out["verdict"] = [v for v, _ in verdicts]
    out["why"] = [w for _, w in verdicts]
    return out, pd.DataFrame(rows)


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


def effect_text(row: Mapping[str, Any]) -> str:
    if row["kind"] in SHARE_KINDS:
        return f"{row['effect']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
    return f"x{row['effect']:.3g} [{row['low']:.3g}, {row['high']:.3g}]"


def detectable_text(row: Mapping[str, Any]) -> str:
    if row["kind"] == SHARE:
        return f"the share within +-{row['detectable']:.3f} of {row['target']:.2f}"
    if row["kind"] == LEVEL:
        return f"a mean share of {row['detectable']:.3f} against {row['target']:.2f}"
    if row["kind"] == EQUIVALENT:
        return f"equivalence within x{row['detectable']:.3g}"
    if row["kind"] == NOT_WORSE:
        return f"not worse within x{row['detectable']:.3g}"
    return f"x{row['detectable']:.3g}" + (" per step" if row["kind"] == "trend" else "")


def verdict(claim: object, checks: list[dict], flags: dict[str, str]) -> tuple[str, str]:
    """(verdict, why) of one claim from its Holm-corrected p-values and its checks (rows of
    check_rows)."""
    pending = registry.PENDING.get(claim.claim, [])
    if not checks:
        return PARTIAL, "nothing measured yet: " + "; ".join(pending or ["no checks encoded"])
    measured = [row for row in checks if row["status"] == MEASURED]
    untestable = [row for row in checks if row["status"] == NOT_TESTABLE]
    gaps = [*dict.fromkeys(f"{row['part']} half: {row['why_not']}" for row in checks
                           if row["status"] == MISSING),  # each once, in order
            *(f"not testable here ({row['why_not']}): {row['test']}" for row in untestable),
            *pending]
    starved = sorted({run for row in checks for run in row["starved_runs"].split()})
    starved_note = ("; starved runs among those used: "
                    + ", ".join(f"{run} ({flags[run]})" for run in starved)) if starved else ""
    left_out = sorted({run for row in checks for run in row["excluded_runs"].split()})
    if left_out:
        starved_note += "; runs left out as CPU-bound: " + ", ".join(left_out)
    if not measured:
        if untestable:
            return UNTESTABLE, "; ".join(gaps) + starved_note
        return PARTIAL, "nothing measured yet: " + "; ".join(gaps)
    if claim.p_against_holm < ALPHA:
        worst = min((row for row in measured if not np.isnan(row["p_against"])),
                    key=lambda row: row["p_against"])
        how = ("lies entirely outside its margin" if worst["kind"] in MARGIN_KINDS
               else "goes significantly the other way")
        interval = (f"90% interval [{worst['tost_low']:.3g}, {worst['tost_high']:.3g}]"
                    if worst["kind"] in MARGIN_KINDS else "")
        return CONTRADICTED, (f"{worst['test']}: {effect_text(worst)} {interval} {how} "
                              f"(Holm p = {claim.p_against_holm:.3g}; thesis "
                              f"{worst['thesis']})" + starved_note)
    if claim.p_for_holm < ALPHA:
        if gaps:
            return PARTIAL, (f"what was measured supports it (Holm p = {claim.p_for_holm:.3g});"
                             " missing: " + "; ".join(gaps) + starved_note)
        return REPRODUCED, f"every check supports it (Holm p = {claim.p_for_holm:.3g})" + (
            starved_note)
    weak = [row for row in measured if row["p_for"] >= ALPHA]
    reach = "; ".join(f"{r['test']}: ours {effect_text(r)}, smallest detectable "
                      f"{detectable_text(r)}, thesis {r['thesis']}" for r in weak)
    note = f"; also missing: {'; '.join(gaps)}" if gaps else ""
    return INCONCLUSIVE, (f"neither reproduced nor contradicted (Holm p = "
                          f"{claim.p_for_holm:.3g} for, {claim.p_against_holm:.3g} against); "
                          + (reach or "each check alone passes, not all together after Holm")
                          + note + starved_note)


def same_device(runs: pd.DataFrame, host: str, profile: str) -> pd.DataFrame:
    """Runs of one device: the same host, machine (hostname) and device profile. Its journal
    regime is the device's, not the campaign's (the calibration is kept per host and profile
    too), so any campaign's runs on it may show it."""
    hostnames = set(runs.loc[runs["host"] == host, "hostname"].dropna())
    return runs[(runs["host"] == host) & runs["hostname"].isin(hostnames)
                & (runs["device_profile"].fillna("native") == profile)]


def ledger(runs: pd.DataFrame, samples: pd.DataFrame, experiments: pd.DataFrame,
           devices: pd.DataFrame | None = None
           ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(claims, checks, starved) of every family in the runs, with the family's columns.
    `devices`: runs (of any campaign) that may show each device's journal regime; the runs
    themselves by default."""
    starved = starvation(runs, samples)
    runs = runs.assign(device_profile=runs["device_profile"].fillna("native"),
                       bfq=runs.get("bfq", pd.Series(index=runs.index, dtype="object"))
                       .astype("object").fillna(UNRECORDED))
    runs = dbruns.with_swing(runs, samples)  # the per-second share statistic (C6)
    # one block per dtype (the merge left one per column): the builders take rows of these
    # frames thousands of times, at a cost per block
    runs = runs.copy()
    devices = runs if devices is None else devices
    claims, checks = [], []
    for key, family in runs.groupby(FAMILY, sort=True):
        labels = dict(zip(FAMILY, key, strict=True))
        mine = starved[starved["run_id"].isin(set(family["run_id"]))
                       & (starved["campaign"] == labels["campaign"])
                       & (starved["host"] == labels["host"])]
        device = same_device(devices[devices["hostname"].isin(set(family["hostname"]))],
                             labels["host"], labels["device_profile"])
        regime = preconditions.journal_regime(device)
        claim_table, check_table = family_verdicts(family, experiments, mine, regime)
        claims.append(claim_table.assign(**labels))
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
    table = checks.merge(claims[[*keys, "verdict", "p_for_holm"]], on=keys)
    table["ours"] = [effect_text(r) if r["status"] == MEASURED else r["why_not"]
                     for _, r in table.iterrows()]
    return table.rename(columns={"p_for_holm": "p_holm", "verdict": "outcome"})
