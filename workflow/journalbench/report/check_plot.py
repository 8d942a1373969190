"""A testbed's checks of a claim drawn as one small SVG figure (the claim page's figure of every
testbed, whichever campaign's notebooks drew none): per measured check, its effect and 95%
interval on its own axis, beside the line of no effect (x1 for a ratio, the target for a
share, 0 for a difference), coloured by the part's outcome. Written without matplotlib: a
few hundred of them cost nothing beside the analysis."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from journalbench.judge.claims.checks import DIFFERENCE, LEVEL, SHARE
from journalbench.judge.claims.verdicts import CONTRADICTED, MEASURED, REPRODUCED

WIDTH, ROW, LEFT, RIGHT = 640, 52, 16, 16
COLOURS = {REPRODUCED: "#17632a", CONTRADICTED: "#a11a1a"}
GREY = "#555"


def number(value: Any) -> float:
    try:
        found = float(value)
    except (TypeError, ValueError):
        return math.nan
    return found


def drawable(check: Mapping[str, Any]) -> bool:
    return check["status"] == MEASURED and all(
        math.isfinite(number(check[k])) for k in ("effect", "low", "high"))


def scale(check: Mapping[str, Any], ratios: tuple[float, float]) -> tuple[Any, float, str]:
    """(value -> x position, the reference value, what the axis is) of a check's row."""
    span = WIDTH - LEFT - RIGHT
    if check["kind"] in (SHARE, LEVEL):
        target = number(check.get("target"))
        return (lambda v: LEFT + span * min(max(v, 0.0), 1.0),
                target if math.isfinite(target) else math.nan, "share 0 .. 1")
    if check["kind"] == DIFFERENCE:
        edge = max(0.1, *(abs(number(check[k])) for k in ("low", "high")))
        return (lambda v: LEFT + span * (v + edge) / (2 * edge), 0.0,
                f"difference -{edge:.2g} .. {edge:.2g}")
    low, high = (math.log(r) for r in ratios)
    return (lambda v: LEFT + span * (math.log(max(v, 1e-9)) - low) / (high - low), 1.0,
            f"ratio x{ratios[0]:.2g} .. x{ratios[1]:.2g}, log scale")


def ratio_range(checks: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The log axis every ratio row of the figure shares: its intervals and x1, with room."""
    values = [number(c[k]) for c in checks if c["kind"] not in (SHARE, LEVEL, DIFFERENCE)
              for k in ("low", "high")]
    values = [v for v in values if v > 0]
    low, high = min([0.8, *values]), max([1.25, *values])
    return low / 1.1, high * 1.1


def svg(title: str, checks: Sequence[Mapping[str, Any]]) -> str:
    """The figure of `checks` (those measured); "" when none is."""
    shown = [c for c in checks if drawable(c)]
    if not shown:
        return ""
    ratios = ratio_range(shown)
    height = 28 + ROW * len(shown)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
           f"<title>{escape(title)}</title>",
           f'<text x="{LEFT}" y="16" font-size="12" font-weight="bold">{escape(title)}</text>']
    for index, check in enumerate(shown):
        top = 28 + ROW * index
        place, reference, axis = scale(check, ratios)
        colour = COLOURS.get(str(check["outcome"]), GREY)
        y = top + 26
        label = str(check["test"])
        label = label if len(label) <= 100 else label[:99] + "…"
        out.append(f'<text x="{LEFT}" y="{top + 12}" fill="#222">{escape(label)}</text>')
        out.append(f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" stroke="#ddd"/>')
        if math.isfinite(reference):
            x = place(reference)
            out.append(f'<line x1="{x:.1f}" y1="{y - 8}" x2="{x:.1f}" y2="{y + 8}" '
                       f'stroke="#888" stroke-dasharray="2,2"/>')
        low, high, effect = (place(number(check[k])) for k in ("low", "high", "effect"))
        out.append(f'<line x1="{low:.1f}" y1="{y}" x2="{high:.1f}" y2="{y}" '
                   f'stroke="{colour}" stroke-width="3"/>')
        out.append(f'<circle cx="{effect:.1f}" cy="{y}" r="4" fill="{colour}"/>')
        out.append(f'<text x="{WIDTH - RIGHT}" y="{top + 42}" text-anchor="end" fill="{GREY}" '
                   f'font-size="10">{escape(str(check["outcome"]))}; {escape(axis)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
