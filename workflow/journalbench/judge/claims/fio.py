"""The fio claims' container halves (C3, C4, C8, C9, C10, C15, C17, C18): each builder picks its
runs by experiment (journalbench.analysis) and states its checks, margins and preconditions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from journalbench.judge import selection
from journalbench.judge.claims import checks
from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.preconditions import JOURNAL_REGIME
from journalbench.judge.claims.registry import checks_of
from journalbench.vocabulary import (
    JOURNAL_ACCOUNTED,
    PER_CONTAINER_JOURNAL,
    SHARED_JOURNAL,
    THESIS_CONTAINER_ARMS,
)

NEIGHBOURS = ["no-fsync", "low-fsync", "high-fsync"]  # the thesis's order of fsync rates
JOURNAL = {"needs": (JOURNAL_REGIME,)}


def where(rows: pd.DataFrame, **values: object) -> pd.DataFrame:
    # one NumPy mask (no Series per column): the claims call this thousands of times
    mask = np.ones(len(rows), dtype=bool)
    for column, value in values.items():
        mask &= rows[column].to_numpy() == value
    return rows[mask]


@checks_of("C3")
def c3(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = selection.split(runs, experiments)
    # Fig 3.7 shows KVM, LXC and OpenVZ (p. 33): the shared journal's is the thesis's; the
    # other two arms' splits are ours (the thesis shows none for two sequential writers)
    thesis = {SHARED_JOURNAL: "holds 70/30 (Fig 3.7: ~70% / ~30%, p. 33)"}
    return [checks.share("C3", f"{arm}: the 70% writer's share beside a 30% writer",
                         where(rows, arm=arm), "achieved_share", 0.7,
                         thesis=thesis.get(arm, "none (Fig 3.7 shows KVM, LXC and OpenVZ "
                                                "only): holds 70/30 is ours"))
            for arm in THESIS_CONTAINER_ARMS]


@checks_of("C4")
def c4(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.io_size(runs, experiments), arm=SHARED_JOURNAL)
    return [checks.paired("C4", f"{SHARED_JOURNAL}: MB/s of the 30% 64 KiB writer over the 70% "
                          "16 KiB writer, same runs", rows, "throughput_mb_s", "neighbour",
                          "victim", thesis="> x1 (Fig 3.4, p. 30; no number in the text)",
                          unit=" MB/s")]


@checks_of("C8")
def c8(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C8"), arm=SHARED_JOURNAL,
                 preset="high-fsync")
    return [checks.trend("C8", f"{SHARED_JOURNAL}: the high-fsync victim's MB/s beside a "
                         "no -> low -> high-fsync neighbour (ratio per step)", rows,
                         "throughput_mb_s", "beside", NEIGHBOURS, -1,
                         thesis="falls (Fig 4.3, p. 39; no MB/s in the text)", unit=" MB/s",
                         **JOURNAL)]


@checks_of("C9")
def c9(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C9"), arm=SHARED_JOURNAL,
                 preset="high-fsync")
    return [checks.trend("C9", f"{SHARED_JOURNAL}: the high-fsync victim's mean fsync latency "
                         "beside a no -> low -> high-fsync neighbour (ratio per step)", rows,
                         "fsync_lat_mean_ms", "beside", NEIGHBOURS, 1, interest=1.14,
                         thesis="x1.14 per step (Table 4.1, p. 43: LXC 33.81/38.86/44.09 ms; "
                         "OpenVZ 31.78/39.81/50.41, x1.26)", unit=" ms",
                         **JOURNAL)]


@checks_of("C10")
def c10(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C10"), arm=SHARED_JOURNAL,
                 preset="low-fsync")
    no, high = where(rows, beside="no-fsync"), where(rows, beside="high-fsync")
    return [
        checks.ratio("C10", f"{SHARED_JOURNAL}: the low-fsync 70% tenant's share beside a "
                     "no-fsync over beside a high-fsync neighbour", no, high, "achieved_share",
                     interest=1.2, thesis="x1.2-2.0 (p. 44: ~60% beside no-fsync -> 50-30% "
                     "(LXC), 50% (OpenVZ) beside high-fsync)", **JOURNAL),
        checks.ratio("C10", f"{SHARED_JOURNAL}: jbd2's share of the disk beside a high-fsync "
                     "over beside a no-fsync neighbour", high, no, "shared_jbd2_share",
                     interest=21 / 9, thesis="x2.3-2.8 (p. 44: LXC 10% -> 28%, OpenVZ 9% -> 21%)",
                     **JOURNAL),
    ]


@checks_of("C15")
def c15(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = selection.sequential_writers(runs, experiments)

    def writer(arm: str, case: str) -> pd.DataFrame:
        return where(rows, arm=arm, case=case)

    per, shared = PER_CONTAINER_JOURNAL, SHARED_JOURNAL
    return [
        checks.equivalent("C15", "sequential writer alone: per-container over shared MB/s",
                          writer(per, "alone"), writer(shared, "alone"), "throughput_mb_s",
                          thesis="x1 (no cost alone, Fig 5.2, p. 62; no MB/s in the text)",
                          unit=" MB/s"),
        checks.ratio("C15", "70% writer beside a no-fsync writer: per-container over shared "
                     "MB/s", writer(per, "beside no-fsync"), writer(shared, "beside no-fsync"),
                     "throughput_mb_s", thesis="> x1 (beats shared, Fig 5.2, p. 62; weights "
                     "not stated)", unit=" MB/s", **JOURNAL),
        checks.ratio("C15", "high-fsync pair: the victim's fsync latency, shared over "
                     "per-container", writer(shared, "beside high-fsync"),
                     writer(per, "beside high-fsync"), "fsync_lat_mean_ms", interest=1.38,
                     thesis="x1.38 (p. 63: 80 vs 58 ms, the high-fsync case; whose fsync is "
                     "not stated)", unit=" ms", **JOURNAL),
    ]


@checks_of("C17")
def c17(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = selection.high_fsync_pair(runs, experiments)
    accounted = where(rows, arm=JOURNAL_ACCOUNTED)
    victims = where(rows, tenant="victim")
    return [
        checks.share("C17", f"{JOURNAL_ACCOUNTED}: the 70% high-fsync writer's share beside a "
                     "30% one", where(accounted, tenant="victim"), "achieved_share", 0.7,
                     thesis="holds 70/30 (Fig 5.5b, p. 66; its jbd2s 20%/10%)", **JOURNAL),
        checks.ratio("C17", "the 70% high-fsync writer's share, journal-accounted over "
                     "per-container", where(victims, arm=JOURNAL_ACCOUNTED),
                     where(victims, arm=PER_CONTAINER_JOURNAL), "achieved_share",
                     interest=70 / 65, thesis="x1.1-2.0 (p. 66: 70% against a 35-65% swing)",
                     **JOURNAL),
        checks.paired("C17", f"{JOURNAL_ACCOUNTED}: fsync latency of the 30% over the 70% "
                      "writer, same runs", accounted, "fsync_lat_mean_ms", "neighbour",
                      "victim", interest=1.91, thesis="x1.91 (p. 67: 86 vs 45 ms; ~55 ms each "
                      "without accounting)", unit=" ms",
                      **JOURNAL),
    ]


@checks_of("C18")
def c18(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = where(selection.by_beside(runs, experiments, "C18"), arm=JOURNAL_ACCOUNTED,
                 preset="high-fsync")
    return [checks.equivalent("C18", f"{JOURNAL_ACCOUNTED}: the high-fsync victim's MB/s beside "
                              f"a {beside} over beside a no-fsync neighbour",
                              where(rows, beside=beside), where(rows, beside="no-fsync"),
                              "throughput_mb_s", thesis="x1 (stable ~2.7 MB/s, p. 68)",
                              unit=" MB/s",
                              **JOURNAL)
            for beside in ("low-fsync", "high-fsync")]
