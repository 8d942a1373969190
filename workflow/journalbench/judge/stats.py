"""The statistics every notebook uses: medians with bootstrap CIs, two-condition comparisons,
Holm's correction, and the isolation metrics (shares vs weights, Jain's index, slowdown).

Tests and intervals come from scipy and statsmodels; only the definitions no library offers
(Cliff's delta from U, Jain's index, shares) are written here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from journalbench.runfolder import RUN_KEY

# scipy.stats is imported by the functions that compute a test or an interval: importing it
# takes half a second, which a process that only reads judged tables (the ledger) never needs

CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 20210701
# BCa needs a jackknife of the statistic, which is degenerate for the median of the handful of
# repetitions a run matrix has (leave-one-out medians repeat): percentile intervals do not.
METHOD = "percentile"


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Comparison:
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float  # median(a) / median(b)
    ratio_low: float
    ratio_high: float
    welch_t: float
    welch_p: float
    mw_u: float  # Mann-Whitney U of a
    mw_p: float
    cliffs_delta: float  # P(a > b) - P(a < b), from U


def clean(values: Sequence[float] | np.ndarray | pd.Series, name: str = "values") -> np.ndarray:
    """Values as a float array; refuse NaN rather than let it propagate into a figure."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name}: expected a flat sequence")
    if np.isnan(array).any():
        raise ValueError(f"{name}: contains NaN (missing measurements must be dropped first)")
    return array


def median_ci(values: Sequence[float], confidence: float = CONFIDENCE,
              resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """Median with a bootstrap confidence interval (scipy.stats.bootstrap). Seeded, the same
    values give the same interval: it is computed once per process (a figure and its table,
    or two notebooks in one kernel, draw the same conditions' CIs)."""
    data = clean(values)
    if data.size < 2:
        raise ValueError(f"a bootstrap CI needs at least 2 values, got {data.size}")
    if not isinstance(seed, int):  # a generator or None: a new draw every time
        return bootstrap_median(data, confidence, resamples, seed)
    return seeded_median_ci(data.tobytes(), confidence, resamples, seed)


@functools.lru_cache(maxsize=4096)
def seeded_median_ci(data: bytes, confidence: float, resamples: int, seed: int) -> Estimate:
    """median_ci of the float64 values in `data`, remembered (an Estimate is immutable)."""
    return bootstrap_median(np.frombuffer(data), confidence, resamples, seed)


def bootstrap_median(data: np.ndarray, confidence: float, resamples: int,
                     seed: Any) -> Estimate:
    from scipy import stats

    median = float(np.median(data))
    if np.all(data == data[0]):
        return Estimate(median, median, median, int(data.size))
    result = stats.bootstrap((data,), np.median, confidence_level=confidence,
                             n_resamples=resamples, method=METHOD, rng=np.random.default_rng(seed))
    interval = result.confidence_interval
    return Estimate(median, float(interval.low), float(interval.high), int(data.size))


def median_ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(a, axis=axis) / np.median(b, axis=axis)


def ratio_of_medians(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE,
                     resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """median(a) / median(b) with a bootstrap CI resampling each condition on its own."""
    from scipy import stats

    x, y = clean(a, "a"), clean(b, "b")
    if x.size < 2 or y.size < 2:
        raise ValueError(f"a bootstrap CI needs at least 2 values per condition, "
                         f"got {x.size} and {y.size}")
    if np.median(y) == 0:
        raise ValueError("median of b is 0: the ratio is undefined")
    ratio = float(median_ratio(x, y))
    if np.all(x == x[0]) and np.all(y == y[0]):
        return Estimate(ratio, ratio, ratio, int(x.size + y.size))
    result = stats.bootstrap((x, y), median_ratio, vectorized=True, paired=False,
                             confidence_level=confidence, n_resamples=resamples,
                             method=METHOD, rng=np.random.default_rng(seed))
    interval = result.confidence_interval
    return Estimate(ratio, float(interval.low), float(interval.high), int(x.size + y.size))


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's t-test (unequal variances): (t, two-sided p)."""
    from scipy import stats

    result = stats.ttest_ind(clean(a, "a"), clean(b, "b"), equal_var=False)
    return float(result.statistic), float(result.pvalue)


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mann-Whitney U test: (U of a, two-sided p); exact p for small samples without ties."""
    from scipy import stats

    result = stats.mannwhitneyu(clean(a, "a"), clean(b, "b"), alternative="two-sided")
    return float(result.statistic), float(result.pvalue)


def cliffs_delta_from_u(u: float, n_a: int, n_b: int) -> float:
    """Cliff's delta = P(a > b) - P(a < b) = 2U/(n_a n_b) - 1, with U the Mann-Whitney U of a."""
    return 2.0 * u / (n_a * n_b) - 1.0


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float:
    x, y = clean(a, "a"), clean(b, "b")
    u, _ = mann_whitney(x, y)
    return cliffs_delta_from_u(u, x.size, y.size)


def compare(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE,
            resamples: int = RESAMPLES, seed: int = SEED) -> Comparison:
    """Condition a against condition b: ratio of medians with CI, Welch, Mann-Whitney, Cliff."""
    x, y = clean(a, "a"), clean(b, "b")
    ratio = ratio_of_medians(x, y, confidence, resamples, seed)
    t, t_p = welch(x, y)
    u, u_p = mann_whitney(x, y)
    return Comparison(
        n_a=int(x.size), n_b=int(y.size),
        median_a=float(np.median(x)), median_b=float(np.median(y)),
        ratio=ratio.value, ratio_low=ratio.low, ratio_high=ratio.high,
        welch_t=t, welch_p=t_p, mw_u=u, mw_p=u_p,
        cliffs_delta=cliffs_delta_from_u(u, x.size, y.size),
    )


def holm(p_values: Sequence[float], alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down correction for a family of tests: (reject, adjusted p), as
    statsmodels' multipletests(method="holm") gives them (a test holds the two equal). Written
    out because multipletests runs a full garbage collection on every call: a tenth of a
    second each in the ledger's process, a sixth of judging every shipped campaign."""
    p = clean(p_values, "p_values")
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order])
    adjusted = np.empty(len(p))
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted <= alpha, adjusted


# -- isolation ------------------------------------------------------------------------------

def target_shares(weights: Sequence[float]) -> np.ndarray:
    """What proportional weights promise each tenant: weight / sum of weights."""
    w = clean(weights, "weights")
    if (w <= 0).any():
        raise ValueError("weights must be positive")
    return w / w.sum()


def share_deviation(achieved: Sequence[float], target: Sequence[float]) -> np.ndarray:
    """Achieved minus target share (percentage points / 100): > 0 means more than promised."""
    return clean(achieved, "achieved") - clean(target, "target")


def jain_index(shares: Sequence[float], targets: Sequence[float]) -> float:
    """Jain's fairness index of the shares normalised by their targets, x = share / target:
    (sum x)^2 / (n sum x^2); 1 when every tenant gets the same fraction of its promise, 1/n
    when one tenant gets everything."""
    x = clean(shares, "shares") / clean(targets, "targets")
    if (x < 0).any():
        raise ValueError("shares must not be negative")
    if not x.any():
        raise ValueError("all shares are 0: fairness is undefined")
    return float(x.sum() ** 2 / (x.size * (x**2).sum()))


def slowdown(alone: float, together: float) -> float:
    """How many times slower a tenant runs beside a neighbour than alone, for a
    higher-is-better figure (throughput, ops/s): alone / together."""
    if together <= 0:
        raise ValueError("throughput beside the neighbour is 0: slowdown is unbounded")
    return float(alone) / float(together)


# -- on the tidy tables ------------------------------------------------------------------------

SHARE_COLUMNS = {"achieved": "achieved_share", "own": "own_share",
                 "jbd2_charged": "jbd2_charged_share"}


def isolation(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run and tenant: deviation from the target share of the tenant's bytes as its cgroup
    was charged (achieved), without any journal bytes (own) and with its own jbd2 thread's
    bytes charged to it (jbd2_charged), see data/SCHEMA.md; and per run, Jain's index of each.
    Jain's index is NaN for a run with one tenant: there is no split to judge."""
    out = runs[["campaign", "host", "run_id", "arm", "tenant", "weight", "target_share",
                "achieved_share", "own_share", "jbd2_charged_share"]].copy()
    for label, column in SHARE_COLUMNS.items():
        out[f"{label}_deviation"] = share_deviation(out[column], out["target_share"])
        jain = out.groupby(list(RUN_KEY))[[column, "target_share"]].apply(
            lambda g, c=column: jain_index(g[c], g["target_share"]) if len(g) > 1 else np.nan)
        # a run with one tenant has no fairness to measure: NaN there means "not applicable"
        out[f"{label}_jain"] = jain.reindex(pd.MultiIndex.from_frame(out[list(RUN_KEY)]))\
            .to_numpy()
    return out


def condition_medians(table: pd.DataFrame, by: list[str], value: str,
                      confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Median and bootstrap CI of value per condition (rows with value missing are dropped)."""
    rows = []
    for key, group in table.dropna(subset=[value]).groupby(by, dropna=False):
        keys = key if isinstance(key, tuple) else (key,)
        data = group[value].to_numpy()
        if data.size >= 2:
            estimate = asdict(median_ci(data, confidence))
        else:
            estimate = {"value": float(np.median(data)), "low": np.nan, "high": np.nan,
                        "n": int(data.size)}
        rows.append({**dict(zip(by, keys, strict=True)), "median": estimate["value"],
                     "low": estimate["low"], "high": estimate["high"], "n": estimate["n"]})
    return pd.DataFrame(rows, columns=[*by, "median", "low", "high", "n"])


def compare_family(pairs: dict[str, tuple[Sequence[float], Sequence[float]]],
                   alpha: float = 0.05, test: str = "mw") -> pd.DataFrame:
    """Compare each named pair (a, b) and Holm-correct the chosen test's p across the family."""
    if test not in ("mw", "welch"):
        raise ValueError("test must be 'mw' (Mann-Whitney) or 'welch'")
    rows: list[dict[str, Any]] = [{"comparison": name, **asdict(compare(a, b))}
                                  for name, (a, b) in pairs.items()]
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    reject, adjusted = holm(table[f"{test}_p"], alpha)
    table["p_holm"] = adjusted
    table["significant"] = reject
    return table


def slowdowns(runs: pd.DataFrame, value: str) -> pd.DataFrame:
    """Per consolidated run and tenant: slowdown of value against the median of the same
    workload run alone (n_tenants == 1) on the same host and arm. Rows without a standalone
    counterpart are left out, not given a made-up baseline."""
    keys = ["campaign", "host", "arm", "workload"]
    alone = (runs[runs["n_tenants"] == 1].dropna(subset=[value])
             .groupby(keys)[value].median().rename("alone"))
    together = runs[runs["n_tenants"] > 1].dropna(subset=[value])
    merged = together.join(alone, on=keys, how="inner")
    merged["slowdown"] = [slowdown(a, t) for a, t in zip(merged["alone"], merged[value],
                                                         strict=True)]
    return merged[[*keys, "run_id", "tenant", "beside", value, "alone", "slowdown"]]


# -- one-sided tests, equivalence, power ------------------------------------------------------
# Every test of a claim is a t statistic (estimate, standard error, degrees of freedom) read in
# both directions: the p-value for the claimed direction and the one for the opposite come from
# the same statistic, and so do its intervals. The distributions are scipy's and statsmodels'.

POWER = 0.8


@dataclass(frozen=True)
class TStat:
    estimate: float
    se: float
    df: float
    n: int
    sd: float  # spread of one observation: the scale power calculations use

    def _tail(self, null: float, upper: bool) -> float:
        if self.se == 0:  # constant data: the estimate is exact
            if self.estimate == null:
                return 0.5
            return float((self.estimate > null) != upper)
        from scipy import stats

        t = (self.estimate - null) / self.se
        return float(stats.t.sf(t, self.df) if upper else stats.t.cdf(t, self.df))

    def p_above(self, null: float = 0.0) -> float:
        """One-sided p of H1: true value > null."""
        return self._tail(null, upper=True)

    def p_below(self, null: float = 0.0) -> float:
        """One-sided p of H1: true value < null."""
        return self._tail(null, upper=False)

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        from scipy import stats

        half = float(stats.t.ppf(0.5 + confidence / 2, self.df)) * self.se
        return self.estimate - half, self.estimate + half

    def within(self, low: float, high: float) -> float:
        """TOST p of H1: low < true value < high (the larger of the two one-sided p)."""
        return max(self.p_above(low), self.p_below(high))

    def outside(self, low: float, high: float) -> float:
        """p of H1: the true value lies beyond the band, on the side the estimate is on; its
        1 - 2 alpha interval then lies entirely outside [low, high]."""
        return min(self.p_above(high), self.p_below(low))


def welch_t(a: Sequence[float], b: Sequence[float]) -> TStat:
    """mean(a) - mean(b), Welch's standard error and Satterthwaite's degrees of freedom."""
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    x, y = clean(a, "a"), clean(b, "b")
    if x.size < 2 or y.size < 2:
        raise ValueError(f"a two-sample test needs 2 values per side, got {x.size} and {y.size}")
    compare = CompareMeans(DescrStatsW(x), DescrStatsW(y))
    pooled = np.sqrt(((x.size - 1) * x.var(ddof=1) + (y.size - 1) * y.var(ddof=1))
                     / (x.size + y.size - 2))
    return TStat(float(x.mean() - y.mean()), float(compare.std_meandiff_separatevar),
                 float(compare.dof_satt()), int(x.size + y.size), float(pooled))


def one_sample_t(values: Sequence[float]) -> TStat:
    """mean(values) with its standard error (n - 1 degrees of freedom): also the paired test,
    on per-run differences."""
    from statsmodels.stats.weightstats import DescrStatsW

    x = clean(values)
    if x.size < 2:
        raise ValueError(f"a one-sample test needs 2 values, got {x.size}")
    described = DescrStatsW(x)
    return TStat(float(described.mean), float(described.std_mean), float(x.size - 1),
                 int(x.size), float(described.std))


def slope_t(levels: Sequence[float], values: Sequence[float]) -> TStat:
    """Least-squares slope of values on levels (a linear trend test across ordered
    conditions), with its standard error and n - 2 degrees of freedom."""
    from scipy.stats import linregress

    x, y = clean(levels, "levels"), clean(values, "values")
    if x.size != y.size or x.size < 3 or np.unique(x).size < 2:
        raise ValueError("a trend test needs 3 values over at least 2 levels")
    fit = linregress(x, y)
    # the residuals' spread from the slope's standard error: se = sd / sqrt(Sxx)
    return TStat(float(fit.slope), float(fit.stderr), float(x.size - 2), int(x.size),
                 float(fit.stderr * np.sqrt(sxx(x))))


def sxx(levels: Sequence[float]) -> float:
    x = clean(levels, "levels")
    return float(((x - x.mean()) ** 2).sum())


def detectable(design: str, stat: TStat, alpha: float, power: float = POWER,
               n_a: int | None = None, levels: Sequence[float] | None = None) -> float:
    """The smallest true effect (on the statistic's own scale, > 0) a one-sided test of this
    design detects with probability `power` at level `alpha`, given the spread observed.
    design: "two-sample" (n_a of the stat's n in the first group), "one-sample", "slope"."""
    d = standardized_detectable(design, stat.n, n_a if design == "two-sample" else None,
                                alpha, power)
    if design == "slope":
        # the slope's t has noncentrality beta sqrt(Sxx) / sd on n - 2 degrees of freedom:
        # a one-sample t of n - 1 observations with d = beta sqrt(Sxx / (n - 1)) / sd
        return d * stat.sd * np.sqrt((stat.n - 1) / sxx(levels))
    return d * stat.sd


@functools.lru_cache(maxsize=4096)
def standardized_detectable(design: str, n: int, n_a: int | None, alpha: float,
                            power: float) -> float:
    """detectable's effect in standard deviations, statsmodels' root search remembered: a
    family's checks share their sizes, alpha and power (46 searches, not 303, judging every
    shipped campaign)."""
    from statsmodels.stats.power import TTestIndPower, TTestPower

    if design == "two-sample":
        d = TTestIndPower().solve_power(nobs1=n_a, ratio=(n - n_a) / n_a, alpha=alpha,
                                        power=power, alternative="larger")
    elif design in ("one-sample", "slope"):
        d = TTestPower().solve_power(nobs=n if design == "one-sample" else n - 1, alpha=alpha,
                                     power=power, alternative="larger")
    else:
        raise ValueError(f"unknown design {design!r}")
    return float(d)


def runs_needed(design: str, effect: float, sd: float, alpha: float, power: float = POWER,
                levels: int = 3, limit: int = 10_000) -> int:
    """Repetitions per condition for a one-sided test of this design to detect `effect` (on
    the scale of `sd`) with probability `power` at level `alpha`; for "slope", `levels`
    equally spaced conditions of that many repetitions each. `limit` + 1 means "more than
    limit"."""
    from statsmodels.stats.power import TTestIndPower, TTestPower

    if effect <= 0 or sd <= 0:
        raise ValueError("the effect and the spread must be positive")
    d = effect / sd
    for n in range(2, limit + 1):
        if design == "two-sample":
            achieved = TTestIndPower().power(d, nobs1=n, ratio=1.0, alpha=alpha,
                                             alternative="larger")
        elif design == "one-sample":
            achieved = TTestPower().power(d, nobs=n, alpha=alpha, alternative="larger")
        elif design == "slope":
            total = n * levels
            spread = n * sxx(np.arange(levels, dtype=float))
            achieved = TTestPower().power(d * np.sqrt(spread / (total - 1)), nobs=total - 1,
                                          alpha=alpha, alternative="larger")
        else:
            raise ValueError(f"unknown design {design!r}")
        if achieved >= power:
            return n
    return limit + 1

