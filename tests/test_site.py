"""The HTML report's pure helpers (journalbench/report/site.py); the report itself, built by
the pipeline and rendered in Chromium, is tested in tests/test_report.py."""

from __future__ import annotations

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
