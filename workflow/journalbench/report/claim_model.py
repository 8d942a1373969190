"""Each claim as a reader meets it, built once from every campaign's judged tables and rendered
by the templates (report/templates/) into the README's block, results/summary.md, the report's
index and the claim's page:

- its headline testbed (judge/claims/headline.py: the one closest to the thesis's) with the
  verdict in one word, what "ours" measures, ours with its 95% interval, the thesis's value,
  the factors the testbed differs in, a caveat (the runs behind it, parts not measured, what
  its controller divided where the claim depends on the weights), its checks, figures and runs;
- every other testbed with the same parts, closest first, then those of campaigns that do not
  offer the claim for a headline;
- a symbol per main testbed (the campaigns offering every claim), for the table's narrow
  columns.

A testbed is a family of the ledger (campaign, host, device profile, cgroup version, BFQ
setting, I/O control); its anchor is the same on the claim's page and the campaign's.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from journalbench.judge import tuples
from journalbench.judge.claims import headline as closest_testbed
from journalbench.judge.claims.catalog import CLAIMS, HEADLINES
from journalbench.judge.claims.checks import DIFFERENCE, LEVEL, PAIRED, RATIO, SHARE, TREND
from journalbench.judge.claims.division import NONE_WORD
from journalbench.judge.claims.mechanisms import WEIGHTS
from journalbench.judge.claims.verdicts import (
    CONTRADICTED,
    DIFFERS,
    FAMILY,
    INCONCLUSIVE,
    LIKE,
    MEASURED,
    MISSING,
    MIXED,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    PARTIAL,
    REPRODUCED,
    UNTESTABLE,
    factor_names,
    tag,
    unit_of,
)
from journalbench.report.outputs import FIGURE, Output
from journalbench.report.summary import (
    NOT_RUN,
    Row,
    claim_row,
    deciding,
    short_reason,
)

Eligible = Callable[[str], "str | set[str]"]
Tables = Mapping[str, tuple[pd.DataFrame, ...]]  # campaign -> its judged tables

# Each verdict in one word (the README's glossary defines each) and its symbol in a testbed's
# narrow column; NOT_RUN: the testbed has no run of the claim.
WORDS = {REPRODUCED: "reproduced", MIXED: "mixed", CONTRADICTED: "contradicted",
         NOT_REPRODUCED: "unreproduced", INCONCLUSIVE: "inconclusive", PARTIAL: "partial",
         UNTESTABLE: "untestable", NOT_RUN: "unrun"}
SYMBOLS = {REPRODUCED: "✔", CONTRADICTED: "✘", NOT_REPRODUCED: "✘", MIXED: "±",
           INCONCLUSIVE: "?", UNTESTABLE: "⊘", PARTIAL: "◐", NOT_RUN: "·"}
NO_RUNS = "—"  # a main testbed's column where its campaign ran none of the claim's conditions
# what a check's effect is, by its kind
KIND_WORDS = {RATIO: "ratio", PAIRED: "ratio", TREND: "ratio per step", SHARE: "share",
              LEVEL: "share", DIFFERENCE: "share difference"}


def symbol_legend() -> str:
    """What each symbol of the testbeds' columns says (the headline testbed's in bold)."""
    shown = {SYMBOLS[v]: WORDS[v] for v in (REPRODUCED, CONTRADICTED, MIXED, INCONCLUSIVE,
                                            UNTESTABLE, PARTIAL, NOT_RUN)}
    return ("; ".join(f"{s} {w}" for s, w in shown.items())
            + f"; {NO_RUNS} no runs of it; bold: the headline testbed")


def measure_text(check: Mapping[str, Any]) -> str:
    """What a check's effect measures, in a phrase: its unit and kind, then its test without
    the words those already say ("MB/s ratio, shared-journal: 30% 64 KiB writer / 70% 16 KiB
    writer")."""
    unit = unit_of(check) if check["kind"] not in (SHARE, LEVEL, DIFFERENCE) else ""
    unit = "share" if unit == "of the disk" else unit
    test = str(check["test"])
    if unit:
        test = test.replace(f"{unit} of ", "").replace(f" {unit}", "")
    test = re.sub(r", same runs$| \(ratio per step\)$", "", test)
    test = re.sub(r"\bthe ", "", test).replace(" over ", " / ")
    word = KIND_WORDS.get(str(check["kind"]), "ratio")
    return f"{unit + ' ' if unit else ''}{word}, {' '.join(test.split())}"


@dataclass(frozen=True)
class Testbed:
    """One testbed's verdict on a claim, with everything its section of the claim's page
    shows."""
    label: str  # "thesis-nested v2/iocost"
    anchor: str  # its section's id
    family: dict[str, Any]
    row: Row  # its verdict, parts, what it rests on, the deciding part (summary.Row)
    why: str  # the ledger's why (run ids left out)
    changes: str
    checks: list[dict[str, Any]]  # the checks tables' rows
    offered: bool  # its campaign offers the claim for a headline
    runs: int = 0
    seconds: float = 0.0
    starved: int = 0
    left_out: int = 0
    missing: str = ""  # its parts not measured there
    division: str = ""  # what its controller divided, where the claim depends on the weights
    division_short: str = ""  # that in a few words
    division_word: str = ""  # that in a word or two (the headline's factors: "weights (time)")
    figures: tuple[Output, ...] = ()  # its campaign's figures and tables of the claim
    plot: str = ""  # its checks drawn (figures/checks/<name>.svg), "" with none measured
    factor_names: tuple[str, ...] = ()  # the factors it differs in (the claims' `factors`)

    @property
    def campaign(self) -> str:
        return str(self.family["campaign"])

    @property
    def verdict(self) -> str:
        return self.row.verdict

    @property
    def word(self) -> str:
        return WORDS.get(self.verdict, self.verdict)

    @property
    def symbol(self) -> str:
        return SYMBOLS.get(self.verdict, "?")

    @property
    def kind(self) -> str:
        return self.row.testbed

    @property
    def differs(self) -> str:
        """The factors it differs in from the thesis's testbed, a word each; "none" where it
        is like it, "—" for a claim of ours (no thesis testbed)."""
        if self.kind == LIKE:
            return "none"
        if self.kind == DIFFERS:
            return ", ".join(f"{name} ({self.division_word})"
                             if name == WEIGHTS and self.division_word else tag(name)
                             for name in self.factor_names)
        return "—"

    @property
    def measure(self) -> str:
        part = deciding(self.checks)
        return measure_text(part) if part else ""

    @property
    def minutes(self) -> str:
        return f"{self.seconds / 60:.0f} min" if self.seconds else ""

    @property
    def device(self) -> str:
        return str(self.family["device_profile"])

    @property
    def runs_text(self) -> str:
        """"4 runs (4 min)": the runs its verdict rests on, and their measured minutes."""
        return f"{self.runs} runs" + (f" ({self.minutes})" if self.minutes else "")

    def notes(self, claim: str) -> list[str]:
        """What else to keep in mind reading its verdict on `claim`: its parts not measured
        and, where the claim depends on the weights, a controller that divided nothing or
        whose division was not measured, in a few words (the judge's `division_short`; the
        page has the whole measurement)."""
        said = [self.missing] if self.missing else []
        if (WEIGHTS in CLAIMS[claim].scope and self.division_word == NONE_WORD
                and self.division_short):
            said.append(self.division_short)
        return said

    def caveat(self, claim: str) -> str:
        return "; ".join([self.runs_text, *self.notes(claim)])


@dataclass(frozen=True)
class ClaimModel:
    """A claim: its headline testbed, the other testbeds, a symbol per main testbed."""
    claim: str
    where: str
    headline: str  # the claim in one line
    statement: str
    chosen: Testbed | None  # its headline testbed; None where no offering campaign ran it
    others: tuple[Testbed, ...] = ()  # the other offering testbeds, closest first
    elsewhere: tuple[Testbed, ...] = ()  # testbeds of campaigns that do not offer it
    not_run: tuple[str, ...] = ()  # testbeds whose campaign ran none of its conditions
    why: str = ""  # why the headline testbed
    columns: dict[str, str] = field(default_factory=dict)  # main testbed -> its symbol
    outputs: tuple[Output, ...] = ()  # figures and tables of it no testbed shows

    @property
    def testbeds(self) -> tuple[Testbed, ...]:
        """Every testbed of it, in the page's order."""
        return (*([self.chosen] if self.chosen else []), *self.others, *self.elsewhere)

    @property
    def verdict(self) -> str:
        return self.chosen.verdict if self.chosen else NOT_RUN

    @property
    def word(self) -> str:
        return WORDS.get(self.verdict, self.verdict)

    @property
    def testbed(self) -> str:
        return self.chosen.label if self.chosen else ""

    @property
    def campaign(self) -> str:
        return self.chosen.campaign if self.chosen else ""

    @property
    def kind(self) -> str:
        return self.chosen.kind if self.chosen else ""

    @property
    def factors(self) -> tuple[str, ...]:
        return self.chosen.factor_names if self.chosen else ()

    @property
    def effect(self) -> str:
        return self.chosen.row.effect if self.chosen else ""

    @property
    def ours(self) -> str:
        return self.chosen.row.ours if self.chosen else ""

    @property
    def part(self) -> str:
        return self.chosen.row.part if self.chosen else ""

    @property
    def thesis(self) -> str:
        return self.chosen.row.thesis if self.chosen else ""

    @property
    def measure(self) -> str:
        return self.chosen.measure if self.chosen else ""

    @property
    def missing(self) -> str:
        return self.chosen.missing if self.chosen else ""

    @property
    def changes(self) -> str:
        return self.chosen.changes if self.chosen else ""

    @property
    def caveat(self) -> str:
        return self.chosen.caveat(self.claim) if self.chosen else ""

    @property
    def notes(self) -> list[str]:
        return self.chosen.notes(self.claim) if self.chosen else []

    @property
    def cells(self) -> dict[str, str]:
        """The other offering testbeds' outcomes: "contradicted (differs: weights)"."""
        return {t.label: outcome(t) for t in self.others}

    @property
    def devices(self) -> dict[str, str]:
        return {t.label: t.device for t in (*([self.chosen] if self.chosen else []),
                                            *self.others)}

    def column(self, name: str) -> str:
        """A main testbed's narrow cell: its symbol, in bold where it is the headline's."""
        mark = self.columns.get(name, NO_RUNS)
        return f"**{mark}**" if self.chosen and name == self.chosen.label else mark

    def marks(self, main: Sequence[str]) -> list[str]:
        """Its narrow cell of each main testbed, in order."""
        return [self.column(name) for name in main]


def outcome(testbed: Testbed) -> str:
    """A testbed's verdict with what it is to the thesis's: "contradicted (differs:
    weights)"."""
    if testbed.kind == LIKE:
        return f"{testbed.verdict} (like the thesis's)"
    if testbed.kind == DIFFERS:
        return f"{testbed.verdict} (differs: {testbed.row.differs})"
    return testbed.verdict


def anchor(label: str) -> str:
    """A testbed's id in its claim's page: its label, lowercase, non-alphanumerics as dashes
    ("thesis-nested-v2-iocost")."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def missing_text(checks: Sequence[Mapping[str, Any]]) -> str:
    """Its parts not measured on a testbed, with why: "1 of its 3 parts not measured there:
    no runs here"."""
    gaps = [c for c in checks if c["status"] != MEASURED]
    if not gaps:
        return ""
    reasons = dict.fromkeys("no runs here" if c["status"] == MISSING
                            else short_reason(c["why_not"]).split(", ")[0] for c in gaps
                            if c["status"] in (MISSING, NOT_TESTABLE))
    return f"{len(gaps)}/{len(checks)} parts not measured: " + "; ".join(reasons)


def split_runs(text: Any) -> list[str]:
    return str(text or "").split()


def run_counts(checks: Iterable[Mapping[str, Any]],
               seconds: Mapping[tuple[str, str], float]) -> tuple[int, float, int, int]:
    """(runs used, their seconds, runs with a starved tenant, runs left out as CPU-bound)."""
    used: set[tuple[str, str]] = set()
    starved: set[str] = set()
    left: set[str] = set()
    for check in checks:
        used |= {(str(check["campaign"]), r) for r in split_runs(check["runs"])}
        starved |= set(split_runs(check.get("starved_runs")))
        left |= set(split_runs(check.get("excluded_runs")))
    ids = {r for _, r in used}
    return (len(used), float(sum(seconds.get(key, 0.0) for key in used)),
            len(starved & ids), len(left - ids))


def combined(judged: Tables) -> tuple[pd.DataFrame, pd.DataFrame]:
    claims = pd.concat([tables[0] for tables in judged.values()], ignore_index=True)
    checks = pd.concat([tables[1] for tables in judged.values()], ignore_index=True)
    return claims, checks


@dataclass(frozen=True)
class Model:
    """Every claim's model and the main testbeds (a narrow column each)."""
    claims: list[ClaimModel]
    main: list[str]
    labels: dict[tuple, str]  # a family's FAMILY values -> its testbed label
    # (claim, headline before the latest rules, now) of each headline those rules moved
    moved: list[tuple[str, str, str]] = field(default_factory=list)

    def of(self, claim: str) -> ClaimModel:
        return next(c for c in self.claims if c.claim == claim)


def build(judged: Tables, eligible: Eligible, outputs: Iterable[Output] = (),
          seconds: Mapping[tuple[str, str], float] | None = None,
          without_ids: Callable[[str], str] = str,
          moved: list[tuple[str, str, str]] | None = None) -> Model:
    """Every claim's model from every campaign's judged tables; `eligible` says which claims a
    campaign offers for a headline (plan.headline_claims), `outputs` are the notebooks'
    figures and tables, `seconds` each run's window ((campaign, run id) -> s), and
    `without_ids` strips the run ids from a ledger's why (a page names no run). `moved`: the
    headlines the latest rules moved (judge/claims/headline.moves) of the same tables, where
    the caller found them already (the combined ledger, written first)."""
    seconds = seconds or {}
    outputs = list(outputs)
    # asked for each campaign once (it hashes the campaign file and the planning code), not
    # for each claim of it
    eligible = functools.cache(eligible)
    claims, checks = combined(judged)
    chosen = closest_testbed.closest(claims, checks, eligible, seconds)
    by_family: dict[tuple, list[dict]] = {}
    for check in tuples.records(checks):
        by_family.setdefault((*(check[k] for k in FAMILY), check["claim"]), []).append(check)
    labels = {tuple(r[k] for k in FAMILY): closest_testbed.label(r, claims)
              for r in tuples.records(claims.drop_duplicates(FAMILY))}
    main = main_testbeds(chosen, eligible)
    rows: dict[str, list[dict]] = {}
    for record in tuples.records(claims):
        rows.setdefault(record["claim"], []).append(record)
    found = []
    for claim, info in CLAIMS.items():
        best, ranked = chosen.get(claim, (None, []))
        order = [c.label for c in ([best] if best else []) + ranked]
        beds: dict[str, Testbed] = {}
        for record in rows.get(claim, []):
            key = tuple(record[k] for k in FAMILY)
            mine = by_family.get((*key, claim), [])
            runs, window, starved, left = run_counts(mine, seconds)
            offer = eligible(str(record["campaign"]))
            beds[labels[key]] = Testbed(
                label=labels[key], anchor=anchor(labels[key]), family=dict(zip(FAMILY, key,
                                                                          strict=True)),
                row=claim_row(record, mine, outputs), why=without_ids(str(record["why"])),
                changes=str(record.get("changes") or ""), checks=mine,
                offered=offer == "all" or claim in offer, runs=runs, seconds=window,
                starved=starved, left_out=left, missing=missing_text(mine),
                division=division_text(record),
                division_short=division_text(record, "division_short"),
                division_word=division_text(record, "division_word"),
                factor_names=tuple(factor_names(record.get("factors"))))
        beds = with_figures(beds, order, outputs, claim)
        head = beds.get(order[0]) if order else None
        others = tuple(beds[name] for name in order[1:])
        rest = tuple(sorted((t for n, t in beds.items()
                             if n not in order and t.verdict != NOT_RUN), key=lambda t: t.label))
        idle = tuple(sorted(n for n, t in beds.items() if n not in order and t.verdict == NOT_RUN))
        shown = {o.name for t in beds.values() for o in t.figures}
        found.append(ClaimModel(
            claim=claim, where=info.where, headline=HEADLINES[claim], statement=info.statement,
            chosen=head, others=others, elsewhere=rest, not_run=idle,
            why=closest_testbed.why_chosen(best, ranked) if best else "",
            columns={name: beds[name].symbol if name in beds and beds[name].verdict != NOT_RUN
                     else NO_RUNS for name in main},
            outputs=tuple(o for o in outputs if claim in o.claims and o.name not in shown)))
    if moved is None:
        moved = closest_testbed.moves(claims, checks, eligible, seconds, now=chosen)
    return Model(found, main, labels, moved)


def division_text(record: Mapping[str, Any], column: str = "division") -> str:
    """The family's measured division of the disk by its weights (the claims table's
    `division`, where the judge writes one; `division_short`: in a few words, a caveat's)."""
    value = record.get(column)
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def with_figures(beds: dict[str, Testbed], order: Sequence[str], outputs: Sequence[Output],
                 claim: str) -> dict[str, Testbed]:
    """Each campaign's figures and tables of the claim (the notebooks draw a campaign's runs),
    given to its first testbed in the page's order."""
    from dataclasses import replace

    placed: set[str] = set()
    ranked = [*order, *sorted(n for n in beds if n not in order)]
    out = dict(beds)
    for name in ranked:
        if name not in beds or beds[name].campaign in placed:
            continue
        mine = tuple(o for o in outputs if claim in o.claims and o.campaign == beds[name].campaign)
        if mine:
            placed.add(beds[name].campaign)
            out[name] = replace(beds[name], figures=tuple(sorted(mine,
                                                                 key=lambda o: o.kind != FIGURE)))
    return out


def main_testbeds(chosen: Mapping[str, tuple[Any, list[Any]]], eligible: Eligible) -> list[str]:
    """The testbeds of campaigns that offer every claim, in the order of their names (so a
    campaign's stand together, v1 before v2, BFQ before iocost)."""
    names: set[str] = set()
    for best, others in chosen.values():
        for candidate in [c for c in (best, *others) if c is not None]:
            if eligible(str(candidate.family["campaign"])) == "all":
                names.add(candidate.label)
    return sorted(names)


def thesis_value(text: str) -> str:
    """The thesis's value without its source and remarks: "x1.14 per step (Table 4.1, ...)"
    -> "x1.14 per step"."""
    return str(text).split(" (", 1)[0].split(": ", 1)[0].strip()
