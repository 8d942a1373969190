"""The MySQL claims' guest operating point as the runs at it recorded it: each run's host.json
keeps the host's record (`calibration.mariadb_guest_point`, agent/workloads/guest_point.py)
with its sweep, the vm arm's MariaDB alone at 1, 2, 4, ... threads. For the mysql notebook: the
sweep as a table, one row per host, device profile, measurement and count, and its figure
(transactions/s and the guest's busy share against threads, the chosen count marked)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from journalbench import runfolder
from journalbench.agent.workloads.guest_point import RECORD
from journalbench.formats.guest import BUSY_LIMIT
from journalbench.formats.mariadb import GUEST_POINT
from journalbench.report.plots import titled

STEP = ["threads", "busy_share", "saturated_seconds", "seconds", "vcpu_ms_per_tx", "tps",
        "latency_ms", "keeps_up"]
COLUMNS = ["host", "profile", "accel", "measured_at", "method", "chosen", *STEP]


def folders_at_point(raw: Path | str, runs: pd.DataFrame | None = None) -> list[Path]:
    """The run folders of `raw` (raw/<host>/<run>/) whose MariaDB ran at the guest point:
    those `runs` (the campaign's tidy table) says so (`client_point`), or every run folder
    when no table is given (a campaign all of whose runs are at the point)."""
    raw = Path(raw)
    if runs is None:
        return sorted(path.parent for path in raw.glob(f"*/*/{runfolder.HOST}"))
    if "client_point" not in runs:
        return []
    mine = runs[runs["client_point"] == GUEST_POINT].drop_duplicates(["host", "run_id"])
    return [raw / str(host) / str(run) for host, run in zip(mine["host"], mine["run_id"],
                                                            strict=True)]


def sweeps(folders: Iterable[Path]) -> pd.DataFrame:
    """The sweeps the run folders' host.json record, each once (per host, device profile and
    measurement) as its latest method read it (a record read again from its kept runs keeps
    its measurement's time: runs before the reading keep the earlier one), a row per count;
    empty where none recorded one."""
    latest: dict[tuple, dict[str, Any]] = {}  # (host, profile, measured_at) -> its record
    for folder in folders:
        path = folder / runfolder.HOST
        if not path.is_file():
            continue
        facts = json.loads(path.read_text())
        record = (facts.get("calibration") or {}).get(RECORD)
        if not record:
            continue
        key = (facts.get("host"), record.get("profile"), record.get("measured_at"))
        if key not in latest or record.get("method", 0) > latest[key].get("method", 0):
            latest[key] = record
    rows = [{"host": host, "profile": profile, "accel": record.get("accel"),
             "measured_at": measured_at, "method": record.get("method"),
             "chosen": record.get("threads"), **{c: step.get(c) for c in STEP}}
            for (host, profile, measured_at), record in latest.items()
            for step in record["sweep"]]
    return pd.DataFrame(rows, columns=COLUMNS)


def figure(sweep: pd.DataFrame, host: str) -> plt.Figure:
    """Transactions/s and the guest's busy share against threads (log 2), one line per host,
    device profile and measurement; the half-busy line, the counts with a saturated second
    (x), and the chosen count (a ring)."""
    fig, (rate, busy) = plt.subplots(1, 2, figsize=(9, 3.4), sharex=True)
    for (name, profile, _), one in sweep.groupby(["host", "profile", "measured_at"],
                                                 sort=True):
        one = one.sort_values("threads")
        label = f"{name}, {profile}"
        line, = rate.plot(one["threads"], one["tps"], marker="o", label=label)
        busy.plot(one["threads"], one["busy_share"], marker="o", color=line.get_color(),
                  label=label)
        hot = one[one["saturated_seconds"] > 0]
        busy.scatter(hot["threads"], hot["busy_share"], marker="x", s=80, color="#c03a2b",
                     zorder=3, label="saturated in some second" if len(hot) else None)
        chosen = one[one["threads"] == one["chosen"]]
        for ax, column in ((rate, "tps"), (busy, "busy_share")):
            ax.scatter(chosen["threads"], chosen[column], s=220, facecolors="none",
                       edgecolors="black", zorder=4,
                       label="the operating point" if ax is busy else None)
    busy.axhline(BUSY_LIMIT, color="#8c8c8c", linestyle="--", label="half busy")
    busy.set_ylim(0, 1.05)
    rate.set_ylabel("transactions/s")
    busy.set_ylabel("guest's vCPU busy share")
    for ax in (rate, busy):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sysbench threads")
        ax.set_xticks(sorted(set(sweep["threads"])), [str(t) for t in sorted(set(
            sweep["threads"]))])
    busy.legend(fontsize=8)
    return titled(fig, "The guest operating point: the vm arm's MariaDB alone, by threads",
                  host)
