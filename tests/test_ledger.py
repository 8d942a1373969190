"""The claims ledger's blocks (journalbench/report/ledger.py), on constructed claims tables."""

from __future__ import annotations

import pandas as pd

from journalbench.judge.claims.rules import RULES
from journalbench.report import ledger


def test_the_ledger_lists_under_each_rule_the_verdicts_it_changed() -> None:
    """changes_blocks (report/ledger.py): the net change per claim, then under each rule every
    verdict it changed, old -> new, named by its family where the ledger has several; a rule
    that changed none says so."""
    base = {"host": "local", "device_profile": "hdd", "cgroup_version": 1, "bfq": "sg=1",
            "io_control": "bfq", "iocost_qos": "", "testbed": "", "factors": ""}
    claims = pd.DataFrame([
        {**base, "campaign": "a", "claim": "C5", "verdict": "not testable here",
         "changes": "tcg: mixed -> not testable here; vm-db-busy: not testable here -> mixed"},
        {**base, "campaign": "b", "claim": "C12", "verdict": "mixed",
         "changes": "scope: contradicted -> not reproduced here"},
        {**base, "campaign": "b", "claim": "C13", "verdict": "mixed", "changes": ""}])
    blocks = ledger.changes_blocks(claims)
    listed = {blocks[i][1].split(": ", 1)[1]: blocks[i + 2][1]
              for i, (kind, _) in enumerate(blocks) if kind == "h3"}
    assert set(listed) == {rule.name for rule in RULES}
    a, b = (f"{c} / local / hdd / cgroup v1 / BFQ sg=1" for c in "ab")
    assert listed["tcg"] == [f"{a}: C5: mixed -> not testable here"]
    assert listed["vm-db-busy"] == [f"{a}: C5: not testable here -> mixed"]
    assert listed["scope"] == [f"{b}: C12: contradicted -> not reproduced here"]
    assert listed["parts"] == "It changed no verdict."
    net = next(content for kind, content in blocks if kind == "table")
    assert net["changed by"].tolist() == ["tcg, vm-db-busy", "scope"]
