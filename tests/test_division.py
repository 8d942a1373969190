"""What a testbed's weights divide, measured (judge/claims/division.py), and what follows from
it (rules weights-measured, weights-in-play, contrast-welch): on the shipped thesis-nested runs,
whose iocost divided nothing under its blind QoS, and on small constructed values whose answer
is known. The contrast statistics are checked against scipy's Welch test on the same runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from journalbench.judge.claims import contrasts, division, registry
from journalbench.judge.claims.checks import enough, evaluate
from journalbench.judge.claims.verdicts import FAMILY, ledger, with_family

REPO = Path(__file__).resolve().parent.parent
NESTED = "thesis-nested"


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, ...]:
    """thesis-nested's tidy tables (runs, samples, experiments), tidied from the shipped runs
    where the pipeline has not (a clean clone)."""
    from journalbench.report import views

    processed = REPO / "data" / "processed" / NESTED
    if not (processed / "runs.parquet").is_file():
        processed = tmp_path_factory.mktemp("nested")
    return views.load(processed, REPO / "data" / "raw" / NESTED)


@pytest.fixture(scope="module")
def judged(nested: tuple[pd.DataFrame, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Its claims and checks as the ledger judges them, its own validation pairs measuring
    its testbeds' weights."""
    claims, checks, _ = ledger(*nested)
    return claims, checks


def family(table: pd.DataFrame, version: int, control: str) -> pd.DataFrame:
    return table[(table["cgroup_version"] == version) & (table["io_control"] == control)]


def test_the_nested_testbeds_weights_are_measured_from_their_own_pairs(nested) -> None:
    runs, _, experiments = nested
    found = division.divisions(with_family(runs), experiments, {})
    beds = {key[FAMILY.index("io_control")] + f"/v{key[FAMILY.index('cgroup_version')]}": d
            for key, d in found.items()}
    assert beds["iocost/v2"].divides is False and beds["iocost/v2"].kind == division.NONE
    assert beds["bfq/v2"].divides and beds["bfq/v1"].divides
    assert beds["iocost/v2"].heavy.value == pytest.approx(0.5, abs=0.01)
    # no pair of unequal sizes: what BFQ divides is not measured there, so not device time
    assert beds["bfq/v2"].kind == division.NOT_MEASURED and not beds["bfq/v2"].divides_time


def test_a_failed_validation_makes_a_weight_check_untestable_and_leaves_a_free_one(
        nested, judged) -> None:
    """Under v2/iocost, C4 (its claim is what the weights divide) is not testable, saying why
    in numbers; C24 (ours, no weights mechanism) on runs of the same experiment as C17's
    (high-fsync-victim) is judged, while C17's checks are not testable."""
    claims, checks = judged
    experiment = nested[2].set_index("run_id")["experiment"]
    iocost = family(checks, 2, "iocost")
    c4 = iocost[iocost["claim"] == "C4"].iloc[0]
    assert c4["status"] == "not testable"
    assert "iocost divided nothing here" in c4["why_not"]
    assert "80% reader of two equal random readers got 0.50" in c4["why_not"]
    assert "0 of 480 tenant-seconds held back" in c4["why_not"]
    c17 = iocost[iocost["claim"] == "C17"]
    c24 = iocost[iocost["claim"] == "C24"]
    assert (c17["status"] == "not testable").all()
    def experiments_of(rows: pd.DataFrame) -> set[str]:
        return {experiment[run] for run in " ".join(rows["runs"].fillna("")).split()}

    assert experiments_of(c17) & experiments_of(c24) == {"high-fsync-victim-v2-iocost"}
    assert (c24["status"] == "measured").any()
    verdict = family(claims, 2, "iocost").set_index("claim")
    assert verdict.loc["C4", "verdict"] == "not testable here"
    assert "weights-in-play: reproduced (like the thesis's testbed) -> not testable here" in \
        verdict.loc["C4", "changes"]
    # under BFQ, which divided (80/20: 0.76, 0.79), the same checks stay judged
    assert (family(checks, 2, "bfq").query("claim == 'C4'")["status"] == "measured").all()


def test_a_passed_validation_still_needs_a_past_budget_controller_to_have_acted(nested) -> None:
    """Had iocost's 80/20 readers split as BFQ's did, a check whose tenants it held back in
    no second would still be not testable: its weights were not in play there."""
    runs, samples, experiments = nested
    found = division.divisions(with_family(runs), experiments, {})
    passing = {key: (division.Division(d.control, d.source, division.Mean(0.78, 0.72, 0.84, 3),
                                       0.8, d.sizes) if d.control == "iocost" else d)
               for key, d in found.items()}
    _, checks, _ = ledger(runs, samples, experiments, None, passing)
    c4 = family(checks, 2, "iocost").query("claim == 'C4'").iloc[0]
    assert c4["status"] == "not testable"
    assert "divided nothing" not in c4["why_not"]
    assert c4["why_not"].startswith("iocost held back none of the check's tenants: 0 of 480")


def checks_of(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str, version: int,
              control: str) -> dict[str, object]:
    rows = family(with_family(runs), version, control)
    return {c.label: c for c in registry.build(claim, rows, experiments)}


def test_a_change_between_testbeds_is_welchs_test_on_the_same_runs(nested) -> None:
    """A share check's change from v1/bfq to v2/bfq (contrasts.change, from each check's own
    statistic) is scipy's Welch two-sample test on the two testbeds' values; a paired check's
    is Welch's on the per-run log ratios; a ratio check's degrees of freedom are
    Welch-Satterthwaite's over its four groups of runs."""
    runs, _, experiments = nested
    done = set()
    for claim in ("C3", "C17", "C4"):
        first = checks_of(runs, experiments, claim, 1, "bfq")
        other = checks_of(runs, experiments, claim, 2, "bfq")
        for label, a in first.items():
            b = other[label]
            if not (enough(a) and enough(b)):  # a half no testbed here ran (the VM's)
                continue
            ra, rb = vars(evaluate(a)), vars(evaluate(b))
            share = a.kind in ("share", "level", "difference")
            moved = contrasts.change(ra, rb, share)
            if a.kind == "share":
                x, y = a.a, b.a
            elif a.kind == "paired":
                x, y = np.log(a.a / a.b), np.log(b.a / b.b)
            elif a.kind == "ratio":
                groups = [np.log(v) for v in (a.a, a.b, b.a, b.b)]
                parts = [g.var(ddof=1) / g.size for g in groups]
                df = sum(parts) ** 2 / sum(p * p / (g.size - 1) for p, g in zip(
                    parts, groups, strict=True))
                assert moved["df"] == pytest.approx(df, rel=1e-9)
                done.add(a.kind)
                continue
            else:
                continue
            welch = stats.ttest_ind(y, x, equal_var=False)
            assert moved["p"] == pytest.approx(welch.pvalue, rel=1e-9, abs=1e-12)
            assert moved["diff"] == pytest.approx(y.mean() - x.mean(), rel=1e-9, abs=1e-12)
            low, high = welch.confidence_interval(0.95)
            shown = (lambda v: v) if share else np.exp
            assert (moved["low"], moved["high"]) == pytest.approx((shown(low), shown(high)),
                                                                  rel=1e-9)
            done.add(a.kind)
    assert {"share", "paired", "ratio"} <= done, done


def test_the_ledgers_evidence_uses_the_welch_statistic(judged) -> None:
    """The evidence table's change and p are contrasts.change on the checks' own statistics,
    and each check gets one decision, a significant change never called equivalent."""
    claims, checks = judged
    found = contrasts.evidence(claims, checks)
    assert not found.empty and found["df"].notna().all()
    row = found.iloc[0]
    mine = checks[(checks["claim"] == row["claim"]) & (checks["test"] == row["test"])
                  & (checks["status"] == "measured")]
    assert len(mine) >= 2
    decided = found[found["outcome"] == "equivalent"]
    assert (decided["p_change_holm"] >= 0.05).all()


def test_what_a_pair_of_unequal_sizes_shows_is_classified_by_the_split_margin() -> None:
    def sizes(time: float, bytes_: float, pattern: str = "random") -> division.Sizes:
        return division.Sizes(pattern, "128 KiB against 8 KiB",
                              division.Mean(time, time, time, 3),
                              division.Mean(bytes_, bytes_, bytes_, 3))

    assert sizes(0.52, 0.94).kind == division.TIME
    assert sizes(0.06, 0.48).kind == division.BYTES
    assert sizes(0.55, 0.45).kind == division.INDISTINCT
    assert sizes(0.17, 0.65).kind == division.NEITHER
    heavy = division.Mean(0.76, 0.7, 0.8, 3)
    both = division.Division("bfq", "c", heavy, 0.8, (sizes(0.5, 0.9),
                                                      sizes(0.5, 0.9, "sequential")))
    assert both.kind == division.TIME and both.divides_time
    mixed = division.Division("bfq", "c", heavy, 0.8, (sizes(0.5, 0.9),
                                                       sizes(0.1, 0.5, "sequential")))
    assert mixed.kind == division.MIXED and not mixed.divides_time
    assert division.Division("bfq", "c", heavy, 0.8).threshold == pytest.approx(0.65)
    nothing = division.Division("iocost", "c", division.Mean(0.5, 0.5, 0.5, 3), 0.8,
                                both.sizes)
    assert nothing.divides is False and nothing.kind == division.NONE
    assert not nothing.divides_time


def test_a_table_without_the_pairs_columns_has_no_pairs() -> None:
    runs = pd.DataFrame({"campaign": ["t"], "run_id": ["r"]})
    experiments = pd.DataFrame({"campaign": ["t"], "run_id": ["r"], "claims": [[]]})
    assert division.pairs(runs, experiments).empty
    assert division.validation_runs(runs, experiments).empty
