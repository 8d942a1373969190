"""What the database claims (mariadb.py, redis.py) share: their runs (the database tenant of
the runs of a claim's experiments), the runs they leave out as CPU-bound, and the per-second
share statistic of a MySQL tenant (its swing).

- The database tenant: the tenant running the `tool` (`mariadb`, `redis`) that the claim is
  about; in a MySQL pair both tenants run MariaDB and the 70% one (`victim`) is the one under
  study, as in the thesis's figures.
- CPU-bound runs (preconditions.DB_CPU): a run in which any tenant row has `cpu_bound` = 1 is
  left out of every database check; `Screen` builds a check from the rows that are left and
  records the runs it left out, and for a VM half (preconditions.VM_DB) how busy the guests of
  every run of its conditions were (rule vm-db-busy).
- Swing: per run and tenant, the spread of its per-second share of the tenants' bytes (tenant
  rows of `samples`, full seconds of the measured window, seconds in which the tenants moved
  bytes): its 95th minus its 5th percentile. The thesis's containers swung between 0% and 55%
  (a spread of ~0.55) where its VM held 70/30; the 5-95% range keeps one odd second from
  setting it. `achieved_share` is the same share over the whole run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.preconditions import DB_CPU, VM_DB
from journalbench.judge.selection import runs_for
from journalbench.judge.starved import FULL_SECOND
from journalbench.vocabulary import VM

RUN_KEYS = ["campaign", "host", "run_id"]
SWING = "share_swing"
SWING_QUANTILES = (0.05, 0.95)


def tenant_rows(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str, tool: str,
                tenant: str | None = None) -> pd.DataFrame:
    """The rows of the `tool` tenant (named `tenant` when given) in the runs of the claim's
    experiments."""
    rows = runs_for(runs, experiments, claim=claim)
    rows = rows[rows["tool"] == tool]
    return rows if tenant is None else rows[rows["tenant"] == tenant]


def cpu_bound_runs(runs: pd.DataFrame) -> set[str]:
    """Run ids with a CPU-bound tenant (tidy's `cpu_bound`; null counts as not bound)."""
    return set(runs.loc[runs["cpu_bound"].fillna(0) == 1, "run_id"])


class Screen:
    """Builds checks from rows without the CPU-bound runs: `screen(checks.ratio, "C5", label,
    rows_a, rows_b, "ops_s", ...)`. Every DataFrame argument loses its flagged runs; the check
    records which it lost (`excluded`) and needs preconditions.DB_CPU."""

    def __init__(self, runs: pd.DataFrame) -> None:
        self.flagged = cpu_bound_runs(runs)
        self.runs = runs
        self.busiest: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}

    def guests(self, busy: str = "vcpu_busy_mean", saturated: str = "vcpu_saturated_share"
               ) -> dict[str, tuple[float, float]]:
        """Per run with a VM tenant: its busiest guest's vCPU busy mean and saturated share
        (NaN where a guest recorded none: then the run's is NaN), from the columns named
        (made when first asked)."""
        if (busy, saturated) not in self.busiest:
            found: dict[str, tuple[float, float]] = {}
            rows = self.runs
            vm = (rows["arm"] == VM).to_numpy()
            values = (pd.to_numeric(rows.get(c, pd.Series(np.nan, index=rows.index)),
                                    errors="coerce").to_numpy(float)[vm]
                      for c in (busy, saturated))
            for run, b, s in zip(rows["run_id"].to_numpy()[vm], *values, strict=True):
                old = found.get(run, (-np.inf, -np.inf))
                found[run] = (np.nan if np.isnan(b) or np.isnan(old[0]) else max(b, old[0]),
                              np.nan if np.isnan(s) or np.isnan(old[1]) else max(s, old[1]))
            self.busiest[(busy, saturated)] = found
        return self.busiest[(busy, saturated)]

    def __call__(self, make: Callable[..., Check], claim: str, label: str, *args: object,
                 **options: object) -> Check:
        kept, excluded = [], set()
        for arg in args:
            if isinstance(arg, pd.DataFrame) and self.flagged:
                out = arg["run_id"].isin(self.flagged)
                if out.any():  # most row sets have no flagged run: no copy for them
                    excluded |= set(arg.loc[out, "run_id"])
                    arg = arg[~out]
            kept.append(arg)
        needs = tuple(options.pop("needs", ()))
        check = make(claim, label, *kept, needs=(*needs, DB_CPU), **options)
        check.excluded = tuple(sorted(excluded))
        if VM_DB in needs:  # every run of its conditions, those left out too
            runs = excluded.union(*(set(arg["run_id"]) for arg in kept
                                    if isinstance(arg, pd.DataFrame)))
            guests = self.guests()
            check.guests = {run: guests[run] for run in sorted(runs) if run in guests}
            # a table without the whole run's reading (made before it) has only the one
            whole = (self.guests("vcpu_busy_client_mean", "vcpu_saturated_client_share")
                     if "vcpu_busy_client_mean" in self.runs else guests)
            check.guests_client = {run: whole[run] for run in sorted(runs) if run in whole}
        return check


def per_second_shares(samples: pd.DataFrame) -> pd.DataFrame:
    """Per run, full second and tenant: its share of the tenants' bytes in that second."""
    columns = [*RUN_KEYS, "tenant", "t", "share"]
    if samples.empty or "bytes" not in samples:
        return pd.DataFrame(columns=columns)
    rows = samples[(samples["kind"] == "tenant") & (samples["dt"] >= FULL_SECOND)]
    rows = rows[[*RUN_KEYS, "tenant", "t", "bytes"]].astype({"bytes": float})
    total = rows.groupby([*RUN_KEYS, "t"])["bytes"].transform("sum")
    rows = rows.assign(share=rows["bytes"] / total.where(total > 0))
    return rows.dropna(subset=["share"])[columns]


def swing(samples: pd.DataFrame) -> pd.DataFrame:
    """Per run and tenant: `share_swing`, the 5-95% range of its per-second share."""
    shares = per_second_shares(samples)
    if shares.empty:
        return pd.DataFrame(columns=[*RUN_KEYS, "tenant", SWING])
    low, high = SWING_QUANTILES
    grouped = shares.groupby([*RUN_KEYS, "tenant"])["share"]
    spread = grouped.quantile(high) - grouped.quantile(low)
    return spread.rename(SWING).reset_index()


def with_swing(runs: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """`runs` with its `share_swing` column (NaN for a tenant without per-second samples)."""
    runs = runs.drop(columns=[SWING], errors="ignore")
    table = swing(samples)
    if table.empty:
        return runs.assign(**{SWING: np.nan})
    return runs.merge(table, on=[*RUN_KEYS, "tenant"], how="left")
