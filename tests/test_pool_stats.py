"""A pool's statistics (judge/blocked.py, judge/claims/agreement.py): every check stratified by
member, each a block, which with one member is the one-host test itself; the agreement check
that takes a check whose members disagree out of the verdict; a pool whose members recorded
different facts refused in one line. On constructed tables whose answer is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from test_claims import COLUMNS, JOURNAL_BOUND, Plan, c10

from journalbench.errors import ConfigError
from journalbench.judge import blocked, claims, stats
from journalbench.judge.claims import agreement, checks
from journalbench.judge.claims.verdicts import PARTIAL, REPRODUCED, UNTESTABLE
from journalbench.report import ledger

RNG = np.random.default_rng(42)


# -- the blocked statistics -----------------------------------------------------------------

def test_with_one_member_each_blocked_test_is_the_one_host_test() -> None:
    a, b = RNG.normal(1.0, 0.2, 6), RNG.normal(0.8, 0.4, 5)
    one = blocked.blocked_two_sample(a, b, ["m"] * 6, ["m"] * 5)
    welch = stats.welch_t(a, b)
    assert one.estimate == pytest.approx(welch.estimate)
    assert one.se == pytest.approx(welch.se)
    assert one.df == pytest.approx(welch.df)
    single = blocked.blocked_one_sample(a, ["m"] * 6)
    plain = stats.one_sample_t(a)
    assert (single.estimate, single.se, single.df) == pytest.approx(
        (plain.estimate, plain.se, plain.df))
    levels = np.array([0, 0, 1, 1, 2, 2], dtype=float)
    slope = blocked.blocked_slope(levels, a, ["m"] * 6)
    fit = stats.slope_t(levels, a)
    assert (slope.estimate, slope.se, slope.df) == pytest.approx((fit.estimate, fit.se, fit.df))


def test_a_balanced_pool_gives_the_block_models_effect() -> None:
    """Balanced and of equal spread, the stratified contrast is the two-way additive model's
    (statsmodels OLS of value on side and member indicators)."""
    members = np.repeat(["m1", "m2", "m3"], 4)
    a = RNG.normal(0, 0.1, 12) + np.repeat([0.0, 0.5, -0.3], 4) + 0.2
    b = RNG.normal(0, 0.1, 12) + np.repeat([0.0, 0.5, -0.3], 4)
    found = blocked.blocked_two_sample(a, b, members, members)
    y = np.concatenate([a, b])
    side = np.r_[np.ones(12), np.zeros(12)]
    both = np.concatenate([members, members])
    design = np.column_stack([side, *((both == m).astype(float) for m in ("m1", "m2", "m3"))])
    fit = sm.OLS(y, design).fit()
    assert found.estimate == pytest.approx(fit.params[0])
    slope = blocked.blocked_slope(np.tile([0.0, 1.0, 2.0, 2.0], 3), a, members)
    design = np.column_stack([np.tile([0.0, 1.0, 2.0, 2.0], 3),
                              *((members == m).astype(float) for m in ("m1", "m2", "m3"))])
    reference = sm.OLS(a, design).fit()
    assert (slope.estimate, slope.se, slope.df) == pytest.approx(
        (reference.params[0], reference.bse[0], reference.df_resid))


def test_blocks_remove_the_members_offsets_from_the_spread_and_from_an_uneven_deal() -> None:
    """Member m2 runs everything 40% faster; the true ratio a/b is 1.10. Pooled as one sample
    the offset swamps the effect, and where a's runs fell mostly on m2 (an uneven re-deal) it
    biases it; within members both go."""
    offset = {"m1": 0.0, "m2": np.log(1.4)}
    members_a = np.array(["m1"] * 2 + ["m2"] * 6)
    members_b = np.array(["m1"] * 6 + ["m2"] * 2)
    noise = np.random.default_rng(7)
    a = np.log(1.10) + np.array([offset[m] for m in members_a]) + noise.normal(0, 0.02, 8)
    b = np.array([offset[m] for m in members_b]) + noise.normal(0, 0.02, 8)
    pooled = stats.welch_t(a, b)
    within = blocked.blocked_two_sample(a, b, members_a, members_b)
    assert abs(np.exp(pooled.estimate) - 1.10) > 0.1  # biased by where the runs fell
    assert np.exp(within.estimate) == pytest.approx(1.10, abs=0.03)
    assert within.se < pooled.se / 3


def test_a_blocked_test_needs_a_member_with_both_sides() -> None:
    with pytest.raises(ValueError, match="no member has runs of both sides"):
        blocked.blocked_two_sample([1.0, 2.0], [1.0, 2.0], ["m1", "m1"], ["m2", "m2"])


def pool_check(a: list[float], b: list[float], members_a: list[str],
               members_b: list[str]) -> checks.Check:
    rows = pd.DataFrame({"run_id": [f"r{i}" for i in range(len(a) + len(b))]})
    return checks.Check("C10", "test", checks.RATIO, rows, np.array(a), np.array(b),
                        members_a=np.array(members_a, dtype=object),
                        members_b=np.array(members_b, dtype=object))


def test_a_check_with_two_members_is_blocked_and_one_without_is_not() -> None:
    a, b = [2.0, 2.1, 2.2, 2.05], [1.0, 1.1, 1.05, 1.0]
    plain = checks.Check("C10", "test", checks.RATIO, pd.DataFrame(), np.array(a),
                         np.array(b))
    assert not plain.blocked and plain.members == []
    check = pool_check(a, b, ["m1", "m1", "m2", "m2"], ["m1", "m1", "m2", "m2"])
    assert check.blocked and checks.enough(check)
    assert checks.statistic(check)[0] == blocked.blocked_two_sample(
        np.log(a), np.log(b), check.members_a, check.members_b)


# -- the agreement check --------------------------------------------------------------------

def test_a_member_whose_effect_differs_beyond_the_margin_is_flagged() -> None:
    """m1 and m2 show x2.0; m3 shows x1.0: beyond x1.2 of the others'."""
    members = [m for m in ("m1", "m2", "m3") for _ in range(4)]
    noise = np.random.default_rng(3).normal(0, 0.01, 24)
    a = [2.0 * np.exp(e) if m != "m3" else np.exp(e) for m, e in zip(members, noise[:12],
                                                                      strict=True)]
    b = [np.exp(e) for e in noise[12:]]
    compared = agreement.compare(pool_check(a, b, members, members))
    agreement.judge([compared])
    outcome = {row["member"]: row["outcome"] for row in compared}
    assert outcome["m3"] == agreement.DIFFERS
    why = agreement.disagreement(checks.RATIO, compared)
    assert why.startswith("the pool's members disagree beyond x1.2") and "m3 differs" in why


def test_members_that_agree_are_said_to_and_too_few_runs_are_undetermined() -> None:
    members = ["m1", "m1", "m1", "m2", "m2", "m2"]
    noise = np.random.default_rng(5).normal(0, 0.01, 12)
    a, b = list(2.0 * np.exp(noise[:6])), list(np.exp(noise[6:]))
    compared = agreement.compare(pool_check(a, b, members, members))
    agreement.judge([compared])
    assert {row["outcome"] for row in compared} == {agreement.AGREES}
    few = agreement.compare(pool_check(a[:4], b[:4], ["m1", "m1", "m1", "m2"],
                                       ["m1", "m1", "m1", "m2"]))
    agreement.judge([few])
    assert {row["outcome"] for row in few} == {agreement.UNDETERMINED}


# -- a pool's ledger ------------------------------------------------------------------------

class PoolPlan(Plan):
    """Plan's constructed runs on pool "h", dealt to m1 and m2 in turn; `kernel` per member."""

    def __init__(self, kernels: dict[str, str] | None = None,
                 references: dict[str, float] | None = None) -> None:
        super().__init__()
        self.kernels = kernels or {}
        self.references = references or {}

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        runs, samples, experiments = super().tables()
        order = {run: i for i, run in enumerate(dict.fromkeys(runs["run_id"]))}
        runs = runs.reindex(columns=[*COLUMNS, "member"])
        runs["member"] = [f"m{order[run] % 2 + 1}" for run in runs["run_id"]]
        runs["kernel"] = runs["kernel"].astype(object)
        for member, kernel in self.kernels.items():
            runs.loc[runs["member"] == member, "kernel"] = kernel
        for member, reference in self.references.items():
            runs.loc[runs["member"] == member, "ref_high_fsync_per_s"] = reference
        return runs, samples, experiments


NO = [0.70, 0.69, 0.71, 0.70, 0.72, 0.70]
HIGH = [0.40, 0.42, 0.39, 0.41, 0.40, 0.41]


def test_a_pool_is_one_family_judged_with_member_blocks() -> None:
    plan = PoolPlan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, NO, HIGH)
    table, checks_, _ = claims.ledger(*plan.tables())
    c10_row = table.set_index("claim").loc["C10"]
    assert c10_row["verdict"] == REPRODUCED, c10_row["why"]
    assert c10_row["members"].startswith("m1 (") and ", m2 (" in c10_row["members"]
    mine = checks_[(checks_["claim"] == "C10") & checks_["members"].notna()]
    assert not mine.empty and all(mine["members"].str.contains("m1 .*m2 ", regex=True))
    assert all(mine["agreement"].str.contains("m1 ") & mine["agreement"].str.contains("m2 "))
    text = ledger.markdown(ledger.document("t", table, checks_, _, "figures", Path("/nonexistent")))
    assert "## Pools: member blocks and agreement" in text
    assert "member blocks (values): m1 " in text


def test_a_check_whose_members_disagree_is_not_pooled() -> None:
    """m2's victims keep their share beside a high-fsync neighbour: no effect on m2."""
    plan = PoolPlan()
    plan.regime(*JOURNAL_BOUND)
    high = [h if i % 2 == 0 else n for i, (n, h) in enumerate(zip(NO, HIGH, strict=True))]
    c10(plan, NO, high)
    runs, samples, experiments = plan.tables()
    # the deal alternates runs; make C10's high-fsync runs of m2 the ones that kept the share
    members = {run: member for run, member in zip(runs["run_id"], runs["member"], strict=True)}
    shares = runs.loc[(runs["beside"] == "high-fsync"), ["run_id", "achieved_share"]]
    runs.loc[shares.index, "achieved_share"] = [
        NO[i] if members[run] == "m2" else HIGH[i]
        for i, run in enumerate(shares["run_id"])]
    table, checks_, _ = claims.ledger(runs, samples, experiments)
    flagged = checks_[checks_["why_not"].fillna("").str.contains("members disagree")]
    assert not flagged.empty and set(flagged["claim"]) == {"C10"}
    assert all(flagged["status"] == "not testable")
    assert table.set_index("claim").loc["C10", "verdict"] in (UNTESTABLE, PARTIAL)


@pytest.mark.parametrize("plan, field", [
    (PoolPlan(kernels={"m1": "6.1.0-18-amd64", "m2": "6.8.0-1-amd64"}), "kernel"),
    (PoolPlan(references={"m1": 12.0, "m2": 14.0}), "ref_high_fsync_per_s"),
])
def test_a_pool_whose_members_recorded_different_facts_is_refused(plan: PoolPlan,
                                                                  field: str) -> None:
    plan.regime(*JOURNAL_BOUND)
    c10(plan, NO, HIGH)
    with pytest.raises(ConfigError, match=rf"^campaign t, pool h: field {field}: ") as raised:
        claims.ledger(*plan.tables())
    assert "\n" not in str(raised.value) and "m1" in str(raised.value)


def test_references_within_the_drift_limit_are_one_pool() -> None:
    plan = PoolPlan(references={"m1": 12.0, "m2": 12.6})
    plan.regime(*JOURNAL_BOUND)
    c10(plan, NO, HIGH)
    table, _, _ = claims.ledger(*plan.tables())
    assert table.set_index("claim").loc["C10", "verdict"] == REPRODUCED


def test_a_ledger_without_a_pool_keeps_its_columns() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, NO, HIGH)
    table, checks_, _ = claims.ledger(*plan.tables())
    assert "members" not in table and "members" not in checks_
    assert "agreement" not in checks_
