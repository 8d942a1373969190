"""Figure builders shared by the notebooks. Every figure names the host it was measured on,
and its arms as analysis.arm_label does (a VM under TCG says so), the VM first."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from journalbench.analysis import arm_order, labelled_arms

sns.set_theme(style="whitegrid", context="notebook")


def arms_in(frame: pd.DataFrame) -> list[str]:
    return arm_order(frame["arm"])


def titled(fig: plt.Figure, title: str, host: str) -> plt.Figure:
    fig.suptitle(f"{title}\n{host}", fontsize=10)
    fig.tight_layout()
    return fig


def bars(frame: pd.DataFrame, x: str, y: str, hue: str, title: str, host: str,
         ylabel: str, order: list[str] | None = None) -> plt.Figure:
    """Median over repetitions with a 95% bootstrap CI, per x and hue."""
    if "arm" in (x, hue):
        frame = labelled_arms(frame)
    fig, ax = plt.subplots(figsize=(8, 4))
    sns.barplot(data=frame, x=x, y=y, hue=hue, order=order, estimator=np.median,
                errorbar=("ci", 95), seed=1, ax=ax,
                hue_order=arms_in(frame) if hue == "arm" else None)
    ax.set_ylabel(ylabel)
    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title_fontsize=9)
    return titled(fig, title, host)


def shares(frame: pd.DataFrame, x: str, title: str, host: str, target: float | None = None,
           column: str = "achieved_share") -> plt.Figure:
    """Each run's share (dots) per condition, with the share the weights promise."""
    frame = labelled_arms(frame)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    sns.stripplot(data=frame, x=x, y=column, hue="arm" if x != "arm" else None, dodge=x != "arm",
                  order=arms_in(frame) if x == "arm" else None,
                  hue_order=arms_in(frame) if x != "arm" else None, size=7, ax=ax)
    if target is not None:
        ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of the disk (bytes)")
    return titled(fig, title, host)


def share_timeline(parts: pd.DataFrame, title: str, host: str) -> plt.Figure:
    """Stacked per-second disk shares of tenants (own I/O) and jbd2 threads."""
    wide = parts.pivot_table(index="t", columns="label", values="share", aggfunc="sum").fillna(0)
    # tenants at the bottom in spec order (victim first), journal threads on top
    order = list(dict.fromkeys(parts.sort_values("kind", key=lambda k: k != "tenant",
                                                 kind="stable")["label"]))
    wide = wide[order]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    ax.stackplot(wide.index, wide.T.to_numpy(), labels=wide.columns, alpha=0.85)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("share of the device's bytes")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    return titled(fig, title, host)


def save(fig: plt.Figure, figures: Path | str, name: str) -> list[Path]:
    """Write the figure as PNG and PDF; return the paths."""
    figures = Path(figures)
    figures.mkdir(parents=True, exist_ok=True)
    paths = [figures / f"{name}.png", figures / f"{name}.pdf"]
    fig.savefig(paths[0], dpi=130, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    return paths
