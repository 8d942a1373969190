"""The controller study's test (report/controller_study.py), fixed before thesis-v2's first
run: on the shipped thesis-hdd checks (v1/bfq) and copies of them standing in for the v2
families, a check whose effect is unchanged does not depend on the testbed, one whose effect
moved by far more than its interval does, on the scale of its kind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import SHARE_KINDS
from journalbench.report import controller_study as study

REPO = Path(__file__).resolve().parent.parent
PROCESSED = REPO / "data" / "processed" / "thesis-hdd"


@pytest.fixture(scope="module")
def shipped() -> tuple[pd.DataFrame, pd.DataFrame]:
    """thesis-hdd's tests table and runs (v1/bfq), as the notebooks read them."""
    from journalbench.judge import claims
    from journalbench.report import views

    runs, _, experiments = views.load(PROCESSED, REPO / "data" / "raw" / "thesis-hdd")
    return claims.tests_of(PROCESSED, runs, experiments), runs


def as_v2(tests: pd.DataFrame, runs: pd.DataFrame, io_control: str,
          moved: dict[str, float] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same checks and runs as a family of a v2 host under `io_control`; `moved`: test ->
    how far its effect moves (a factor for a ratio, a difference for a share), interval too."""
    tests = tests.assign(campaign="thesis-v2", host="nested", io_control=io_control)
    for test, by in (moved or {}).items():
        mine = tests["test"] == test
        share = tests.loc[mine, "kind"].isin(SHARE_KINDS)
        for column in ("effect", "low", "high"):
            values = tests.loc[mine, column]
            tests.loc[mine, column] = np.where(share, values + by, values * by)
    runs = runs.assign(campaign="thesis-v2", host="nested", io_control=io_control,
                       cgroup_version=2)
    return tests, runs


def test_the_studied_claims_exist_and_the_testbeds_are_named_in_order() -> None:
    assert set(study.CLAIMS) <= set(CLAIMS)
    assert study.TESTBEDS[0] == study.BASELINE == study.testbed_of(1, "bfq")
    assert study.testbed_of(2, "iocost") == "v2/iocost"


def test_an_unchanged_effect_does_not_depend_and_a_moved_one_does(shipped) -> None:
    tests, runs = shipped
    measured = tests[(tests["status"] == "measured") & tests["claim"].isin(study.CLAIMS)]
    ratio = measured[~measured["kind"].isin(SHARE_KINDS)].iloc[0]["test"]
    share = measured[measured["kind"].isin(SHARE_KINDS)].iloc[0]["test"]
    bfq2 = as_v2(tests, runs, "bfq")
    iocost = as_v2(tests, runs, "iocost", moved={ratio: 2.0, share: 0.25})
    both = [pd.concat([tests, bfq2[0], iocost[0]]), pd.concat([runs, bfq2[1], iocost[1]])]
    effects = study.effects(*both)
    assert set(effects["testbed"]) == set(study.TESTBEDS)
    table = study.dependence(effects)
    assert list(table.columns) == study.COLUMNS
    same = table[table["to"] == "v2/bfq"]
    assert len(same) == len(measured) and not same["depends"].any()
    assert np.allclose(same.loc[same["scale"] == "ratio", "change"], 1.0)
    assert np.allclose(same.loc[same["scale"] == "difference", "change"], 0.0)
    assert same["p"].min() == pytest.approx(1.0)
    moved = table[(table["to"] == "v2/iocost")].set_index("test")
    assert moved.loc[ratio, "change"] == pytest.approx(2.0)
    assert moved.loc[ratio, "low"] < 2.0 < moved.loc[ratio, "high"]
    assert moved.loc[share, "scale"] == "difference"
    assert moved.loc[share, "change"] == pytest.approx(0.25)
    assert bool(moved.loc[ratio, "depends"]) and bool(moved.loc[share, "depends"])
    others = moved.drop(index=[ratio, share])
    assert not others["depends"].any()
    verdicts = study.verdicts(*both)
    assert list(verdicts.columns) == ["claim", *study.TESTBEDS, "changes"]
    assert not verdicts["changes"].any()  # the ledger's verdicts, copied: none changes


def test_verdicts_change_with_the_container_checks_not_with_a_missing_vm_half(shipped) -> None:
    """thesis-v2 has no vm arm: a claim whose vm half is missing there has another verdict,
    which is not a change; one whose container check has another outcome is."""
    tests, runs = shipped
    claim = "C3"  # measured on both halves in thesis-hdd
    bfq2_tests, bfq2_runs = as_v2(tests, runs, "bfq")
    mine = bfq2_tests["claim"] == claim
    bfq2_tests.loc[mine, "outcome"] = "partially measured"
    vm = mine & (bfq2_tests["part"] == "vm")
    bfq2_tests.loc[vm, "part_outcome"] = "missing"
    both = [pd.concat([tests, bfq2_tests]), pd.concat([runs, bfq2_runs])]
    table = study.verdicts(*both).set_index("claim")
    assert table.loc[claim, "v2/bfq"].startswith("partially measured (containers: ")
    assert table.loc[claim, "v2/bfq"].split("(")[1] == table.loc[claim, "v1/bfq"].split("(")[1]
    assert not table["changes"].any()
    first = bfq2_tests.index[mine & (bfq2_tests["part"] == "container")][0]
    bfq2_tests.loc[first, "part_outcome"] = "inconclusive"
    both[0] = pd.concat([tests, bfq2_tests])
    table = study.verdicts(*both).set_index("claim")
    assert table["changes"].sum() == 1 and bool(table.loc[claim, "changes"])


def test_a_family_on_two_cgroup_versions_is_refused(shipped) -> None:
    _, runs = shipped
    mixed = runs.assign(cgroup_version=np.where(np.arange(len(runs)) % 2, 1, 2))
    with pytest.raises(ValueError, match="campaign': 'thesis-hdd'.*cgroup versions"):
        study.testbeds(mixed)


def test_nothing_measured_on_the_baseline_gives_an_empty_table_with_its_columns() -> None:
    empty = pd.DataFrame(columns=["claim", "check", "test", "kind", "testbed", "effect", "low",
                                  "high"])
    assert list(study.dependence(empty).columns) == study.COLUMNS
