"""The judge's rows of a table (judge/tuples.py) are pandas' itertuples, made faster."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from journalbench.judge import tuples


def table() -> pd.DataFrame:
    """Every kind of column the judge's tables hold, and names a tuple must rename."""
    frame = pd.DataFrame({
        "claim": pd.array(["C3", None, "C8"], dtype=pd.StringDtype("python")),
        "effect": [0.5, np.nan, 1.25],
        "n": [3, 4, 5],
        "measured": [True, False, True],
        "parts": [["a"], [], ("b", "c")],
        "arm": pd.Categorical(["vm", "vm", "shared-journal"]),
        "at": pd.to_datetime(["2026-11-30", "2026-12-01", None]),
        "count": pd.array([1, None, 3], dtype="Int64"),
        "p value": [0.01, 0.2, np.nan],  # not an identifier: renamed, as itertuples renames
        "class": ["x", "y", "z"],  # a keyword: renamed
    }, index=[7, 3, 5])
    return frame


def test_the_rows_are_itertuples() -> None:
    frame = table()
    ours, theirs = list(tuples.rows(frame)), list(frame.itertuples())
    assert [type(row)._fields for row in ours] == [type(row)._fields for row in theirs]
    for mine, pandas_own in zip(ours, theirs, strict=True):
        assert len(mine) == len(pandas_own)
        for a, b in zip(mine, pandas_own, strict=True):
            assert type(a) is type(b) and (a is b or a == b or (a != a and b != b)), (a, b)


def test_columns_chosen_and_one_missing_is_no_attribute() -> None:
    rows = list(tuples.rows(table(), ("claim", "effect", "testbed")))
    assert type(rows[0])._fields == ("Index", "claim", "effect")
    assert rows[0].claim == "C3" and rows[2].effect == 1.25
    with pytest.raises(AttributeError):
        rows[0].testbed  # noqa: B018


def test_a_label_naming_two_columns_falls_back_to_pandas() -> None:
    frame = pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"])
    assert list(tuples.rows(frame)) == list(frame.itertuples())


def test_the_records_are_to_dicts() -> None:
    """Every kind of column, with NumPy's scalars, pandas' NA and dates in a column of objects,
    and strings of both storages."""
    frame = table().assign(
        mixed=pd.Series([np.float64(1.5), np.int64(2), np.bool_(True)], dtype=object,
                        index=[7, 3, 5]),
        missing=pd.Series([pd.NA, None, np.datetime64("2026-11-30")], dtype=object,
                          index=[7, 3, 5]),
        arrow=pd.array(["a", None, "c"], dtype=pd.StringDtype("pyarrow")),
        default=pd.Series(["a", None, "c"], dtype="str", index=[7, 3, 5]),
        flag=pd.array([True, None, False], dtype="boolean"),
        natives=pd.Series(["s", 1, 2.5], dtype=object, index=[7, 3, 5]))
    ours, theirs = tuples.records(frame), frame.to_dict("records")
    assert [list(row) for row in ours] == [list(row) for row in theirs]
    for mine, pandas_own in zip(ours, theirs, strict=True):
        for name in mine:
            a, b = mine[name], pandas_own[name]
            assert type(a) is type(b) and (a is b or a == b or (a != a and b != b)), (name, a, b)


@pytest.mark.filterwarnings("ignore:DataFrame columns are not unique")
def test_records_of_nothing_and_of_a_label_naming_two_columns() -> None:
    assert tuples.records(table().iloc[:0]) == []
    frame = pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"])
    assert tuples.records(frame) == frame.to_dict("records")
