"""A claim's checks as a notebook shows them (views.checks_table): every column is in the
table, for pandas, but its HTML view (Jupyter, the executed notebooks) is narrow: the check,
our effect with its interval, the thesis's value and the part's outcome, and the family's
labels only where its rows differ in them; the other columns are behind a click (a
<details>), with what "p (Holm)" means."""

from __future__ import annotations

import html

import pandas as pd

CHECK, OURS, THESIS, OUTCOME = "check", "ours: effect [95% interval]", "thesis", "part's outcome"
NARROW = (CHECK, OURS, THESIS, OUTCOME)
HOLM_COLUMN = "claim: p (Holm)"
# one sentence, shown with the column (docs/claims.md, "Claim")
HOLM = ("p (Holm) is the claim's p-value (the largest of its checks'), corrected by Holm's "
        "method for the claims its family tests at once (each p multiplied by up to their "
        "number, at most 1): below 0.05 the runs support the claim, and 1 says only that they "
        "do not.")
# what tells two rows' families apart, shown where the rows differ in it
LABELS = ("host", "device_profile", "cgroup_version", "bfq", "io_control", "claim")


class ChecksTable(pd.DataFrame):
    """A DataFrame (select, filter, group it as any) whose HTML view is narrow."""

    @property
    def _constructor(self) -> type[ChecksTable]:
        return ChecksTable

    def shown(self) -> list[str]:
        """The columns the narrow view shows: the labels that vary, then NARROW."""
        labels = [c for c in LABELS if c in self.columns and self[c].nunique() > 1]
        return [*labels, *(c for c in NARROW if c in self.columns)]

    def _repr_html_(self) -> str | None:
        whole = pd.DataFrame(self)._repr_html_()
        narrow = self.shown()
        if whole is None or not any(c in self.columns for c in NARROW) \
                or len(narrow) == len(self.columns):
            return whole
        hidden = [c for c in self.columns if c not in narrow]
        note = f"<p>{html.escape(HOLM)}</p>" if HOLM_COLUMN in self.columns else ""
        return (f"{pd.DataFrame(self[narrow])._repr_html_()}\n<details><summary>All "
                f"{len(self.columns)} columns (also: {html.escape(', '.join(hidden))})"
                f"</summary>\n{whole}\n{note}</details>")
