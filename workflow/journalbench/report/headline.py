"""The headline: each claim's verdict on its testbed closest to the thesis's (judge/claims/
headline.py chooses it among the campaigns that offer theirs; report/claim_model.py builds each
claim's model once), ours with its 95% interval against the thesis's value, and a symbol per
main testbed beside it; how many of these verdicts the rules dated after the data changed.
README, results/summary.md, the report's index and each claim's page lead with it, each
rendered from the same model by a template (templates/headline.md.j2, index.html.j2). The
README's block between its markers is rewritten after `make reproduce` by

    python -m journalbench.report.headline --readme README.md
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from journalbench.judge.claims import headline as closest_testbed
from journalbench.judge.claims.catalog import THESIS_CLAIMS
from journalbench.judge.claims.rules import LATEST
from journalbench.judge.claims.verdicts import FAMILY, LIKE, qualified
from journalbench.report.claim_model import (
    ClaimModel,
    Model,
    Tables,
    combined,
    symbol_legend,
    thesis_value,
)
from journalbench.report.markers import Markers
from journalbench.report.summary import SHOWN_VERDICTS, Links, claim_names, count

MARKERS = Markers("summary", "the summary")
DIVIDED = re.compile(r"readers got (?P<share>[\d.]+) \[")  # judge/claims/division.py's text
START, END = MARKERS.start, MARKERS.end
CHANGES = "claims.md#changes-to-the-rules"  # the ledger's list, beside results/summary.md


def by_device(line: ClaimModel) -> str:
    """The claim's verdicts on all its testbeds, counted per device profile, where they span
    more than one ("" otherwise): "on native 3 reproduced, 1 mixed; on hdd 5 contradicted"."""
    devices = line.devices
    if len(set(devices.values())) < 2:
        return ""
    counted: dict[str, dict[str, int]] = {}
    for testbed in (*([line.chosen] if line.chosen else []), *line.others):
        mine = counted.setdefault(devices.get(testbed.label, "?"), {})
        mine[testbed.verdict] = mine.get(testbed.verdict, 0) + 1
    return "; ".join(f"on {device} " + ", ".join(f"{n} {v}" for v, n in verdicts.items())
                     for device, verdicts in counted.items())


def short_count(found: Sequence[ClaimModel]) -> str:
    """count() in fewer words: each verdict's number, and how many on a testbed like the
    thesis's (the table names the factors of the others)."""
    parts = []
    for verdict in dict.fromkeys(line.verdict for line in sorted(
            found, key=lambda line: SHOWN_VERDICTS.index(line.verdict)
            if line.verdict in SHOWN_VERDICTS else len(SHOWN_VERDICTS))):
        mine = [line for line in found if line.verdict == verdict]
        like = sum(line.kind == LIKE for line in mine)
        parts.append(f"{len(mine)} {verdict}" + (f" ({like} like the thesis's)" if like else ""))
    return ", ".join(parts)


def tally(found: Sequence[ClaimModel], short: bool = False) -> str:
    thesis = [line for line in found if line.claim in THESIS_CLAIMS]
    ours = [line for line in found if line.claim not in THESIS_CLAIMS]
    text = (f"The thesis's {len({line.claim for line in thesis})} claims, each on its closest "
            f"testbed: {short_count(thesis) if short else count(thesis)}")
    if ours:
        text += (f"; ours ({claim_names(ours)}): "
                 + ", ".join(f"{line.verdict} on {line.testbed}"
                             + (f" (its testbeds {by_device(line)})" if by_device(line) else "")
                             for line in ours))
    return text + "."


def net_changes(found: Sequence[ClaimModel]) -> tuple[list[str], list[str]]:
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


def latest_moves(moved: Sequence[tuple[str, str, str]], link: str, short: bool) -> str:
    """The headlines the latest rules moved (judge/claims/headline.moves), named (`short`)
    or each old -> new, with the ledger's list."""
    if not moved:
        return f" The rules of {LATEST} moved no headline."
    if short:
        return (f" The rules of {LATEST} moved {len(moved)} headlines "
                f"({', '.join(c for c, _, _ in moved)}): "
                f"[old -> new]({link.split('#')[0]}#headlines-the-rules-of-{LATEST}-moved).")
    return (f" The rules of {LATEST} (weights judged by what they measurably divided) moved "
            f"{len(moved)} headlines: " + "; ".join(f"{c}: {old} -> {new}"
                                                     for c, old, new in moved) + ".")


def short_disclosure(found: Sequence[ClaimModel], baseline: str, link: str,
                     moved: Sequence[tuple[str, str, str]] = ()) -> str:
    """disclosure() in fewer words: the claims named, not their changes, and the closest-
    testbed rule's moves left to the ledger's list (the README's)."""
    verdicts, testbeds = net_changes(found)
    said = (f"Rules dated after the data were seen changed {len(verdicts)} of these verdicts"
            + (f" ({', '.join(i.split(':')[0] for i in verdicts)})" if verdicts else "")
            + (f" and only the testbed of {len(testbeds)} more "
               f"({', '.join(i.split(':')[0] for i in testbeds)})" if testbeds else "")
            + f": [the list, old -> new]({link}) (built).")
    return said + latest_moves(moved, link, short=True)


def disclosure(found: Sequence[ClaimModel], baseline: str, link: str,
               moved: Sequence[tuple[str, str, str]] = ()) -> str:
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
    away = []
    for line in found:
        if not line.campaign or line.campaign == baseline:
            continue
        before = [t.verdict for t in line.others if t.campaign == baseline]
        away.append(f"{line.claim}: {before[0] if len(before) == 1 else 'not run'} on "
                    f"{baseline} -> {line.verdict} on {line.testbed}")
    if away:
        said += (" Since 2026-11-27 each claim's verdict comes from its closest testbed; "
                 f"before, every claim's came from {baseline}, and {len(away)} now come from "
                 f"another ({'; '.join(away)}).")
    return said + latest_moves(moved, link, short=False)


def others_text(line: ClaimModel, names: Iterable[str] | None = None, most: int = 3) -> str:
    """The outcomes of the other testbeds (`names`, else all) in a short cell: each named, or
    counted past `most`."""
    shown = {n: t for n, t in line.cells.items() if names is None or n in set(names)}
    if not shown:
        return "—"
    if len(shown) <= most:
        return "; ".join(f"{name}: {text}" for name, text in shown.items())
    devices = line.devices
    by_profile: dict[str, dict[str, int]] = {}  # counted per device where they span several
    several = len({devices.get(n, "") for n in shown}) > 1
    for name, text in shown.items():
        verdict = text.split(" (")[0]
        mine = by_profile.setdefault(devices.get(name, "") if several else "", {})
        mine[verdict] = mine.get(verdict, 0) + 1
    return (f"{len(shown)} testbeds: "
            + "; ".join((f"on {device} " if device else "")
                        + ", ".join(f"{n} {verdict}" for verdict, n in verdicts.items())
                        for device, verdicts in by_profile.items()))


def by_campaign(main: Sequence[str]) -> dict[str, list[str]]:
    """The main testbeds grouped by campaign (a label's first word), in their order."""
    groups: dict[str, list[str]] = {}
    for name in main:
        groups.setdefault(name.split(" ", 1)[0], []).append(name)
    return groups


def kernel_versions(kernels: object) -> str:
    """"6.18.44-fc-v595, 6.18.44-fc-v669" -> "6.18"; "6.1.0-56-amd64" -> "6.1"."""
    found = dict.fromkeys(".".join(k.strip().split("-")[0].split(".")[:2])
                          for k in str(kernels or "").split(",") if k.strip())
    return "/".join(found) or "?"


def legend(judged: Tables, found: Sequence[ClaimModel], main: Sequence[str]) -> str:
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


def others_legend(campaigns: Mapping[str, set[str]], found: Sequence[ClaimModel],
                  main: Sequence[str]) -> str:
    """" Other testbeds: 8 of campaign bfq, ..." ("" without any): `campaigns` maps each
    campaign to its testbeds' names."""
    others = {n for line in found for n in line.cells if n not in main}
    if not others:
        return ""
    of = {c: sorted(names & others) for c, names in campaigns.items() if names & others}
    return (" Other testbeds: " + ", ".join(f"{len(n)} of campaign {c}" for c, n in of.items())
            + ".")


def short_legend(judged: Tables, found: Sequence[ClaimModel], main: Sequence[str]) -> str:
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
    text = ("Testbeds: " + "; ".join(parts) + "; vN/x: cgroup version N, I/O control x.")
    return text + weights_legend(claims, main) + others_legend(campaigns, found, main)


def weights_legend(claims: pd.DataFrame, main: Sequence[str]) -> str:
    """What each main testbed's weights divide, measured (judge/claims/division.py): its 80/20
    readers' share and the word "weights (...)" carries in the table."""
    if "division_word" not in claims:
        return ""
    said = {}
    for row in claims.drop_duplicates(FAMILY).to_dict("records"):
        name = closest_testbed.label(row, claims)
        if name in main and isinstance(row.get("division"), str):
            share = DIVIDED.search(row["division"])
            said[name] = (f"{share['share']}, {row['division_word']}" if share
                          else str(row["division_word"]))
    if not said:
        return ""
    return (" Weights measured (80/20 readers' heavier share; what they divide): "
            + "; ".join(f"{name} {said[name]}" for name in main if name in said) + ".")


HOW_TO_READ = (
    "Each claim's verdict comes from its testbed closest to the thesis's: of the campaigns that"
    " test it, the testbed with all its parts measured that differs from the thesis's in the "
    "fewest factors the claim depends on (then the most seconds measured); the other testbeds' "
    "verdicts stand beside it, a symbol each. A verdict says what the runs show on that "
    "testbed, whichever way it goes; *Differs in* names the factors in which the testbed "
    "differs from the thesis's (weights: the I/O controller and what its weights divide; VM: "
    "the VM's acceleration; Ploop: the per-container volume; device; write-back), *none* where "
    "it is like the thesis's. *Ours* is the part the verdict turns on, with its 95% interval; "
    "*Caveat*: the runs it rests on, its parts not measured there and, for a claim that "
    "depends on the weights, what the testbed's controller divided.")


def run_counts(model: Model, processed: Iterable[Path]) -> str:
    """The runs of the main testbeds' campaigns, those not in the analysis named ("Runs:
    thesis-hdd 1,071 runs; thesis-nested 345 runs, 3 unusable: ...")."""
    from journalbench.report import left_out

    processed = list(processed)
    used = left_out.analysed(processed)
    shown = {c: used.get(c, 0) for c in by_campaign(model.main)}
    return f"Runs: {left_out.counts(shown, left_out.skipped_folders(processed))}."


def context(model: Model, judged: Tables, baseline: str, links: Links,
            changes_link: str, short: bool = False, runs: str = "") -> dict[str, object]:
    """What the headline's templates show (headline.md.j2, index.html.j2): the model, its
    tally, disclosure and legends, the runs counted (`runs`); `short`: the README's fewer
    words."""
    found = model.claims
    return {
        "model": model, "links": links, "how": HOW_TO_READ, "tally": tally(found, short),
        "runs": runs,
        "disclosure": (short_disclosure if short else disclosure)(found, baseline,
                                                                   changes_link, model.moved),
        # the README's glossary gives each symbol with its verdict
        "symbols": ("symbols as in the glossary; bold: the headline testbed" if short
                    else symbol_legend()),
        "legend": (short_legend if short else legend)(judged, found, model.main),
        "thesis_value": thesis_value,
    }


def document_section(model: Model, judged: Tables, baseline: str, links: Links,
                     changes_link: str, runs: str = "") -> str:
    """The headline in Markdown (results/summary.md's first section)."""
    from journalbench.report.render import environment

    return environment().get_template("headline.md.j2").module.section(
        context(model, judged, baseline, links, changes_link, runs=runs))


def readme_block(model: Model, judged: Tables, baseline: str, runs: str = "") -> str:
    """The README's block: the headline in fewer words, its links from the repository's
    root."""
    from journalbench.report.render import environment

    links = Links(report="results/report/", root="")
    shown = context(model, judged, baseline, links, f"results/{CHANGES}", short=True,
                    runs=runs)
    return str(environment().get_template("headline.md.j2").module.readme(shown)).strip("\n")


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
    from journalbench.report.claim_model import build

    judged = judged_under(root)
    folders = processed_folders(root)
    model = build(judged, headline_claims, written.find(root, baseline), run_seconds(folders))
    return readme_block(model, judged, baseline, run_counts(model, folders))


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


def beside(root: Path, campaign: str) -> tuple[pd.DataFrame, str]:
    """(per claim: `campaign`'s verdict on each of its testbeds beside the claim's headline
    testbed and verdict, from every campaign judged under `root`; a line saying what the
    headline could not weigh: the campaigns with runs there not judged yet). The claims
    notebook shows it: a verdict of one campaign is not the claim's headline."""
    from journalbench.plan.plan import headline_claims
    from journalbench.report import notebook_paths
    from journalbench.report.claim_model import build

    try:
        judged = judged_under(root)
    except ValueError:
        judged = {}
    missing = [c for c in notebook_paths.campaigns(root)
               if c not in judged and headline_claims(c)]
    note = (f"Not judged yet, so not weighed for the headline: {', '.join(missing)} (`make "
            "reproduce` judges every campaign)." if missing else "Every campaign is judged.")
    columns = ["claim", "this campaign's testbed", "its verdict", "headline testbed",
               "headline verdict", "why the headline testbed"]
    if not judged:
        return pd.DataFrame(columns=columns), note
    model = build(judged, headline_claims, seconds=run_seconds(processed_folders(root)))
    rows = []
    for line in model.claims:
        mine = [t for t in line.testbeds if t.campaign == campaign] or [None]
        rows += [(line.claim, t.label if t else "—", t.verdict if t else "not run here",
                  line.testbed or "—", line.verdict, line.why) for t in mine]
    return pd.DataFrame(rows, columns=columns), note
