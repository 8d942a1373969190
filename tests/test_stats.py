"""journalbench.judge.stats against textbook values and hand-worked examples."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from journalbench.judge import stats

# Mann-Whitney example of the scipy documentation (after Conover): ages of 5 male and 4 female
# subjects; U of the males = 17, exact two-sided p = 0.1111
MALES = [19, 22, 16, 29, 24]
FEMALES = [20, 11, 17, 12]

# Welch's t-test, example 1 of the Wikipedia article "Welch's t-test":
# t = -2.46, nu = 24.98, p = 0.021
A1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
A2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]


def test_mann_whitney_textbook() -> None:
    u, p = stats.mann_whitney(MALES, FEMALES)
    assert u == 17
    assert p == pytest.approx(1 / 9, abs=1e-4)


def test_cliffs_delta_from_u_equals_its_definition() -> None:
    pairs = list(itertools.product(MALES, FEMALES))
    by_definition = (sum(x > y for x, y in pairs) - sum(x < y for x, y in pairs)) / len(pairs)
    assert stats.cliffs_delta(MALES, FEMALES) == pytest.approx(by_definition) == 0.7
    assert stats.cliffs_delta(FEMALES, MALES) == pytest.approx(-0.7)
    # ties count half: equal samples have no effect
    assert stats.cliffs_delta([1, 2, 3], [1, 2, 3]) == 0
    assert stats.cliffs_delta_from_u(0, 3, 3) == -1


def test_welch_textbook() -> None:
    t, p = stats.welch(A1, A2)
    assert t == pytest.approx(-2.46, abs=0.005)
    assert p == pytest.approx(0.021, abs=0.0005)


def test_holm_hand_worked() -> None:
    # sorted p: 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running
    # maximum 0.02, 0.03, 0.06, 0.06; back in the original order:
    reject, adjusted = stats.holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert reject.tolist() == [True, False, False, True]
    # capped at 1
    assert stats.holm([0.5, 0.6])[1].tolist() == [1.0, 1.0]


def test_holm_agrees_with_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(11)
    for size in (1, 2, 5, 24, 120):
        p = rng.uniform(0, 0.2, size) ** 2  # many near alpha and near each other
        p[: size // 3] = p[0]  # ties
        for alpha in (0.05, 0.01):
            reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
            ours = stats.holm(p, alpha=alpha)
            assert ours[0].tolist() == reject.tolist()
            assert ours[1] == pytest.approx(adjusted)
    assert [a.tolist() for a in stats.holm([])] == [[], []]


def test_bootstrap_ci_contains_true_median() -> None:
    sample = np.random.default_rng(7).normal(loc=10.0, scale=2.0, size=60)
    estimate = stats.median_ci(sample)
    assert estimate.value == np.median(sample) and estimate.n == 60
    assert estimate.low < 10.0 < estimate.high
    assert estimate.high - estimate.low < 2.0
    assert stats.median_ci(sample) == estimate  # seeded: the same CI every time


def test_bootstrap_ci_coverage_is_about_nominal() -> None:
    # 95% intervals should hold the true median about 95% of the time; a broken interval
    # (e.g. around the mean of resamples, or far too narrow) fails this
    rng = np.random.default_rng(11)
    covered = 0
    trials = 100
    for i in range(trials):
        data = rng.exponential(1.0, 40)
        estimate = stats.median_ci(data, resamples=999, seed=i)
        covered += estimate.low <= np.log(2) <= estimate.high
    assert 0.85 <= covered / trials < 1.0  # 100/100 would hint at useless, huge intervals


def test_a_remembered_ci_is_the_one_computed_afresh_and_never_another_samples() -> None:
    """median_ci remembers seeded intervals (stats.seeded_median_ci): a repeat is the interval
    scipy gives, and changed values (in place, reordered, another seed) are never served an
    earlier sample's."""
    stats.seeded_median_ci.cache_clear()
    values = np.random.default_rng(5).lognormal(size=40)
    fresh = stats.bootstrap_median(values.copy(), stats.CONFIDENCE, stats.RESAMPLES, stats.SEED)
    assert stats.median_ci(values) == fresh == stats.median_ci(list(values))
    assert stats.seeded_median_ci.cache_info().hits == 1
    reordered = values[::-1]  # a strided view, other bytes: its own interval
    assert stats.median_ci(reordered) == stats.bootstrap_median(
        reordered.copy(), stats.CONFIDENCE, stats.RESAMPLES, stats.SEED)
    assert stats.seeded_median_ci.cache_info().hits == 1
    values[0] *= 3  # the caller's array changed in place after it was remembered
    assert stats.median_ci(values) == stats.bootstrap_median(
        values.copy(), stats.CONFIDENCE, stats.RESAMPLES, stats.SEED) != fresh
    # few resamples: an interval that moves with the seed
    assert (stats.median_ci(values, resamples=99, seed=1)
            != stats.median_ci(values, resamples=99, seed=2))
    assert stats.median_ci(values, confidence=0.9) != stats.median_ci(values)
    rng = np.random.default_rng(2)  # a generator: drawn from anew each time, never remembered
    assert (stats.median_ci(values, resamples=99, seed=rng)
            != stats.median_ci(values, resamples=99, seed=rng))


def test_constant_sample_has_a_point_interval() -> None:
    assert stats.median_ci([3.0, 3.0, 3.0]) == stats.Estimate(3.0, 3.0, 3.0, 3)


def test_constant_data_is_exact_evidence_in_its_own_direction() -> None:
    # zero spread: a mean below the null is certain (p 0 for "below", 1 for "above")
    t = stats.one_sample_t([0.0, 0.0, 0.0, 0.0])
    assert (t.p_below(0.175), t.p_above(0.175)) == (0.0, 1.0)
    assert (t.p_above(-0.1), t.p_below(-0.1)) == (0.0, 1.0)
    assert t.p_above(0.0) == t.p_below(0.0) == 0.5
    spread = stats.one_sample_t([0.0, 0.001, 0.0, 0.001])  # the same direction with a spread
    assert spread.p_below(0.175) < 1e-6 and spread.p_above(0.175) > 1 - 1e-6


def test_ratio_of_medians() -> None:
    rng = np.random.default_rng(3)
    b = rng.normal(100, 5, 20)
    estimate = stats.ratio_of_medians(2 * b, b)
    assert estimate.value == pytest.approx(2.0)
    assert estimate.low < 2.0 < estimate.high
    comparison = stats.compare(2 * b, b)
    assert comparison.ratio == pytest.approx(2.0)
    assert comparison.mw_u == 400 and comparison.cliffs_delta == 1
    assert comparison.mw_p < 1e-6 and comparison.welch_p < 1e-6


def test_refuses_nan_and_tiny_samples() -> None:
    with pytest.raises(ValueError, match="NaN"):
        stats.median_ci([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="at least 2"):
        stats.median_ci([1.0])
    with pytest.raises(ValueError, match="median of b is 0"):
        stats.ratio_of_medians([1.0, 2.0], [0.0, 0.0])


def test_jain_index_examples() -> None:
    # Jain, Chiu & Hawe (1984): equal allocations -> 1, one user gets all of n -> 1/n
    assert stats.jain_index([1, 1, 1, 1], [1, 1, 1, 1]) == 1
    assert stats.jain_index([1, 0, 0, 0], [1, 1, 1, 1]) == 0.25
    # normalised by the targets: a 70/30 split under 70/30 weights is perfectly fair
    assert stats.jain_index([0.7, 0.3], [0.7, 0.3]) == pytest.approx(1)
    # 50/50 under 70/30 weights: x = (5/7, 5/3); (sum x)^2 / (2 sum x^2) = 0.8621
    assert stats.jain_index([0.5, 0.5], [0.7, 0.3]) == pytest.approx(0.862069, abs=1e-6)
    with pytest.raises(ValueError):
        stats.jain_index([0, 0], [0.5, 0.5])


def test_targets_deviation_slowdown() -> None:
    assert stats.target_shares([700, 300]).tolist() == pytest.approx([0.7, 0.3])
    assert stats.share_deviation([0.2, 0.8], [0.7, 0.3]).tolist() == pytest.approx([-0.5, 0.5])
    assert stats.slowdown(alone=100.0, together=40.0) == 2.5
    with pytest.raises(ValueError):
        stats.slowdown(alone=100.0, together=0.0)


def runs_table() -> pd.DataFrame:
    rows = []
    for run, (a, b) in {"r1": (0.7, 0.3), "r2": (0.5, 0.5)}.items():
        for tenant, weight, share in (("a", 700, a), ("b", 300, b)):
            rows.append({"campaign": "c", "host": "h", "run_id": run, "arm": "shared-journal",
                         "tenant": tenant, "weight": weight, "target_share": weight / 1000,
                         "achieved_share": share, "own_share": share * 0.8,
                         "jbd2_charged_share": share * 0.9, "n_tenants": 2,
                         "workload": "high-fsync", "beside": "high-fsync",
                         "throughput_mb_s": 10 * share})
    rows.append({"campaign": "c", "host": "h", "run_id": "alone1", "arm": "shared-journal",
                 "tenant": "a", "weight": 700, "target_share": 1.0, "achieved_share": 1.0,
                 "own_share": 0.9, "jbd2_charged_share": 1.0, "n_tenants": 1,
                 "workload": "high-fsync", "beside": "alone", "throughput_mb_s": 14.0})
    return pd.DataFrame(rows)


def test_isolation_table() -> None:
    table = stats.isolation(runs_table()).set_index(["run_id", "tenant"])
    assert table.loc[("r1", "a"), "achieved_deviation"] == pytest.approx(0)
    assert table.loc[("r2", "a"), "achieved_deviation"] == pytest.approx(-0.2)
    assert table.loc[("r1", "b"), "achieved_jain"] == pytest.approx(1)
    assert table.loc[("r2", "b"), "achieved_jain"] == pytest.approx(0.862069, abs=1e-6)
    assert np.isnan(table.loc[("alone1", "a"), "achieved_jain"])  # one tenant: no fairness
    # own shares 0.56/0.24 of 0.7/0.3 targets: x = (0.8, 0.8), perfectly even
    assert table.loc[("r1", "a"), "own_deviation"] == pytest.approx(0.56 - 0.7)
    assert table.loc[("r1", "a"), "own_jain"] == pytest.approx(1)


def test_slowdowns_against_standalone() -> None:
    table = stats.slowdowns(runs_table(), "throughput_mb_s").set_index(["run_id", "tenant"])
    assert table.loc[("r1", "a"), "slowdown"] == pytest.approx(14.0 / 7.0)
    assert table.loc[("r2", "b"), "slowdown"] == pytest.approx(14.0 / 5.0)
    assert "alone1" not in table.index.get_level_values(0)


def test_condition_medians_and_family() -> None:
    table = pd.DataFrame({"arm": ["vm"] * 5 + ["lxc"] * 5,
                          "x": [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 11.0, 12.0, 13.0, 14.0]})
    medians = stats.condition_medians(table, ["arm"], "x").set_index("arm")
    assert medians.loc["vm", "median"] == 3 and medians.loc["lxc", "median"] == 12
    assert medians.loc["vm", "low"] <= 3 <= medians.loc["vm", "high"]
    family = stats.compare_family({"vm/lxc": (table.x[:5], table.x[5:]),
                                   "same": (table.x[:5], table.x[:5] + 0.5)})
    assert family["p_holm"].tolist() == pytest.approx(stats.holm(family["mw_p"])[1].tolist())
    assert family.loc[0, "cliffs_delta"] == -1


def test_the_trend_slope_is_ordinary_least_squares() -> None:
    """slope_t (scipy's linregress) gives statsmodels' OLS slope, standard error, residual
    degrees of freedom and residual spread."""
    import statsmodels.api as sm

    levels = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2], dtype=float)
    values = np.log([100, 96, 104, 90, 85, 93, 70, 76, 72])
    fit = sm.OLS(values, sm.add_constant(levels)).fit()
    t = stats.slope_t(levels, values)
    assert (t.estimate, t.se, t.df, t.n, t.sd) == pytest.approx(
        (fit.params[1], fit.bse[1], fit.df_resid, 9, np.sqrt(fit.scale)))


def test_the_detectable_effect_is_statsmodels_own_for_every_design_when_remembered() -> None:
    """detectable solves each design's standardized effect once per sizes, alpha and power
    (stats.standardized_detectable): the same numbers as statsmodels' search made afresh."""
    from statsmodels.stats.power import TTestIndPower, TTestPower

    stats.standardized_detectable.cache_clear()
    stat = stats.TStat(estimate=0.3, se=0.1, df=8.0, n=10, sd=0.25)
    levels = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    for _ in range(2):  # the second time from what was remembered
        assert stats.detectable("two-sample", stat, 0.01, n_a=4) == float(
            TTestIndPower().solve_power(nobs1=4, ratio=6 / 4, alpha=0.01, power=0.8,
                                        alternative="larger")) * 0.25
        assert stats.detectable("one-sample", stat, 0.02, power=0.9) == float(
            TTestPower().solve_power(nobs=10, alpha=0.02, power=0.9,
                                     alternative="larger")) * 0.25
        assert stats.detectable("slope", stat, 0.05, levels=levels) == float(
            TTestPower().solve_power(nobs=9, alpha=0.05, power=0.8, alternative="larger")
        ) * 0.25 * np.sqrt(9 / stats.sxx(levels))
    assert stats.standardized_detectable.cache_info().misses == 3
    assert stats.detectable("two-sample", stat, 0.01, n_a=5) != stats.detectable(
        "two-sample", stat, 0.01, n_a=4)
    with pytest.raises(ValueError, match="unknown design"):
        stats.detectable("three-sample", stat, 0.05)
