"""What the thesis could not see, BFQ's settings: the baseline of a one-tunable-at-a-time
design, C24's verdicts and the pre-registered "a setting removes the starvation" test, and the
isolation claims' dependence on a setting (on constructed runs whose answer is known; the
notebook runs on shipped data in the notebook tests)."""

from __future__ import annotations

import pandas as pd
import pytest
from test_claims import Plan, starvation_runs

from journalbench.judge import claims
from journalbench.judge.claims.verdicts import tests_view as view_of
from journalbench.judge.stats import holm
from journalbench.report import bfq_study

BASE = "strict_guarantees=1 slice_idle_us=8000 low_latency=1"
SG0 = "strict_guarantees=0 slice_idle_us=8000 low_latency=1"
NO_IDLE = "strict_guarantees=1 slice_idle_us=0 low_latency=1"


def test_the_baseline_is_the_centre_of_a_one_tunable_design() -> None:
    assert bfq_study.baseline([SG0, NO_IDLE, BASE]) == BASE
    assert bfq_study.setting_order([NO_IDLE, BASE, SG0]) == [BASE, SG0, NO_IDLE]
    # two settings: the one more was measured under (the default every other is compared with)
    assert bfq_study.baseline([SG0, BASE, BASE]) == BASE
    assert bfq_study.setting_order([SG0, BASE], base=BASE) == [BASE, SG0]
    assert bfq_study.change(SG0, BASE) == "strict_guarantees 1 -> 0"
    assert bfq_study.change(BASE, BASE) == "baseline"


def c24_tests(starved: list[float], under: dict[str, list[float]]) -> tuple:
    """C24's runs: the accounted victim starved under the baseline, `under` each setting its
    accounted victim's shares (per-container always ~0.55)."""
    plan = Plan()
    for setting, accounted in {BASE: starved, **under}.items():
        first = len(plan.rows)
        starvation_runs(plan, accounted, [0.50, 0.55, 0.60, 0.52])
        for row in plan.rows[first:]:
            row["bfq"] = setting
    runs, samples, experiments = plan.tables()
    table, checks_, _ = claims.ledger(runs, samples, experiments)
    return runs, experiments, view_of(table, checks_)


def test_a_setting_that_lifts_the_victim_removes_the_starvation() -> None:
    starved = [0.05, 0.08, 0.10, 0.06]
    runs, experiments, tests = c24_tests(starved, {SG0: [0.66, 0.70, 0.72, 0.69],
                                                   NO_IDLE: [0.06, 0.07, 0.09, 0.05]})
    verdicts = bfq_study.verdicts(tests, ["C24"]).set_index("claim")
    assert verdicts.loc["C24", "baseline"] == "reproduced"
    assert verdicts.loc["C24", "strict_guarantees 1 -> 0"] == "contradicted"
    rise = bfq_study.starvation_rise(runs, experiments, tests).set_index("setting")
    assert rise.loc["strict_guarantees 1 -> 0", "removes"]
    assert rise.loc["strict_guarantees 1 -> 0", "ratio"] > 5
    still = rise.loc["slice_idle_us 8000 -> 0"]
    assert not still["removes"] and still["c24_setting"] == "reproduced"
    assert list(rise["p_holm"]) == pytest.approx(
        list(holm(rise["p"].to_numpy())[1]))


def test_a_setting_with_one_run_so_far_is_listed_untested() -> None:
    """A campaign stopped part-way (runs land one at a time) may hold one run of a setting:
    its row says so, and the settings with runs enough are tested as before."""
    starved = [0.05, 0.08, 0.10, 0.06]
    runs, experiments, tests = c24_tests(starved, {SG0: [0.66, 0.70, 0.72, 0.69],
                                                   NO_IDLE: [0.06]})
    rise = bfq_study.starvation_rise(runs, experiments, tests).set_index("setting")
    alone = rise.loc["slice_idle_us 8000 -> 0"]
    assert alone["n"] == "1/4" and pd.isna(alone["p"]) and not alone["rises"]
    assert rise.loc["strict_guarantees 1 -> 0", "removes"]


def test_a_setting_with_a_zero_share_has_no_ratio_and_says_why() -> None:
    """A victim with no byte in the window (share 0) has no log ratio: the row says so rather
    than showing a ratio of 0, and the setting is not found to lift the victim."""
    starved = [0.05, 0.08, 0.10, 0.06]
    runs, experiments, tests = c24_tests(starved, {SG0: [0.66, 0.70, 0.72, 0.69],
                                                   NO_IDLE: [0.0, 0.07, 0.0, 0.05]})
    rise = bfq_study.starvation_rise(runs, experiments, tests).set_index("setting")
    zero = rise.loc["slice_idle_us 8000 -> 0"]
    assert pd.isna(zero["ratio"]) and pd.isna(zero["p"]) and not zero["rises"]
    assert zero["why_not"].startswith("2 value(s) <= 0")
    assert zero["share_setting"] == pytest.approx(0.025)
    assert rise.loc["strict_guarantees 1 -> 0", "why_not"] == ""


def test_the_sensitivity_test_finds_the_check_that_moved() -> None:
    rows = []
    for setting, (held, moved) in {BASE: (0.70, 1.00), SG0: (0.69, 1.60)}.items():
        for test, effect, kind in (("held", held, "share"), ("moved", moved, "ratio")):
            rows.append({"claim": "C17", "part": "container", "test": test, "kind": kind,
                         "status": "measured", "device_profile": "hdd", "bfq": setting,
                         "effect": effect, "low": effect / 1.05, "high": effect * 1.05,
                         "se": 0.02 if kind == "ratio" else 0.01, "df": 8.0,
                         "outcome": "reproduced"})
    # a check the campaign measured under the default only (C24's runs are there too)
    rows.append({**rows[0], "claim": "C18", "test": "alone", "kind": "ratio", "effect": 1.0})
    effects = bfq_study.sensitivity_effects(pd.DataFrame(rows))
    assert set(effects["test"]) == {"held", "moved", "alone"}  # shares are kept here
    table = bfq_study.sensitivity(effects).set_index("test")
    assert table.loc["moved", "depends"] and not table.loc["held", "depends"]
    assert table.loc["moved", "change"] == "strict_guarantees 1 -> 0"
    assert table.loc["moved", "ratio"] == pytest.approx(1.6)


def test_no_check_under_two_settings_gives_the_tables_columns(tmp_path) -> None:
    """mysql-point's isolation checks: none measured under two settings. The table has no
    rows but the columns of one that has them, so the CSV the notebook writes is a table (the
    report read a file with no columns as an error)."""
    rows = [{"claim": "C17", "part": "container", "test": "alone", "kind": "ratio",
             "status": "measured", "device_profile": "hdd", "bfq": BASE, "effect": 1.0,
             "low": 0.9, "high": 1.1, "se": 0.02, "df": 8.0, "outcome": "reproduced"}]
    moved = bfq_study.sensitivity(bfq_study.sensitivity_effects(pd.DataFrame([
        *rows, {**rows[0], "test": "moved", "bfq": SG0}, {**rows[0], "test": "moved"}])))
    empty = bfq_study.sensitivity(bfq_study.sensitivity_effects(pd.DataFrame(rows)))
    assert empty.empty and len(moved) == 1
    assert list(empty.columns) == list(moved.columns)
    empty.to_csv(tmp_path / "table.csv", index=False)
    assert list(pd.read_csv(tmp_path / "table.csv").columns) == list(moved.columns)


def test_two_settings_measured_equally_often_take_the_campaigns_baseline() -> None:
    """The bfq campaign measures each isolation check once under strict_guarantees 0 and once
    under 1: a tie the effects alone would settle by name (0 first); the campaign's tests,
    C24's four settings among them, name the default."""
    effects = pd.DataFrame([
        {"claim": "C17", "check": 1, "test": "split", "part": "container",
         "device_profile": "hdd", "bfq": setting, "effect": effect, "low": effect / 1.05,
         "high": effect * 1.05, "se": 0.02, "df": 8.0, "outcome": "reproduced"}
        for setting, effect in ((SG0, 1.6), (BASE, 1.0))])
    assert bfq_study.baseline(effects["bfq"]) == SG0  # what the tie alone gives
    tests = pd.DataFrame({"bfq": [BASE, SG0, NO_IDLE, BASE, SG0], "device_profile": "hdd"})
    assert bfq_study.campaign_baseline(tests) == BASE
    table = bfq_study.sensitivity(effects, base=bfq_study.campaign_baseline(tests))
    assert table.loc[0, "change"] == "strict_guarantees 1 -> 0"
    assert table.loc[0, "ratio"] == pytest.approx(1.6)


def test_settings_are_named_by_their_change_baseline_first() -> None:
    rows = pd.DataFrame({"bfq": [NO_IDLE, BASE, SG0, BASE], "arm": "journal-accounted"})
    named = bfq_study.by_setting(rows)
    assert "bfq" not in named.columns  # so a figure's panels do not split by setting
    assert list(named["setting"].cat.categories) == [
        "baseline", "slice_idle_us 8000 -> 0", "strict_guarantees 1 -> 0"]
    assert list(named["setting"]) == ["slice_idle_us 8000 -> 0", "baseline",
                                      "strict_guarantees 1 -> 0", "baseline"]


def test_a_campaign_of_one_setting_gives_empty_tables() -> None:
    runs, experiments, tests = c24_tests([0.05, 0.08, 0.10, 0.06], {})
    assert bfq_study.starvation_rise(runs, experiments, tests).empty
    assert bfq_study.sensitivity(bfq_study.sensitivity_effects(tests)).empty


def test_each_device_profile_is_compared_with_its_own_baseline() -> None:
    runs, experiments, tests = c24_tests([0.05, 0.08, 0.10, 0.06],
                                         {SG0: [0.66, 0.70, 0.72, 0.69]})
    hdd = runs.assign(device_profile="hdd", run_id=runs["run_id"] + "-hdd")
    members = experiments.assign(run_id=experiments["run_id"] + "-hdd")
    both = pd.concat([runs, hdd], ignore_index=True)
    rise = bfq_study.starvation_rise(both, pd.concat([experiments, members]), tests)
    assert list(rise["device_profile"]) == ["native", "hdd"]
    assert rise["ratio"].iloc[0] == pytest.approx(rise["ratio"].iloc[1])


def test_the_isolation_figure_puts_the_baseline_first_in_a_panel_per_claim() -> None:
    from journalbench.report import plots

    effects = pd.DataFrame([
        {"claim": claim, "check": check, "device_profile": "hdd", "bfq": setting,
         "effect": effect, "low": effect / 1.1, "high": effect * 1.1}
        for claim, check, setting, effect in (
            ("C3", 1, SG0, 0.62), ("C3", 1, BASE, 0.68), ("C18", 1, BASE, 1.3),
            ("C18", 1, SG0, 1.1), ("C18", 2, BASE, 0.9), ("C18", 2, SG0, 0.95))])
    named = bfq_study.by_setting(effects, BASE)
    fig = plots.effects_by_setting(named, "setting", "t", "host h")
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in axes] == ["C3", "C18"]
    for ax in axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == [
            "baseline", "strict_guarantees 1 -> 0"]
    c18_lines = [line for line in axes[1].get_lines() if line.get_marker() == "o"]
    assert sorted(tuple(line.get_ydata()) for line in c18_lines) == [(0.9, 0.95), (1.3, 1.1)]
