"""The HTML report's pure helpers (journalbench/report/site.py); the report itself, built by
the pipeline and rendered in Chromium, is tested in tests/test_report.py."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from journalbench.report import site


def test_skipped_folders_of_every_campaign_beside(tmp_path: Path) -> None:
    from journalbench.report import left_out

    for campaign, rows in (("a", []), ("b", [("data/raw/b/h/r1", "incomplete", "no MANIFEST")])):
        (tmp_path / campaign).mkdir()
        pd.DataFrame(rows, columns=["folder", "status", "reason"]).to_parquet(
            tmp_path / campaign / "skipped.parquet")
    skipped = left_out.skipped_folders([tmp_path / "a"])
    assert skipped.to_dict("records") == [{"campaign": "b", "run_id": "r1",
                                           "folder": "data/raw/b/h/r1", "status": "incomplete",
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
    from journalbench.report import claim_model, summary

    check = {"part": "C9a", "test": "vm ratio: beside high-fsync", "thesis": "x1.14",
             "ours": "x0.985 [0.97, 1]", "medians": "18.1 / 18.4 ms", "n": "10",
             "p": "0.94 / 0.06", "detectable": "x1.05", "outcome": "inconclusive",
             "why_not": "", "differs": "VM acceleration"}
    row = summary.Row(claim="C9", where="Table 4.1", headline="h", thesis="x1.14", ours="",
                      effect="", part="", verdict="inconclusive", parts="", rests_on="",
                      figure=None)
    testbed = claim_model.Testbed(label="demo v1/bfq", anchor="demo-v1-bfq",
                                  family={"campaign": "demo", "device_profile": "hdd"}, row=row,
                                  why="why", changes="", checks=[], offered=True, runs=10)
    model = claim_model.ClaimModel(claim="C9", where="Table 4.1", headline="h", statement="s",
                                   chosen=testbed, why="its one part measured")
    page = site.environment().get_template("claim.html.j2").render(
        base="../", campaign="demo", all_claims=["C9"], other_campaigns=[], study_names=[],
        how_to_read="", host_note="", introduction="", claim="C9", headline="h",
        where="Table 4.1", statement="s", model=model, plots={},
        checks={"demo-v1-bfq": [check]}, outputs={}, tables={})
    narrow, rest = page.split('<details class="checks-all">', 1)
    heads = re.findall(r"<th>([^<]+)</th>", narrow.split('<table class="checks">', 1)[1])
    assert heads == ["Check", "Ours, 95% interval", "Outcome", "Thesis"]
    rest = rest.split("</details>", 1)[0]
    assert "Smallest detectable" in rest and "18.1 / 18.4 ms" in rest and "0.94 / 0.06" in rest
    assert "18.1 / 18.4 ms" not in narrow
    # the headline testbed first, its runs a link away with the testbed named
    assert 'id="demo-v1-bfq"' in narrow and 'href="../runs/C9.csv"' in page


def test_a_testbeds_checks_are_drawn_as_one_svg_figure() -> None:
    """Each measured check a row: its interval and effect on a ratio's log axis or a share's
    0..1, beside no effect; a testbed with none measured has no figure."""
    import xml.etree.ElementTree as ElementTree

    from journalbench.report import check_plot

    ratio = {"status": "measured", "kind": "paired", "effect": 3.99, "low": 3.98,
             "high": 4.0, "outcome": "reproduced", "test": "MB/s of a over b"}
    share = {"status": "measured", "kind": "share", "effect": 0.5, "low": 0.49, "high": 0.51,
             "target": 0.7, "outcome": "contradicted", "test": "a's share <70%>"}
    text = check_plot.svg("C4 on x", [ratio, share, {**ratio, "status": "missing"}])
    root = ElementTree.fromstring(text)
    lines = root.findall("{http://www.w3.org/2000/svg}circle")
    assert len(lines) == 2  # the missing check is not drawn
    assert "share &lt;70%&gt;" in text and "log scale" in text and "share 0 .. 1" in text
    assert check_plot.svg("none", [{**ratio, "status": "missing"}]) == ""
