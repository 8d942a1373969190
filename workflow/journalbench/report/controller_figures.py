"""The controller study's own figures (its effects by testbed are plots.effects_by_setting):
iocost's calibration (the device's latency against load, the QoS the procedure read off it),
its validation on random readers, what iocost did each second of a run (vrate, and how long
each tenant and journal group waited, ran in debt or was delayed), the journal's own cgroup
against its neighbours for C24, and the write-back factor."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from journalbench.report.plots import titled

COLOURS = {"victim": "#4c72b0", "neighbour": "#dd8452", "journal": "#8c8c8c",
           "vrate": "#2a9d4b"}


def calibration(sweep: pd.DataFrame, qos: Mapping[str, object], host: str) -> plt.Figure:
    """p50 and p95 completion latency against load (a share of the model's random 4 KiB
    rate), reads and writes, with the latency target the procedure set (the knee: the heaviest
    load whose p95 is within twice the lightest's)."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, (rw, target) in zip(axes, (("randread", "rlat"), ("randwrite", "wlat")),
                                strict=True):
        mine = sweep[sweep["rw"] == rw].sort_values("load")
        for column, style in (("p50_us", ":"), ("p95_us", "-")):
            ax.plot(mine["load"] * 100, mine[column] / 1e3, style, marker="o",
                    label=column.split("_")[0], color="#4c72b0")
        ax.axhline(float(qos[target]) / 1e3, color="#c03a2b", linestyle="--",
                   label=f"QoS {target} = {float(qos[target]) / 1e3:.1f} ms")
        ax.set_title(f"{rw} 4 KiB, depth 16 (Poisson)", fontsize=9)
        ax.set_xlabel("load, % of the model's random rate")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("completion latency, ms (log)")
    return titled(fig, "iocost's calibration: the device's latency against load, and the QoS "
                  "read off its knee", host)


def division(table: pd.DataFrame, host: str) -> plt.Figure:
    """What the weights divide, per testbed (controller_study.division_table): the 80% of two
    equal random readers, its share of their bytes (its weight's 0.8 dashed, the pass mark
    dotted); at equal weights, the 128 KiB reader's share of bytes and of device time beside an
    8 KiB one, random and sequential (0.5 dashed: what the divided quantity gives each)."""
    panels = [("at-all", "random", "80/20 equal random readers: the 80% one's share"),
              ("sizes", "random", "equal weights, random readers of unequal sizes"),
              ("sizes", "sequential", "equal weights, sequential readers of unequal sizes")]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True)
    for ax, (pair, pattern, title) in zip(axes, panels, strict=True):
        mine = table[(table["pair"] == pair) & (table["pattern"] == pattern)]
        beds = list(dict.fromkeys(mine["testbed"].astype(str)))
        for offset, (measure, colour) in zip((-0.12, 0.12), (("bytes", "#4c72b0"),
                                                           ("device time", "#dd8452")),
                                             strict=True):
            rows = mine[mine["measure"] == measure].set_index("testbed")
            if rows.empty:
                continue
            x = np.array([beds.index(str(b)) for b in rows.index]) + offset
            ax.errorbar(x, rows["effect"], yerr=[rows["effect"] - rows["low"],
                                                 rows["high"] - rows["effect"]],
                        fmt="o", color=colour, capsize=3, label=f"share of {measure}")
        ax.axhline(0.8 if pair == "at-all" else 0.5, color="0.3", linestyle="--")
        if pair == "at-all":
            ax.axhline(0.65, color="0.5", linestyle=":")
        ax.set_xticks(range(len(beds)), beds)
        ax.set_xlim(-0.6, max(len(beds), 1) - 0.4)
        ax.set_title(title if not mine.empty else f"{title}: not measured", fontsize=8.5)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, loc="lower left")
    axes[0].set_ylabel("the heavier / bigger reader's share")
    return titled(fig, "What the weights divide: validation pairs no claim uses, per testbed",
                  host)


def validation(table: pd.DataFrame, host: str) -> plt.Figure:
    """Per testbed: the 80% random reader's share (target dashed) and the pair's MB/s over the
    80% reader's alone (1 dotted: all the device it had alone), each with its 95% interval."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for ax, (measure, line) in zip(axes, ((0, 0.8), (1, 1.0)), strict=True):
        names = list(dict.fromkeys(table["measure"]))
        if measure >= len(names):
            ax.set_visible(False)
            continue
        mine = table[table["measure"] == names[measure]].reset_index(drop=True)
        x = np.arange(len(mine))
        ax.errorbar(x, mine["effect"], yerr=[mine["effect"] - mine["low"],
                                             mine["high"] - mine["effect"]],
                    fmt="o", color="#4c72b0", capsize=3)
        ax.axhline(line, color="0.3", linestyle="--" if measure == 0 else ":")
        ax.set_xticks(x, mine["testbed"].astype(str))
        ax.set_title(names[measure], fontsize=9)
    return titled(fig, "iocost's validation on two random 4 KiB readers at 80/20 (no claim's "
                  "workload)", host)


def trace(rows: pd.DataFrame, host: str, columns: int = 3) -> plt.Figure:
    """One panel per run: iocost's vrate (% of its model, right axis) and, stacked below it
    per second, how long each tenant (and journal group) waited for iocost (`cost_wait_s`)."""
    runs = list(dict.fromkeys(rows["run_id"]))
    lines = max(1, int(np.ceil(len(runs) / columns)))
    fig, axes = plt.subplots(lines, columns, figsize=(4 * columns, 2.6 * lines), squeeze=False,
                             sharex=True)
    handles: dict[str, object] = {}  # one legend entry per role, whichever panel drew it
    for ax, run in zip(axes.flat, runs, strict=False):
        mine = rows[rows["run_id"] == run]
        first = mine.iloc[0]
        for source, group in mine[mine["kind"] != "device"].groupby("source", sort=False):
            role = ("journal" if group["kind"].iloc[0] == "jbd2"
                    else "victim" if source == "victim" else "neighbour")
            line, = ax.plot(group["t"], group["cost_wait_s"].fillna(0), color=COLOURS[role],
                            linestyle=":" if role == "journal" else "-")
            handles.setdefault(f"{role}'s wait", line)
        ax.set_ylabel("s waited a second", fontsize=8)
        right = ax.twinx()
        device = mine[mine["kind"] == "device"]
        vrate, = right.plot(device["t"], device["cost_vrate_pct"], color=COLOURS["vrate"],
                            linewidth=1)
        handles.setdefault("vrate (right)", vrate)
        top = device["cost_vrate_pct"].max()
        right.set_ylim(0, max(110.0, float(top) * 1.1 if pd.notna(top) else 0.0))
        right.set_ylabel("vrate %", fontsize=8, color=COLOURS["vrate"])
        ax.set_title(f"{first['arm']} beside {first['beside']}", fontsize=8)
        ax.tick_params(labelsize=7)
        right.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(runs):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("seconds into the run")
    fig.legend(list(handles.values()), list(handles), loc="lower center",
               ncol=len(handles), fontsize=8, bbox_to_anchor=(0.5, -0.04))
    return titled(fig, "What iocost did each second: its vrate and each group's wait", host)


def journal_own_cgroup(means: pd.DataFrame, host: str) -> plt.Figure:
    """The 70% high-fsync victim's share per arm (per-container, journal-cgroup,
    journal-accounted), a panel per neighbour, a dot per testbed with its 95% interval."""
    neighbours = list(dict.fromkeys(means["beside"]))
    fig, axes = plt.subplots(1, len(neighbours), figsize=(4.5 * len(neighbours), 3.4),
                             squeeze=False, sharey=True)
    arms = list(dict.fromkeys(means["arm"]))
    beds = list(dict.fromkeys(means["testbed"].astype(str)))
    width = 0.8 / max(1, len(beds))
    for ax, beside in zip(axes[0], neighbours, strict=True):
        for i, bed in enumerate(beds):
            mine = means[(means["beside"] == beside) & (means["testbed"].astype(str) == bed)]
            mine = mine.set_index("arm").reindex(arms)
            x = np.arange(len(arms)) - 0.4 + width * (i + 0.5)
            ax.errorbar(x, mine["effect"], yerr=[mine["effect"] - mine["low"],
                                                 mine["high"] - mine["effect"]],
                        fmt="o", capsize=3, label=bed)
        ax.axhline(0.7, color="0.3", linestyle="--")
        ax.set_xticks(np.arange(len(arms)), arms, rotation=12, fontsize=8)
        ax.set_title(f"beside a 30% {beside} writer", fontsize=9)
    axes[0][0].set_ylabel("the 70% victim's share")
    axes[0][-1].legend(fontsize=8)
    return titled(fig, "Where the journal sits: root, a cgroup of its own, its tenant's", host)
