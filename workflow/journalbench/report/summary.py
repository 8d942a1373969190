"""Results at a glance: per family of a campaign, one row per claim: the claim in one line, the
thesis's value, ours with its 95% interval, the verdict and what it rests on, and the figure.
Written as results/summary.md, the first page of the HTML report (site.py) shows the same rows,
and the README carries the configured campaign's table between two markers, rewritten after
`make reproduce` by

    python -m journalbench.report.summary --readme README.md

A claim is the intersection of its checks (its parts), so one row shows the part its verdict
turns on (`deciding`); the claim's page in the report has every part. A family whose runs hold
nothing for a claim is "not run here": the ledger calls it "partially measured" with why
"nothing measured yet" (verdicts.verdict), which reads as if something had been measured.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from journalbench.judge.claims import scope
from journalbench.judge.claims.catalog import CLAIMS, HEADLINES, THESIS_CLAIMS
from journalbench.judge.claims.verdicts import (
    CONTRADICTED,
    FAMILY,
    MEASURED,
    MISSING,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    PARTIAL,
    VERDICTS,
    effect_text,
    values_text,
)
from journalbench.report.ledger import family_name
from journalbench.report.outputs import Output, main_figure

NOT_RUN = "not run here"
NOTHING_YET = "nothing measured yet"  # how verdicts.verdict begins why nothing was measured
SHOWN_VERDICTS = (*(v for v in VERDICTS if v != PARTIAL), PARTIAL, NOT_RUN)
START, END = "<!-- summary:start -->", "<!-- summary:end -->"
COLUMNS = ("Claim", "In one line", "Thesis", "Ours, 95% interval", "Verdict (parts)",
           "Rests on", "Figure")


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
    differs: str = ""  # the factors this testbed differs in, as README_TAGS names them


def shown_verdict(verdict: str, why: str) -> str:
    """The verdict as a reader sees it: a claim none of whose parts had runs is not run here."""
    return NOT_RUN if verdict == PARTIAL and str(why).startswith(NOTHING_YET) else verdict


def p_value(check: Mapping[str, Any], side: str) -> float:
    p = check[side]
    return 1.0 if p is None or math.isnan(p) else float(p)


def deciding(checks: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The part a claim's verdict turns on: of the parts against it (contradicted or not
    reproduced here), the most significant; else the least supported measured part (the
    claim's p for it is the largest of its parts'). None when nothing was measured."""
    measured = [c for c in checks if c["status"] == MEASURED]
    against = [c for c in measured if c["outcome"] in (CONTRADICTED, NOT_REPRODUCED)]
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
    """What a verdict rests on: the testbed factors in which this testbed differs from the
    thesis's (the ledger's `differs`), the parts no precondition let us test, those not run."""
    said = []
    if any(c["status"] == MEASURED for c in checks):
        if claim["differs"]:
            said.append(f"this testbed differs in: {claim['differs']}")
        elif not CLAIMS[claim["claim"]].scope:
            said.append("ours: no testbed of the thesis's to differ from")
        else:
            said.append("a testbed like the thesis's in every factor it depends on")
    untestable = [c for c in checks if c["status"] == NOT_TESTABLE]
    if untestable:
        reasons = "; ".join(dict.fromkeys(short_reason(c["why_not"]) for c in untestable))
        said.append(f"{how_many(len(untestable), len(checks))} not testable: {reasons}")
    missing = sum(c["status"] == MISSING for c in checks)
    if missing:
        said.append(f"{how_many(missing, len(checks))} without runs here")
    return "; ".join(said) if said else "no check of it is encoded"


def differs_tags(differs: str) -> str:
    """The ledger's differing factors ("what the weights divide, VM acceleration") in the
    README's words ("weights, VM")."""
    names = {f.short: f.name for f in scope.FACTORS.values()}
    return ", ".join(README_TAGS[names[short]] for short in str(differs).split(", ") if short)


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
        differs=differs_tags(claim["differs"]) if run else "")


def families(claims: pd.DataFrame, checks: pd.DataFrame,
             outputs: Iterable[Output] = ()) -> list[tuple[dict[str, Any], list[Row]]]:
    """(the family's labels, a row per claim) of every family in the judged tables, in the
    ledger's order."""
    outputs = list(outputs)
    by_claim: dict[tuple, list[dict]] = {}
    for check in checks.to_dict("records"):
        by_claim.setdefault((*(check[k] for k in FAMILY), check["claim"]), []).append(check)
    found: dict[tuple, tuple[dict[str, Any], list[Row]]] = {}
    for claim in claims.to_dict("records"):
        key = tuple(claim[k] for k in FAMILY)
        labels, rows = found.setdefault(key, ({k: claim[k] for k in FAMILY}, []))
        rows.append(claim_row(claim, by_claim.get((*key, claim["claim"]), []), outputs))
    return list(found.values())


def count(rows: Iterable[Row]) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    return ", ".join(f"{counts[v]} {v}" for v in SHOWN_VERDICTS if counts.get(v))


def sentence(text: str) -> str:
    """`text` with its first letter capitalised (str.capitalize lowers the rest: "C24")."""
    return text[:1].upper() + text[1:]


def tally(rows: Sequence[Row]) -> str:
    """"the thesis's 23 claims: 1 reproduced, ...; ours (C24): contradicted"."""
    thesis = [r for r in rows if r.claim in THESIS_CLAIMS]
    ours = [r for r in rows if r.claim not in THESIS_CLAIMS]
    text = f"the thesis's {len(thesis)} claims: {count(thesis)}"
    if ours:
        text += f"; ours ({', '.join(r.claim for r in ours)}): {count(ours)}"
    return text


def cell(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


@dataclass(frozen=True)
class Links:
    """Where a Markdown page's links go: `report` the HTML report's folder, `root` the folder
    holding figures/, both relative to the page."""
    report: str
    root: str

    def claim(self, claim: str) -> str:
        return f"{self.report}claims/{claim}.html"

    def figure(self, output: Output) -> str:
        return f"{self.root}{output.path.as_posix()}"


def markdown_table(rows: Sequence[Row], links: Links) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        ours = f"**{row.ours}** ({row.part})" if row.ours else "—"
        verdict = f"**{row.verdict}**" + (f" ({row.parts})" if row.parts else "")
        figure = f"[{row.figure.name}]({links.figure(row.figure)})" if row.figure else "—"
        cells = [f"[{row.claim}]({links.claim(row.claim)}) {row.where}", row.headline,
                 row.thesis or "—", ours, verdict, row.rests_on, figure]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(lines)


HOW_TO_READ = (
    "Each row shows the part (one check) its verdict turns on: the part most significantly "
    "against the claim, else its least supported part (a claim holds only if all its parts "
    "do). *Thesis* is that part's value in the thesis, *Ours* our effect with its 95% "
    "interval and the medians behind it. Verdicts: **reproduced** (every part significant), "
    "**mixed** (parts disagree), **contradicted** (significantly the other way on a testbed "
    "like the thesis's), **not reproduced here** (the same where this testbed differs in a "
    "factor the result depends on: *Rests on* names it), **inconclusive** (neither), "
    "**not testable here** (a precondition of this testbed is not met), **not run here** (no "
    "runs of it in this campaign). docs/claims.md has every check, margin and precondition.")


def family_heading(labels: Mapping[str, Any]) -> str:
    return family_name(labels)


# The README's table is the summary's, cut to what fits an artifact appendix of at most 1,500
# words (tests/test_docs.py counts like wc -w, a table's pipes included): each claim's verdict,
# ours for the part it turns on, the thesis's value and, in a word each, the factors this
# testbed differs in; its page (linked) has the rest. No outer pipes: each would count as a word.
README_COLUMNS = ("Claim (report page, built)", "Verdict", "Ours, 95% interval", "Thesis",
                  "Differs")
README_TAGS = {scope.WEIGHTS: "weights", scope.VIRTUALIZATION: "VM",
               scope.PLATFORM: "platform", scope.WRITEBACK: "write-back",
               scope.DEVICE: "device"}
README_TAG_TEXT = {"weights": "BFQ divides sectors, not disk time",
                   "VM": "TCG, not KVM", "platform": "LXC, not OpenVZ",
                   "write-back": "cgroup v1 charges it to no tenant", "device": "no hard disk"}


def readme_legend(tags: Iterable[str]) -> str:
    """What each tag the table uses stands for."""
    said = [f"{tag} ({README_TAG_TEXT[tag]})" for tag in README_TAG_TEXT if tag in set(tags)]
    return f"Differs: unlike the thesis's testbed: {', '.join(said)}."


def thesis_value(text: str) -> str:
    """The thesis's value without its source and remarks: "x1.14 per step (Table 4.1, ...)"
    -> "x1.14 per step"."""
    return str(text).split(" (", 1)[0].split(": ", 1)[0].strip()


def readme_table(rows: Sequence[Row], links: Links) -> str:
    lines = [" | ".join(README_COLUMNS), "|".join("---" for _ in README_COLUMNS)]
    for row in rows:
        cells = [f"[{row.claim}]({links.claim(row.claim)})", row.verdict,
                 row.effect or "—", thesis_value(row.thesis) or "—", row.differs or "—"]
        lines.append(" | ".join(cell(c) for c in cells))
    return "\n".join(lines)


def readme_block(found: Sequence[tuple[dict[str, Any], list[Row]]], campaign: str,
                 links: Links) -> str:
    """What the README holds between START and END: per family of the campaign, its tally and
    the compact table."""
    parts = []
    for labels, rows in found:
        # the README names its one campaign above the block; families need their names
        where = "" if len(found) == 1 else f"{family_heading(labels)}: "
        parts += [f"{where}{sentence(tally(rows))}.", "", readme_table(rows, links), ""]
    tags = [tag for _, rows in found for row in rows for tag in row.differs.split(", ") if tag]
    if tags:
        parts += [readme_legend(tags), ""]
    return "\n".join(parts).rstrip("\n")


def skipped_lines(skipped: pd.DataFrame) -> list[str]:
    if skipped.empty:
        return ["None: every run folder in data/raw was read."]
    lines = [f"{len(skipped)} run folder(s) are not in the analysis: restore each with "
             "`git checkout -- <folder>` (docs: data/SCHEMA.md, skipped.parquet).", ""]
    return lines + [f"- `{row.folder}`: {row.status}: {cell(row.reason)}"
                    for row in skipped.itertuples()]


def document(campaign: str, found: Sequence[tuple[dict[str, Any], list[Row]]],
             skipped: pd.DataFrame, others: Mapping[str, str], studies: Mapping[str, str],
             links: Links) -> str:
    """results/summary.md: the configured campaign's table per family, the run folders left
    out, and the other campaigns and studies (`others`, `studies`: name -> one line)."""
    lines = [f"# Results at a glance: campaign {campaign}", "",
             "journalbench re-tests the claims of a 2021 thesis on disk isolation of virtual "
             "machines and containers sharing one ext4 journal (C1-C23), and one of ours (C24). "
             f"The report, [{links.report}index.html]({links.report}index.html), has a page "
             "per claim with every part, figure, table and run.", "", HOW_TO_READ, ""]
    for labels, rows in found:
        lines += [f"## {family_heading(labels)}", "", f"{sentence(tally(rows))}.", "",
                  markdown_table(rows, links), ""]
    lines += ["## Run folders left out", "", *skipped_lines(skipped), ""]
    if others:
        lines += ["## Other campaigns", ""]
        lines += [f"- [{name}]({links.report}campaigns/{name}.html): {text}"
                  for name, text in others.items()]
        lines.append("")
    if studies:
        lines += ["## Studies", ""]
        lines += [f"- [{name}]({links.report}studies/{name}.html): {text}"
                  for name, text in studies.items()]
        lines.append("")
    return "\n".join(lines)


def replace_block(text: str, block: str, where: str = "README.md") -> str:
    """`text` with what lies between START and END replaced by `block`."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{where}: no '{START}' ... '{END}' markers around the summary")
    return f"{text[:start + len(START)]}\n{block}\n{text[end:]}"


def between_markers(text: str) -> str | None:
    """What lies between START and END (without the newlines next to them); None without
    both markers."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START):end].strip("\n")


def readme_from(root: Path, campaign: str) -> str:
    """The README's block from the judged tables and the notebooks' outputs under `root` (a
    pipeline's working directory)."""
    from journalbench.judge.claims import judged
    from journalbench.report import outputs as written

    tables = judged.read(root / "data" / "processed" / campaign)
    if tables is None:
        raise ValueError(f"{root / 'data' / 'processed' / campaign}: no judged tables "
                         "(claims.parquet, checks.parquet): run `make reproduce` first")
    found = families(tables[0], tables[1], written.find(root, campaign))
    return readme_block(found, campaign, Links(report="results/report/", root=""))


def configured_campaign(root: Path) -> str:
    import yaml

    path = root / "workflow" / "config.yaml"
    campaign = (yaml.safe_load(path.read_text()) or {}).get("campaign")
    if not campaign:
        raise ValueError(f"{path}: field campaign: missing")
    return str(campaign)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m journalbench.report.summary",
        description="Rewrite the results-at-a-glance table between the README's "
                    f"'{START}' and '{END}' markers from the pipeline's judged tables.")
    parser.add_argument("--readme", type=Path, required=True, help="the README to rewrite")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the pipeline's working directory (data/processed, figures)")
    parser.add_argument("--campaign", help="default: workflow/config.yaml's campaign")
    args = parser.parse_args(argv)
    try:
        campaign = args.campaign or configured_campaign(args.root)
        block = readme_from(args.root, Path(campaign).stem)
        text = replace_block(args.readme.read_text(), block, str(args.readme))
    except (OSError, ValueError) as error:
        print(f"summary: {error}", file=sys.stderr)
        return 1
    args.readme.write_text(text)
    print(f"summary: {args.readme} rewritten from campaign {campaign}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
