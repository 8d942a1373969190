"""Figure builders shared by the notebooks. Every figure names the host it was measured on
(views.host_line: a short line naming a VM's accelerator only where the figure draws the VM,
views.host_for; the rest is in the notebook's host line), and its arms as views.arm_label
does (a VM under TCG says so), the VM first. Runs on
different device profiles are drawn in panels side by side (views.panels), each with its own
y scale where the quantity's scale follows the device (MB/s), the same arms at the same places
and colours in every panel, and one legend. Where the thesis states a value of what a figure
shows (thesis_values), it is marked and labelled "thesis"; a panel whose bars differ more than
tenfold is drawn on a logarithmic scale (spans_decades)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.text import Text

from journalbench.judge import stats
from journalbench.judge.claims.checks import SHARE_KINDS
from journalbench.report import textmetrics, thesis_values
from journalbench.report.views import arm_order, host_for, labelled_arms, panels

sns.set_theme(style="whitegrid", context="notebook")
PNG_DPI = 130
TITLE_CHARS_PER_IN = 13  # characters of a 10-pt title per inch of figure
TITLE_GAP_PT = 4  # the least gap between the figure's title and its panels
TICK_CHAR_IN = 0.09  # width of a tick label's character at seaborn's notebook context, inches
TENFOLD = 10.0  # bars further apart than this lose the small ones on a linear scale
GROUP_WIDTH = 0.8  # the width of one x level's bars or dots (seaborn's default)
THESIS_MARKERS = ("D", "s", "^", "v", "P")  # one per thesis value's platform within a figure
# figures are drawn at the PNG's resolution: laying one out (tight_layout) and saving it then
# measure every text with the same renderer, once
plt.rcParams["figure.dpi"] = PNG_DPI


def arms_in(frame: pd.DataFrame) -> list[str]:
    return arm_order(frame["arm"])


def levels(frame: pd.DataFrame, column: str) -> list[str]:
    """The values of `column` in the order seaborn would draw them for the whole frame, so every
    panel puts them at the same places."""
    values = frame[column]
    if isinstance(values.dtype, pd.CategoricalDtype):  # in order, those present only
        return list(values.cat.remove_unused_categories().cat.categories)
    return list(dict.fromkeys(values.dropna()))


def titled(fig: plt.Figure, title: str, host: str) -> plt.Figure:
    # wrapped to the figure's width: a long host line (several kernels, a TCG note) would
    # otherwise widen the saved image and shrink the plot within it
    width = int(fig.get_figwidth() * TITLE_CHARS_PER_IN)
    text = fig.suptitle("\n".join(textwrap.fill(line, width) for line in (title, host)),
                        fontsize=10)
    with textmetrics.shared():  # each text measured once for the layout (textmetrics.py)
        fig.tight_layout()
        clear_of_title(fig, text)
    return fig


def clear_of_title(fig: plt.Figure, text: Text) -> None:
    """tight_layout's gap under the figure's title shrinks as the figure grows taller: in a
    grid of three rows the top panels' titles overlap it. Move the panels down to a gap of
    TITLE_GAP_PT where it is smaller (shorter figures are left as they are)."""
    renderer = fig.canvas.get_renderer()
    shown = [ax for ax in fig.axes if ax.axison]
    if not shown:
        return
    # only the top row's panels are measured: tight_layout keeps the rows apart, so they reach
    # highest, and measuring every panel was a twentieth of the notebooks' time
    row = max(ax.get_position().y1 for ax in shown)
    top = max(ax.get_tightbbox(renderer).y1 for ax in shown if ax.get_position().y1 > row - 1e-6)
    short = top + TITLE_GAP_PT * fig.dpi / 72 - text.get_window_extent(renderer).y0
    if short > 0:
        fig.subplots_adjust(top=fig.subplotpars.top - short / fig.bbox.height)


def crowded(ax: plt.Axes, labels: list[str]) -> bool:
    """Would two neighbouring tick labels overlap (each is centred in an equal slot of the
    axes' width)?"""
    slot = ax.get_position().width * ax.figure.get_figwidth() / max(len(labels), 1)
    widths = [(len(str(label)) + 1) * TICK_CHAR_IN for label in labels]
    return any((a + b) / 2 > slot for a, b in zip(widths, widths[1:], strict=False))


def panel_axes(groups: list[tuple[str | None, pd.DataFrame]], width: float,
               height: float) -> tuple[plt.Figure, list[plt.Axes]]:
    """A row of axes, one per group (a figure `width` wide for one), titled with the group's
    title; y scales are not shared (MB/s on the emulated HDD is a fraction of the fast disk's)."""
    n = len(groups)
    fig, axes = plt.subplots(1, n, figsize=(width if n == 1 else 0.7 * width * n, height),
                             squeeze=False)
    for ax, (title, _) in zip(axes[0], groups, strict=True):
        if title:
            ax.set_title(title, fontsize=9)
    return fig, list(axes[0])


def one_legend(axes: list[plt.Axes]) -> None:
    """The last panel's legend, outside at the right; every panel draws the same hue order, so
    the others' legends repeat it."""
    for ax in axes[:-1]:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if axes[-1].get_legend() is not None:
        sns.move_legend(axes[-1], "upper left", bbox_to_anchor=(1.01, 1), fontsize=8,
                        title_fontsize=9)


def bars(frame: pd.DataFrame, x: str, y: str, hue: str, title: str, host: str,
         ylabel: str, order: list[str] | None = None, thesis: str | None = None) -> plt.Figure:
    """Median over repetitions with its 95% bootstrap CI, per x and hue; a panel per device
    profile. The intervals are the tables' own (stats.condition_medians), not seaborn's.
    `thesis`: the figure's name, whose thesis values (thesis_values) are marked; a panel whose
    medians differ more than tenfold gets a logarithmic y axis."""
    if "arm" in (x, hue):
        frame = labelled_arms(frame)
    order = [str(v) for v in order or levels(frame, x)]
    hue_order = arms_in(frame) if hue == "arm" else [str(v) for v in levels(frame, hue)]
    groups = panels(frame)
    fig, axes = panel_axes(groups, 8, 4)
    for ax, (_, rows) in zip(axes, groups, strict=True):
        rows = rows.assign(**{x: rows[x].astype(str), hue: rows[hue].astype(str)})
        table = stats.condition_medians(rows, [x, hue], y)
        grouped_bars(ax, table, x, hue, order, hue_order)
        mark_thesis(ax, thesis, x, hue, order, hue_order)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        if spans_decades(table["median"]):
            logarithmic(ax, table)
        if crowded(ax, order):
            slanted(ax)
    one_legend(axes)
    return titled(fig, title, host_for(host, frame))


def spans_decades(values: pd.Series | np.ndarray | list[float],
                  factor: float = TENFOLD) -> bool:
    """Do the positive values differ more than `factor`-fold? (Then the smallest bars vanish
    on a linear axis: c22's VM Redis at ~500 ops/s beside containers at ~18,000.)"""
    found = np.asarray(values, dtype=float)
    found = found[np.isfinite(found) & (found > 0)]
    return bool(found.size > 1 and found.max() > factor * found.min())


def logarithmic(ax: plt.Axes, table: pd.DataFrame) -> None:
    """A log y axis from below the lowest interval, its ticks in plain numbers, saying so."""
    floor = pd.concat([table["low"], table["median"]]).where(lambda v: v > 0).min()
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor / 2)
    ax.yaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylabel(f"{ax.get_ylabel()} (log scale)")


def slanted(ax: plt.Axes) -> None:
    ax.tick_params(axis="x", labelrotation=20)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")


def grouped_bars(ax: plt.Axes, table: pd.DataFrame, x: str, hue: str, order: list[str],
                 hue_order: list[str]) -> None:
    """Bars of `median` with `low`-`high` error bars, hue levels side by side within each x;
    a legend only when a bar was drawn (a campaign may lack a figure's runs)."""
    width = 0.8 / max(len(hue_order), 1)
    colours = sns.color_palette(n_colors=max(len(hue_order), 1))
    for i, (level, colour) in enumerate(zip(hue_order, colours, strict=False)):
        rows = table[table[hue] == level].set_index(x).reindex(order)
        present = rows["median"].notna().to_numpy()
        if not present.any():
            continue
        where = (np.arange(len(order)) - 0.4 + width * (i + 0.5))[present]
        rows = rows[present]
        ax.bar(where, rows["median"], width, color=colour, label=level)
        spread = [(rows["median"] - rows["low"]).fillna(0),
                  (rows["high"] - rows["median"]).fillna(0)]
        ax.errorbar(where, rows["median"], yerr=spread, fmt="none", ecolor="0.26", elinewidth=2.2)
    ax.set_xticks(np.arange(len(order)), order)
    if ax.patches:  # the bars drawn
        ax.legend(title=hue)


def slots(at: str | None, arm: str, x: str, hue: str | None, order: list[str],
          hue_order: list[str]) -> list[tuple[float, float]]:
    """Where a thesis value of `arm` at condition `at` (None: every condition) sits: the
    (centre, width) of each bar or dot column of that arm and condition drawn (arms matched
    by name, so `vm (TCG)` is the vm); none when the figure does not draw it."""
    def own(labels: list[str]) -> list[int]:
        return [i for i, label in enumerate(labels) if label.split(" (", 1)[0] == arm]

    if x == "arm":
        return [(float(i), GROUP_WIDTH) for i in own(order)]
    if hue != "arm":
        return []
    ats = [i for i, level in enumerate(order) if at is None or level == at]
    width = GROUP_WIDTH / max(len(hue_order), 1)
    return [(j - GROUP_WIDTH / 2 + width * (i + 0.5), width)
            for j in ats for i in own(hue_order)]


def mark_thesis(ax: plt.Axes, figure: str | None, x: str, hue: str | None, order: list[str],
                hue_order: list[str]) -> None:
    """The thesis's values of `figure` (thesis_values) over our bars or dots: a value as a
    black line across its column with a marker, a range as a vertical bar; each platform's
    marker once in the legend, after our series, as "thesis: ... (figure, page)"."""
    values = thesis_values.marks(figure) if figure else pd.DataFrame()
    markers = dict(zip(dict.fromkeys(values.get("label", [])), THESIS_MARKERS * 4, strict=False))
    shown: set[str] = set()
    for _, mark in values.iterrows():
        at = None if pd.isna(mark["at"]) else str(mark["at"])
        single = pd.isna(mark["high"])
        for centre, width in slots(at, mark["arm"], x, hue, order, hue_order):
            if single:
                ax.hlines(mark["value"], centre - width * 0.45, centre + width * 0.45,
                          color="black", linewidth=1.5, zorder=4)
            else:
                ax.vlines(centre, mark["value"], mark["high"], color="black", linewidth=2.5,
                          zorder=4)
            middle = mark["value"] if single else (mark["value"] + mark["high"]) / 2
            ax.plot([centre], [middle], marker=markers[mark["label"]], color="black",
                    markerfacecolor="white", markersize=6, linestyle="none", zorder=5,
                    label=None if mark["label"] in shown else mark["label"])
            shown.add(mark["label"])
    if shown and ax.get_legend() is not None:  # the legend gathers the marks too
        title = ax.get_legend().get_title().get_text() or None
        ax.legend(*thesis_last(ax), title=title)


def thesis_last(ax: plt.Axes) -> tuple[list, list[str]]:
    """The axes' legend entries, ours first and the thesis's after them."""
    handles, labels = ax.get_legend_handles_labels()
    pairs = sorted(zip(handles, labels, strict=True),
                   key=lambda pair: pair[1].startswith("thesis"))
    return [h for h, _ in pairs], [label for _, label in pairs]


@contextmanager
def fixed_jitter(seed: int = 0) -> Iterator[None]:
    """Seaborn jitters dots with NumPy's global generator: seeded here, a figure comes out the
    same in every reproduction (and the notebook's own random state is left as it was)."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def shares(frame: pd.DataFrame, x: str, title: str, host: str, target: float | None = None,
           column: str = "achieved_share", slant: bool = False,
           thesis: str | None = None) -> plt.Figure:
    """Each run's share (dots) per condition, with the share the weights promise; a panel per
    device profile (all on the same 0-1 scale). `thesis`: the figure's name, whose thesis
    values (thesis_values) are marked."""
    frame = labelled_arms(frame)
    arms = arms_in(frame)
    order = arms if x == "arm" else [str(v) for v in levels(frame, x)]
    groups = panels(frame)
    fig, axes = panel_axes(groups, 7, 3.8)
    for ax, (_, rows) in zip(axes, groups, strict=True):
        with fixed_jitter():
            sns.stripplot(data=rows, x=x, y=column, hue="arm" if x != "arm" else None,
                          dodge=x != "arm", order=order if x == "arm" else levels(frame, x),
                          hue_order=arms if x != "arm" else None, size=7, ax=ax)
        if target is not None:
            ax.axhline(target, color="black", linestyle="--", linewidth=1,
                       label=f"the weight's share {target}")
        mark_thesis(ax, thesis, x, "arm" if x != "arm" else None, order, arms)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of the disk (bytes)")
        if slant or crowded(ax, order):
            slanted(ax)
    if target is not None or thesis in thesis_values.THESIS_VALUES:
        # the legend gathers the arms' dots, the target line and the thesis's marks
        axes[-1].legend(*thesis_last(axes[-1]), loc="upper left", bbox_to_anchor=(1.01, 1),
                        fontsize=8)
    one_legend(axes)
    return titled(fig, title, host_for(host, frame))


def stack_order(parts: pd.DataFrame) -> list[str]:
    """Tenants at the bottom in spec order (victim first), journal threads on top."""
    return list(dict.fromkeys(parts.sort_values("kind", key=lambda k: k != "tenant",
                                                kind="stable")["label"]))


def share_timeline(parts: pd.DataFrame, title: str, host: str) -> plt.Figure:
    """Stacked per-second disk shares of tenants (own I/O) and jbd2 threads; a panel per
    `panel` value (views.example_shares: one example run per device profile), each source
    in the same colour in every panel."""
    if "panel" in parts.columns and not parts.empty:
        groups = [(str(name), part) for name, part in parts.groupby("panel", sort=False)]
    else:
        groups = [(None, parts)]
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colours = {label: cycle[i % len(cycle)] for i, label in enumerate(stack_order(parts))}
    fig, axes = panel_axes(groups, 8, 3.8)
    for ax, (_, part) in zip(axes, groups, strict=True):
        wide = part.pivot_table(index="t", columns="label", values="share",
                                aggfunc="sum").fillna(0)
        order = [label for label in stack_order(part) if label in wide.columns]
        ax.stackplot(wide.index, wide[order].T.to_numpy(), labels=order,
                     colors=[colours[label] for label in order], alpha=0.85)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("share of the device's bytes")
    # one legend of every source drawn in any panel (jbd2 thread names follow each device)
    handles = {}
    for ax in axes:
        handles.update(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    axes[-1].legend(list(handles.values()), list(handles), loc="upper left",
                    bbox_to_anchor=(1.01, 1), fontsize=8)
    return titled(fig, title, host_for(host, parts))


LEGEND_CHARS = 44  # a check's label wraps at this many characters under its panel
PANELS_PER_ROW = 4  # effects_by_setting's panels (a claim each) a row


def check_label(number: object, check: pd.DataFrame) -> str:
    """A line's legend entry: its number (as the notebook's table numbers it) and what it
    compares (the check's `test`, wrapped), or the number alone where the rows have no test."""
    if "test" not in check.columns:
        return f"check {number}"
    return textwrap.fill(f"{number}: {check['test'].iloc[0]}", LEGEND_CHARS)


def check_line(ax: plt.Axes, xs: pd.Series, check: pd.DataFrame, number: object) -> str:
    """One check's effects with their 95% intervals at `xs`, labelled with its number at the
    last point and in the legend with what it compares; returns the line's colour."""
    line = ax.errorbar(xs, check["effect"],
                       yerr=[check["effect"] - check["low"], check["high"] - check["effect"]],
                       marker="o", capsize=3, linewidth=1, label=check_label(number, check))
    color = line[0].get_color()
    ax.annotate(str(number), (xs.iloc[-1], check["effect"].iloc[-1]), xytext=(4, 0),
                textcoords="offset points", fontsize=8, color=color, va="center")
    return color


def legend_below(ax: plt.Axes, below: float = 0.3) -> None:
    """The panel's legend `below` (a fraction of the axes' height) under its x axis: every
    line named (the labels are long, so they stack rather than crowd the plot)."""
    handles, labels = ax.get_legend_handles_labels()
    pairs = sorted(zip(handles, labels, strict=True),
                   key=lambda pair: pair[1].startswith("smallest"))  # the checks first
    ax.legend([h for h, _ in pairs], [label for _, label in pairs], loc="upper center",
              bbox_to_anchor=(0.5, -below), fontsize=7, frameon=False)


def plain_log_ticks(ax: plt.Axes, axes: str = "y") -> None:
    """Log-axis ticks in plain numbers (0.68, not 6.8 x 10^-1)."""
    plain = mticker.FuncFormatter(lambda v, _: f"{v:.3g}")
    for axis in (ax.xaxis if "x" in axes else None, ax.yaxis if "y" in axes else None):
        if axis is not None:
            axis.set_major_formatter(plain)
            axis.set_minor_formatter(mticker.NullFormatter())


def legend_height(effects: pd.DataFrame) -> float:
    """Inches the tallest panel's legend needs under it: its checks' wrapped labels and the
    line of the effect of interest (7-pt text)."""
    if "test" not in effects.columns or effects.empty:
        return 0.6
    lines = [sum(check_label(n, c).count("\n") + 1 for n, c in rows.groupby("check"))
             for _, rows in effects.groupby("claim")]
    return 0.15 * (max(lines) + 2) + 0.4


def effect_by_fsync_cost(effects: pd.DataFrame, title: str, host: str) -> plt.Figure:
    """Each ratio check's effect (95% interval) against the device's fsync cost, a panel per
    claim, both axes logarithmic: 1 is no effect, the dotted lines the check's smallest effect
    of interest either way (the thesis's effect where it gives one); each line is labelled with
    its check's number in the rows (device_class.effects) and, in the legend under its panel,
    with what it compares."""
    claims = list(dict.fromkeys(effects["claim"]))
    fig, axes = plt.subplots(1, max(len(claims), 1), squeeze=False, sharey=True,
                             figsize=(3.2 * max(len(claims), 1), 3.6 + legend_height(effects)))
    for ax, claim in zip(axes[0], claims, strict=False):
        rows = effects[effects["claim"] == claim]
        for number, check in rows.groupby("check", sort=True):
            check = check.sort_values("fsync_ms")
            color = check_line(ax, check["fsync_ms"], check, number)
            mark_expected(ax, check, color)  # ratio checks only: dotted, either way
        ax.axhline(1, color="black", linewidth=0.8)
        ax.plot([], [], color="0.4", linestyle=":", linewidth=0.8,
                label="smallest effect of interest\n(the thesis's where it gives one)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax, "xy")
        ax.set_title(claim, fontsize=10)
        ax.set_xlabel("fsync alone (ms)")
        legend_below(ax)
    axes[0][0].set_ylabel("effect (ratio; 1 = none)")
    return titled(fig, title, host)


def mark_expected(ax: plt.Axes, check: pd.DataFrame, color: str) -> None:
    """Where the check's effect would sit if the thesis held: a share check's target share
    (dashed), a ratio check's effect of interest either way (dotted: the thesis's effect
    where it states one)."""
    first = check.iloc[0]
    target, interest = first.get("target"), first.get("interest")
    if first.get("kind") in SHARE_KINDS:  # the device-class study's rows, all ratios, have none
        # a share's target, or a difference of shares of interest either way
        levels = [target] if pd.notna(target) else [interest, -interest]
        style = "--" if pd.notna(target) else ":"
    else:
        levels, style = [interest, 1 / interest], ":"
    for level in (v for v in levels if pd.notna(v) and np.isfinite(v)):
        ax.axhline(float(level), color=color, linestyle=style, linewidth=0.8)


def effects_by_setting(effects: pd.DataFrame, x: str, title: str, host: str,
                       expected: bool = False) -> plt.Figure:
    """Each check's effect (95% interval) under each BFQ setting or testbed (column `x`,
    ordered: the baseline first), a panel per claim on its own y scale, logarithmic where the
    panel's effects differ more than tenfold (a share check's effect is a share, a ratio
    check's a ratio); each line is labelled with its check's number and, in the legend under
    its panel, with what it compares. `expected`: each check's value if the thesis held is
    marked in its colour (mark_expected)."""
    claims = list(dict.fromkeys(effects["claim"]))
    order = levels(effects, x)
    # at most PANELS_PER_ROW a row, the rows as even as they go (9 claims: 3 rows of 3)
    rows_n = max(math.ceil(len(claims) / PANELS_PER_ROW), 1)
    per_row = max(math.ceil(len(claims) / rows_n), 1)
    fig, grid = plt.subplots(rows_n, per_row, squeeze=False,
                             figsize=(3.4 * per_row, (4.6 + legend_height(effects)) * rows_n))
    panels_ = list(grid.flat)
    for ax in panels_[len(claims):]:
        ax.axis("off")
    for ax, claim in zip(panels_, claims, strict=False):
        rows = effects[effects["claim"] == claim]
        for number, check in rows.groupby("check", sort=True):
            check = check.assign(at=[order.index(v) for v in check[x]]).sort_values("at")
            color = check_line(ax, check["at"], check, number)
            if expected:
                mark_expected(ax, check, color)
        if expected:
            ax.plot([], [], color="0.4", linestyle="--", linewidth=0.8,
                    label="the thesis's value: a share's target,\nor a ratio's effect "
                          "(dotted, either way)")
        if spans_decades(pd.concat([rows["low"], rows["high"]])):
            ax.set_yscale("log")
            plain_log_ticks(ax)
        ax.set_xticks(range(len(order)), order)
        ax.set_xlim(-0.3, len(order) - 0.7)
        slanted(ax)
        ax.set_title(claim, fontsize=10)
        legend_below(ax, below=0.45)  # under the slanted setting names
    for row in grid:
        row[0].set_ylabel("effect (share or ratio)")
    return titled(fig, title, host)


def save(fig: plt.Figure, figures: Path | str, name: str) -> list[Path]:
    """Write the figure as PNG and PDF; return the paths. In a notebook the saved PNG is what
    the cell shows: the inline backend would otherwise draw the figure a third time."""
    figures = Path(figures)
    figures.mkdir(parents=True, exist_ok=True)
    paths = [figures / f"{name}.png", figures / f"{name}.pdf"]
    # Laid out once for both files: "tight" (legends sit outside the axes), or any layout
    # engine left on the figure (tight_layout leaves a placeholder), lays it out again for
    # each file, a third of the notebooks' time.
    # The box is measured without drawing first (which "tight" does): get_tightbbox places
    # what it measures itself (ticks, axis labels, titles, legends, annotations), so a draw
    # changes no extent of these figures (tested against "tight" for every builder here) and
    # would cost a tenth of saving one.
    dpi, engine = fig.get_dpi(), fig.get_layout_engine()
    png = BytesIO()
    # a text measured for the box is not measured again for the PNG (textmetrics.py)
    with textmetrics.shared():
        fig.set_dpi(PNG_DPI)  # the PNG's text extents: its box as "tight" would make it
        box = fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"])
        fig.set_dpi(dpi)
        fig.set_layout_engine(None)
        # zlib's fastest level: lossless, files 4-10% larger, a quarter less time
        try:
            fig.savefig(png, format="png", dpi=PNG_DPI, bbox_inches=box,
                        pil_kwargs={"compress_level": 1})
            # no creation date: the same figure is the same file in every reproduction
            with plt.rc_context({"pdf.compression": 1}):
                fig.savefig(paths[1], bbox_inches=box, metadata={"CreationDate": None})
        finally:
            fig.set_layout_engine(engine)
    paths[0].write_bytes(png.getvalue())
    show(fig, png.getvalue())
    return paths


def show(fig: plt.Figure, png: bytes) -> None:
    """Display `png` in place of `fig` when running in a notebook's kernel."""
    from IPython import get_ipython
    from IPython.display import Image, display

    if get_ipython() is None or "inline" not in plt.get_backend():
        return
    plt.close(fig)
    display(Image(data=png, format="png"))
