"""What tells one testbed's runs from another's (a family, judge/claims/verdicts.py FAMILY, and
the testbed a validation pair measures, division.TESTBED): the iocost QoS procedure when it is
not the default (tidy's `iocost_qos`), and BFQ's max_budget where a run set it. Two procedures
of iocost in one campaign are two families, each with its own measured division; every shipped
run's family is what it was (the default procedure and max_budget 0 add nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from journalbench import vocabulary
from journalbench.formats import ParseError
from journalbench.judge.claims import division
from journalbench.judge.claims.verdicts import FAMILY, with_family
from journalbench.tidy import rows

REPO = Path(__file__).resolve().parent.parent
HOST_JSON = Path("data/raw/c/h/r/host.json")
BFQ_TUNABLES = {"strict_guarantees": "1", "slice_idle_us": "8000", "low_latency": "1",
                "max_budget": "0", "timeout_sync": "124"}


def iocost_host(procedure: str | None) -> dict:
    facts = {} if procedure is None else {"procedure": procedure}
    return {"io_control": {"name": "iocost", "iocost": facts}}


def test_the_procedure_column_names_only_a_procedure_other_than_the_default() -> None:
    assert rows.iocost_qos(iocost_host(vocabulary.IOCOST_INTERLEAVED), HOST_JSON) == \
        vocabulary.IOCOST_INTERLEAVED
    assert rows.iocost_qos(iocost_host(vocabulary.IOCOST_KNEE), HOST_JSON) == ""
    assert rows.iocost_qos(iocost_host(None), HOST_JSON) == ""  # thesis-v2's: none recorded
    assert rows.iocost_qos({"io_control": {"name": "bfq"}, "bfq": BFQ_TUNABLES}, HOST_JSON) == ""
    assert rows.iocost_qos({}, HOST_JSON) == ""  # a run made before io_control was recorded
    with pytest.raises(ParseError, match=r"host.json: 'io_control.iocost.procedure' is 7"):
        rows.iocost_qos(iocost_host(7), HOST_JSON)  # type: ignore[arg-type]


def test_bfqs_label_adds_max_budget_only_where_a_run_set_it() -> None:
    host = {"io_control": {"name": "bfq"}, "bfq": BFQ_TUNABLES}
    assert rows.bfq_label(host, HOST_JSON) == \
        "strict_guarantees=1 slice_idle_us=8000 low_latency=1"
    timed = {**host, "bfq": {**BFQ_TUNABLES, "low_latency": "0", "max_budget": "1000000"}}
    assert rows.bfq_label(timed, HOST_JSON) == \
        "strict_guarantees=1 slice_idle_us=8000 low_latency=0 max_budget=1000000"


def test_every_shipped_runs_family_is_what_it_was() -> None:
    """Read from every shipped run's host.json: no procedure other than the default (thesis-
    nested's iocost runs record the knee, thesis-v2's none) but weights-nested's, whose
    validation ran the interleaved procedure beside the knee; no max_budget but BFQ's
    auto-tuning outside weights-nested and mysql-point (their BFQ charged by time), so the new
    family column is "" where no campaign set one and the BFQ labels are the three tunables'
    (and max_budget where it was set)."""
    found = sorted((REPO / "data" / "raw").glob("*/*/*/host.json"))
    assert len(found) > 2000
    labels, timed, procedures, named = set(), set(), set(), set()
    for path in found:
        host = json.loads(path.read_text())
        later = path.parts[-4] == "weights-nested"
        (named if later else procedures).add(rows.iocost_qos(host, path))
        if not later:
            (timed if path.parts[-4] == "mysql-point" else labels).add(
                rows.bfq_label(host, path))
    assert procedures == {""}
    assert named == {"", vocabulary.IOCOST_INTERLEAVED}
    assert {tuple(word.split("=")[0] for word in label.split()) for label in labels} == {
        (), rows.BFQ_LABELLED}
    assert {tuple(word.split("=")[0] for word in label.split()) for label in timed} == {
        rows.BFQ_LABELLED, (*rows.BFQ_LABELLED, "max_budget")}
    assert FAMILY[:6] == ["campaign", "host", "device_profile", "cgroup_version", "bfq",
                          "io_control"] and FAMILY[6:] == ["iocost_qos"]


def pair(run: str, procedure: str, heavy_bytes: float) -> list[dict]:
    """A validation pair's two tenant rows: equal random 4 KiB readers at 80/20."""
    base = {"campaign": "w", "run_id": run, "n_tenants": 2, "preset": "randread-16k",
            "bs": "4k", "host": "nested", "device_profile": "hdd", "cgroup_version": 2,
            "bfq": "", "io_control": "iocost", "iocost_qos": procedure, "own_time_s": 1.0}
    return [{**base, "weight": 800, "cgroup_bytes": heavy_bytes},
            {**base, "weight": 200, "cgroup_bytes": 100.0 - heavy_bytes}]


def test_two_iocost_procedures_of_one_campaign_are_two_families_with_their_own_division(
) -> None:
    """The knee's 80/20 readers split 0.50 and the interleaved procedure's 0.79: each family
    takes its own pairs' division; a table without the column is the default's family."""
    table = pd.DataFrame(
        pair("k1", "", 50.0) + pair("k2", "", 49.0)
        + pair("i1", vocabulary.IOCOST_INTERLEAVED, 79.0)
        + pair("i2", vocabulary.IOCOST_INTERLEAVED, 80.0))
    experiments = pd.DataFrame({"campaign": "w", "run_id": ["k1", "k2", "i1", "i2"],
                                "claims": [[], [], [], []]})
    found = division.divisions(with_family(table), experiments, {})
    assert set(found) == {("w", "nested", "hdd", 2, "", "iocost", ""),
                          ("w", "nested", "hdd", 2, "", "iocost", vocabulary.IOCOST_INTERLEAVED)}
    knee = found[("w", "nested", "hdd", 2, "", "iocost", "")]
    other = found[("w", "nested", "hdd", 2, "", "iocost", vocabulary.IOCOST_INTERLEAVED)]
    assert knee.divides is False and knee.heavy.value == pytest.approx(0.495)
    assert other.divides is True and other.heavy.value == pytest.approx(0.795)
    families = with_family(table).groupby(FAMILY).size()
    assert len(families) == 2
    old = with_family(table.drop(columns="iocost_qos"))
    assert set(old["iocost_qos"]) == {""} and len(old.groupby(FAMILY).size()) == 1
    assert set(division.divisions(old, experiments, {})) == {
        ("w", "nested", "hdd", 2, "", "iocost", "")}


def test_a_familys_name_says_its_iocost_procedure_unless_the_default() -> None:
    """The ledger's family names: two iocost families of one campaign that differ only in
    their QoS procedure (weights-nested: the knee and the interleaved one) read apart; the
    default's name and BFQ's are as before (no procedure, or none in the table)."""
    from journalbench.report.ledger import family_name

    base = {"campaign": "weights-nested", "host": "nested", "device_profile": "hdd",
            "cgroup_version": 2, "io_control": "iocost", "bfq": ""}
    knee = family_name({**base, "iocost_qos": ""})
    interleaved = family_name({**base, "iocost_qos": vocabulary.IOCOST_INTERLEAVED})
    assert knee == "weights-nested / nested / hdd / cgroup v2 / iocost"
    assert interleaved == f"{knee} ({vocabulary.IOCOST_INTERLEAVED})"
    assert family_name({**base, "iocost_qos": float("nan")}) == knee  # a table without it
    bfq = {**base, "io_control": "bfq", "bfq": "strict_guarantees=1", "iocost_qos": ""}
    assert family_name(bfq).endswith("/ BFQ strict_guarantees=1")
