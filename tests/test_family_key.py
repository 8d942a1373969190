"""What tells one testbed's runs from another's (a family, judge/claims/verdicts.py FAMILY, and
the testbed a validation pair measures, division.TESTBED): the iocost QoS procedure when it is
not the default (tidy's `iocost_qos`), and BFQ's max_budget where a run set it. Two procedures
of iocost in one campaign are two families, each with its own measured division; every shipped
run's family is what it was (the default procedure and max_budget 0 add nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journalbench import vocabulary
from journalbench.formats import ParseError
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
    nested's iocost runs record the knee, thesis-v2's none) and no max_budget but BFQ's
    auto-tuning, so the new family column is "" and the BFQ labels are the three tunables'."""
    found = sorted((REPO / "data" / "raw").glob("*/*/*/host.json"))
    assert len(found) > 2000
    labels, procedures = set(), set()
    for path in found:
        host = json.loads(path.read_text())
        procedures.add(rows.iocost_qos(host, path))
        labels.add(rows.bfq_label(host, path))
    assert procedures == {""}
    assert {tuple(word.split("=")[0] for word in label.split()) for label in labels} == {
        (), rows.BFQ_LABELLED}

