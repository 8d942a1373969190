"""The rows each claim and figure rests on: the runs of an experiment or a claim (`runs_for`,
the one place that picks them), then the tenant, neighbour and workload a claim compares. The
claims' checks and the notebooks' figures and tables both select with these functions, so a
figure always shows the rows its claim was judged on."""

from __future__ import annotations

import pandas as pd

from journalbench.plan.experiments import CLAIM_SEPARATOR


def has_claim(claims: str, claim: str) -> bool:
    return claim in claims.split(CLAIM_SEPARATOR)


def runs_for(runs: pd.DataFrame, experiments: pd.DataFrame, *, claim: str | None = None,
             experiment: str | None = None) -> pd.DataFrame:
    """The rows of `runs` whose run belongs to an experiment testing `claim` (or with id
    `experiment`) in its own campaign. A run of no experiment (made by hand, or of a campaign
    whose file tidy did not find) tests no claim."""
    chosen = experiments
    if claim is not None:
        # .loc: a plain [] with an empty list would select columns, not rows
        chosen = chosen.loc[[has_claim(c, claim) for c in chosen["claims"]]]
    if experiment is not None:
        chosen = chosen[chosen["experiment"] == experiment]
    keys = set(zip(chosen["campaign"], chosen["run_id"], strict=True))
    mask = [key in keys for key in zip(runs["campaign"], runs["run_id"], strict=True)]
    return runs.loc[mask]


BESIDE_ORDER = ["alone", "no-fsync", "low-fsync", "high-fsync"]


# the thesis's four base fio workloads (Fig 3.5, 3.6) and their block sizes
BASE_WORKLOADS = {"randread-16k": "16k", "randwrite-16k": "16k", "seqread-64k": "64k",
                  "seqwrite-64k": "64k"}


BASE_PRESETS = list(BASE_WORKLOADS)


# no-fsync runs the seqwrite-64k job (64 KiB sequential direct writes, no fsync; see
# agent/workloads/fio.py), so a campaign's no-fsync pair is also C2's sequential-write pair
SAME_JOB = {"no-fsync": "seqwrite-64k"}


def victims(runs: pd.DataFrame) -> pd.DataFrame:
    """The 70% tenant's rows (every campaign names the tenant under study `victim`)."""
    return runs[runs["tenant"] == "victim"]


def base_workload(rows: pd.DataFrame) -> pd.Series:
    """Which base workload (BASE_WORKLOADS) each row ran, or None: its preset, or the base
    preset running the same fio job, at the preset's own block size."""
    names = [SAME_JOB.get(p, p) if isinstance(p, str) else None for p in rows["preset"]]
    return pd.Series([n if BASE_WORKLOADS.get(n) == bs else None
                      for n, bs in zip(names, rows["bs"], strict=True)],
                     index=rows.index, dtype="object")


def base_runs(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str,
              n_tenants: int) -> pd.DataFrame:
    rows = victims(runs_for(runs, experiments, claim=claim))
    rows = rows.assign(base_workload=base_workload(rows))
    return rows[(rows["n_tenants"] == n_tenants) & rows["base_workload"].notna()]


def base_alone(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C1: the base fio workloads, one instance alone."""
    return base_runs(runs, experiments, "C1", 1)


def base_paired(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C2: the 70% instance of two running the same base workload."""
    rows = base_runs(runs, experiments, "C2", 2)
    return rows[rows["beside"] == rows["workload"]]


def split(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C3: the 70% writer beside a 30% writer, per run."""
    rows = victims(runs_for(runs, experiments, claim="C3"))
    return rows[rows["n_tenants"] == 2]


def io_size(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C4: both tenants of the runs where the 70% tenant writes 16 KiB and the 30% 64 KiB."""
    rows = runs_for(runs, experiments, claim="C4")
    return rows[rows["n_tenants"] == 2]


def by_beside(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str) -> pd.DataFrame:
    """C8/C9/C10/C18: the 70% tenant of the claim's runs, alone or beside each neighbour
    (`beside` ordered by the neighbours' fsync rate)."""
    return ordered_beside(victims(runs_for(runs, experiments, claim=claim)), BESIDE_ORDER)


def ordered_beside(rows: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """The rows whose neighbour is in `order`, `beside` a categorical in that order (only the
    neighbours present, so a figure draws no empty slots)."""
    rows = rows[rows["beside"].isin(order)].copy()
    values = rows["beside"].astype(str)  # whatever categories the rows came with
    rows["beside"] = pd.Categorical(values, [b for b in order if b in set(values)])
    return rows


def sequential_writers(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C15: the 70% sequential writer alone, beside a no-fsync and beside a high-fsync writer
    (`case`)."""
    rows = victims(runs_for(runs, experiments, claim="C15"))
    rows = rows.assign(base_workload=base_workload(rows))
    alone = (rows["n_tenants"] == 1) & (rows["base_workload"] == "seqwrite-64k")
    paired = (rows["n_tenants"] == 2) & (rows["beside"] == rows["preset"])
    rows = rows[alone | (paired & rows["preset"].isin(["no-fsync", "high-fsync"]))]
    return rows.assign(case=[f"beside {b}" if n > 1 else "alone"
                             for n, b in zip(rows["n_tenants"], rows["beside"], strict=True)])


def high_fsync_pair(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C17: both tenants of the claim's runs where a 70% and a 30% tenant both fsync often."""
    rows = runs_for(runs, experiments, claim="C17")
    return rows[(rows["n_tenants"] == 2) & (rows["preset"] == "high-fsync")
                & (rows["beside"] == "high-fsync")]


def starvation_pair(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C24: the 70% high-fsync victim beside a 30% no-fsync writer, in the claim's runs."""
    rows = by_beside(runs, experiments, "C24")
    return rows[(rows["preset"] == "high-fsync") & (rows["beside"] == "no-fsync")]


def by_prep(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """jbd2's share under each fio file preparation (workflow/campaigns/fileprep.yaml, no
    claim): every tenant row of that campaign's runs; compare `shared_jbd2_share` by
    `device_profile`, experiment and `prep`."""
    return runs_for(runs, experiments[experiments["campaign"] == "fileprep"])


def database_tenant(runs: pd.DataFrame, experiments: pd.DataFrame, tool: str) -> pd.DataFrame:
    """The rows of the tenant running the database `tool` (mariadb, redis) in the campaign's
    runs; of two MariaDB tenants, the 70% one (`victim`), as the thesis's figures show it."""
    rows = runs_for(runs, experiments)
    rows = rows[rows["tool"] == tool]
    return rows[(rows["beside"] != tool) | (rows["tenant"] == "victim")]


