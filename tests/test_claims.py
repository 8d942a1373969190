"""Verdicts on constructed tables whose answer is known: each verdict class, the preconditions,
the tests' statistics against scipy/statsmodels, Holm over claims, starvation flags."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.weightstats import ttost_ind

from journalbench.judge import claims, starved, stats
from journalbench.judge.claims import checks, power, preconditions, registry
from journalbench.judge.claims.verdicts import (
    CONTRADICTED,
    DIFFERS,
    INCONCLUSIVE,
    LIKE,
    MIXED,
    PARTIAL,
    REPRODUCED,
    UNTESTABLE,
)
from journalbench.vocabulary import ON_DEMAND_IMAGE, PARTITION

COLUMNS = ["campaign", "host", "hostname", "run_id", "arm", "tenant", "preset", "workload",
           "beside", "bs", "n_tenants", "device_profile", "device_fsync_lat_ms",
           "throughput_mb_s", "fsync_lat_mean_ms", "fsync_per_s", "achieved_share",
           "shared_jbd2_share", "target_share", "virt_accel", "cpu_bound", "ref_high_fsync_ms",
           "ref_high_fsync_per_s", "tool_runtime_s", "tool", "ops_s", "db_fsyncs_per_s", "bfq",
           "vcpu_busy_mean", "io_control", "writeback_attributed", "cgroup_version", "kernel",
           "container_volume"]


class Plan:
    """Constructed runs of campaign "t" and the experiments table saying which claims each
    run tests."""

    def __init__(self, device_fsync_ms: float = 0.1) -> None:
        self.rows: list[dict] = []
        self.members: list[dict] = []
        self.device_fsync_ms = device_fsync_ms  # 5 ms or more: a rotating disk's class

    def run(self, claims_: str, arm: str, tenants: list[dict], **common: object) -> str:
        run = f"{arm}-{len(self.members):04d}"
        for tenant in tenants:
            self.rows.append({"campaign": "t", "host": "h", "hostname": "box", "run_id": run,
                              "arm": arm, "n_tenants": len(tenants), "bs": "64k",
                              "device_profile": "native",
                              "device_fsync_lat_ms": self.device_fsync_ms,
                              "tool_runtime_s": 10.0, **common, **tenant})
        self.members.append({"campaign": "t", "run_id": run, "experiment": claims_,
                             "claims": claims_, "condition": None, "arm": arm,
                             "repetition": 1})
        return run

    def victim_runs(self, claims_: str, arm: str, preset: str, beside: str, column: str,
                    values: list[float], **common: object) -> None:
        for value in values:
            self.run(claims_, arm, [{"tenant": "victim", "preset": preset, "workload": preset,
                                     "beside": beside, "target_share": 0.7, column: value}],
                     **common)

    def regime(self, fsync_ms: float, per_s: float) -> None:
        """High-fsync-alone runs: the device's journal regime."""
        self.victim_runs("C8", "shared-journal", "high-fsync", "alone", "fsync_lat_mean_ms",
                         [fsync_ms] * 3, fsync_per_s=per_s, throughput_mb_s=100.0)

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        runs = pd.DataFrame(self.rows).reindex(columns=COLUMNS)
        samples = pd.DataFrame(columns=["campaign", "host", "run_id", "tenant", "kind", "dt",
                                        "t", "bytes"])
        return runs, samples, pd.DataFrame(self.members)

    def verdicts(self) -> pd.DataFrame:
        table, _, _ = claims.ledger(*self.tables())
        return table.set_index("claim")


def c10(plan: Plan, no: list[float], high: list[float], jbd2_no: float = 0.01,
        jbd2_high: float = 0.03) -> None:
    """Low-fsync victims beside a no- and a high-fsync neighbour (shares, jbd2 shares)."""
    for beside, shares, jbd2 in (("no-fsync", no, jbd2_no), ("high-fsync", high, jbd2_high)):
        for i, value in enumerate(shares):
            plan.run("C10", "shared-journal", [{"tenant": "victim", "preset": "low-fsync",
                                                "workload": "low-fsync", "beside": beside,
                                                "target_share": 0.7, "achieved_share": value,
                                                "shared_jbd2_share": jbd2 * (1 + i / 100)}])


JOURNAL_BOUND = (20.0, 12.0)  # 20 ms x 12 fsync/s: 24% of the time in fsync (the thesis's)


def test_clear_effects_are_reproduced() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    verdict = plan.verdicts().loc["C10"]
    assert verdict["verdict"] == REPRODUCED, verdict["why"]


OPPOSITE = ([0.40, 0.42, 0.39, 0.41, 0.40], [0.70, 0.69, 0.71, 0.70, 0.72])


def test_a_significant_opposite_is_contradicted_where_the_testbed_matches() -> None:
    # single tenants (no weights at stake) on a device of a rotating disk's class: every
    # factor C10's checks depend on matches the thesis's testbed
    plan = Plan(device_fsync_ms=20.0)
    plan.regime(*JOURNAL_BOUND)
    c10(plan, *OPPOSITE, jbd2_no=0.03, jbd2_high=0.01)
    verdict = plan.verdicts().loc["C10"]
    assert verdict["verdict"] == CONTRADICTED and "the other way" in verdict["why"]
    assert verdict["testbed"] == LIKE and verdict["differs"] == ""


def test_an_opposite_on_a_testbed_that_differs_is_contradicted_there_naming_the_factor() -> None:
    plan = Plan()  # the fast disk (fsync 0.1 ms) is no rotating disk
    plan.regime(*JOURNAL_BOUND)
    c10(plan, *OPPOSITE, jbd2_no=0.03, jbd2_high=0.01)
    table, checks_, _ = claims.ledger(*plan.tables())
    verdict = table.set_index("claim").loc["C10"]
    assert verdict["verdict"] == CONTRADICTED, verdict["why"]
    assert verdict["testbed"] == DIFFERS and verdict["factors"] == "device"
    parts = checks_[checks_["claim"] == "C10"]
    assert (parts["outcome"] == CONTRADICTED).all()
    assert all(d.startswith("device class: here the host's native disk") for d in parts["differs"])


def test_a_reproduced_and_a_contradicted_part_on_one_differing_testbed_both_carry_it() -> None:
    """The symmetry: a part for the thesis and a part against it, on the same fast disk,
    each names the device; so does the claim's verdict, whichever way it goes."""
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, *OPPOSITE)  # the shares go the other way, jbd2's share rises as claimed
    table, checks_, _ = claims.ledger(*plan.tables())
    parts = checks_[checks_["claim"] == "C10"].set_index("outcome")
    assert set(parts.index) == {REPRODUCED, CONTRADICTED}
    assert (parts["differs_short"] == "device").all()
    verdict = table.set_index("claim").loc["C10"]
    assert verdict["verdict"] == MIXED and verdict["factors"] == "device"
    reproduced = Plan()
    reproduced.regime(*JOURNAL_BOUND)
    c10(reproduced, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    verdict = reproduced.verdicts().loc["C10"]
    assert verdict["verdict"] == REPRODUCED and verdict["testbed"] == DIFFERS
    assert verdict["factors"] == "device"


def test_parts_that_disagree_make_a_claim_mixed_with_their_counts() -> None:
    plan = Plan(device_fsync_ms=20.0)
    plan.regime(*JOURNAL_BOUND)
    c10(plan, *OPPOSITE)  # the shares go the other way, jbd2's share rises as claimed
    table, checks_, _ = claims.ledger(*plan.tables())
    verdict = table.set_index("claim").loc["C10"]
    assert verdict["verdict"] == MIXED and verdict["parts"] == "1 reproduced, 1 contradicted"
    outcome = checks_[checks_["claim"] == "C10"].set_index("column")["outcome"]
    assert outcome.to_dict() == {"achieved_share": CONTRADICTED,
                                 "shared_jbd2_share": REPRODUCED}


def test_noise_is_inconclusive_with_the_detectable_effect() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.40, 0.60, 0.50, 0.65], [0.55, 0.68, 0.45, 0.62, 0.50])
    verdict = plan.verdicts().loc["C10"]
    assert verdict["verdict"] == INCONCLUSIVE
    assert "smallest detectable x" in verdict["why"]


def test_a_device_outside_the_journal_regime_is_not_testable() -> None:
    plan = Plan()
    plan.regime(0.05, 100.0)  # 0.5% of the writer's time in fsync
    c10(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    verdict = plan.verdicts().loc["C10"]
    assert verdict["verdict"] == UNTESTABLE and "below 10%" in verdict["why"]


def test_an_unknown_regime_is_not_testable_and_the_calibration_counts() -> None:
    plan = Plan()
    c10(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    assert plan.verdicts().loc["C10", "verdict"] == UNTESTABLE
    for row in plan.rows:  # the device profile's calibration: 19.5 ms at 15.4 fsync/s
        row.update(ref_high_fsync_ms=19.5, ref_high_fsync_per_s=15.4)
    assert plan.verdicts().loc["C10", "verdict"] == REPRODUCED


def equivalence_runs(plan: Plan, beside_no: list[float], beside_other: list[float]) -> None:
    plan.victim_runs("C18", "journal-accounted", "high-fsync", "no-fsync", "throughput_mb_s",
                     beside_no)
    for beside in ("low-fsync", "high-fsync"):
        plan.victim_runs("C18", "journal-accounted", "high-fsync", beside, "throughput_mb_s",
                         beside_other)


def test_an_interval_entirely_outside_the_margin_is_contradicted_and_ploop_can_match() -> None:
    plan = Plan(device_fsync_ms=20.0)
    plan.regime(*JOURNAL_BOUND)
    equivalence_runs(plan, [30, 35, 28, 33, 31], [220, 230, 215, 228, 240])
    for row in plan.rows:  # our per-container volumes: partitions, blocks fixed in advance
        row["container_volume"] = PARTITION
    verdict = plan.verdicts().loc["C18"]
    assert verdict["verdict"] == CONTRADICTED and verdict["differs"] == "per-container volume"
    assert "entirely outside its margin" in verdict["why"] and "90% interval" in verdict["why"]
    # volumes allocated on demand, as the thesis's Ploop: a testbed like the thesis's
    for row in plan.rows:
        row["container_volume"] = ON_DEMAND_IMAGE
    verdict = plan.verdicts().loc["C18"]
    assert verdict["verdict"] == CONTRADICTED and verdict["testbed"] == LIKE


def test_a_stable_victim_is_only_partially_measured_without_the_vm() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    equivalence_runs(plan, [100, 101, 99, 100, 102], [100, 99, 101, 100, 98])
    verdict = plan.verdicts().loc["C18"]
    assert verdict["verdict"] == PARTIAL and "no vm runs" in verdict["why"]


def split_runs(plan: Plan, arm: str, shares: list[float], **common: object) -> None:
    for share in shares:
        plan.run("C3", arm, [
            {"tenant": "victim", "preset": "no-fsync", "workload": "no-fsync",
             "beside": "no-fsync", "target_share": 0.7, "achieved_share": share},
            {"tenant": "neighbour", "preset": "no-fsync", "workload": "no-fsync",
             "beside": "no-fsync", "target_share": 0.3, "achieved_share": 1 - share}],
            **common)


HELD = [0.70, 0.71, 0.69, 0.70, 0.72]


@pytest.mark.parametrize(("vm", "expected", "words"), [
    (None, PARTIAL, "no vm runs"),
    ({"virt_accel": "tcg", "cpu_bound": 0, "vcpu_busy_mean": 0.1}, REPRODUCED, "every check"),
    ({"virt_accel": "kvm", "cpu_bound": 1}, REPRODUCED, "every check"),
    ({"virt_accel": "tcg", "cpu_bound": 1, "vcpu_busy_mean": 0.9}, PARTIAL,
     "not testable here (VM under TCG"),
    # the TCG rule: a guest that never saturated but was busier than a quarter of the time
    ({"virt_accel": "tcg", "cpu_bound": 0, "vcpu_busy_mean": 0.5}, PARTIAL,
     "not clearly I/O-bound (vCPU busy up to 50%, above 25%)"),
    ({"virt_accel": "tcg", "cpu_bound": 0}, PARTIAL, "guests' vCPU busy not recorded"),
])
def test_the_vm_half_of_c3(vm: dict | None, expected: str, words: str) -> None:
    plan = Plan()
    for arm in ("shared-journal", "per-container-journal", "journal-accounted"):
        split_runs(plan, arm, HELD)
    if vm is not None:
        split_runs(plan, "vm", HELD, **vm)
    verdict = plan.verdicts().loc["C3"]
    assert verdict["verdict"] == expected and words in verdict["why"], verdict["why"]


def test_a_container_check_on_a_host_whose_cpu_saturated_is_not_testable() -> None:
    """A nested host's vCPUs run every tenant: a fio tenant there is flagged cpu_bound when
    one saturated for half the run (tidy's host_saturated); a fio tenant elsewhere never is."""
    plan = Plan()
    for arm in ("shared-journal", "per-container-journal", "journal-accounted"):
        split_runs(plan, arm, HELD, tool="fio", cpu_bound=None)
    assert plan.verdicts().loc["C3", "verdict"] == PARTIAL  # no vm runs: the rest reproduced
    for row in plan.rows[:2]:
        row["cpu_bound"] = 1
    verdict = plan.verdicts().loc["C3"]
    assert "1 of 5 runs on a host whose CPU saturated" in verdict["why"], verdict["why"]


def test_a_saturated_host_flags_its_tenants_and_a_host_that_records_none_flags_nothing() -> None:
    from journalbench.tidy.rows import cpu_bound, host_saturated

    def host(*seconds: int) -> dict:
        return {"cpu_during_run": {"seconds": 20, "cpus": {
            f"cpu{i}": {"seconds_saturated": s} for i, s in enumerate(seconds)}}}

    assert host_saturated({}) is None
    assert host_saturated(host(0, 9)) == 0 and host_saturated(host(10, 0)) == 1
    fio = {"cpu_bound": None, "client_cpu_share": None, "server_cpu_share": None}
    assert cpu_bound(fio) is None and cpu_bound(fio, 0) == 0 and cpu_bound(fio, 1) == 1


def base_alone(plan: Plan, arm: str, value: float, **common: object) -> None:
    for workload, bs in (("randread-16k", "16k"), ("randwrite-16k", "16k"),
                         ("seqread-64k", "64k"), ("seqwrite-64k", "64k")):
        for i in range(4):
            plan.run("C1", arm, [{"tenant": "victim", "preset": workload,
                                  "workload": workload, "beside": "alone", "bs": bs,
                                  "target_share": 1.0,
                                  "throughput_mb_s": value * (1 + i / 50)}], **common)


def test_a_cpu_bound_tcg_vm_makes_c1_not_testable_and_kvm_tests_it() -> None:
    plan = Plan()
    base_alone(plan, "shared-journal", 200.0)
    base_alone(plan, "vm", 50.0, virt_accel="tcg", cpu_bound=1, vcpu_busy_mean=0.97)
    verdict = plan.verdicts().loc["C1"]
    assert verdict["verdict"] == UNTESTABLE and "VM under TCG" in verdict["why"]
    assert "busy up to 97%" in verdict["why"]
    for row in plan.rows:
        if row["arm"] == "vm":
            row["virt_accel"] = "kvm"
    assert plan.verdicts().loc["C1", "verdict"] == REPRODUCED


def test_claims_without_runs_are_partially_measured_saying_what_is_missing() -> None:
    plan = Plan()
    c10(plan, HELD, HELD)
    table = plan.verdicts()
    assert list(table.index) == list(claims.CLAIMS)  # every claim of the catalogue, in order
    assert table.loc["C5", "verdict"] == PARTIAL and "vm runs of MariaDB" in table.loc["C5", "why"]
    assert table.loc["C22", "verdict"] == PARTIAL and "Redis runs" in table.loc["C22", "why"]
    assert table.loc["C8", "verdict"] == PARTIAL and "nothing measured" in table.loc["C8", "why"]


def starvation_runs(plan: Plan, accounted: list[float], per: list[float]) -> None:
    for arm, shares in (("journal-accounted", accounted), ("per-container-journal", per)):
        plan.victim_runs("C24", arm, "high-fsync", "no-fsync", "achieved_share", shares)


@pytest.mark.parametrize(("accounted", "expected"), [
    ([0.05, 0.08, 0.10, 0.06], REPRODUCED),  # under a quarter of 0.7, and below per-container
    ([0.66, 0.70, 0.72, 0.69], CONTRADICTED),  # well above the starvation line
])
def test_c24_journal_accounting_starvation(accounted: list[float], expected: str) -> None:
    """No journal regime needed: a fast disk (no calibration, 0.1 ms fsync) tests it."""
    plan = Plan()
    starvation_runs(plan, accounted, [0.50, 0.55, 0.60, 0.52])
    verdict = plan.verdicts().loc["C24"]
    assert verdict["verdict"] == expected, verdict["why"]


@pytest.mark.parametrize("accounted", [[0.0, 0.08, 0.10, 0.06], [0.0, 0.0, 0.0, 0.0]])
def test_total_starvation_is_judged_not_left_untestable(accounted: list[float]) -> None:
    """A victim with no byte counted (share 0) has no log: C24 compares the shares as a
    difference (rule c24-shares), so starvation, total or not, is judged."""
    plan = Plan()
    starvation_runs(plan, accounted, [0.50, 0.55, 0.60, 0.52])
    table, checks_, _ = claims.ledger(*plan.tables())
    mine = checks_[checks_["claim"] == "C24"].set_index("kind")
    assert checks.RATIO not in mine.index  # the log-scale ratio ran until the rule
    assert mine.loc[checks.DIFFERENCE, "status"] == "measured"
    assert mine.loc[checks.DIFFERENCE, "outcome"] == REPRODUCED
    verdict = table.set_index("claim").loc["C24"]
    assert verdict["verdict"] == REPRODUCED, verdict["why"]


def test_two_bfq_settings_are_two_families_never_pooled() -> None:
    """Half the runs at each setting: each family is judged on its own half."""
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    assert plan.verdicts().loc["C10", "verdict"] == REPRODUCED
    for row in plan.rows:
        row["bfq"] = f"strict_guarantees={int(row['run_id'][-1]) % 2}"
    table, checks_, _ = claims.ledger(*plan.tables())
    assert sorted(table.loc[table["claim"] == "C10", "bfq"]) == [
        "strict_guarantees=0", "strict_guarantees=1"]
    used = {bfq: set(" ".join(group["runs"]).split())
            for bfq, group in checks_[checks_["claim"] == "C10"].groupby("bfq")}
    setting = {row["run_id"]: row["bfq"] for row in plan.rows}
    assert len(used["strict_guarantees=0"] | used["strict_guarantees=1"]) == 10
    assert all(setting[run] == bfq for bfq, runs in used.items() for run in runs)


def test_holm_runs_over_claims_not_checks() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    for arm in ("shared-journal", "per-container-journal", "journal-accounted"):
        split_runs(plan, arm, HELD)
    table = plan.verdicts()
    tested = table.dropna(subset=["p_for"])
    assert set(tested.index) == {"C3", "C10"}  # 5 checks, 2 claims: a family of 2
    expected = stats.holm(tested["p_for"])[1]
    assert tested["p_for_holm"].tolist() == pytest.approx(expected.tolist())
    # the claim's p is its weakest check's (intersection-union)
    _, checks_, _ = claims.ledger(*plan.tables())
    c10_checks = checks_[checks_["claim"] == "C10"]
    assert table.loc["C10", "p_for"] == pytest.approx(c10_checks["p_for"].max())


def values(*arrays: list[float]) -> list[np.ndarray]:
    return [np.array(a, dtype=float) for a in arrays]


A, B = values([120, 131, 118, 125, 140], [100, 97, 110, 104, 99])


def test_one_sided_p_both_ways_come_from_one_welch_statistic() -> None:
    check = checks.Check("C0", "x", checks.RATIO, pd.DataFrame(), A, B)
    result = checks.evaluate(check)
    reference = sps.ttest_ind(np.log(A), np.log(B), equal_var=False, alternative="greater")
    assert result.p_for == pytest.approx(reference.pvalue)
    assert result.p_for + result.p_against == pytest.approx(1.0)
    check.direction = -1
    flipped = checks.evaluate(check)
    assert (flipped.p_for, flipped.p_against) == pytest.approx((result.p_against, result.p_for))


def test_paired_is_a_t_on_per_run_log_ratios() -> None:
    check = checks.Check("C0", "x", checks.PAIRED, pd.DataFrame(), A, B)
    reference = sps.ttest_rel(np.log(A), np.log(B), alternative="greater")
    assert checks.evaluate(check).p_for == pytest.approx(reference.pvalue)


def test_equivalence_p_is_statsmodels_tost_and_contradiction_its_mirror() -> None:
    check = checks.equivalent("C0", "x", pd.DataFrame({"v": A}), pd.DataFrame({"v": B}), "v")
    result = checks.evaluate(check)
    tost = ttost_ind(np.log(A), np.log(B), -np.log(1.2), np.log(1.2), usevar="unequal")[0]
    assert result.p_for == pytest.approx(tost)
    far = checks.equivalent("C0", "x", pd.DataFrame({"v": A * 7}), pd.DataFrame({"v": B}), "v")
    outside = checks.evaluate(far)
    assert outside.p_against < 0.001 and outside.tost_low > 1.2


def test_trend_is_the_least_squares_slope() -> None:
    levels = np.repeat([0.0, 1.0, 2.0], 4)
    y = np.exp(np.array([0, 0.1, -0.1, 0.05, 0.3, 0.2, 0.4, 0.35, 0.6, 0.7, 0.5, 0.65]))
    check = checks.Check("C0", "x", checks.TREND, pd.DataFrame(), y, levels=levels)
    result = checks.evaluate(check)
    fit = sps.linregress(levels, np.log(y), alternative="greater")
    assert np.log(result.effect) == pytest.approx(fit.slope)
    assert result.p_for == pytest.approx(fit.pvalue)


def test_detectable_effect_is_where_power_reaches_80_percent() -> None:
    from statsmodels.stats.power import TTestIndPower

    t = stats.welch_t(np.log(A), np.log(B))
    effect = stats.detectable("two-sample", t, 0.05, n_a=5)
    achieved = TTestIndPower().power(effect / t.sd, nobs1=5, ratio=1.0, alpha=0.05,
                                     alternative="larger")
    assert achieved == pytest.approx(0.8, abs=1e-3)
    # and a design needing more runs for a smaller effect
    assert stats.runs_needed("two-sample", effect / 2, t.sd, 0.05) > 5
    assert stats.runs_needed("two-sample", effect, t.sd, 0.05) == 5


def test_power_plan_lists_each_measured_check() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.40, 0.60, 0.50, 0.65], [0.55, 0.68, 0.45, 0.62, 0.50])
    table, checks_, _ = claims.ledger(*plan.tables())
    needed = power.plan(table, checks_)
    assert set(needed["claim"]) == {"C10"} and len(needed) == 2
    by_test = needed.set_index("test")["runs_needed"]
    noisy = by_test[by_test.index.str.contains("low-fsync 70% tenant's share")].iloc[0]
    steady = by_test[by_test.index.str.contains("jbd2")].iloc[0]  # 1% spread, thesis x2.8
    assert noisy > 5 and steady < 5


def test_power_plans_pilots_together_as_one_family() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.40, 0.60, 0.50, 0.65], [0.55, 0.68, 0.45, 0.62, 0.50])
    table, checks_, _ = claims.ledger(*plan.tables())
    # a second pilot measuring another claim with the same spread
    other = (table.assign(campaign="b", claim="C11"), checks_.assign(campaign="b", claim="C11"))
    apart = power.plan(*other)
    joined = power.plan(*power.together([(table, checks_), other], "a+b"))
    assert set(joined["campaign"]) == {"a+b"} and len(joined) == 2 * len(apart)
    assert (apart["alpha"] == checks.ALPHA).all() and (joined["alpha"] == checks.ALPHA / 2).all()
    mine = joined[joined["claim"] == "C11"].set_index("test")["runs_needed"]
    assert (mine >= apart.set_index("test")["runs_needed"]).all()


def test_starvation_flags_a_zero_second_while_the_tool_runs() -> None:
    runs = pd.DataFrame([
        {"campaign": "t", "host": "h", "run_id": "r", "tenant": name, "arm": "a",
         "target_share": share, "achieved_share": got, "tool_runtime_s": 3.0, "n_tenants": 2}
        for name, share, got in (("victim", 0.7, 0.5), ("neighbour", 0.3, 0.5))])
    samples = pd.DataFrame([
        {"campaign": "t", "host": "h", "run_id": "r", "tenant": tenant, "kind": "tenant",
         "t": t, "dt": dt, "bytes": b}
        for tenant, series in (("victim", [(1, 1, 5), (2, 1, 0), (3, 1, 5)]),
                               ("neighbour", [(1, 1, 5), (2, 1, 5), (3, 1, 5), (3.3, 0.3, 0)]))
        for t, dt, b in series])
    flags = starved.starvation(runs, samples).set_index("tenant")
    assert flags.loc["victim", "zero_seconds"] == 1 and flags.loc["victim", "starved"]
    assert not flags.loc["neighbour", "starved"]  # its zero is after the tool stopped
    runs.loc[runs["tenant"] == "neighbour", "achieved_share"] = 0.05  # < 0.3 / 4
    assert starved.starvation(runs, samples).set_index("tenant").loc["neighbour", "starved"]


def test_every_registered_claim_is_in_the_catalog_and_preconditions_are_described() -> None:
    assert set(registry.BUILDERS) | set(registry.PENDING) <= set(claims.CLAIMS)
    assert set(preconditions.DESCRIPTIONS) == {preconditions.VM_CPU,
                                               preconditions.JOURNAL_REGIME,
                                               preconditions.DB_CPU}


def test_scope_reads_each_factor_of_this_testbed_from_the_runs() -> None:
    from journalbench.judge.claims import division, scope
    from journalbench.judge.claims.catalog import CLAIMS

    rows = pd.DataFrame([{"arm": "shared-journal", "n_tenants": 2, "preset": "high-fsync",
                          "beside": "buffered-no-fsync", "io_control": "bfq",
                          "writeback_attributed": 0, "cgroup_version": 1,
                          "device_profile": "hdd", "device_fsync_lat_ms": 22.0}])

    def names(frame: pd.DataFrame) -> list[str]:
        return [f.name for f in scope.differs(CLAIMS["C10"].scope, frame)]

    assert names(rows) == [scope.WEIGHTS, scope.WRITEBACK]
    v2 = rows.assign(io_control="iocost", writeback_attributed=1, cgroup_version=2)
    # the weights are like the thesis's only where they were measured to divide device time
    # (rule weights-measured): a controller's name no longer decides
    assert names(v2) == [scope.WEIGHTS]
    assert [f.name for f in scope.differs(CLAIMS["C10"].scope, v2, named=True)] == []
    timed = scope.Testbed(v2)
    even, lopsided = division.Mean(0.5, 0.45, 0.55, 5), division.Mean(0.9, 0.85, 0.95, 5)
    timed.division = division.Division(
        "iocost", "a validation campaign", division.Mean(0.78, 0.75, 0.81, 5), 0.8,
        (division.Sizes("random", "128 KiB against 8 KiB", even, lopsided),
         division.Sizes("sequential", "128 KiB against 8 KiB", even, lopsided)))
    assert [f.name for f in scope.differs(CLAIMS["C10"].scope, timed)] == []
    random_only = scope.Testbed(v2)  # time on one access pattern is not time on every one
    random_only.division = division.Division(
        "iocost", "a validation campaign", division.Mean(0.78, 0.75, 0.81, 5), 0.8,
        (division.Sizes("random", "128 KiB against 8 KiB", even, lopsided),))
    assert [f.name for f in scope.differs(CLAIMS["C10"].scope, random_only)] == [scope.WEIGHTS]
    # a buffered writer that fsyncs writes its pages back itself: no flusher to attribute
    assert names(rows.assign(beside="buffered-low-fsync")) == [scope.WEIGHTS]
    assert names(rows.assign(n_tenants=1, device_profile="native",
                             device_fsync_lat_ms=0.2)) == [scope.DEVICE, scope.WRITEBACK]
    # the Chapter 5 arms ran on Ploop volumes, allocated on demand: ours are partitions
    accounted = rows.assign(arm="journal-accounted", container_volume=PARTITION)
    assert scope.PLATFORM in names(accounted)
    assert scope.PLATFORM not in names(accounted.assign(container_volume=ON_DEMAND_IMAGE))
    vm = rows.assign(arm="vm", beside="alone", n_tenants=1)
    assert names(vm.assign(virt_accel="tcg")) == [scope.VIRTUALIZATION]
    assert names(vm.assign(virt_accel="kvm")) == []
    why = scope.described(scope.FACTORS[scope.WRITEBACK], rows)
    assert why.startswith("cgroup version and write-back attribution: here cgroup v1: "
                          "write-back charged to no tenant")


def test_a_verdict_a_rule_changed_lists_old_and_new() -> None:
    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, *OPPOSITE, jbd2_no=0.03, jbd2_high=0.01)
    table = plan.verdicts()
    assert table.loc["C10", "changes"] == (
        "scope: contradicted -> not reproduced here; symmetric: not reproduced here -> "
        "contradicted (testbed differs in device)")
    assert table.loc["C1", "changes"] == ""


def c10_pair(plan: Plan, no: list[float], high: list[float], io_control: str,
             profile: str = "hdd") -> None:
    """C10's victims as one tenant of a competing pair (the weights at stake) under an I/O
    control on a device profile: a contrast's families."""
    fsync = {"hdd": 20.0, "native": 0.2}[profile]
    for beside, shares, jbd2 in (("no-fsync", no, 0.01), ("high-fsync", high, 0.03)):
        for i, value in enumerate(shares):
            plan.run("C10", "shared-journal", [{
                "tenant": "victim", "preset": "low-fsync", "workload": "low-fsync",
                "beside": beside, "target_share": 0.7, "achieved_share": value,
                "shared_jbd2_share": jbd2 * (1 + i / 100), "n_tenants": 2,
                "io_control": io_control, "bfq": "" if io_control == "iocost" else "s=1",
                "device_profile": profile, "device_fsync_lat_ms": fsync}])


def on_both_devices(plan: Plan) -> None:
    """Each profile's journal regime from its own high-fsync writers alone (one at the
    thesis's share of its time in fsync: the regime precondition holds on both)."""
    for profile, fsync in (("hdd", 20.0), ("native", 0.2)):
        plan.victim_runs("C8", "shared-journal", "high-fsync", "alone", "fsync_lat_mean_ms",
                         [fsync] * 3, fsync_per_s=240.0 / fsync, throughput_mb_s=100.0,
                         device_profile=profile, device_fsync_lat_ms=fsync)


def measured(plan: Plan) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The plan judged, then what its contrasts measured applied (contrasts.py)."""
    from journalbench.judge.claims import contrasts

    for row in plan.rows:  # the journal regime's runs: BFQ's family
        row.setdefault("io_control", "bfq")
        row.setdefault("bfq", "s=1")
    judged = claims.ledger(*plan.tables())
    (_, (table, checks_, _, evidence)), = contrasts.measured([("t", judged)])
    return table.set_index(["device_profile", "io_control", "claim"]), checks_, evidence


def test_a_factor_shown_equivalent_across_a_contrast_is_dropped() -> None:
    """The emulated HDD (a rotating disk's class, like the thesis's) and the fast disk give
    C10's checks the same effects: the device factor, under which the fast disk differs, is
    dropped for them, and the measured rule lists the verdict's new testbed."""
    plan = Plan(device_fsync_ms=20.0)
    on_both_devices(plan)
    shares = ([0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    c10_pair(plan, *shares, io_control="bfq", profile="hdd")
    c10_pair(plan, *shares, io_control="bfq", profile="native")
    table, checks_, evidence = measured(plan)
    mine = evidence[evidence["claim"] == "C10"]
    assert set(mine["outcome"]) == {"equivalent"} and mine["decides"].all()
    fast = table.loc[("native", "bfq", "C10")]
    assert fast["verdict"] == REPRODUCED and fast["testbed"] == DIFFERS, fast["factors"]
    assert fast["factors"] == "weights"  # BFQ's division not measured: it differs
    assert "measured: reproduced (testbed differs in device, weights) -> reproduced (testbed " \
           "differs in weights)" in fast["changes"]
    parts = checks_[(checks_["claim"] == "C10") & (checks_["device_profile"] == "native")]
    assert (parts["dropped"] == "device").all()


def test_a_factor_shown_to_matter_across_a_contrast_is_kept() -> None:
    """On the fast disk the share no longer falls beside the high-fsync neighbour: the change
    of effect is significant, so its verdict keeps the device factor, by measurement."""
    plan = Plan(device_fsync_ms=20.0)
    on_both_devices(plan)
    c10_pair(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40], "bfq")
    c10_pair(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.69, 0.71, 0.70, 0.72, 0.70], "bfq",
             profile="native")
    table, checks_, evidence = measured(plan)
    assert "depends" in set(evidence.loc[evidence["claim"] == "C10", "outcome"])
    fast = table.loc[("native", "bfq", "C10")]
    assert "device" in fast["factors"]
    assert "measured:" not in fast["changes"]
    parts = checks_[(checks_["claim"] == "C10") & (checks_["device_profile"] == "native")]
    assert (parts["dropped"] == "").all()


def test_a_change_both_significant_and_within_its_margin_depends() -> None:
    """One decision per check (rule contrast-welch): a change that is significant is never
    dropped as equivalent, however narrow its interval inside the margin."""
    from journalbench.judge.claims import contrasts

    row = pd.Series({"excluded": "", "p_change_holm": 0.001, "p_equivalent_holm": 0.001,
                     "claim_p_change_holm": 0.001, "claim_p_equivalent_holm": 0.001})
    assert contrasts.outcome(row, contrasts.FINAL) == "depends"
    assert contrasts.outcome(row, contrasts.NORMAL) == "equivalent"  # as before 2026-11-29


def test_a_margin_wider_than_the_checks_interest_is_refused() -> None:
    from journalbench.judge.claims import contrasts

    assert contrasts.equivalence_p(0.0, 0.01, 0.1, interest=0.1, df=4) < 0.05
    with pytest.raises(ValueError, match="wider than the check's smallest effect of interest"):
        contrasts.equivalence_p(0.0, 0.01, 0.2, interest=0.1, df=4)


def test_families_that_differ_in_more_than_the_factor_are_no_contrast() -> None:
    """Two hosts (another kernel, another disk path) under BFQ and iocost: nothing measured."""
    from journalbench.judge.claims import contrasts

    plan = Plan(device_fsync_ms=20.0)
    plan.regime(*JOURNAL_BOUND)
    shares = ([0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    c10_pair(plan, *shares, io_control="bfq")
    c10_pair(plan, *shares, io_control="iocost")
    for row in plan.rows:
        if row.get("io_control") == "iocost":
            row.update(kernel="6.1.0", hostname="guest")
    judged = claims.ledger(*plan.tables())
    assert contrasts.contrasts(judged[0]) == []
    (_, tables), = contrasts.measured([("t", judged)])
    assert tables[3].empty


def test_every_claims_factor_has_a_stated_mechanism_and_the_docs_list_each() -> None:
    """Each (claim, factor) is tied by a mechanism of its factor; docs/claims.md states each
    mechanism's sentence as the code has it and maps each claim to its device and weights
    mechanisms; no factor can never match (the platform factor matches Ploop-like volumes)."""
    from pathlib import Path

    from journalbench.judge.claims import scope
    from journalbench.judge.claims.catalog import CLAIMS
    from journalbench.judge.claims.mechanisms import MECHANISMS

    docs = (Path(__file__).resolve().parent.parent / "docs" / "claims.md").read_text()
    for name, mechanism in MECHANISMS.items():
        assert f"| {name} | {scope.FACTORS[mechanism.factor].tag} | {mechanism.text} |" in docs
    rows = [line for line in docs.splitlines() if line.startswith("| C") and " | " in line
            and line.split(" | ")[1] in {m for m in MECHANISMS} | {"—"}]
    for claim, info in CLAIMS.items():
        for factor, name in info.mechanisms.items():
            assert MECHANISMS[name].factor == factor, (claim, factor, name)
        row = next(r for r in rows if claim in r.split(" | ")[0].replace(",", " ").split())
        device, weights = row.split(" | ")[1:3]
        assert device == info.mechanisms.get(scope.DEVICE, "—"), claim
        assert weights.split(" (")[0] == info.mechanisms.get(scope.WEIGHTS, "—"), claim
    bed = scope.Testbed(pd.DataFrame([{"arm": "per-container-journal",
                                       "container_volume": ON_DEMAND_IMAGE}]))
    assert all(f.matches(bed) or not f.applies(bed) or f.name != scope.PLATFORM
               for f in scope.FACTORS.values())
    assert scope.FACTORS[scope.PLATFORM].matches(bed)


def test_rule_changes_shortcuts_give_what_judging_under_each_rule_gives() -> None:
    """rule_changes judges again only under rules that change a statistic or a status: the
    symmetric rule renames, the qualifying rules re-qualify. Judging every rule's state in full
    lists the same changes."""
    from journalbench.judge.claims import rules
    from journalbench.judge.claims import verdicts as judging

    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, *OPPOSITE, jbd2_no=0.03, jbd2_high=0.01)
    equivalence_runs(plan, [30, 35, 28, 33, 31], [220, 230, 215, 228, 240])
    runs, samples, experiments = plan.tables()
    from journalbench.judge.claims import dbruns

    runs = dbruns.with_swing(runs.assign(io_control="bfq", bfq="unrecorded"), samples)
    regime = preconditions.journal_regime(runs)
    rows = judging.check_rows(runs, experiments, {}, regime)
    final, _ = judging.judge(rows, {}, regime, judging.ALL_RULES)
    listed = judging.rule_changes(rows, {}, regime, final)
    full: dict[str, list[str]] = {claim: [] for claim in final["claim"]}
    before, _ = judging.judge(rows, {}, regime, frozenset())
    active: frozenset[str] = frozenset()
    for rule in rules.NAMES:
        previous, active = active, active | {rule}
        after, _ = judging.judge(rows, {}, regime, active)
        for old, new in zip(before.itertuples(), after.itertuples(), strict=True):
            moved = ((old.verdict, old.testbed, old.factors)
                     != (new.verdict, new.testbed, new.factors)
                     if rule in rules.QUALIFYING else old.verdict != new.verdict)
            if moved:
                full[old.claim].append(f"{rule}: {judging.shown(old, previous)} -> "
                                       f"{judging.shown(new, active)}")
        before = after
    assert listed == ["; ".join(full[claim]) for claim in final["claim"]]
    assert any("symmetric:" in text for text in listed)


def test_a_check_on_settings_tuned_on_its_own_claim_is_not_testable_there() -> None:
    """thesis-v2's iocost QoS was chosen on C3's condition (rule tuned-on): C3's check on its
    iocost runs is no independent test; on its BFQ runs, and C4's on iocost, it stands."""
    def check(claim: str, campaign: str, control: str) -> checks.Check:
        rows = pd.DataFrame({"campaign": [campaign] * 2, "io_control": [control] * 2,
                             "run_id": ["r1", "r2"]})
        return checks.Check(claim, "x", checks.SHARE, rows, np.array([0.7, 0.69]))

    why = preconditions.tuned_on_unmet(check("C3", "thesis-v2", "iocost"))
    assert why.startswith("no independent test: iocost's QoS") and "C3's condition" in why
    assert preconditions.tuned_on_unmet(check("C3", "thesis-v2", "bfq")) == ""
    assert preconditions.tuned_on_unmet(check("C4", "thesis-v2", "iocost")) == ""
    assert preconditions.tuned_on_unmet(check("C3", "thesis-nested", "iocost")) == ""
