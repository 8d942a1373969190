"""Results at a glance: per family of a campaign, one row per claim: the claim in one line, the
thesis's value, ours with its 95% interval, the verdict with the testbed it rests on, and the
figure. Written as results/summary.md after the headline (headline.py: each claim on its
closest testbed); the HTML report (site.py) shows the same rows.

A claim is the intersection of its checks (its parts), so one row shows the part its verdict
turns on (`deciding`); the claim's page in the report has every part. A family whose runs hold
nothing for a claim is "not run here": the ledger calls it "partially measured" with why
"nothing measured yet" (verdicts.verdict), which reads as if something had been measured.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from journalbench.judge import tuples
from journalbench.judge.claims import scope
from journalbench.judge.claims.catalog import CLAIMS, HEADLINES, OURS, THESIS_CLAIMS, id_ranges
from journalbench.judge.claims.verdicts import (
    AGAINST,
    DIFFERS,
    FAMILY,
    LIKE,
    MEASURED,
    MISSING,
    NOT_TESTABLE,
    PARTIAL,
    VERDICTS,
    effect_text,
    values_text,
)
from journalbench.report.ledger import family_name
from journalbench.report.outputs import Output, main_figure
from journalbench.report.render import environment

NOT_RUN = "not run here"
NOTHING_YET = "nothing measured yet"  # how verdicts.verdict begins why nothing was measured
SHOWN_VERDICTS = (*(v for v in VERDICTS if v != PARTIAL), PARTIAL, NOT_RUN)


@dataclass(frozen=True)
class Row:
    claim: str
    where: str  # the thesis's figure, table or section
    headline: str
    thesis: str  # the thesis's value of the deciding part ("" when none was measured)
    ours: str  # its effect with its 95% interval and the values behind it
    effect: str  # its effect with its 95% interval alone
    part: str  # what the deciding part measures
    verdict: str  # as shown: NOT_RUN in place of "partially measured, nothing measured yet"
    parts: str  # each part's outcome, counted
    rests_on: str
    figure: Output | None
    differs: str = ""  # the factors this testbed differs in, as their tags name them
    testbed: str = ""  # LIKE, DIFFERS, OURS or "" (the claims table's `testbed`)

    @property
    def kind(self) -> str:
        return self.testbed


def shown_verdict(verdict: str, why: str) -> str:
    """The verdict as a reader sees it: a claim none of whose parts had runs is not run here."""
    return NOT_RUN if verdict == PARTIAL and str(why).startswith(NOTHING_YET) else verdict


def p_value(check: Mapping[str, Any], side: str) -> float:
    p = check[side]
    return 1.0 if p is None or math.isnan(p) else float(p)


def deciding(checks: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The part a claim's verdict turns on: of the parts against it, the most significant;
    else the least supported measured part (the claim's p for it is the largest of its
    parts'). None when nothing was measured."""
    measured = [c for c in checks if c["status"] == MEASURED]
    against = [c for c in measured if c["outcome"] in AGAINST]
    if against:
        return min(against, key=lambda c: p_value(c, "p_against"))
    return max(measured, key=lambda c: p_value(c, "p_for"), default=None)


def ours_text(check: Mapping[str, Any]) -> str:
    values = values_text(check)
    return effect_text(check) + (f"; {values}" if values else "")


def short_reason(why_not: str) -> str:
    """A precondition's reason up to its explanation: "a database's VM half under TCG"."""
    return str(why_not).split(": ", 1)[0].split(" (", 1)[0]


def how_many(some: int, of: int) -> str:
    return "all its parts" if some == of else f"{some} of its {of} parts"


def rests_on(claim: Mapping[str, Any], checks: Sequence[Mapping[str, Any]]) -> str:
    """What a verdict rests on: the testbed factors in which the testbed of the parts it turns
    on differs from the thesis's (the ledger's `differs`), whichever way it went; the parts no
    precondition let us test, those not run."""
    said = []
    if claim.get("testbed") == DIFFERS:
        said.append(f"this testbed differs in: {claim['differs']}")
    elif claim.get("testbed") == LIKE:
        said.append("a testbed like the thesis's in every factor its parts depend on")
    elif any(c["status"] == MEASURED for c in checks) and not CLAIMS[claim["claim"]].scope:
        said.append("ours: no testbed of the thesis's to differ from")
    untestable = [c for c in checks if c["status"] == NOT_TESTABLE]
    if untestable:
        reasons = "; ".join(dict.fromkeys(short_reason(c["why_not"]) for c in untestable))
        said.append(f"{how_many(len(untestable), len(checks))} not testable: {reasons}")
    missing = sum(c["status"] == MISSING for c in checks)
    if missing:
        said.append(f"{how_many(missing, len(checks))} without runs here")
    return "; ".join(said) if said else "no check of it is encoded"


def differs_tags(differs: str) -> str:
    """The ledger's differing factors ("what the weights divide, VM acceleration") in a word
    each ("weights, VM")."""
    tags = {f.short: f.tag for f in scope.FACTORS.values()}
    return ", ".join(tags[short] for short in str(differs).split(", ") if short)


def shown_parts(parts: str) -> str:
    """The ledger's count of parts with those without runs named as the verdict names them."""
    return re.sub(rf"\b(\d+) {MISSING}\b", rf"\1 {NOT_RUN}", str(parts))


def claim_row(claim: Mapping[str, Any], checks: Sequence[Mapping[str, Any]],
              outputs: Iterable[Output]) -> Row:
    part = deciding(checks)
    verdict = shown_verdict(claim["verdict"], claim["why"])
    run = verdict != NOT_RUN  # a claim not run here has no parts to count, nothing to rest on
    return Row(
        claim=claim["claim"], where=CLAIMS[claim["claim"]].where,
        headline=HEADLINES[claim["claim"]],
        thesis=part["thesis"] if part else "", ours=ours_text(part) if part else "",
        effect=effect_text(part) if part else "",
        part=part["test"] if part else "", verdict=verdict,
        parts=shown_parts(claim["parts"]) if run else "",
        rests_on=rests_on(claim, checks) if run else "—",
        figure=main_figure(outputs, claim["claim"], claim["campaign"]),
        differs=differs_tags(claim["differs"]) if run else "",
        testbed=str(claim.get("testbed") or "") if run else "")


def families(claims: pd.DataFrame, checks: pd.DataFrame,
             outputs: Iterable[Output] = ()) -> list[tuple[dict[str, Any], list[Row]]]:
    """(the family's labels, a row per claim) of every family in the judged tables, in the
    ledger's order."""
    outputs = list(outputs)
    by_claim: dict[tuple, list[dict]] = {}
    for check in tuples.records(checks):
        by_claim.setdefault((*(check[k] for k in FAMILY), check["claim"]), []).append(check)
    found: dict[tuple, tuple[dict[str, Any], list[Row]]] = {}
    for claim in tuples.records(claims):
        key = tuple(claim[k] for k in FAMILY)
        labels, rows = found.setdefault(key, ({k: claim[k] for k in FAMILY}, []))
        rows.append(claim_row(claim, by_claim.get((*key, claim["claim"]), []), outputs))
    return list(found.values())


def count(rows: Iterable[Any]) -> str:
    """Verdicts counted, each split by its testbed where it has one: "2 reproduced (1 on a
    testbed like the thesis's, 1 where it differs), 3 inconclusive (where it differs)".
    `rows`: anything with a `verdict` and a `kind` (LIKE, DIFFERS or another)."""
    rows = list(rows)
    parts = []
    for verdict in SHOWN_VERDICTS:
        mine = [row for row in rows if row.verdict == verdict]
        if not mine:
            continue
        like = sum(row.kind == LIKE for row in mine)
        differs = sum(row.kind == DIFFERS for row in mine)
        split = [*([f"{like} on a testbed like the thesis's"] if like else []),
                 *([f"{differs} where it differs"] if differs else [])]
        parts.append(f"{len(mine)} {verdict}" + (f" ({', '.join(split)})" if split else ""))
    return ", ".join(parts)


NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}


def introduction(thesis: Sequence[str] = THESIS_CLAIMS, ours: Sequence[str] = OURS) -> str:
    """What the package re-tests, its claims named from the catalogue: "... (C1-C23), and one
    of ours (C24)"."""
    text = ("journalbench re-tests the claims of a 2021 thesis on disk isolation of virtual "
            f"machines and containers sharing one ext4 journal ({id_ranges(thesis)})")
    if ours:
        text += f", and {NUMBER_WORDS.get(len(ours), str(len(ours)))} of ours ({id_ranges(ours)})"
    return text + "."


def sentence(text: str) -> str:
    """`text` with its first letter capitalised (str.capitalize lowers the rest: "C24")."""
    return text[:1].upper() + text[1:]


def claim_names(rows: Iterable[Any]) -> str:
    """The claims of `rows`, each once, in their order: "C24" however many families."""
    return ", ".join(dict.fromkeys(row.claim for row in rows))


def tally(rows: Sequence[Row]) -> str:
    """One family's verdicts, a row per claim: "the thesis's 23 claims: 1 reproduced, ...;
    ours (C24): 1 contradicted"."""
    thesis = [r for r in rows if r.claim in THESIS_CLAIMS]
    ours = [r for r in rows if r.claim not in THESIS_CLAIMS]
    text = f"the thesis's {len({r.claim for r in thesis})} claims: {count(thesis)}"
    if ours:
        text += f"; ours ({claim_names(ours)}): {count(ours)}"
    return text


def campaign_tally(found: Sequence[tuple[Mapping[str, Any], Sequence[Row]]]) -> str:
    """A campaign's verdicts over its families: a claim is judged once per family, so its
    verdicts are counted as verdicts, not as as many claims: "8 families, each judging a
    claim once: the thesis's 23 claims, 184 verdicts: ...; ours (C24), 8 verdicts: ..."."""
    if len(found) == 1:
        return f"1 family; {tally(found[0][1])}"
    rows = [row for _, mine in found for row in mine]
    thesis = [r for r in rows if r.claim in THESIS_CLAIMS]
    ours = [r for r in rows if r.claim not in THESIS_CLAIMS]
    text = (f"{len(found)} families, each judging a claim once: the thesis's "
            f"{len({r.claim for r in thesis})} claims, {len(thesis)} verdicts: {count(thesis)}")
    if ours:
        text += f"; ours ({claim_names(ours)}), {len(ours)} verdicts: {count(ours)}"
    return text


@dataclass(frozen=True)
class Links:
    """Where a Markdown page's links go: `report` the HTML report's folder, `root` the folder
    holding figures/, both relative to the page."""
    report: str
    root: str

    def claim(self, claim: str) -> str:
        return f"{self.report}claims/{claim}.html"

    def testbed(self, claim: str, anchor: str) -> str:
        """A testbed's section of the claim's page."""
        return f"{self.claim(claim)}#{anchor}"

    def runs(self, claim: str) -> str:
        """The claim's runs, every testbed's (runs/<claim>.csv)."""
        return f"{self.report}runs/{claim}.csv"

    def figure(self, output: Output) -> str:
        return f"{self.root}{output.path.as_posix()}"


HOW_TO_READ = (
    "Each row shows the part (one check) its verdict turns on: the part most significantly "
    "against the claim, else its least supported part (a claim holds only if all its parts "
    "do). *Thesis* is that part's value in the thesis, *Ours* our effect with its 95% "
    "interval and the values it is computed from. Verdicts: **reproduced** (every part "
    "significant), **mixed** (parts disagree), **contradicted** (significantly the other "
    "way), **inconclusive** (neither), **partially measured** (a part missing), **not "
    "testable here** (a precondition of this testbed is not met), **not run here** (no runs "
    "of it in this campaign); each says what the runs show on their testbed, whichever way "
    "it goes, and *Rests on* says whether that testbed is like the thesis's in every factor "
    "the parts depend on or names those in which it differs. docs/claims.md has every check, "
    "margin, precondition and factor.")


def family_heading(labels: Mapping[str, Any]) -> str:
    return family_name(labels)


def document(campaign: str, found: Sequence[tuple[dict[str, Any], list[Row]]],
             skipped: pd.DataFrame, others: Mapping[str, str], studies: Mapping[str, str],
             links: Links, lead: str = "", noted: pd.DataFrame | None = None) -> str:
    """results/summary.md (templates/summary.md.j2): `lead` (the headline: each claim on its
    closest testbed, headline.py), the configured campaign's table per family, the run
    folders left out and the runs kept with a note, and the other campaigns and studies
    (`others`, `studies`: name -> one line)."""
    return environment().get_template("summary.md.j2").render(
        introduction=introduction(), links=links, lead=lead.strip("\n"), campaign=campaign,
        how_to_read=HOW_TO_READ, skipped=skipped.to_dict("records"),
        noted=[] if noted is None else noted.to_dict("records"),
        families=[{"label": family_heading(labels), "tally": sentence(tally(rows)),
                   "rows": rows} for labels, rows in found],
        others=others, studies=studies)
