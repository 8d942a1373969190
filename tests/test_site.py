"""The HTML report's pure helpers (journalbench/report/site.py); the report itself, built by
the pipeline and rendered in Chromium, is tested in tests/test_report.py."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from journalbench.report import site


def test_skipped_folders_of_every_campaign_beside(tmp_path: Path) -> None:
    for campaign, rows in (("a", []), ("b", [("data/raw/b/h/r1", "incomplete", "no MANIFEST")])):
        (tmp_path / campaign).mkdir()
        pd.DataFrame(rows, columns=["folder", "status", "reason"]).to_parquet(
            tmp_path / campaign / "skipped.parquet")
    skipped = site.skipped_folders([tmp_path / "a"])
    assert skipped.to_dict("records") == [{"folder": "data/raw/b/h/r1", "status": "incomplete",
                                           "reason": "no MANIFEST"}]


def test_pages_name_no_run_the_ledger_lists() -> None:
    why = ("not testable here (2 run(s) left out as CPU-bound (shared-journal-27184bd6ec50 "
           "vm-0327c4025a0b), too few left): Redis alone; starved runs among those used: "
           "vm-cab1b8fd8dba (neighbour: 1 s with no byte); runs left out as CPU-bound: "
           "vm-022ad852e454")
    assert site.without_run_ids(why) == ("not testable here (2 run(s) left out as CPU-bound, "
                                         "too few left): Redis alone")
    assert site.without_run_ids("x vm-022ad852e454, vm-022ad852e455 y") == "x (see the runs) y"
    assert site.without_run_ids("vm-1 is no run id") == "vm-1 is no run id"


def test_a_table_that_does_not_parse_names_its_file(tmp_path: Path) -> None:
    path = tmp_path / "c9-fsync-latency.csv"
    path.write_text("")
    with pytest.raises(ValueError, match="c9-fsync-latency.csv: not a table"):
        site.render_table(path)


def test_a_campaign_that_was_not_judged_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="campaign thesis-hdd: not judged"):
        site.Site(tmp_path, "thesis-hdd", {}, pd.DataFrame())


def test_a_claim_page_shows_its_checks_narrow_and_every_column_a_click_away() -> None:
    from types import SimpleNamespace

    check = {"part": "C9a", "test": "vm ratio: beside high-fsync", "thesis": "x1.14",
             "ours": "x0.985 [0.97, 1]", "medians": "18.1 / 18.4 ms", "n": "10",
             "p": "0.94 / 0.06", "detectable": "x1.05", "outcome": "inconclusive",
             "why_not": "", "differs": "VM acceleration"}
    row = SimpleNamespace(verdict="inconclusive", parts="", rests_on="")
    family = {"label": "local hdd", "anchor": "local-hdd", "row": row, "why": "why",
              "changes": "", "checks": [check], "runs": 10, "starved": 0, "left_out": 0}
    line = SimpleNamespace(verdict="inconclusive", testbed="", qualifier="", missing="",
                           ours="", changes="", cells={})
    page = site.environment().get_template("claim.html.j2").render(
        base="../", campaign="demo", all_claims=["C9"], other_campaigns=[], study_names=[],
        how_to_read="", host_note="", introduction="", claim="C9", headline="h",
        where="Table 4.1", statement="s",
        families=[family], line=line, line_link="", outputs={}, tables={}, elsewhere=[])
    narrow, rest = page.split('<details class="checks-all">', 1)
    heads = re.findall(r"<th>([^<]+)</th>", narrow.split('<table class="checks">', 1)[1])
    assert heads == ["Check", "Ours, 95% interval", "Outcome", "Thesis"]
    rest = rest.split("</details>", 1)[0]
    assert "Smallest detectable" in rest and "18.1 / 18.4 ms" in rest and "0.94 / 0.06" in rest
    assert "18.1 / 18.4 ms" not in narrow
