"""The headline: each claim's verdict on its testbed closest to the thesis's (judge/claims/
headline.py chooses it among the campaigns that offer theirs), ours with its 95% interval
against the thesis's value, and every other offering testbed's outcome beside it; how many of
these verdicts the rules dated after the data changed. README, results/summary.md, the
report's index and each claim's page lead with it. The README's block between its markers is
this table, rewritten after `make reproduce` by

    python -m journalbench.report.headline --readme README.md
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from journalbench.judge.claims import headline as closest_testbed
from journalbench.judge.claims.catalog import CLAIMS, HEADLINES, THESIS_CLAIMS
from journalbench.judge.claims.verdicts import (
    DIFFERS,
    FAMILY,
    LIKE,
    MISSING,
    NOT_TESTABLE,
    OURS,
    effect_text,
    factor_names,
    qualified,
    tag,
)
from journalbench.report.markers import Markers
from journalbench.report.outputs import Output, main_figure
from journalbench.report.summary import (
    NOT_RUN,
    Links,
    cell,
    claim_names,
    count,
    deciding,
    ours_text,
    short_reason,
)

MARKERS = Markers("summary", "the summary")
START, END = MARKERS.start, MARKERS.end
CHANGES = "claims.md#changes-to-the-rules"  # the ledger's list, beside results/summary.md
Eligible = Callable[[str], "str | set[str]"]
Tables = Mapping[str, tuple[pd.DataFrame, ...]]  # campaign -> its judged tables


@dataclass(frozen=True)
class Line:
    """A claim's headline: its verdict on its closest testbed and the others beside it."""
    claim: str
    where: str
    headline: str
    verdict: str  # on the chosen testbed; NOT_RUN where no offering testbed ran it
    testbed: str = ""  # the chosen testbed's name
    campaign: str = ""  # its campaign
    family: dict[str, Any] = field(default_factory=dict)
    kind: str = ""  # LIKE, DIFFERS, OURS or ""
    factors: tuple[str, ...] = ()
    ours: str = ""  # the deciding part's effect, interval and the values it comes from
    effect: str = ""
    part: str = ""  # what the deciding part measures
    thesis: str = ""
    why: str = ""  # why this testbed
    missing: str = ""  # its parts not measured there
    cells: dict[str, str] = field(default_factory=dict)  # other testbed -> its outcome
    # every testbed of the claim (the chosen one too) -> its device profile
    devices: dict[str, str] = field(default_factory=dict)
    changes: str = ""  # what dated rules changed of this verdict, on this testbed
    figure: Output | None = None

    @property
    def qualifier(self) -> str:
        return qualifier_text(self.kind, self.factors)


def thesis_value(text: str) -> str:
    """The thesis's value without its source and remarks: "x1.14 per step (Table 4.1, ...)"
    -> "x1.14 per step"."""
    return str(text).split(" (", 1)[0].split(": ", 1)[0].strip()


def qualifier_text(kind: str, factors: Iterable[str], short: bool = False) -> str:
    """What a verdict's testbed is to the thesis's: like it, or the factors it differs in."""
    if kind == LIKE:
        return "like the thesis's" if short else "like the thesis's testbed"
    if kind == DIFFERS:
        return f"{'' if short else 'testbed '}differs: {', '.join(tag(f) for f in factors)}"
    if kind == OURS:
        return "" if short else "ours: no thesis testbed"
    return ""


def short(candidate: closest_testbed.Candidate) -> str:
    """A testbed's outcome in a cell: "contradicted (differs: weights)"."""
    row = candidate.claim
    kind = row.get("testbed") or ""
    said = {LIKE: "like the thesis's", OURS: ""}.get(
        kind, f"differs: {', '.join(tag(f) for f in factor_names(row.get('factors')))}"
        if kind == DIFFERS else "")
    return f"{row['verdict']} ({said})" if said else str(row["verdict"])


def combined(judged: Tables) -> tuple[pd.DataFrame, pd.DataFrame]:
    claims = pd.concat([tables[0] for tables in judged.values()], ignore_index=True)
    checks = pd.concat([tables[1] for tables in judged.values()], ignore_index=True)
    return claims, checks


def missing_text(candidate: closest_testbed.Candidate) -> str:
    gaps = candidate.unmeasured()
    if not gaps:
        return ""
    reasons = dict.fromkeys("no runs here" if c["status"] == MISSING
                            else short_reason(c["why_not"]) for c in gaps
                            if c["status"] in (MISSING, NOT_TESTABLE))
    return (f"{len(gaps)} of its {candidate.parts} parts not measured there: "
            + "; ".join(reasons))


def lines(judged: Tables, eligible: Eligible, outputs: Iterable[Output] = (),
          seconds: closest_testbed.Seconds | None = None) -> tuple[list[Line], list[str]]:
    """(a Line per claim, the main testbeds' names: those of the campaigns offering every
    claim, which get a column each); `seconds`: each run's window (run_seconds), which
    weighs the evidence of testbeds otherwise alike."""
    claims, checks = combined(judged)
    chosen = closest_testbed.closest(claims, checks, eligible, seconds)
    outputs = list(outputs)
    main = main_testbeds(chosen, eligible)
    found = []
    for claim, (best, others) in chosen.items():
        info = CLAIMS[claim]
        if best is None:
            found.append(Line(claim, info.where, HEADLINES[claim], NOT_RUN))
            continue
        part = deciding(best.checks)
        row = best.claim
        found.append(Line(
            claim=claim, where=info.where, headline=HEADLINES[claim], verdict=row["verdict"],
            testbed=best.label, campaign=str(row["campaign"]), family=best.family,
            kind=str(row.get("testbed") or ""), factors=tuple(factor_names(row.get("factors"))),
            ours=ours_text(part) if part else "", effect=effect_text(part) if part else "",
            part=part["test"] if part else "", thesis=part["thesis"] if part else "",
            why=closest_testbed.why_chosen(best, others), missing=missing_text(best),
            cells={o.label: short(o) for o in others},
            devices={c.label: str(c.family["device_profile"]) for c in (best, *others)},
            changes=str(row.get("changes") or ""),
            figure=main_figure(outputs, claim, str(row["campaign"]))))
    return found, main


def main_testbeds(chosen: Mapping[str, tuple[Any, list[Any]]], eligible: Eligible) -> list[str]:
    """The testbeds of campaigns that offer every claim, in the order of their names (so a
    campaign's stand together, v1 before v2, BFQ before iocost)."""
    names: set[str] = set()
    for best, others in chosen.values():
        for candidate in [c for c in (best, *others) if c is not None]:
            if eligible(str(candidate.family["campaign"])) == "all":
                names.add(candidate.label)
    return sorted(names)


def by_device(line: Line) -> str:
    """The claim's verdicts on all its testbeds, counted per device profile, where they span
    more than one ("" otherwise): "on native 3 reproduced, 1 mixed; on hdd 5 contradicted"."""
    if len(set(line.devices.values())) < 2:
        return ""
    # the chosen testbed's device first
    outcomes = {**({line.testbed: line.verdict} if line.testbed else {}), **line.cells}
    counted: dict[str, dict[str, int]] = {}
    for name, text in outcomes.items():
        verdict = text.split(" (")[0]
        mine = counted.setdefault(line.devices.get(name, "?"), {})
        mine[verdict] = mine.get(verdict, 0) + 1
    return "; ".join(f"on {device} " + ", ".join(f"{n} {v}" for v, n in verdicts.items())
                     for device, verdicts in counted.items())


def tally(found: Sequence[Line]) -> str:
    thesis = [line for line in found if line.claim in THESIS_CLAIMS]
    ours = [line for line in found if line.claim not in THESIS_CLAIMS]
    text = (f"The thesis's {len({line.claim for line in thesis})} claims, each on its closest "
            f"testbed: {count(thesis)}")
    if ours:
        text += (f"; ours ({claim_names(ours)}): "
                 + ", ".join(f"{line.verdict} on {line.testbed}"
                             + (f" (its testbeds {by_device(line)})" if by_device(line) else "")
                             for line in ours))
    return text + "."


def net_changes(found: Sequence[Line]) -> tuple[list[str], list[str]]:
    """(the claims whose verdict a dated rule changed on their headline testbed, those whose
    testbed qualifier alone it changed), each "C4: before -> now"."""
    verdicts, testbeds = [], []
    for line in found:
        if not line.changes:
            continue
        before = line.changes.split("; ")[0].split(": ", 1)[1].split(" -> ")[0].split(" (")[0]
        now = qualified(line.verdict, line.kind, line.factors)
        text = f"{line.claim}: {before} -> {now}"
        (verdicts if before != line.verdict else testbeds).append(text)
    return verdicts, testbeds


def short_disclosure(found: Sequence[Line], baseline: str, link: str) -> str:
    """disclosure() in fewer words: the claims named, not their changes (the README's)."""
    verdicts, testbeds = net_changes(found)
    moved = [line.claim for line in found if line.campaign and line.campaign != baseline]
    said = (f"Rules dated after the data were seen changed {len(verdicts)} of these verdicts"
            + (f" ({', '.join(i.split(':')[0] for i in verdicts)})" if verdicts else "")
            + (f" and only the testbed of {len(testbeds)} more "
               f"({', '.join(i.split(':')[0] for i in testbeds)})" if testbeds else "")
            + f": [the list, old -> new]({link}) (built).")
    if moved:
        said += (f" Since 2026-11-27 each verdict comes from its closest testbed, not all from "
                 f"{baseline}: {len(moved)} moved ({', '.join(moved)}).")
    return said


def disclosure(found: Sequence[Line], baseline: str, link: str) -> str:
    """How many headline verdicts rules dated after the data changed, each old -> new, with the
    list's link, and which come from another campaign than the baseline (where every headline
    came from before 2026-11-27)."""
    verdicts, testbeds = net_changes(found)
    said = (f"Rules dated after the data were seen changed {len(verdicts)} of these "
            f"{len(found)} verdicts on their testbed"
            + (f" ({'; '.join(verdicts)})" if verdicts else "")
            + (f", and only the testbed qualifier of {len(testbeds)} more "
               f"({'; '.join(testbeds)})" if testbeds else "")
            + f": every change, rule by rule, old -> new, in [the ledger]({link}).")
    moved = []
    for line in found:
        if not line.campaign or line.campaign == baseline:
            continue
        before = [text for name, text in line.cells.items() if name.split()[0] == baseline]
        moved.append(f"{line.claim}: {before[0] if len(before) == 1 else 'not run'} on "
                     f"{baseline} -> {line.verdict} on {line.testbed}")
    if moved:
        said += (" Since 2026-11-27 each claim's verdict comes from its closest testbed; "
                 f"before, every claim's came from {baseline}, and {len(moved)} now come from "
                 f"another ({'; '.join(moved)}).")
    return said


def cells(line: Line, main: Sequence[str]) -> list[str]:
    """The line's cell for each main testbed ("headline" where it is the chosen one, "—" where
    the testbed has no run of the claim) and one for the other testbeds together."""
    shown = [("headline" if name == line.testbed else line.cells.get(name, "—"))
             for name in main]
    rest = {name: text for name, text in line.cells.items() if name not in main}
    grouped: dict[str, list[str]] = {}
    for name, text in rest.items():
        grouped.setdefault(text, []).append(name)
    shown.append("; ".join(f"{text}: {', '.join(names)}" for text, names in grouped.items())
                 or "—")
    return shown


def markdown_table(found: Sequence[Line], main: Sequence[str], links: Links) -> str:
    """The headline table: per claim its verdict, testbed and what it rests on, ours against
    the thesis's value, a column per main testbed and one for the others."""
    head = ["Claim", "In one line", "Verdict", "Testbed", "Ours, 95% interval", "Thesis",
            *main, "Other testbeds"]
    out = [" | ".join(head), "|".join("---" for _ in head)]
    for line in found:
        testbed = "; ".join(t for t in (line.testbed, line.qualifier, line.missing) if t)
        ours = f"**{line.ours}** ({line.part})" if line.ours else ""
        row = [f"[{line.claim}]({links.claim(line.claim)}) {line.where}", line.headline,
               f"**{line.verdict}**", testbed or "—", ours or "—", line.thesis or "—",
               *cells(line, main)]
        out.append(" | ".join(cell(c) for c in row))
    return "\n".join(out)


def others_text(line: Line, names: Iterable[str] | None = None, most: int = 3) -> str:
    """The outcomes of the other testbeds (`names`, else all) in a short cell: each named, or
    counted past `most`."""
    shown = {n: t for n, t in line.cells.items() if names is None or n in set(names)}
    if not shown:
        return "—"
    if len(shown) <= most:
        return "; ".join(f"{name}: {text}" for name, text in shown.items())
    by_profile: dict[str, dict[str, int]] = {}  # counted per device where they span several
    several = len({line.devices.get(n, "") for n in shown}) > 1
    for name, text in shown.items():
        verdict = text.split(" (")[0]
        mine = by_profile.setdefault(line.devices.get(name, "") if several else "", {})
        mine[verdict] = mine.get(verdict, 0) + 1
    return (f"{len(shown)} testbeds: "
            + "; ".join((f"on {device} " if device else "")
                        + ", ".join(f"{n} {verdict}" for verdict, n in verdicts.items())
                        for device, verdicts in by_profile.items()))


CHOSEN = "◆"  # the compact table's mark of the testbed a verdict comes from


def compact_cell(text: str) -> str:
    """A testbed's outcome in fewer words: "contradicted (weights)", "mixed (alike)"."""
    return text.replace(" (like the thesis's)", " (alike)").replace("(differs: ", "(")


def by_campaign(main: Sequence[str]) -> dict[str, list[str]]:
    """The main testbeds grouped by campaign (a label's first word), in their order."""
    groups: dict[str, list[str]] = {}
    for name in main:
        groups.setdefault(name.split(" ", 1)[0], []).append(name)
    return groups


def campaign_head(campaign: str, names: Sequence[str]) -> str:
    """A campaign's column: "thesis-nested v1/bfq, v2/bfq, v2/iocost"."""
    return f"{campaign} " + ", ".join(name.split(" ", 1)[1] if " " in name else name
                                      for name in names)


def compact_table(found: Sequence[Line], main: Sequence[str], links: Links) -> str:
    """The README's table: per claim its verdict and what its testbed is to the thesis's, the
    deciding part's effect against the thesis's value, a column per campaign of the main
    testbeds with each testbed's verdict in its order (CHOSEN on the one the verdict comes
    from; the factors are the chosen testbed's, beside its verdict, and every testbed's on
    the claim's report page) and one for the others."""
    groups = by_campaign(main)
    head = ["Claim (report page, built)", "Verdict", "Ours, 95% interval", "Thesis",
            *(campaign_head(campaign, names) for campaign, names in groups.items()),
            "Other testbeds"]
    out = [" | ".join(head), "|".join("---" for _ in head)]
    for line in found:
        said = ", ".join(t for t in (f"**{line.verdict}**",
                                     qualifier_text(line.kind, line.factors, short=True)) if t)
        beds = []
        for names in groups.values():
            shown = [CHOSEN if name == line.testbed
                     else line.cells.get(name, "—").split(" (")[0] for name in names]
            beds.append("—" if set(shown) == {"—"} else ", ".join(shown))
        rest = [n for n in line.cells if n not in main]
        other = compact_cell(others_text(line, rest)) if rest else ""
        if line.testbed and line.testbed not in main:  # it comes from another testbed
            other = "; ".join(t for t in (f"{CHOSEN} {line.testbed}", other) if t)
        row = [f"[{line.claim}]({links.claim(line.claim)})", said, line.effect or "—",
               thesis_value(line.thesis) or "—", *beds, other or "—"]
        out.append(" | ".join(cell(c) for c in row))
    return "\n".join(out)


def kernel_versions(kernels: object) -> str:
    """"6.18.44-fc-v595, 6.18.44-fc-v669" -> "6.18"; "6.1.0-56-amd64" -> "6.1"."""
    found = dict.fromkeys(".".join(k.strip().split("-")[0].split(".")[:2])
                          for k in str(kernels or "").split(",") if k.strip())
    return "/".join(found) or "?"


def legend(judged: Tables, found: Sequence[Line], main: Sequence[str]) -> str:
    """What each main testbed is (its host, kernel, cgroup version, I/O control and device),
    and which campaigns the other testbeds are of."""
    claims, _ = combined(judged)
    named: dict[str, str] = {}
    campaigns: dict[str, set[str]] = {}
    for row in claims.drop_duplicates(FAMILY).to_dict("records"):
        name = closest_testbed.label(row, claims)
        control = "BFQ" if row["io_control"] == "bfq" else row["io_control"]
        named[name] = (f"{name}: host `{row['host']}`, Linux "
                       f"{kernel_versions(row.get('kernels'))}, cgroup "
                       f"v{row.get('cgroup_version') or '?'}, {control}, device "
                       f"{row['device_profile']}")
        campaigns.setdefault(str(row["campaign"]), set()).add(name)
    text = "Testbeds: " + "; ".join(named[name] for name in main if name in named) + "."
    return text + others_legend(campaigns, found, main)


def others_legend(campaigns: Mapping[str, set[str]], found: Sequence[Line],
                  main: Sequence[str]) -> str:
    """" Other testbeds: 8 of campaign bfq, ..." ("" without any): `campaigns` maps each
    campaign to its testbeds' names."""
    others = {n for line in found for n in line.cells if n not in main}
    if not others:
        return ""
    of = {c: sorted(names & others) for c, names in campaigns.items() if names & others}
    return (" Other testbeds: " + ", ".join(f"{len(n)} of campaign {c}" for c, n in of.items())
            + " (their pages in the report).")


def short_legend(judged: Tables, found: Sequence[Line], main: Sequence[str]) -> str:
    """legend() in fewer words, per campaign of the main testbeds where its testbeds share a
    host, kernel and device (the README's): "thesis-nested: host `nested`, Linux 6.1, device
    hdd"; then what vN/x means and which campaigns the other testbeds are of."""
    claims, _ = combined(judged)
    described: dict[str, set[str]] = {}
    campaigns: dict[str, set[str]] = {}
    for row in claims.drop_duplicates(FAMILY).to_dict("records"):
        name = closest_testbed.label(row, claims)
        campaigns.setdefault(str(row["campaign"]), set()).add(name)
        if name in main:
            described.setdefault(name.split(" ", 1)[0], set()).add(
                f"host `{row['host']}`, Linux {kernel_versions(row.get('kernels'))}, device "
                f"{row['device_profile']}")
    alike: dict[str, list[str]] = {}  # campaigns described alike are named together
    for campaign in by_campaign(main):
        if described.get(campaign):
            alike.setdefault("; ".join(sorted(described[campaign])), []).append(campaign)
    parts = [f"{', '.join(named)}: {said}" for said, named in alike.items()]
    text = ("Testbeds: " + "; ".join(parts) + "; vN/x: cgroup version N, I/O control x. Each "
            "testbed's factors: its claim page.")
    return text + others_legend(campaigns, found, main)


HOW_TO_READ = (
    "Each claim's verdict comes from its testbed closest to the thesis's: of the campaigns that"
    " test it, the testbed with all its parts measured that differs from the thesis's in the "
    "fewest factors the claim depends on (then the most seconds measured); the other testbeds' "
    "outcomes stand beside it. A verdict says what the runs show on that testbed, whichever way"
    " it goes, with the factors in which the testbed differs from the thesis's (weights: the "
    "I/O controller and what its weights divide; VM: the VM's acceleration; Ploop: the per-"
    "container volume; device; write-back) or *like the thesis's testbed*. *Ours* is the part "
    "the verdict turns on, with its 95% interval and the values it is computed from.")


def document_section(judged: Tables, found: Sequence[Line], main: Sequence[str],
                     baseline: str, links: Links, changes_link: str) -> list[str]:
    """The headline as Markdown lines (results/summary.md's first section)."""
    return [HOW_TO_READ, "", tally(found), "", disclosure(found, baseline, changes_link), "",
            markdown_table(found, main, links), "", legend(judged, found, main), ""]


def readme_block(judged: Tables, found: Sequence[Line], main: Sequence[str],
                 baseline: str) -> str:
    links = Links(report="results/report/", root="")
    return "\n".join([tally(found), "", short_disclosure(found, baseline, f"results/{CHANGES}"),
                      "", compact_table(found, main, links), "",
                      f"{CHOSEN}: the testbed the verdict comes from. "
                      + short_legend(judged, found, main)])


def replace_block(text: str, new: str, where: str = "README.md") -> str:
    """`text` with what lies between START and END replaced by `new`."""
    return MARKERS.replace(text, new, where)


def between_markers(text: str) -> str | None:
    """What lies between START and END; None without both markers."""
    return MARKERS.between(text)


def processed_folders(root: Path) -> list[Path]:
    """Each campaign's folder of a pipeline's working directory (data/processed/<campaign>)."""
    processed = root / "data" / "processed"
    return sorted(p for p in processed.iterdir() if p.is_dir()) if processed.is_dir() else []


def judged_under(root: Path) -> dict[str, tuple[pd.DataFrame, ...]]:
    """Every campaign's judged tables under a pipeline's working directory."""
    from journalbench.judge.claims import judged

    found = {}
    processed = root / "data" / "processed"
    folders = processed_folders(root)
    for folder in folders:
        tables = judged.read(folder)
        if tables is not None and not tables[0].empty:
            found[str(tables[0]["campaign"].iloc[0])] = tables
    if not found:
        raise ValueError(f"{processed}: no judged tables (claims.parquet, checks.parquet): "
                         "run `make reproduce` first")
    return found


def run_seconds(processed: Iterable[Path]) -> dict[tuple[str, str], float]:
    """(campaign, run id) -> the run's measured window in seconds, from each campaign folder's
    runs table (two columns read)."""
    import pyarrow.parquet as pq

    found: dict[tuple[str, str], float] = {}
    for folder in processed:
        path = Path(folder) / "runs.parquet"
        if not path.is_file():
            continue
        table = pq.read_table(path, columns=["campaign", "run_id", "duration_s"]).to_pydict()
        found.update(((str(c), str(r)), float(d)) for c, r, d in
                     zip(table["campaign"], table["run_id"], table["duration_s"], strict=True))
    return found


def readme_from(root: Path, baseline: str) -> str:
    """The README's block from every judged campaign under `root`."""
    from journalbench.plan.plan import headline_claims
    from journalbench.report import outputs as written

    judged = judged_under(root)
    found, main = lines(judged, headline_claims, written.find(root, baseline),
                        run_seconds(processed_folders(root)))
    return readme_block(judged, found, main, baseline)


def configured_campaign(root: Path) -> str:
    import yaml

    path = root / "workflow" / "config.yaml"
    campaign = (yaml.safe_load(path.read_text()) or {}).get("campaign")
    if not campaign:
        raise ValueError(f"{path}: field campaign: missing")
    return str(campaign)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m journalbench.report.headline",
        description="Rewrite the headline table between the README's "
                    f"'{START}' and '{END}' markers from the pipeline's judged tables.")
    parser.add_argument("--readme", type=Path, required=True, help="the README to rewrite")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the pipeline's working directory (data/processed, figures)")
    args = parser.parse_args(argv)
    return MARKERS.rewrite(args.readme,
                           lambda: readme_from(args.root, configured_campaign(args.root)),
                           "headline")


if __name__ == "__main__":
    sys.exit(main())
