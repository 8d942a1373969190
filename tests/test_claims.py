"""Claim tests and verdict rules, on small tables whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from journalbench import claims


def row(run: str, arm: str, tenant: str, preset: str, beside: str, **values) -> dict:
    return {"campaign": "t", "host": "h", "run_id": run, "arm": arm, "tenant": tenant,
            "preset": preset, "workload": preset, "beside": beside, "bs": "64k",
            "n_tenants": 2, "device_fsync_lat_ms": 0.1, **values}


def experiments(membership: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """The experiments table of campaign "t": run id -> (experiment id, its claims)."""
    return pd.DataFrame([{"campaign": "t", "run_id": run, "experiment": experiment,
                          "claims": claims_, "condition": None, "arm": "shared-journal",
                          "repetition": 1}
                         for run, (experiment, claims_) in membership.items()])


def c8_runs(beside_no: list[float], beside_high: list[float]) -> tuple[pd.DataFrame, ...]:
    """(runs, experiments) of a high-fsync victim beside no- and high-fsync neighbours."""
    rows = [row(f"a{i}", "shared-journal", "victim", "high-fsync", "no-fsync",
                throughput_mb_s=v) for i, v in enumerate(beside_no)]
    rows += [row(f"b{i}", "shared-journal", "victim", "high-fsync", "high-fsync",
                 throughput_mb_s=v) for i, v in enumerate(beside_high)]
    runs = pd.DataFrame(rows).reindex(columns=[*rows[0], "fsync_lat_mean_ms", "achieved_share",
                                               "shared_jbd2_share"])
    return runs, experiments({r["run_id"]: ("high-fsync-victim", "C8 C9") for r in rows})


def test_a_clear_ordering_is_supported():
    tests = claims.test_table(*c8_runs([100, 101, 99, 102, 100], [50, 51, 49, 52, 50]))
    c8 = tests[tests["claim"] == "C8"].iloc[0]
    assert c8["outcome"] == "supported" and c8["p_holm"] < 0.05


def test_the_opposite_ordering_is_not_reproduced():
    tests = claims.test_table(*c8_runs([50, 51, 49, 52, 50], [100, 101, 99, 102, 100]))
    assert tests[tests["claim"] == "C8"].iloc[0]["outcome"] == "opposite direction"


def test_noise_is_not_significant():
    tests = claims.test_table(*c8_runs([100, 60, 140, 90, 110], [95, 150, 55, 100, 105]))
    assert tests[tests["claim"] == "C8"].iloc[0]["outcome"] in ("not significant",
                                                                "opposite direction")


def test_share_equivalence_needs_the_share_near_target():
    near = claims.Test("C3", "x", "share", np.array([0.69, 0.71, 0.70, 0.72, 0.68]), target=0.7)
    far = claims.Test("C3", "x", "share", np.array([0.50, 0.52, 0.49, 0.51, 0.50]), target=0.7)
    assert near.p_value() < 0.01
    assert far.p_value() > 0.5


def test_constant_means_within_the_ratio_margin():
    same = claims.Test("C18", "x", "equivalent", np.array([10, 10.2, 9.9, 10.1, 10.0]),
                       np.array([10.1, 9.9, 10.0, 10.2, 9.8]))
    double = claims.Test("C18", "x", "equivalent", np.array([20, 20.2, 19.9, 20.1, 20.0]),
                         np.array([10.1, 9.9, 10.0, 10.2, 9.8]))
    assert same.p_value() < 0.01
    assert double.p_value() > 0.5


def test_every_claim_gets_a_row_per_host_and_missing_data_says_so():
    table = claims.verdicts(*c8_runs([100, 101, 99, 102, 100], [50, 51, 49, 52, 50]))
    assert list(table["claim"]) == [f"C{i}" for i in range(1, 24)]
    verdict = dict(zip(table["claim"], table["verdict"], strict=True))
    assert verdict["C8"] == "reproduced"
    assert verdict["C3"] == "not measured yet"
    assert verdict["C5"] == "not measured yet"
    assert "vm arm" in table.set_index("claim").loc["C8", "note"]


@pytest.mark.parametrize(("outcomes", "expected"), [
    (["supported", "supported"], "reproduced"),
    (["supported", "not significant"], "not reproduced"),
    (["not measured"], "not measured yet"),
])
def test_a_claim_needs_every_test(outcomes, expected):
    tests = pd.DataFrame({"outcome": outcomes})
    assert claims.claim_verdict("C10", tests)[0] == expected


def test_io_size_runs_are_only_the_c4_pairs():
    from journalbench import analysis

    rows = [
        row("c4", "shared-journal", "victim", "no-fsync", "no-fsync", bs="16k"),
        row("c4", "shared-journal", "neighbour", "no-fsync", "no-fsync"),
        row("base", "shared-journal", "victim", "randread-16k", "randread-16k", bs="16k"),
        row("base", "shared-journal", "neighbour", "randread-16k", "randread-16k", bs="16k"),
        row("solo", "shared-journal", "victim", "no-fsync", "alone", bs="16k", n_tenants=1),
    ]
    plan = experiments({"c4": ("io-size-vs-weight", "C4"), "base": ("base-pair", "C2"),
                        "solo": ("io-size-alone", "C4")})
    assert set(analysis.io_size(pd.DataFrame(rows), plan)["run_id"]) == {"c4"}


def test_runs_of_no_experiment_test_no_claim():
    runs, plan = c8_runs([100, 101, 99, 102, 100], [50, 51, 49, 52, 50])
    tests = claims.test_table(runs, plan[plan["run_id"].str.startswith("a")])
    assert tests[tests["claim"] == "C8"].iloc[0]["outcome"] == "not measured"


def test_each_host_is_its_own_family():
    runs, plan = c8_runs([100, 101, 99, 102, 100], [50, 51, 49, 52, 50])
    noisy, _ = c8_runs([100, 60, 140, 90, 110], [95, 150, 55, 100, 105])
    both = pd.concat([runs, noisy.assign(host="other")], ignore_index=True)
    tests = claims.host_tests(both, plan)
    for host, alone in (("h", runs), ("other", noisy.assign(host="other"))):
        mine = tests[tests["host"] == host].drop(columns="host").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, claims.test_table(alone, plan))
    assert set(claims.verdicts(both, plan)["host"]) == {"h", "other"}
