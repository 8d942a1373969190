"""The t statistics of the checks on a pool, with each member a block (docs/hosts.md).

A pool's runs are dealt so that every condition's repetitions spread evenly over the members
(plan/deal.py): a randomized-complete-block layout with the member as the block. The analysis
follows the layout: each statistic is *stratified by member*, a fixed effect. The contrast a
check tests is taken within each member and combined over members; the spread is the spread
within members only.

- two samples (a vs b from different runs): per member m with runs on both sides, the
  difference of its means d_m = mean(a_m) - mean(b_m); combined with weights w_m proportional
  to n_a,m n_b,m / (n_a,m + n_b,m) (the inverse of d_m's variance factor: the
  Cochran-Mantel-Haenszel / van Elteren weights); each side's variance pooled within members
  (s_a^2 on N_a - M degrees of freedom), se^2 = s_a^2 sum(w^2 / n_a,m) + s_b^2 sum(w^2 / n_b,m),
  Welch-Satterthwaite's degrees of freedom. It is Welch's test stratified by member: with one
  member it is exactly Welch's test, what a one-host campaign uses.
- one sample (per-run log ratios, shares): the mean of the member means weighted by their runs
  (the plain mean), its standard error from the variance within members, N - M degrees of
  freedom; with one member, the one-sample t.
- a trend (a slope over ordered conditions): least squares with a member intercept each
  (statsmodels OLS on the level and the members' indicators), N - M - 1 degrees of freedom;
  with one member, the plain slope.

Why blocks, and fixed ones: members meant to be identical still differ a little (a disk's
firmware, a BIOS setting, the room's temperature), and a member's offset is shared by every run
it made. Pooled as one sample, those offsets inflate the spread (a real effect is missed) and,
wherever a condition's runs fall unevenly on the members (a re-deal after a member was lost, a
repetition count that does not divide), bias the contrast. Within-member contrasts remove both,
and cost only a degree of freedom per member. The member is a fixed effect rather than a random
one: a pool has two to a few members, too few to estimate a variance between them (a mixed
model's variance component would rest on one to three degrees of freedom), and the verdict is
about the machines measured, as a one-host campaign's is about its host. What a fixed additive
block assumes, that a condition's effect is the same on every member (no member-by-condition
interaction), is not assumed silently: the pool's agreement check (judge/claims/agreement.py)
tests each member's effect against the other members' and takes a check whose members differ
beyond its margin out of the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from journalbench.judge.stats import TStat, clean


def groups(values: np.ndarray, blocks: np.ndarray) -> dict[str, np.ndarray]:
    """The values of each block, in the blocks' sorted order."""
    return {str(block): values[blocks == block] for block in sorted(set(blocks.tolist()))}


def within_ss(parts: dict[str, np.ndarray]) -> float:
    """The sum of squares within blocks."""
    return float(sum(((v - v.mean()) ** 2).sum() for v in parts.values()))


def blocked_two_sample(a: Sequence[float], b: Sequence[float], blocks_a: Sequence[str],
                       blocks_b: Sequence[str]) -> TStat:
    """mean(a) - mean(b) within members, combined over the members with runs on both sides
    (module docstring); the others' runs are left out, having no contrast of their own."""
    x, y = clean(a, "a"), clean(b, "b")
    bx, by = np.asarray(blocks_a, dtype=object), np.asarray(blocks_b, dtype=object)
    if bx.size != x.size or by.size != y.size:
        raise ValueError("a block for every value expected")
    both = sorted(set(bx.tolist()) & set(by.tolist()))
    if not both:
        raise ValueError("no member has runs of both sides")
    ga = {m: v for m, v in groups(x, bx).items() if m in both}
    gb = {m: v for m, v in groups(y, by).items() if m in both}
    na = np.array([ga[m].size for m in both], dtype=float)
    nb = np.array([gb[m].size for m in both], dtype=float)
    d = np.array([ga[m].mean() - gb[m].mean() for m in both])
    w = na * nb / (na + nb)
    w = w / w.sum()
    members = len(both)
    df_a, df_b = na.sum() - members, nb.sum() - members
    ss_a, ss_b = within_ss(ga), within_ss(gb)
    pooled_df = df_a + df_b
    if pooled_df < 1:
        raise ValueError("a blocked two-sample test needs a member with 2 runs on a side")
    pooled_var = (ss_a + ss_b) / pooled_df
    # each side's own variance (Welch) where it has degrees of freedom, else the pooled one
    var_a = ss_a / df_a if df_a >= 1 else pooled_var
    var_b = ss_b / df_b if df_b >= 1 else pooled_var
    ca, cb = float((w ** 2 / na).sum()), float((w ** 2 / nb).sum())
    va, vb = var_a * ca, var_b * cb
    se = float(np.sqrt(va + vb))
    if df_a >= 1 and df_b >= 1:
        df = satterthwaite((va, df_a), (vb, df_b))
    else:
        df = float(pooled_df)
    return TStat(float((w * d).sum()), se, df, int(na.sum() + nb.sum()),
                 float(np.sqrt(pooled_var)))


def blocked_one_sample(values: Sequence[float], blocks: Sequence[str]) -> TStat:
    """The mean with its standard error from the spread within members (N - M degrees of
    freedom)."""
    x = clean(values)
    bx = np.asarray(blocks, dtype=object)
    if bx.size != x.size:
        raise ValueError("a block for every value expected")
    parts = groups(x, bx)
    df = x.size - len(parts)
    if df < 1:
        raise ValueError("a blocked one-sample test needs a member with 2 values")
    sd = float(np.sqrt(within_ss(parts) / df))
    # weights n_m / N: the member means' weighted mean is the plain mean, se^2 = s_w^2 / N
    return TStat(float(x.mean()), sd / float(np.sqrt(x.size)), float(df), int(x.size), sd)


def blocked_slope(levels: Sequence[float], values: Sequence[float],
                  blocks: Sequence[str]) -> TStat:
    """The slope of values on levels with an intercept per member (statsmodels OLS)."""
    import statsmodels.api as sm

    x, y = clean(levels, "levels"), clean(values, "values")
    bx = np.asarray(blocks, dtype=object)
    if bx.size != x.size or x.size != y.size:
        raise ValueError("a level and a block for every value expected")
    members = sorted(set(bx.tolist()))
    indicators = np.column_stack([(bx == m).astype(float) for m in members])
    design = np.column_stack([x, indicators])
    if x.size - design.shape[1] < 1 or np.linalg.matrix_rank(design) < design.shape[1]:
        raise ValueError("a blocked trend test needs levels that vary within a member and "
                         "a residual degree of freedom")
    fit = sm.OLS(y, design).fit()
    resid_sd = float(np.sqrt(fit.scale))
    return TStat(float(fit.params[0]), float(fit.bse[0]), float(fit.df_resid), int(x.size),
                 resid_sd)


def satterthwaite(*parts: tuple[float, float]) -> float:
    """Welch-Satterthwaite's degrees of freedom of a sum of variances (variance, its df)."""
    total = sum(v for v, _ in parts)
    denominator = sum(v ** 2 / df for v, df in parts if df > 0)
    return float(total ** 2 / denominator) if denominator > 0 else float("inf")


def difference(first: TStat, second: TStat) -> TStat:
    """first - second of two independent statistics (the agreement check's member against the
    others), Welch-Satterthwaite's degrees of freedom."""
    df = satterthwaite((first.se ** 2, first.df), (second.se ** 2, second.df))
    sd = float(np.sqrt((first.sd ** 2 + second.sd ** 2) / 2))
    return TStat(first.estimate - second.estimate, float(np.hypot(first.se, second.se)),
                 df if np.isfinite(df) else first.df + second.df, first.n + second.n, sd)
