"""The notebooks' diagrams of the mechanisms the claims turn on, drawn with matplotlib and kept
as SVG files beside the notebooks (notebooks/diagrams/), where the notebooks' Markdown shows
them: drawn once, not in every run of the analysis. No data: they explain, they show no result.

    python -m journalbench.report.diagrams notebooks/diagrams

writes every diagram (the same bytes every time: tests/test_plots.py checks the committed ones
are what this draws)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from journalbench import vocabulary

VICTIM, NEIGHBOUR, JOURNAL, DISK = "#4c72b0", "#dd8452", "#8c8c8c", "#55a868"
# text stays text (small files, readable); no date and fixed ids: the same file every time
SVG = {"svg.fonttype": "none", "svg.hashsalt": "journalbench", "font.size": 9,
       "font.family": "DejaVu Sans"}


def box(ax: plt.Axes, x: float, y: float, w: float, h: float, text: str = "",
        color: str = "white", edge: str = "black", style: str = "-", size: float = 8,
        text_color: str = "black") -> None:
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.01,rounding_size=0.02",
                                facecolor=color, edgecolor=edge, linestyle=style, linewidth=1))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size,
                color=text_color)


def arrow(ax: plt.Axes, start: tuple[float, float], end: tuple[float, float],
          color: str = "black", style: str = "-|>") -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=10, color=color,
                                 linewidth=1))


def blank(ax: plt.Axes, title: str) -> None:
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.set_title(title, fontsize=10)


def timeline(ax: plt.Axes, shared: bool) -> None:
    """One panel of the journal diagram: the victim's writes and fsync, the neighbour's
    writes, jbd2's running transaction and its commit on the disk."""
    blank(ax, "one shared journal (shared-journal)" if shared
          else "a journal of its own (per-container, VM)")
    rows = {"victim": 0.80, "neighbour": 0.60, "jbd2": 0.38, "disk": 0.14}
    for name, y in rows.items():
        ax.text(0.0, y + 0.04, name, fontsize=8, ha="left", va="center")
    for i in range(3):  # the victim's writes, then its fsync
        box(ax, 0.2 + 0.08 * i, rows["victim"], 0.06, 0.08, "w", VICTIM, size=7,
            text_color="white")
    if shared:
        for i in range(4):  # the neighbour writes through the same file system
            box(ax, 0.2 + 0.07 * i, rows["neighbour"], 0.05, 0.08, "w", NEIGHBOUR, size=7)
    else:
        ax.text(0.2, rows["neighbour"] + 0.04, "(its writes go to another journal)",
                fontsize=7, va="center", color="0.4")
    start = 0.5
    ax.text(start, rows["victim"] + 0.12, "fsync()", fontsize=8, ha="left", va="center")
    # the transaction: every tenant's metadata changes since the last commit
    tiles = [VICTIM] * 3 + ([NEIGHBOUR] * 4 if shared else [])
    width = 0.035 * len(tiles) + 0.02
    box(ax, start, rows["jbd2"], width, 0.1, "", "white", style="--")
    for i, colour in enumerate(tiles):
        ax.add_patch(Rectangle((start + 0.01 + 0.035 * i, rows["jbd2"] + 0.02), 0.03, 0.06,
                               facecolor=colour, edgecolor="none"))
    ax.text(start + width + 0.02, rows["jbd2"] + 0.05, "the running\ntransaction", fontsize=7,
            va="center")
    arrow(ax, (start + width / 2, rows["jbd2"]), (start + width / 2, rows["disk"] + 0.1))
    # the commit: ordered mode writes the transaction's data, then its journal blocks, a flush
    commit = 0.1 + 0.045 * len(tiles)
    box(ax, start, rows["disk"], commit, 0.1, "commit + flush", DISK, size=7)
    end = start + commit
    ax.annotate("", (start, rows["victim"] - 0.03), (end, rows["victim"] - 0.03),
                arrowprops={"arrowstyle": "<->", "color": VICTIM})
    ax.text((start + end) / 2, rows["victim"] - 0.08, "the victim waits", fontsize=7,
            ha="center", color=VICTIM)
    ax.plot([end, end], [rows["disk"] + 0.1, rows["victim"] - 0.03], color=VICTIM,
            linestyle=":", linewidth=1)


def journal() -> plt.Figure:
    """Why a neighbour lengthens a tenant's fsync when they share one ext4 journal."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 2.9))
    timeline(axes[0], shared=True)
    timeline(axes[1], shared=False)
    fig.text(0.5, 0.02, "ext4 (data=ordered) logs metadata changes in one transaction per file "
             "system; its kernel thread jbd2 commits it every 5 s or when an fsync asks.\n"
             "An fsync waits for the whole commit: on a shared journal that includes the "
             "neighbour's changes (and, ordered, its data).", ha="center", fontsize=8)
    fig.subplots_adjust(bottom=0.12, top=0.9, wspace=0.05)
    return fig


def weights() -> plt.Figure:
    """Proportional weights: the scheduler divides the disk between cgroups, jbd2 outside."""
    fig, ax = plt.subplots(figsize=(9, 3.2))
    blank(ax, "cgroup weights: the I/O scheduler divides the disk's service in proportion")
    box(ax, 0.02, 0.62, 0.22, 0.16, "victim's cgroup\nweight 700", VICTIM, text_color="white")
    box(ax, 0.02, 0.36, 0.22, 0.16, "neighbour's cgroup\nweight 300", NEIGHBOUR)
    box(ax, 0.02, 0.08, 0.22, 0.16, "root cgroup: jbd2\n(no tenant's weight)", JOURNAL,
        text_color="white")
    box(ax, 0.38, 0.3, 0.2, 0.3, "I/O scheduler\n(BFQ here)", "white")
    for y in (0.70, 0.44, 0.16):
        arrow(ax, (0.24, y), (0.38, 0.45))
    arrow(ax, (0.58, 0.45), (0.66, 0.45))
    # what the weights promise: 70% / 30% of what the tenants get
    ax.add_patch(Rectangle((0.66, 0.5), 0.7 * 0.3, 0.12, facecolor=VICTIM))
    ax.add_patch(Rectangle((0.66 + 0.7 * 0.3, 0.5), 0.3 * 0.3, 0.12, facecolor=NEIGHBOUR))
    ax.text(0.81, 0.68, "the disk's service: 70 / 30", ha="center", fontsize=8)
    ax.add_patch(Rectangle((0.66, 0.28), 0.6 * 0.3, 0.12, facecolor=VICTIM))
    ax.add_patch(Rectangle((0.66 + 0.18, 0.28), 0.26 * 0.3, 0.12, facecolor=NEIGHBOUR))
    ax.add_patch(Rectangle((0.66 + 0.258, 0.28), 0.042, 0.12, facecolor=JOURNAL))
    ax.text(0.81, 0.2, "jbd2's commits take their part outside the split", ha="center",
            fontsize=8)
    ax.text(0.5, -0.02, "The thesis's weights divide disk time (p. 29); BFQ's divide sectors "
            "of service. Either way a tenant is charged for its own requests only: what jbd2 "
            "writes for it is nobody's.", ha="center", fontsize=8)
    return fig


ARMS = vocabulary.ARMS
COLUMN = 0.18  # an arm's width in the figure; ARMS side by side fill it


def arm_column(ax: plt.Axes, x: float, arm: str) -> None:
    """One arm: its tenants, where their file systems and journals are, and whose cgroup each
    jbd2 thread sits in."""
    width = COLUMN
    ax.text(x + width / 2, 0.95, arm, ha="center", fontsize=9, weight="bold")
    colours = (VICTIM, NEIGHBOUR)
    for i, colour in enumerate(colours):  # a dashed box per tenant's cgroup
        left = x + i * width / 2
        top = 0.88
        height = 0.62 if arm in ("vm", "journal-accounted") else 0.26
        box(ax, left + 0.005, top - height, width / 2 - 0.01, height, "", "white",
            edge=colour, style="--")
        box(ax, left + 0.015, top - 0.12, width / 2 - 0.03, 0.08, "tenant", colour, size=7,
            text_color="white" if colour == VICTIM else "black")
        if arm == "vm":
            box(ax, left + 0.015, top - 0.36, width / 2 - 0.03, 0.2, "guest\next4 +\njbd2",
                "white", size=7)
            box(ax, left + 0.015, top - 0.56, width / 2 - 0.03, 0.14, "QEMU\n(image)",
                "white", size=7)
    if arm == "shared-journal":
        box(ax, x + 0.01, 0.36, width - 0.02, 0.18, "one ext4\none jbd2\n(root cgroup)",
            JOURNAL, size=7, text_color="white")
    elif arm == "per-container-journal":
        for i in range(2):
            box(ax, x + 0.01 + i * width / 2, 0.36, width / 2 - 0.02, 0.18,
                "own ext4\n+ jbd2\n(root)", JOURNAL, size=7, text_color="white")
    elif arm == "journal-accounted":
        for i in range(2):
            box(ax, x + 0.015 + i * width / 2, 0.36, width / 2 - 0.03, 0.18,
                "own ext4\n+ jbd2\n(its\ncgroup)", JOURNAL, size=7, text_color="white")
    elif arm == "journal-cgroup":
        for i, colour in enumerate(colours):  # the journal's own group, its tenant's weight
            box(ax, x + 0.005 + i * width / 2, 0.33, width / 2 - 0.01, 0.24, "", "white",
                edge=colour, style=":")
            box(ax, x + 0.015 + i * width / 2, 0.36, width / 2 - 0.03, 0.18,
                "own ext4\n+ jbd2\n(own\ncgroup)", JOURNAL, size=7, text_color="white")
    box(ax, x + 0.01, 0.1, width - 0.02, 0.1, "one disk, BFQ", DISK, size=7)


def arms() -> plt.Figure:
    """The thesis's four arms and ours: where each tenant's journal is, and whose weight pays
    for it."""
    fig, ax = plt.subplots(figsize=(9.5, 3.5))
    blank(ax, "")
    step = (1 - 0.02 - COLUMN) / (len(ARMS) - 1)
    for i, arm in enumerate(ARMS):
        arm_column(ax, 0.01 + i * step, arm)
    fig.subplots_adjust(bottom=0.17)
    fig.text(0.5, 0.01, "Dashed: a tenant's cgroup (its weight). The VM's guest journals inside "
            "the guest, so its commits are its QEMU's writes; the shared journal's jbd2 is in "
            "no tenant's cgroup;\nper-container journals split the journal but not its cgroup; "
            "journal accounting moves each jbd2 thread into its tenant's cgroup (thesis Ch. 5);"
            "\nours, journal-cgroup: each jbd2 in a cgroup of its own (dotted) at its tenant's "
            "weight, controlled but charged to no tenant.", ha="center", va="bottom", fontsize=7.5)
    return fig


def interval(ax: plt.Axes, y: float, low: float, high: float, effect: float, text: str,
             colour: str) -> None:
    ax.plot([low, high], [y, y], color=colour, linewidth=2)
    ax.plot([effect], [y], "o", color=colour)
    # the text right of the axes, at the interval's height
    ax.text(1.03, y, text, va="center", fontsize=8, transform=ax.get_yaxis_transform())


def decision() -> plt.Figure:
    """How a check decides, on the ratio scale: a one-sided test against 1, or TOST within
    the x1.2 margin; and how the checks of a claim become its verdict."""
    fig, ax = plt.subplots(figsize=(9, 3.0))
    ax.set_xscale("log")
    ax.set_xlim(0.5, 1.8)
    ax.set_ylim(-0.5, 6.6)
    ax.set_yticks([])
    ax.set_xticks([0.6, 1 / 1.2, 1, 1.2, 1.5], ["0.6", "1/1.2", "1", "1.2", "1.5"])
    ax.minorticks_off()
    ax.axvline(1, color="black", linewidth=1)
    ax.axvspan(1 / 1.2, 1.2, color="0.9")
    ax.set_xlabel("effect: a ratio of our geometric means (log scale; 1 = no difference)")
    green, red, grey = "#2a9d4b", "#c03a2b", "0.45"
    interval(ax, 6, 1.15, 1.45, 1.3, "ratio, claim says > 1: above 1 -> for", green)
    interval(ax, 5, 0.7, 0.9, 0.8, "ratio: entirely below 1 -> against", red)
    interval(ax, 4, 0.85, 1.25, 1.02, "ratio: across 1 -> neither (inconclusive)", grey)
    interval(ax, 2.5, 0.92, 1.1, 1.0, "equivalent (x1.2): inside the band -> for", green)
    interval(ax, 1.5, 0.55, 0.75, 0.65, "equivalent: entirely outside -> against", red)
    interval(ax, 0.5, 0.75, 1.05, 0.9, "equivalent: across its edge -> inconclusive", grey)
    ax.set_title("How a check decides: its interval against 1, or within the x1.2 band "
                 "(grey)", fontsize=10, loc="left")
    fig.text(0.5, 0.0, "A check's p for and p against come from one t statistic; a claim is "
             "for when all its checks are (its p the largest), Holm's correction over the "
             "family's claims at 0.05.\nreproduced: for; mixed: its parts split; "
             "contradicted: against; inconclusive: neither; each naming where its testbed "
             "differs from the thesis's.", ha="center", fontsize=7.5)
    fig.subplots_adjust(bottom=0.3, right=0.55)
    return fig


DIAGRAMS: dict[str, Callable[[], plt.Figure]] = {
    "journal": journal, "weights": weights, "arms": arms, "decision": decision}


def write(folder: Path | str) -> list[Path]:
    """Every diagram as folder/<name>.svg."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    # matplotlib's own defaults under ours: a process that styled its figures (seaborn's theme,
    # as plots.py sets it) draws the same diagrams
    with plt.style.context("default"), plt.rc_context(SVG):
        for name, draw in DIAGRAMS.items():
            fig = draw()
            path = folder / f"{name}.svg"
            fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
            plt.close(fig)
            written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m journalbench.report.diagrams FOLDER")
    for written in write(sys.argv[1]):
        print(written)
