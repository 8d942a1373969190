"""The report's templates (report/templates/): one Jinja2 environment for the HTML pages, which
it escapes, and the Markdown documents (the README's block, results/summary.md), which it
does not; a Markdown table's cells go through the `cell` filter."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


def cell(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


@cache
def environment() -> Environment:
    env = Environment(loader=PackageLoader("journalbench.report", "templates"),
                      autoescape=select_autoescape(enabled_extensions=("html.j2",),
                                                   default_for_string=False, default=False),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters["cell"] = cell
    return env
