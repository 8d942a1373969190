"""What the notebooks compute, so they stay thin: loading the tidy tables, the per-claim tables
(medians with bootstrap CIs), the per-second disk shares, and writing tables and figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from journalbench import stats
from journalbench.tidy import tidy

ARM_ORDER = ["vm", "shared-journal", "per-container-journal", "journal-accounted"]
NEIGHBOUR_ORDER = ["alone", "no-fsync", "low-fsync", "high-fsync"]
BASE_PRESETS = ["randread-16k", "randwrite-16k", "seqread-64k", "seqwrite-64k"]


def load(processed: Path | str, raw: Path | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The campaign's runs and samples tables; built from the raw run folders when missing
    (a notebook opened on a fresh clone runs on its own)."""
    processed, raw = Path(processed), Path(raw)
    if not (processed / "runs.parquet").exists():
        tidy(raw, processed)
    runs = pd.read_parquet(processed / "runs.parquet")
    samples = pd.read_parquet(processed / "samples.parquet")
    if runs.empty:
        raise ValueError(f"{processed / 'runs.parquet'}: no complete runs (raw: {raw})")
    return runs, samples


def host_label(runs: pd.DataFrame) -> str:
    """Which host(s) the numbers come from, with each device's measured fsync latency."""
    parts = []
    for host, group in runs.groupby("host"):
        parts.append(f"host {host} ({group['kernel'].iloc[0]}, {group['device_kind'].iloc[0]}, "
                     f"device fsync {group['device_fsync_lat_ms'].median():.2f} ms)")
    return "; ".join(parts)


def medians(runs: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Median with 95% bootstrap CI per condition, arms in the thesis's order."""
    table = stats.condition_medians(runs, by, value)
    if "arm" in by:
        table["arm"] = pd.Categorical(table["arm"], [a for a in ARM_ORDER
                                                     if a in set(table["arm"])])
    return table.sort_values(by).reset_index(drop=True)


def victims(runs: pd.DataFrame, preset: str | None = None, bs: str = "64k") -> pd.DataFrame:
    rows = runs[(runs["tenant"] == "victim") & (runs["bs"] == bs)]
    return rows if preset is None else rows[rows["preset"] == preset]


def base_workloads(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """C1/C2: base fio workloads alone and beside the same workload (70% tenant)."""
    base = victims(runs)
    base = base[base["preset"].isin(BASE_PRESETS)]
    alone = base[base["n_tenants"] == 1]
    paired = base[(base["n_tenants"] == 2) & (base["neighbour"] == base["preset"])]
    return {
        "alone": medians(alone, ["preset", "arm"], "throughput_mb_s"),
        "paired": medians(paired, ["preset", "arm"], "throughput_mb_s"),
    }


def split(runs: pd.DataFrame) -> pd.DataFrame:
    """C3: the 70% no-fsync writer's share beside a 30% no-fsync writer, per run."""
    rows = victims(runs, "no-fsync")
    return rows[rows["neighbour"] == "no-fsync"]


def io_size(runs: pd.DataFrame) -> pd.DataFrame:
    """C4: both tenants of the runs where the 70% tenant writes 16 KiB and the 30% 64 KiB."""
    small = (runs["tenant"] == "victim") & (runs["preset"] == "no-fsync") & (runs["bs"] == "16k")
    ids = runs[small & (runs["n_tenants"] == 2)]["run_id"]
    return runs[runs["run_id"].isin(ids)]


def fsync_victim(runs: pd.DataFrame, preset: str = "high-fsync") -> pd.DataFrame:
    """C8/C9/C18: the 70% fsync-heavy tenant, alone or beside each neighbour."""
    rows = victims(runs, preset)
    rows = rows[rows["neighbour"].isin(NEIGHBOUR_ORDER)].copy()
    rows["neighbour"] = pd.Categorical(rows["neighbour"], [n for n in NEIGHBOUR_ORDER
                                                           if n in set(rows["neighbour"])])
    return rows


def fsync_table(runs: pd.DataFrame, preset: str = "high-fsync") -> pd.DataFrame:
    """Table 4.1 / 5.3 style: median (over repetitions) of the mean fsync latency, ms."""
    rows = fsync_victim(runs, preset)
    table = medians(rows, ["neighbour", "arm"], "fsync_lat_mean_ms")
    table["cell"] = [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" if pd.notna(lo) else f"{m:.3f}"
                     for m, lo, hi in zip(table["median"], table["low"], table["high"],
                                          strict=True)]
    wide = table.pivot(index="neighbour", columns="arm", values="cell")
    rows = [n for n in NEIGHBOUR_ORDER if n in wide.index]
    columns = [a for a in ARM_ORDER if a in wide.columns]
    return wide.reindex(index=rows, columns=columns).fillna("no runs")


def shares_over_time(samples: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """Per second: each tenant's own bytes and each jbd2 thread's bytes as a share of the
    device's bytes in that second (the thesis's disk-share-over-time plots)."""
    run = samples[samples["run_id"] == run_id]
    device = run[run["kind"] == "device"].set_index("t")["bytes"]
    parts = run[run["kind"] != "device"].copy()
    parts["bytes_shown"] = parts["own_bytes"].where(parts["kind"] == "tenant", parts["bytes"])
    parts["share"] = parts["bytes_shown"] / parts["t"].map(device)
    parts["label"] = [s if k == "tenant" else f"{s} ({'shared' if pd.isna(t) else t})"
                      for s, k, t in zip(parts["source"], parts["kind"], parts["tenant"],
                                         strict=True)]
    return parts[["t", "label", "kind", "share"]].fillna({"share": 0.0})


def example_run(runs: pd.DataFrame, **where: Any) -> str | None:
    """The first repetition's run id of a condition (for time-series plots)."""
    rows = runs
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if rows.empty:
        return None
    return str(rows.sort_values(["repetition", "run_id"])["run_id"].iloc[0])


def write_table(table: pd.DataFrame, results: Path | str, name: str, index: bool = False) -> None:
    results = Path(results)
    results.mkdir(parents=True, exist_ok=True)
    table.to_csv(results / f"{name}.csv", index=index)
    (results / f"{name}.md").write_text(table.to_markdown(index=index) + "\n")
