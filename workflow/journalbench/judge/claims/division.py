"""What a testbed's weights divide, measured, not named (rules weights-measured and
weights-in-play, 2026-11-29). A controller's name says what its documentation promises; what it
did on a testbed is measured on validation pairs, workloads no claim uses (random direct reads:
no journal, no write-back), fixed before their runs were judged:

- *divides at all*: two equal random readers (same request size) at unequal weights (80/20).
  It passes when the heavier reader's mean share of the pair's bytes lies at least halfway
  from an even split to its weight's share (80/20: at least 0.65). The rule asks whether the
  weights were in play, never whether a claim's outcome agreed with the thesis.
- *divides time or bytes*: two readers at equal weights whose requests differ in size
  (128 KiB against 8 KiB), random and sequential (PATTERNS). Weights dividing device time
  give them equal device time and unequal bytes; weights dividing bytes (BFQ's budgets, in
  sectors) equal bytes and unequal time. With the big reader's mean shares of the pair's
  device time (t) and bytes (b) and the package's split margin (SHARE_MARGIN, 0.10): "time"
  where t lies within it of 0.5 and b does not, "bytes" where b does and t does not,
  "indistinct" where both do (the sizes cost the device alike per byte: the pair cannot
  tell), "neither" where neither does. The weights divide device time, as the thesis's did
  ("the relative amount of disk time", p. 29, whatever the access pattern: CFQ's time
  slices), only where both patterns' pairs divide time. A testbed without a pattern's pair:
  that pattern "not measured". (Until weights-hdd's first runs, 2026-11-29, the rule had the
  random pair only; there BFQ charged random readers by device time, as its code charges a
  slow queue's time, block/bfq-iosched.c bfq_bfqq_charge_time, where its budgets count a
  busy sequential queue's sectors: the sequential pair was added the same day.)
- *acted on this check*: a scheduler that orders every request by weight (BFQ) acts by
  construction wherever its validation passed; a controller that holds a group back only once
  it outruns its budget (iocost) acted on a check only where its own per-second record of the
  check's tenants shows it: seconds in which a tenant waited (cost.wait), was in debt
  (cost.indebt) or delayed (cost.indelay). Each controller says which it is
  (agent/iocontrol/: ENFORCES).

A family's validation pairs are its own campaign's runs on its testbed, or those of a campaign
whose file says it `validates` the family's campaign (weights-hdd for thesis-hdd), on the same
host, device profile, cgroup version, BFQ settings, I/O control and iocost QoS procedure.
Weights "like the thesis's" (which divided "the relative amount of disk time", thesis p. 29)
are weights measured to divide device time; nothing else counts as like it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from journalbench.agent.iocontrol.base import PAST_BUDGET
from journalbench.agent.registry import IO_CONTROLS
from journalbench.agent.workloads.fio import PRESETS
from journalbench.judge.claims.margins import SHARE_MARGIN

TIME, BYTES, INDISTINCT, NEITHER, NONE = "time", "bytes", "indistinct", "neither", "none"
MIXED = "mixed"  # the patterns' pairs disagree
NOT_MEASURED = "not measured"
UNMEASURED, NONE_WORD = "unmeasured", "nothing"  # Division.word's
PATTERNS = {"randread": "random", "read": "sequential"}  # fio's rw -> the readers' pattern
# the testbed a validation run measures: a family of another campaign on the same testbed
TESTBED = ("host", "device_profile", "cgroup_version", "bfq", "io_control", "iocost_qos")
HELD_COLUMNS = ("cost_wait_s", "cost_indebt_s", "cost_indelay_s")


@dataclass(frozen=True)
class Mean:
    """A mean over runs with its 95% t interval."""
    value: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float]) -> Mean | None:
        from scipy import stats

        data = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
        if data.size == 0:
            return None
        mean = float(data.mean())
        if data.size < 2 or np.all(data == data[0]):
            return cls(mean, mean, mean, int(data.size))
        low, high = stats.t.interval(0.95, data.size - 1, loc=mean, scale=stats.sem(data))
        return cls(mean, float(low), float(high), int(data.size))

    def text(self) -> str:
        return f"{self.value:.2f} [{self.low:.2f}, {self.high:.2f}]"


@dataclass(frozen=True)
class Sizes:
    """Two readers of one access pattern at equal weights, of unequal request sizes."""
    pattern: str  # "random" or "sequential"
    sizes: str  # "128 KiB against 8 KiB"
    time: Mean  # the big-request reader's share of the pair's device time
    bytes: Mean  # ... and of its bytes

    @property
    def kind(self) -> str:
        even_time = abs(self.time.value - 0.5) <= SHARE_MARGIN
        even_bytes = abs(self.bytes.value - 0.5) <= SHARE_MARGIN
        if even_time and even_bytes:
            return INDISTINCT
        return TIME if even_time else BYTES if even_bytes else NEITHER

    def text(self) -> str:
        what = {TIME: "device time", BYTES: "bytes", INDISTINCT: "indistinct (the sizes cost "
                "alike per byte)", NEITHER: "neither time nor bytes"}[self.kind]
        big, small = self.sizes.split(" against ")
        return (f"{self.pattern} readers: {what} (at equal weights the {big} reader beside a "
                f"{small} one got {self.time.text()} of their device time and "
                f"{self.bytes.text()} of their bytes, {self.bytes.n} runs)")


@dataclass(frozen=True)
class Division:
    control: str  # the I/O control of the testbed
    source: str  # the campaign whose runs measured it
    heavy: Mean | None = None  # the heavier of two equal readers: its share of their bytes
    weight_share: float = np.nan  # what its weight promises it (0.80)
    sizes: tuple[Sizes, ...] = ()  # the equal-weight pairs of unequal sizes, per pattern

    @property
    def threshold(self) -> float:
        """Halfway from an even split to what the weight promises."""
        return 0.5 + (self.weight_share - 0.5) / 2

    @property
    def divides(self) -> bool | None:
        """Whether the weights divide at all; None where the pair was not measured."""
        if self.heavy is None:
            return None
        return self.heavy.value >= self.threshold

    @property
    def kind(self) -> str:
        """TIME or BYTES (every pattern measured alike), INDISTINCT, NEITHER or MIXED; NONE
        where the weights divide nothing; NOT_MEASURED without the pairs that tell."""
        if self.divides is False:
            return NONE
        kinds = {pair.kind for pair in self.sizes}
        if not kinds:
            return NOT_MEASURED
        return kinds.pop() if len(kinds) == 1 else MIXED

    @property
    def divides_time(self) -> bool:
        """Device time, as the thesis's weights: it divides, and every pattern's pair was
        measured and divides time."""
        found = {pair.pattern: pair.kind for pair in self.sizes}
        return self.divides is True and all(found.get(p) == TIME for p in PATTERNS.values())

    def at_all_text(self) -> str:
        if self.heavy is None:
            return "80/20 readers not measured"
        verdict = "divides" if self.divides else "divided nothing"
        return (f"{verdict}: the {self.weight_share:.0%} reader of two equal random readers "
                f"got {self.heavy.text()} of their bytes (passes at {self.threshold:.2f}; "
                f"{self.heavy.n} runs)")

    def kind_text(self) -> str:
        measured = {pair.pattern: pair for pair in self.sizes}
        parts = [measured[p].text() if p in measured else f"{p} readers: not measured"
                 for p in PATTERNS.values()]
        return "what it divides at equal weights: " + "; ".join(parts)

    def word(self) -> str:
        """What the weights divide in a word or two, as the headline's factors name it:
        "nothing", "time", "not time" (measured otherwise), "time untested" (they divide,
        time or bytes not measured), "unmeasured" (no 80/20 readers)."""
        if self.heavy is None:
            return UNMEASURED
        if self.divides is False:
            return NONE_WORD
        if self.divides_time:
            return TIME
        return "not time" if self.sizes else "time untested"

    def compact(self) -> str:
        """The 80/20 readers' share and the word: "0.66, not time"."""
        if self.heavy is None:
            return UNMEASURED
        return f"{self.heavy.value:.2f}, {self.word()}"

    def short(self) -> str:
        """A few words for a table's caveat: "iocost divided nothing (80/20 readers 0.50)",
        "bfq divides (80/20 readers 0.76); time or bytes not measured"."""
        if self.heavy is None:
            return f"{self.control}'s 80/20 readers not measured"
        readers = f"80/20 readers {self.heavy.value:.2f}"
        if self.divides is False:
            return f"{self.control} divided nothing ({readers})"
        if self.divides_time:
            return f"{self.control} divides device time ({readers})"
        found = {pair.pattern: pair.kind for pair in self.sizes}
        if not found:
            return f"{self.control} divides ({readers}); time or bytes not measured"
        return f"{self.control} divides ({readers}); at equal weights " + ", ".join(
            f"{p} readers: {found.get(p, NOT_MEASURED)}" for p in PATTERNS.values())

    def describe(self) -> str:
        """One line: the controller, what it was measured to divide, with the numbers."""
        return f"{self.control} measured on {self.source}: {self.at_all_text()}; " \
               f"{self.kind_text()}"


def documented(control: str) -> str:
    """What a controller's documentation says its weights divide (its module's DIVIDES)."""
    found = IO_CONTROLS.get(control)
    return found.DIVIDES if found is not None else "an unknown quantity"


def not_measured_short(control: str) -> str:
    """not_measured in a few words."""
    return f"{control}'s division not measured here"


def past_budget(control: str) -> bool:
    """Whether the controller holds a group back only once it outruns its budget."""
    found = IO_CONTROLS.get(control)
    return found is not None and found.ENFORCES == PAST_BUDGET


def not_measured(control: str) -> str:
    """A testbed's weights without validation pairs: its documented mechanism, shown as such."""
    return (f"{control}: not measured here; by its documented mechanism its weights divide "
            f"{documented(control)}")


# -- the validation pairs ---------------------------------------------------------------------

def direct_reads(presets: pd.Series) -> np.ndarray:
    return np.array([PRESETS.get(str(p), {}).get("rw") in PATTERNS
                     and PRESETS.get(str(p), {}).get("direct", 1) == 1 for p in presets],
                    dtype=bool)


def validation_runs(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """A row per validation run, from what its spec says (two direct readers of one pattern,
    in an experiment that tests no claim): campaign, run id, `pair` ("at-all": unequal weights
    and equal sizes, random; "sizes": equal weights and unequal sizes), `pattern`, and which
    tenant row is the heavier or the bigger reader (`first`: its index in `runs`) and which
    the other (`second`)."""
    columns = ["campaign", "run_id", "pair", "pattern", "first", "second"]
    needed = {"campaign", "run_id", "n_tenants", "preset", "weight", "bs"}
    if not needed <= set(runs.columns) or not {"campaign", "run_id", "claims"} <= set(
            experiments.columns):  # a table without them (made by hand) has no pairs
        return pd.DataFrame(columns=columns)
    free = experiments[experiments["claims"].map(len).eq(0)]  # a list [] would pick columns
    rows = runs[runs["n_tenants"].eq(2)
                & runs.set_index(["campaign", "run_id"]).index.isin(
                    free.set_index(["campaign", "run_id"]).index)]
    rows = rows[direct_reads(rows["preset"])]
    out = []
    for (campaign, run_id), run in rows.groupby(["campaign", "run_id"], sort=True):
        patterns = {PATTERNS[PRESETS[str(p)]["rw"]] for p in run["preset"]}
        if len(run) != 2 or run["weight"].isna().any() or len(patterns) != 1:
            continue
        pattern = patterns.pop()
        sizes = pd.to_numeric(run["bs"].map(size_bytes), errors="coerce").to_numpy()
        if run["weight"].nunique() == 2 and len(set(sizes)) == 1 and pattern == "random":
            pair, first = "at-all", int(np.argmax(run["weight"].to_numpy()))
        elif run["weight"].nunique() == 1 and len(set(sizes)) == 2 and np.isfinite(sizes).all():
            pair, first = "sizes", int(np.argmax(sizes))
        else:
            continue
        out.append({"campaign": campaign, "run_id": run_id, "pair": pair, "pattern": pattern,
                    "first": run.index[first], "second": run.index[1 - first]})
    return pd.DataFrame(out, columns=columns)


def pairs(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """A row per validation run (validation_runs) with its testbed and the shares it
    measured: the heavier or bigger reader's share of the pair's bytes (`share`) and, for a
    sizes pair, of its device time (`time`)."""
    columns = ["campaign", *TESTBED, "run_id", "pair", "pattern", "weight_share", "share",
               "time", "sizes"]
    if "iocost_qos" not in runs.columns:  # a table made before the column: the default's
        runs = runs.assign(iocost_qos="")
    if not {"cgroup_bytes", "own_time_s", *TESTBED} <= set(runs.columns):
        return pd.DataFrame(columns=columns)
    out = []
    for found in validation_runs(runs, experiments).itertuples():
        first, second = runs.loc[found.first], runs.loc[found.second]
        together = float(first["cgroup_bytes"]) + float(second["cgroup_bytes"])
        timed = float(first["own_time_s"]) + float(second["own_time_s"])
        out.append({**{k: first[k] for k in ("campaign", *TESTBED)}, "run_id": found.run_id,
                    "pair": found.pair, "pattern": found.pattern,
                    "weight_share": float(first["weight"] / (first["weight"] + second["weight"])),
                    "share": float(first["cgroup_bytes"]) / together if together else np.nan,
                    "time": (float(first["own_time_s"]) / timed
                             if found.pair == "sizes" and timed else np.nan),
                    "sizes": (f"{kib(first['bs'])} against {kib(second['bs'])}"
                              if found.pair == "sizes" else "")})
    return pd.DataFrame(out, columns=columns)


def kib(text: object) -> str:
    """fio's size as a reader writes it: "128k" -> "128 KiB"."""
    found = size_bytes(text)
    return f"{found / 1024:.0f} KiB" if np.isfinite(found) else str(text)


def size_bytes(text: object) -> float:
    """fio's size ("4k", "128k", "1m") in bytes; NaN for anything else."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    word = str(text).strip().lower()
    if word[-1:] in units and word[:-1].isdigit():
        return float(int(word[:-1]) * units[word[-1]])
    return float(word) if word.isdigit() else np.nan


def measured(found: pd.DataFrame, control: str, source: str) -> Division:
    """The Division of one testbed from its validation runs (`pairs` rows)."""
    at_all = found[found["pair"] == "at-all"]
    sizes = found[found["pair"] == "sizes"]
    pairs_of = tuple(
        Sizes(str(pattern), str(group["sizes"].iloc[0]), Mean.of(group["time"]),
              Mean.of(group["share"]))
        for pattern, group in sizes.groupby("pattern", sort=False)
        if Mean.of(group["time"]) is not None and Mean.of(group["share"]) is not None)
    return Division(
        control, source,
        heavy=Mean.of(at_all["share"]) if not at_all.empty else None,
        weight_share=float(at_all["weight_share"].median()) if not at_all.empty else np.nan,
        sizes=tuple(sorted(pairs_of, key=lambda p: list(PATTERNS.values()).index(p.pattern))))


def divisions(runs: pd.DataFrame, experiments: pd.DataFrame,
              validates: Mapping[str, Iterable[str]]) -> dict[tuple, Division]:
    """(campaign, *TESTBED) -> the Division measured for that campaign's family on that
    testbed: from the campaign's own validation runs there, else from a campaign that
    `validates` it (its campaign file's list) on the same testbed."""
    found = pairs(runs, experiments)
    out: dict[tuple, Division] = {}
    for key, group in found.groupby(["campaign", *TESTBED], sort=True, dropna=False):
        campaign, bed = key[0], key[1:]
        division = measured(group, str(bed[TESTBED.index("io_control")]), str(campaign))
        out[(campaign, *bed)] = division
        for other in validates.get(str(campaign), ()):
            out.setdefault((other, *bed), division)
    return out


# -- acted on a check -------------------------------------------------------------------------

@dataclass(frozen=True)
class HeldBack:
    """What a past-budget controller's own per-second record shows of a set of tenants."""
    tenant_seconds: int  # tenant-seconds with a cost record
    held: int  # of them, seconds a tenant waited, was in debt or was delayed
    vrate_median: float  # the device's vrate, %, over the runs' seconds (NaN: no record)

    def text(self, control: str) -> str:
        if not self.tenant_seconds:
            return f"{control} left no record of acting (no cost statistics)"
        vrate = (f"; vrate median {self.vrate_median:.0f}%" if np.isfinite(self.vrate_median)
                 else "")
        return (f"{self.held} of {self.tenant_seconds} tenant-seconds held back (waited, in "
                f"debt or delayed){vrate}")


class Record:
    """A family's per-second cost statistics, per run: what `held` sums for a check."""

    def __init__(self, samples: pd.DataFrame) -> None:
        tenants = samples[samples["kind"] == "tenant"]
        recorded = tenants.dropna(subset=["cost_wait_s"]) if "cost_wait_s" in tenants else \
            tenants.iloc[0:0]
        held = np.zeros(len(recorded), dtype=bool)
        for column in HELD_COLUMNS:
            if column in recorded:
                held |= recorded[column].fillna(0).to_numpy(float) > 0
        self.seconds = recorded.groupby("run_id").size().to_dict()
        self.held = recorded.assign(held=held).groupby("run_id")["held"].sum().to_dict()
        device = samples[(samples["kind"] == "device")]
        vrate = (device.dropna(subset=["cost_vrate_pct"]) if "cost_vrate_pct" in device
                 else device.iloc[0:0])
        self.vrate = {run: group["cost_vrate_pct"].to_numpy(float)
                      for run, group in vrate.groupby("run_id")}

    def of(self, run_ids: Iterable[str]) -> HeldBack:
        runs = list(run_ids)
        rates = [self.vrate[r] for r in runs if r in self.vrate]
        return HeldBack(int(sum(self.seconds.get(r, 0) for r in runs)),
                        int(sum(self.held.get(r, 0) for r in runs)),
                        float(np.median(np.concatenate(rates))) if rates else np.nan)


