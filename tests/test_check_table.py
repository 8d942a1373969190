"""A claim's checks as a notebook shows them (journalbench/report/check_table.py): narrow,
with the other columns and what "p (Holm)" means a click away."""

from __future__ import annotations

import re

import pandas as pd

from journalbench.report.check_table import HOLM, NARROW, ChecksTable


def table() -> ChecksTable:
    """Two families (device profiles) of one claim, in views.checks_table's columns."""
    return ChecksTable({
        "host": ["local", "local"], "device_profile": ["hdd", "native"],
        "claim": ["C9", "C9"], "part": ["C9a", "C9a"],
        "check": ["vm ratio: beside high-fsync", "vm ratio: beside high-fsync"],
        "test": ["Welch t on logs", "Welch t on logs"],
        "ours: effect [95% interval]": ["x0.985 [0.97, 1]", "x1.21 [1.1, 1.3]"],
        "ours from": ["18.1 / 18.4 ms", "0.9 / 0.74 ms"], "thesis": ["x1.14", "x1.14"],
        "p for": ["0.9400", "< 0.0001"], "p against": ["0.0600", "1.0000"],
        "part's outcome": ["inconclusive", "reproduced"],
        "claim: p (Holm)": ["1.0000", "0.0020"], "claim's verdict": ["inconclusive", "mixed"],
        "testbed differs in": ["VM acceleration", "device"]})


def headers(html: str) -> list[str]:
    """The column headers of the first table in `html`."""
    head = html.split("<thead>", 1)[1].split("</thead>", 1)[0]
    return re.findall(r"<th>([^<]+)</th>", head)


def test_the_default_view_shows_the_check_effect_thesis_and_outcome_and_the_rest_on_a_click(
        ) -> None:
    shown = table()._repr_html_()
    narrow, details = shown.split("<details>", 1)
    assert headers(narrow) == ["device_profile", *NARROW]  # host and claim do not vary
    assert "<summary>All 15 columns" in details
    assert headers(details) == list(table().columns)
    assert HOLM in details.replace("&#x27;", "'") and HOLM not in narrow


def test_the_table_is_still_a_dataframe_with_every_column() -> None:
    found = table()
    assert len(found.columns) == 15
    picked = found[found["device_profile"] == "hdd"]
    assert isinstance(picked, ChecksTable) and picked["claim: p (Holm)"].tolist() == ["1.0000"]
    assert pd.DataFrame(found).equals(found)


def test_a_selection_of_other_columns_is_shown_as_it_is() -> None:
    """A student's own selection without the narrow columns is a plain table."""
    picked = table()[["claim", "p for", "p against"]]
    assert "<details>" not in picked._repr_html_()
    assert headers(picked._repr_html_()) == ["claim", "p for", "p against"]


def test_the_holm_sentence_is_shown_only_with_the_holm_column() -> None:
    without = table().drop(columns=["claim: p (Holm)"])
    assert "<details>" in without._repr_html_() and "Holm" not in without._repr_html_()
