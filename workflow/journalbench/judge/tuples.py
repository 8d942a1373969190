"""The rows of the judge's small tables as named tuples, as pandas' itertuples gives them, and
as dicts, as its to_dict("records") gives them.

itertuples makes a class of the table's columns on every call (about 1 ms for a claims table of
two dozen rows and columns), and the judge walks small tables hundreds of times: each family's
claims under every rule (verdicts.py), each contrast's checks (contrasts.py). `rows` gives the
same tuples (`Index` first, then each column's values as iterating it gives them, named as
itertuples names them), making the class once per set of columns.

to_dict("records") passes every value of a column of objects, strings or other extension types
through a function that turns NumPy's scalars into Python's, a few microseconds each: the
ledgers, the report and the headline's choice of testbed walk the checks tables (a few
thousand rows of 50 columns) that way again and again, 5% of the notebooks' kernel (py-spy).
`records` gives the same dicts, and leaves out that function where a value is already
Python's (str, float, int, bool, None), which it returns unchanged: the notebooks job took
1 s less (6 alternating rounds, 27.6 -> 26.55 s).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import pandas as pd
from pandas.api.extensions import ExtensionDtype
from pandas.core.dtypes.cast import maybe_box_native  # to_dict("records")'s own

NATIVE = frozenset({str, float, int, bool, type(None)})  # what maybe_box_native returns as is


@cache
def row_type(fields: tuple[str, ...]) -> Any:
    return namedtuple("Pandas", fields, rename=True)


def rows(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> Iterator[Any]:
    """frame.itertuples(); with `columns`, of those the frame has only (one it lacks is no
    attribute, as there)."""
    if not frame.columns.is_unique:  # a label names several columns: pandas' own
        return frame.itertuples() if columns is None else frame[
            [c for c in columns if c in frame.columns]].itertuples()
    names = list(frame.columns) if columns is None else [c for c in columns
                                                         if c in frame.columns]
    values = [values_of(frame.index), *(values_of(frame[name]) for name in names)]
    return map(row_type(("Index", *map(str, names)))._make, zip(*values, strict=True))


def values_of(column: pd.Series | pd.Index) -> list[Any]:
    """A column's values as iterating it gives them: a plain NumPy column's as Python's scalars
    (its tolist, at once), another's as its array gives them (a date's Timestamps, a nullable
    integer's NumPy integers)."""
    if isinstance(column.array, pd.arrays.NumpyExtensionArray):
        return column.to_numpy().tolist()
    return list(column)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """frame.to_dict("records")."""
    if not frame.columns.is_unique:  # a label names several columns: pandas' own
        return frame.to_dict("records")
    names = list(frame.columns)
    columns = []
    for name in names:
        column = frame[name]
        values = values_of(column)
        if column.dtype == object or isinstance(column.dtype, ExtensionDtype):
            values = [v if type(v) in NATIVE else maybe_box_native(v) for v in values]
        columns.append(values)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
