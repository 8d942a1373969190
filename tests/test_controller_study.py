"""The controller study (report/controller_study.py): on the shipped thesis-hdd checks (the
host testbed) and copies of them standing in for the nested host's three testbeds, a check
whose effect is unchanged does not depend on the factor, one whose effect moved by far more
than its interval does, on the scale of its kind; only the one-factor contrasts are tested.
Its own conditions' tables on small hand-made runs whose answer is known."""

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
def shipped() -> pd.DataFrame:
    """thesis-hdd's tests table (the host testbed, v1/bfq), as the notebooks read it."""
    from journalbench.judge import claims
    from journalbench.report import views

    runs, _, experiments = views.load(PROCESSED, REPO / "data" / "raw" / "thesis-hdd")
    return claims.tests_of(PROCESSED, runs, experiments)


def as_nested(tests: pd.DataFrame, version: int, io_control: str,
              moved: dict[str, float] | None = None) -> pd.DataFrame:
    """The same checks as a family of the study's campaign; `moved`: test -> how far its
    effect moves (a factor for a ratio, a difference for a share), interval too."""
    tests = tests.assign(campaign=study.STUDY, host="nested", cgroup_version=version,
                         io_control=io_control)
    for test, by in (moved or {}).items():
        mine = tests["test"] == test
        share = tests.loc[mine, "kind"].isin(SHARE_KINDS)
        for column in ("effect", "low", "high"):
            values = tests.loc[mine, column]
            tests.loc[mine, column] = np.where(share, values + by, values * by)
    return tests


def test_the_studied_claims_exist_and_the_testbeds_are_named_in_order() -> None:
    assert set(study.CLAIMS) <= set(CLAIMS)
    assert study.testbed_of(study.HOST_CAMPAIGN, 1, "bfq") == study.HOST_BED == study.TESTBEDS[0]
    assert study.testbed_of(study.STUDY, 2, "iocost") == "v2/iocost"
    assert study.testbed_of("thesis-v2", 2, "iocost") is None  # not a testbed of the study
    assert {c.first for c in study.CONTRASTS} | {c.other for c in study.CONTRASTS} == set(
        study.TESTBEDS)


def ledger_evidence(beds: list[pd.DataFrame]) -> pd.DataFrame:
    """The ledger's evidence (judge/claims/contrasts.py) over these testbeds' checks, as the
    pipeline computes it: the same machine and kernel for the nested host's three."""
    from journalbench.judge.claims import contrasts
    from journalbench.judge.claims.verdicts import FAMILY

    checks = pd.concat(beds, ignore_index=True)
    claims = checks[[*FAMILY, "claim"]].drop_duplicates().assign(
        hostnames=lambda t: np.where(t["campaign"] == study.STUDY, "nested", "vm"),
        kernels=lambda t: np.where(t["campaign"] == study.STUDY, "6.1", "6.18"))
    return contrasts.evidence(claims, checks)


def test_a_moved_effect_depends_an_unchanged_one_does_not(shipped) -> None:
    tests = shipped
    measured = tests[(tests["status"] == "measured") & tests["claim"].isin(study.CLAIMS)]
    ratio = measured[~measured["kind"].isin(SHARE_KINDS)].iloc[0]["test"]
    share = measured[measured["kind"].isin(SHARE_KINDS)].iloc[0]["test"]
    beds = [tests, as_nested(tests, 1, "bfq"), as_nested(tests, 2, "bfq"),
            as_nested(tests, 2, "iocost", moved={ratio: 2.0, share: 0.25})]
    effects = study.effects(pd.concat(beds))
    assert list(effects["testbed"].cat.categories) == list(study.TESTBEDS)
    evidence = ledger_evidence(beds)
    table = study.dependence(effects, evidence)
    assert list(table.columns) == study.COLUMNS
    version = table[table["factor"] == "cgroup version"]
    assert len(version) == len(measured) and not version["depends"].any()
    assert np.allclose(version.loc[version["scale"] == "ratio", "change"], 1.0)
    assert np.allclose(version.loc[version["scale"] == "difference", "change"], 0.0)
    moved = table[table["factor"] == "I/O controller"].set_index("test")
    assert moved.loc[ratio, "change"] == pytest.approx(2.0)
    assert moved.loc[ratio, "low"] < 2.0 < moved.loc[ratio, "high"]
    assert moved.loc[share, "scale"] == "difference"
    assert moved.loc[share, "change"] == pytest.approx(0.25)
    assert bool(moved.loc[ratio, "depends"]) and bool(moved.loc[share, "depends"])
    assert not moved.drop(index=[ratio, share])["depends"].any()
    host = table[~table["one_factor"]]  # shown, never decided: it varies more than one thing
    assert len(host) == len(measured)
    assert host["p_holm"].isna().all() and host["depends"].isna().all()
    assert (host["outcome"] == "not tested").all()
    assert (table.loc[table["one_factor"], "p_holm"] >= table.loc[table["one_factor"], "p"]).all()
    # one decision per check: the page's outcome and Holm p are the ledger's own
    for factor, ledger_factor in study.LEDGER_FACTOR.items():
        mine = table[table["factor"] == factor].set_index(["claim", "test"])
        theirs = evidence[evidence["factor"] == ledger_factor].set_index(["claim", "test"])
        assert (mine["outcome"] == theirs.loc[mine.index, "outcome"]).all()
        assert np.allclose(mine["p_holm"], theirs.loc[mine.index, "p_change_holm"])


def test_verdicts_change_with_the_nested_container_checks_only(shipped) -> None:
    """The host testbed's outcomes are shown, but `changes` compares the nested host's three
    testbeds: a different outcome on the host alone is no change of the factors."""
    tests = shipped
    claim = "C3"
    beds = [as_nested(tests, 1, "bfq"), as_nested(tests, 2, "bfq"),
            as_nested(tests, 2, "iocost")]
    host = tests.copy()
    first = host.index[(host["claim"] == claim) & (host["part"] == "container")][0]
    host.loc[first, "part_outcome"] = "inconclusive"
    table = study.verdicts(pd.concat([host, *beds])).set_index("claim")
    assert list(table.columns) == [*study.TESTBEDS, "changes"]
    assert not table["changes"].any()
    moved = beds[2].copy()
    moved.loc[first, "part_outcome"] = "inconclusive"
    table = study.verdicts(pd.concat([host, beds[0], beds[1], moved])).set_index("claim")
    assert table["changes"].sum() == 1 and bool(table.loc[claim, "changes"])


def test_nothing_measured_on_both_sides_gives_an_empty_table_with_its_columns() -> None:
    empty = pd.DataFrame(columns=["claim", "check", "test", "kind", "testbed", "effect", "low",
                                  "high"])
    assert list(study.dependence(empty, pd.DataFrame()).columns) == study.COLUMNS


def runs_of(rows: list[tuple]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tenant rows (experiment, testbed, arm, tenant, beside, preset, share, MB/s), one run
    per row pair of an experiment and repetition, and the experiments table naming them."""
    runs, experiments = [], []
    for experiment, bed, arm, tenant, beside, preset, share, mb_s, rep in rows:
        version, control = bed.split("/")
        run_id = f"{arm}-{experiment}-{bed}-{beside}-{rep}".replace("/", "-")
        runs.append({"campaign": study.STUDY, "host": "nested", "run_id": run_id,
                     "arm": arm, "tenant": tenant, "beside": beside, "preset": preset,
                     "achieved_share": share, "throughput_mb_s": mb_s,
                     "cgroup_version": int(version[1]), "io_control": control})
        suffix = f"v{version[1]}-{control}"
        experiments.append({"campaign": study.STUDY, "run_id": run_id,
                            "experiment": f"{experiment}-{suffix}"})
    return pd.DataFrame(runs), pd.DataFrame(experiments).drop_duplicates()


def test_the_journals_own_cgroup_is_compared_with_both_neighbouring_arms() -> None:
    rows = []
    for rep, noise in enumerate((-0.01, 0.0, 0.01)):
        for arm, share, experiment in (("per-container-journal", 0.60, "high-fsync-victim"),
                                       ("journal-accounted", 0.20, "high-fsync-victim"),
                                       ("journal-cgroup", 0.50, "journal-own-cgroup")):
            rows.append((experiment, "v2/iocost", arm, "victim", "no-fsync", "high-fsync",
                         share + noise, 1.0, rep))
            rows.append((experiment, "v2/iocost", arm, "neighbour", "no-fsync", "no-fsync",
                         1 - share - noise, 1.0, rep))
    runs, experiments = runs_of(rows)
    means, pairs = study.journal_own_cgroup(runs, experiments)
    assert set(means["arm"]) == {"per-container-journal", "journal-accounted", "journal-cgroup"}
    assert means.set_index("arm").loc["journal-cgroup", "effect"] == pytest.approx(0.50)
    pairs = pairs.set_index("contrast")
    assert pairs.loc["journal-cgroup minus journal-accounted", "effect"] == pytest.approx(0.30)
    assert pairs.loc["per-container minus journal-cgroup", "effect"] == pytest.approx(0.10)
    assert (pairs["p"] < 0.01).all()


def test_writeback_compares_buffered_with_direct_neighbours_and_v1_with_v2() -> None:
    rows = []
    for rep, noise in enumerate((0.98, 1.0, 1.02)):
        for bed, buffered in (("v1/bfq", 0.5), ("v2/bfq", 1.0)):  # v1: halved by write-back
            rows.append(("high-fsync-victim", bed, "shared-journal", "victim", "no-fsync",
                         "high-fsync", 0.7, 2.0 * noise, rep))
            rows.append(("writeback-high-fsync-victim", bed, "shared-journal", "victim",
                         "buffered-no-fsync", "high-fsync", 0.7, 2.0 * buffered * noise, rep))
    runs, experiments = runs_of(rows)
    effects, version = study.writeback(runs, experiments)
    effects = effects.set_index("testbed")
    assert effects.loc["v1/bfq", "effect"] == pytest.approx(0.5)
    assert effects.loc["v2/bfq", "effect"] == pytest.approx(1.0)
    assert version.iloc[0]["change"] == pytest.approx(2.0)
    assert version.iloc[0]["low"] > 1.0


def test_validation_gives_the_readers_share_and_what_the_pair_reads_against_one_alone() -> None:
    rows = []
    for rep, noise in enumerate((0.99, 1.0, 1.01)):
        rows.append(("iocost-validation-pair", "v2/iocost", "shared-journal", "victim",
                     "randread-16k", "randread-16k", 0.8 * noise, 0.8 * noise, rep))
        rows.append(("iocost-validation-pair", "v2/iocost", "shared-journal", "neighbour",
                     "randread-16k", "randread-16k", 1 - 0.8 * noise, 0.2, rep))
        rows.append(("iocost-validation-alone", "v2/iocost", "shared-journal", "victim",
                     "alone", "randread-16k", 1.0, 1.25 * noise, rep))
    runs, experiments = runs_of(rows)
    table = study.validation(runs, experiments).set_index("measure")
    assert table.iloc[0]["effect"] == pytest.approx(0.8, abs=0.01)
    assert table.iloc[1]["effect"] == pytest.approx(0.8, rel=0.02)  # 1.0 together / 1.25 alone


def test_the_answer_and_the_findings_come_from_the_tables() -> None:
    """The narrow table says each change as text with the ledger's decision; the sentences
    count what the dependence table says (nothing typed by hand), the host contrast shown,
    not tested."""
    rows = []
    for factor, first, other, one in ((c.factor, c.first, c.other, c.one_factor)
                                      for c in study.CONTRASTS):
        for check, (change, p, said) in enumerate(((2.0, 0.0001, "depends"),
                                                   (1.0, 0.9, "equivalent")), start=1):
            rows.append({"claim": "C8", "check": check, "test": f"t{check}", "kind": "ratio",
                         "factor": factor, "from": first, "to": other, "one_factor": one,
                         "effect_from": 1.0, "low_from": 0.9, "high_from": 1.1,
                         "effect_to": change, "low_to": change * 0.9, "high_to": change * 1.1,
                         "scale": "ratio", "change": change, "low": change * 0.85,
                         "high": change * 1.15, "p": p, "p_holm": min(1.0, 2 * p) if one
                         else np.nan, "outcome": said if one else "not tested"})
    table = pd.DataFrame(rows)
    one = table["one_factor"]
    answer = study.answer(table)
    assert list(answer.columns) == ["claim", "check", "factor", "change", "p_holm", "outcome"]
    assert answer.loc[0, "change"] == "x2 [1.7, 2.3]" and answer.loc[0, "outcome"] == "depends"
    assert set(answer.loc[~one.to_numpy(), "outcome"]) == {"not tested"}
    found = study.findings(table)
    assert found[0].startswith("**cgroup version** (v1/bfq -> v2/bfq; its direct-I/O checks), "
                               "the ledger's decision: 1 of 2 depend on it (C8), 1 equivalent, "
                               "0 inconclusive")
    assert "not one factor" in found[2] and "1 of 2 checks moved" in found[2]
