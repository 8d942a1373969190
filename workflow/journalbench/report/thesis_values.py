"""The thesis's own numbers that a figure of ours can be read against, in one place: per
figure, each value the thesis states with where it states it (figure or table, page), the
platform it measured it on and which of our arms and conditions stands for that platform
(LXC and OpenVZ for `shared-journal`, KVM for `vm`, OpenVZ with Ploop for
`per-container-journal`, with cgclassify for `journal-accounted`: docs/claims.md).

The numbers are those the claims' checks state (`thesis=` in journalbench/judge/claims/*.py,
the catalogue's statements and docs/claims.md); tests/test_plots.py checks each is written there
as it is here. A figure whose claim states no number of its kind is in NO_THESIS_VALUE with
the reason, so every figure is one or the other."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class ThesisValue:
    """One number of the thesis (or a range `value`-`high`, e.g. a share that swung)."""

    value: float
    arm: str  # our arm that stands for the thesis's platform
    platform: str  # the thesis's: "LXC", "OpenVZ", "KVM", ...
    where: str  # the thesis's figure or table and page
    at: str | None = None  # the condition (x level) it belongs to; None: every one drawn
    high: float | None = None  # the top of a range

    @property
    def label(self) -> str:
        """The legend's entry: every mark of the thesis says "thesis"."""
        return f"thesis: {self.platform} ({self.where})"


def _each(values: dict[str, float], **fixed: object) -> tuple[ThesisValue, ...]:
    """One value per condition (`at`: value), the rest fixed."""
    return tuple(ThesisValue(value=v, at=at, **fixed) for at, v in values.items())


NEIGHBOURS = ("no-fsync", "low-fsync", "high-fsync")
BUFFERED = ("buffered-no-fsync", "buffered-low-fsync", "buffered-high-fsync")
SHARED, PER, ACCOUNTED, VM = ("shared-journal", "per-container-journal", "journal-accounted",
                              "vm")
T41 = "Table 4.1, p. 43"

THESIS_VALUES: dict[str, tuple[ThesisValue, ...]] = {
    # C3: every platform holds the split of two sequential writers
    "c3-split": (ThesisValue(0.70, SHARED, "LXC, OpenVZ ~70%", "Fig 3.7, p. 33"),
                 ThesisValue(0.70, VM, "KVM ~70%", "Fig 3.7, p. 33")),
    # C8: the VM's high-fsync victim runs at a constant ~2.5 MB/s
    "c8-victim-throughput": _each(dict.fromkeys(NEIGHBOURS, 2.5), arm=VM,
                                  platform="KVM ~2.5 MB/s", where="Fig 4.3, p. 40"),
    # C9: the victim's mean fsync latency, ms
    "c9-fsync-latency": (
        *_each(dict(zip(NEIGHBOURS, (33.81, 38.86, 44.09), strict=True)), arm=SHARED,
               platform="LXC", where=T41),
        *_each(dict(zip(NEIGHBOURS, (31.78, 39.81, 50.41), strict=True)), arm=SHARED,
               platform="OpenVZ", where=T41),
        *_each(dict(zip(NEIGHBOURS, (18.58, 18.94, 18.27), strict=True)), arm=VM,
               platform="KVM", where=T41)),
    # C10: the low-fsync 70% container's share, ~60% beside no-fsync, 30-50% beside high
    "c10-low-fsync-share": (
        ThesisValue(0.60, SHARED, "LXC, OpenVZ ~60%", "p. 44", at="no-fsync"),
        ThesisValue(0.30, SHARED, "LXC 50-30%", "p. 44", at="high-fsync", high=0.50),
        ThesisValue(0.50, SHARED, "OpenVZ 50%", "p. 44", at="high-fsync")),
    # C17: accounting holds 70/30; per-container journals swing 35-65%
    "c17-split": (ThesisValue(0.70, ACCOUNTED, "OpenVZ + accounting ~70%", "Fig 5.5b, p. 66"),
                  ThesisValue(0.35, PER, "OpenVZ per-container 35-65%", "p. 66", high=0.65)),
    # C18: with accounting the victim is stable at ~2.7 MB/s; KVM ~2.5 in Fig 4.3's runs
    "c18-victim-by-neighbour": (
        *_each(dict.fromkeys(NEIGHBOURS, 2.7), arm=ACCOUNTED,
               platform="OpenVZ + accounting ~2.7 MB/s", where="p. 68"),
        *_each(dict.fromkeys(NEIGHBOURS, 2.5), arm=VM, platform="KVM ~2.5 MB/s",
               where="Fig 4.3, p. 40")),
    # C6: two MySQL instances at 70/30: the VM holds the split, containers swing 0-55%
    # (the containers' 0-55% is of per-second shares: the swing figure's)
    "c6-mysql-pair-split": (ThesisValue(0.70, VM, "KVM ~70%", "Fig 4.2a, p. 37"),),
    "c6-mysql-pair-swing": (ThesisValue(0.55, SHARED, "LXC, OpenVZ swing 0-55%", "p. 37"),),
    # C7: InnoDB's fsyncs per second, the pair's instance
    "c7-mysql-fsyncs": (ThesisValue(27, VM, "KVM 27/s", "p. 39", at="mariadb"),
                        ThesisValue(14, SHARED, "LXC 14/s", "p. 39", at="mariadb"),
                        ThesisValue(12, SHARED, "OpenVZ 12/s", "p. 39", at="mariadb")),
    # C11, C12: the VM's MySQL transactions/s whatever the neighbour
    "c11-mysql-70-by-neighbour": _each(dict.fromkeys(NEIGHBOURS, 425), arm=VM,
                                       platform="KVM ~425 req/s", where="Fig 4.8, p. 47"),
    "c11-mysql-30-by-neighbour": _each(dict.fromkeys(NEIGHBOURS, 220), arm=VM,
                                       platform="KVM ~220 req/s", where="Fig 4.9, p. 49"),
    # C13, C19: MySQL's share beside a fio writer
    "c19-mysql-70-share": (
        *_each(dict.fromkeys(NEIGHBOURS, 0.70), arm=VM, platform="KVM holds 70%",
               where="Fig 4.12, pp. 51-52"),
        *_each(dict.fromkeys(NEIGHBOURS, 0.70), arm=ACCOUNTED,
               platform="OpenVZ + accounting ~70%", where="Fig 5.7, pp. 68-69"),
        ThesisValue(0.25, PER, "OpenVZ per-container", "Fig 5.8, pp. 68-69", at="no-fsync"),
        ThesisValue(0.30, PER, "OpenVZ per-container", "Fig 5.8, pp. 68-69", at="low-fsync"),
        ThesisValue(0.30, PER, "OpenVZ per-container", "Fig 5.8, pp. 68-69", at="high-fsync",
                    high=0.50)),
    "c19-mysql-30-share": (
        *_each(dict.fromkeys(NEIGHBOURS, 0.30), arm=VM, platform="KVM holds 30%",
               where="Fig 4.15, pp. 51-52"),
        *_each(dict.fromkeys(NEIGHBOURS, 0.40), arm=ACCOUNTED,
               platform="OpenVZ + accounting ~40%", where="Fig 5.9, pp. 68-69")),
    # C22, C23: Redis beside a buffered writer
    "c22-redis-by-neighbour": (
        *_each(dict.fromkeys(BUFFERED, 1300), arm=VM, platform="KVM ~1300 ops/s",
               where="p. 72"),
        *_each(dict.fromkeys(BUFFERED, 2200), arm=PER,
               platform="OpenVZ per-container ~2200 ops/s", where="p. 75")),
}

# the figures with no thesis number to mark, and why
NO_THESIS_VALUE: dict[str, str] = {
    "c1-base-alone": "C1: a direction only (Fig 3.5; no number in the text)",
    "c2-base-paired": "C2: a direction only (Fig 3.6; no number in the text)",
    "c4-io-size": "C4: a direction only (Fig 3.4; no number in the text)",
    "c5-mysql-one-or-two": "C5, C14: ratios only (LXC 22%, OpenVZ 25% below KVM; no req/s)",
    "c15-arms-throughput": "C15: no MB/s in the text (its 80 vs 58 ms are fsync latencies)",
    "c21-redis-alone": "C21: a direction only (Fig 5.14; no ops/s in the text)",
    "c23-redis-share": "C23: the thesis gives no Redis share",
    "c24-starvation": "C24 is ours: the thesis has no such experiment",
    "bfq-c24-shares": "C24 is ours: the thesis names no I/O scheduler",
    "device-class-effects": "effects on two devices; each check's effect of interest (the "
                            "thesis's effect where it gives one) is drawn as its dotted lines",
    "bfq-isolation-effects": "effects under BFQ's settings, which the thesis does not vary",
    "controller-effects": "effects on four testbeds; each check's value if the thesis held "
                          "(a share's target, a ratio's effect) is drawn in its colour",
    "controller-journal-cgroup": "C24 is ours, and journal-cgroup is our arm",
    "controller-calibration": "iocost's calibration: the thesis ran no iocost",
    "controller-validation": "iocost's validation: the thesis ran no iocost",
    "controller-division": "validation pairs no claim uses: the thesis measured none",
    "controller-trace": "iocost's own statistics: the thesis ran no iocost",
    "c13-mysql-shares-vm": "per-second shares of one run: the thesis's are its own plots",
    "c13-mysql-shares-shared-journal": "per-second shares of one run (the thesis's ~20% is "
                                       "of all disk I/O, Fig 4.10, 4.11)",
    "c13-mysql-shares-per-container-journal": "per-second shares of one run",
    "c13-mysql-shares-journal-accounted": "per-second shares of one run",
    "c6-mysql-pair-shares-vm": "per-second shares of one run",
    "c6-mysql-pair-shares-shared-journal": "per-second shares of one run",
    "c6-mysql-pair-shares-per-container-journal": "per-second shares of one run",
    "c6-mysql-pair-shares-journal-accounted": "per-second shares of one run",
    "c10-shares-beside-no-fsync": "per-second shares of one run (jbd2's 9-10% is in the C10 "
                                  "check's table)",
    "c10-shares-beside-high-fsync": "per-second shares of one run (jbd2's 21-28% is in the C10 "
                                    "check's table)",
    "c17-shares-per-container-journal": "per-second shares of one run",
    "c17-shares-journal-accounted": "per-second shares of one run",
    "c23-redis-shares-shared-journal": "per-second shares of one run",
    "c23-redis-shares-per-container-journal": "per-second shares of one run",
    "c23-redis-shares-journal-accounted": "per-second shares of one run",
    "c24-shares-journal-accounted": "C24 is ours: per-second shares of one run",
}


def marks(figure: str) -> pd.DataFrame:
    """The thesis's values for `figure` as rows (arm, at, value, high, label); none when the
    thesis states none."""
    columns = ["arm", "at", "value", "high", "label"]
    return pd.DataFrame([{"arm": v.arm, "at": v.at, "value": v.value, "high": v.high,
                          "label": v.label} for v in THESIS_VALUES.get(figure, ())],
                        columns=columns)
