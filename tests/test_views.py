"""Which runs each figure and table shows: every condition of a campaign is in one of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import REPO
from journalbench import analysis, tidy
from journalbench.agent.workloads.fio import PRESETS, job
from journalbench.campaign import CAMPAIGN_DIR, expand, load_campaign
from journalbench.experiments import experiment_rows, runs_for
from journalbench.runfolder import run_id

CAMPAIGN_FILES = sorted(CAMPAIGN_DIR.glob("*.yaml"))
SHIPPED = ["arms20", "quick"]  # the campaigns whose run folders ship in data/raw/


def unshown(runs: pd.DataFrame, plan: pd.DataFrame) -> list[str]:
    """The measured conditions (experiment, vary values, arm) no figure or table shows."""
    shown = set().union(*(set(rows["run_id"])
                          for rows in analysis.views(runs, plan).values()))
    measured = set(runs["run_id"])
    missing = []
    keys = ["experiment", "condition", "arm"]
    for key, group in plan.groupby(keys, dropna=False):
        ids = set(group["run_id"]) & measured
        if ids and not ids & shown:
            missing.append(" ".join(str(k) for k in key))
    return missing


def spec_rows(campaign: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The columns of a run's `runs` rows that follow from its spec alone (no measurement)."""
    tenants = spec["tenants"]
    rows = []
    for tenant in tenants:
        workload = tenant["workload"]
        others = sorted(t["workload"].get("preset") or t["workload"]["tool"]
                        for t in tenants if t is not tenant)
        rows.append({
            "campaign": campaign, "host": "h", "run_id": run_id(spec), "arm": spec["arm"],
            "repetition": spec["repetition"], "n_tenants": len(tenants),
            "tenant": tenant["name"], "weight": tenant["weight"], "tool": workload["tool"],
            "preset": workload.get("preset"), "workload": workload.get("preset"),
            "bs": job(workload)["bs"] if workload["tool"] == "fio" else None,
            "beside": "+".join(others) or "alone",
        })
    return rows


@pytest.mark.parametrize("path", CAMPAIGN_FILES, ids=lambda p: p.stem)
def test_every_condition_of_every_campaign_is_shown(path: Path) -> None:
    campaign = load_campaign(str(path))
    plan = pd.DataFrame(experiment_rows(campaign, str(path)))
    runs = pd.DataFrame([row for spec in expand(campaign, str(path))
                         for row in spec_rows(campaign["name"], spec)])
    assert set(plan["run_id"]) == set(runs["run_id"])
    assert unshown(runs, plan) == []


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_condition_is_shown(name: str, tmp_path: Path) -> None:
    tidy.tidy(REPO / "data" / "raw" / name, tmp_path)
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    plan = pd.read_parquet(tmp_path / "experiments.parquet")
    assert set(plan["run_id"]) == set(runs["run_id"])  # the shipped campaigns are complete
    assert unshown(runs, plan) == []


def test_c1_and_c2_show_all_four_base_workloads(tmp_path: Path) -> None:
    tidy.tidy(REPO / "data" / "raw" / "quick", tmp_path)
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    plan = pd.read_parquet(tmp_path / "experiments.parquet")
    view = analysis.views(runs, plan)
    for name in ("c1-base-alone", "c2-base-paired"):
        assert set(view[name]["base_workload"]) == set(analysis.BASE_PRESETS), name
        assert (view[name]["tenant"] == "victim").all()
    assert (view["c2-base-paired"]["n_tenants"] == 2).all()


def test_base_workload_of_a_row() -> None:
    rows = pd.DataFrame({"preset": ["randread-16k", "no-fsync", "no-fsync", "high-fsync", None],
                         "bs": ["16k", "64k", "16k", "64k", None]})
    # C4's 16 KiB no-fsync writer runs no base workload; the 64 KiB one runs seqwrite-64k's job
    assert list(analysis.base_workload(rows)) == ["randread-16k", "seqwrite-64k", None, None,
                                                  None]


def test_base_workloads_follow_the_fio_presets() -> None:
    for preset, same in analysis.SAME_JOB.items():
        assert PRESETS[preset] == PRESETS[same]
    for name, bs in analysis.BASE_WORKLOADS.items():
        assert PRESETS[name]["bs"] == bs


def test_no_experiments_select_no_runs() -> None:
    """A campaign whose file tidy did not find has an empty experiments table: no claim runs,
    and no crash (an empty list must not select columns)."""
    runs = pd.DataFrame({"campaign": ["c"], "run_id": ["x"]})
    none = pd.DataFrame({"campaign": pd.Series([], dtype=str), "run_id": pd.Series([], dtype=str),
                         "experiment": pd.Series([], dtype=str),
                         "claims": pd.Series([], dtype=object)})
    assert runs_for(runs, none, claim="C8").empty
