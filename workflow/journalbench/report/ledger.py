"""The ledger as a document: a summary of every claim's verdict per family, the starved runs, then
a section per claim (the thesis's statement and figure, ours with its interval, the test, p,
the verdict and why, how many runs it used, our figure). Written as Markdown
(results/claims.md), as HTML for the report (results/claims.html) and as CSV for machines
(results/claims.csv). The runs behind each check, and every starved run, are listed once in
claims-runs.csv beside them: inline, their ids were half the ledger's text."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from journalbench.judge import tuples
from journalbench.judge.claims.catalog import CLAIMS, THESIS_CLAIMS
from journalbench.judge.claims.checks import ALPHA, SHARE_MARGIN, STABLE_RATIO
from journalbench.judge.claims.preconditions import DESCRIPTIONS
from journalbench.judge.claims.rules import LATEST, RULES
from journalbench.judge.claims.verdicts import (
    DIFFERS,
    FAMILY,
    LIKE,
    MEASURED,
    VERDICTS,
    control_label,
    detectable_text,
    effect_text,
    factor_names,
    qualified,
    tag,
    unit_of,
    values_text,
)
from journalbench.vocabulary import ARMS

RUNS_FILE = "claims-runs.csv"  # beside the ledger
# what a run was to a check (the checks table's column of run ids for each)
ROLES = {"runs": "used", "starved_runs": "used, a tenant starved",
         "excluded_runs": "left out as CPU-bound"}
# the ids a check's `why` names (the runs' CSV has them): the notes that list them, and an id
RUN_NOTES = ("; starved runs among those used: ", "; runs left out as CPU-bound: ")
RUN_ID = rf"\b(?:{'|'.join(re.escape(arm) for arm in ARMS)})-[0-9a-f]{{12}}\b"
Block = tuple[str, object]  # ("h1" | "h2" | "h3" | "p" | "ul" | "table", content)
CSV_COLUMNS = [*FAMILY, "claim", "verdict", "testbed", "parts", "scope_differs", "p_for_holm",
               "p_against_holm", "part", "test", "test_name", "status", "outcome", "effect",
               "low", "high", "tost_low", "tost_high", "ours_a", "ours_b", "unit", "thesis",
               "differs", "dropped", "p_for", "p_against", "detectable", "interest", "n", "sd",
               "runs",
               "starved_runs", "excluded_runs", "why_not", "why", "changes"]


def family_name(row: Mapping[str, Any]) -> str:
    control = row.get("io_control", "bfq")
    weights = (f"BFQ {row['bfq']}" if control == "bfq"
               else control_label(control, row.get("iocost_qos")))
    version = f"cgroup v{row['cgroup_version']}" if row.get("cgroup_version") else "cgroup v?"
    return (f"{row['campaign']} / {row['host']} / {row['device_profile']} / {version} / "
            f"{weights}")


def intro(claims: pd.DataFrame) -> list[Block]:
    families = claims.drop_duplicates(FAMILY)
    return [
        ("p", "Every claim of the thesis, tested on the runs of each campaign, host, device "
              "profile, cgroup version, BFQ setting and I/O control (a *family*: runs of "
              "different families are never pooled). Families: "
              + ", ".join(family_name(r) for _, r in families.iterrows()) + "."),
        ("p", "Verdicts, fixed in code before data except where the section *Changes to the "
              "rules* dates a change (docs/claims.md has each claim's checks, margins, "
              "preconditions and the testbed factors it depends on): **reproduced** (every "
              "check significant), **mixed** (its parts disagree: one significantly for it, "
              "another against it), **contradicted** (significantly the other way, or an "
              "equivalence interval entirely outside its margin), **inconclusive** (neither; "
              "with the smallest effect the runs could detect), **partially measured** (a "
              "part is missing), **not testable here** (a precondition of the testbed is not "
              "met). Each says what the runs show on their testbed, whichever way it goes, and "
              "carries that testbed: *like the thesis's* in every factor the parts it rests on "
              "depend on, or the factors in which it *differs* (each with a mechanism, or a "
              "measurement of ours: section *What the studies measured of the factors*)."),
        ("p", f"One-sided tests at alpha = {ALPHA}; a claim is the intersection of its checks; "
              "Holm's correction runs over the claims of a family, and each check (a *part*) "
              "gets its outcome at its claim's level. Beside every ratio: the values behind "
              "it, ours (geometric means for a ratio, whose quotient it is; in their unit) and the "
              "thesis's. Margins: \"constant\" within "
              f"x{STABLE_RATIO}, \"not worse\" above x1/{STABLE_RATIO}, \"holds the split\" "
              f"within +-{SHARE_MARGIN}. Intervals are 95% "
              "(90% for equivalence tests, as TOST reads them). Preconditions: "
              + "; ".join(DESCRIPTIONS.values()) + "."),
    ]


def tally(claims: pd.DataFrame) -> str:
    """Verdicts counted, each split by its testbed: "3 contradicted (1 on a testbed like the
    thesis's, 2 where it differs)"."""
    parts = []
    for verdict in VERDICTS:
        mine = claims[claims["verdict"] == verdict]
        if mine.empty:
            continue
        kinds = mine["testbed"].fillna("") if "testbed" in mine else pd.Series(dtype=str)
        split = [*([f"{(kinds == LIKE).sum()} on a testbed like the thesis's"]
                   if (kinds == LIKE).any() else []),
                 *([f"{(kinds == DIFFERS).sum()} where it differs"]
                   if (kinds == DIFFERS).any() else [])]
        parts.append(f"{len(mine)} {verdict}" + (f" ({', '.join(split)})" if split else ""))
    return ", ".join(parts)


def testbed_text(row: Mapping[str, Any]) -> str:
    """A verdict's testbed in words: "like the thesis's", "differs: weights, Ploop"."""
    if row.get("testbed") == LIKE:
        return "like the thesis's"
    if row.get("testbed") == DIFFERS:
        return "differs: " + ", ".join(tag(f) for f in factor_names(row.get("factors")))
    return ""


def summary(claims: pd.DataFrame) -> list[Block]:
    """Per family: each claim's verdict, its parts' outcomes and where this testbed differs
    from the thesis's; the thesis's 23 claims counted apart from ours (C24)."""
    thesis = claims[claims["claim"].isin(THESIS_CLAIMS)]
    ours = claims[~claims["claim"].isin(THESIS_CLAIMS)]
    blocks: list[Block] = [("h2", "Summary"), (
        "p", f"The thesis's {len(THESIS_CLAIMS)} claims, over all families: {tally(thesis)}. "
             f"Ours ({', '.join(sorted(set(ours['claim'])))}): {tally(ours)}.")]
    shown = claims[["claim", "verdict", "parts"]].rename(columns={"parts": "its parts"})
    shown.insert(1, "thesis", [CLAIMS[c].where for c in claims["claim"]])
    shown["testbed"] = [testbed_text({"testbed": t, "factors": f}) for t, f in zip(
        claims["testbed"], claims["factors"], strict=True)]
    for _, family in claims.groupby(FAMILY, sort=False):
        table = shown.loc[family.index]
        blocks += [("h3", family_name(family.iloc[0])), ("table", table)]
    return blocks


def changes_blocks(claims: pd.DataFrame,
                   moved: list[tuple[str, str, str]] | None = None) -> list[Block]:
    """The rules changed after data were seen (rules.py): first each changed verdict before
    them and now, then each rule with every verdict it changed, then (`moved`, the combined
    ledger's: judge/claims/headline.moves) every headline the latest rules moved."""
    blocks: list[Block] = [("h2", "Changes to the rules"), (
        "p", "Rules of judging changed after data were seen, applied openly: each family is "
             "judged under the rules before each change too, and every verdict a change "
             "altered is listed, old -> new.")]
    changed = claims[claims["changes"].fillna("") != ""]
    several = claims.drop_duplicates(FAMILY).shape[0] > 1
    if not changed.empty:
        net = pd.DataFrame({
            "claim": changed["claim"],
            "before the changes": [c.split(": ", 1)[1].split(" -> ")[0].split(" (")[0]
                                   for c in changed["changes"]],
            "now": [qualified(r["verdict"], r.get("testbed") or "",
                              factor_names(r.get("factors")))
                    for r in changed.to_dict("records")],
            "changed by": [", ".join(dict.fromkeys(part.split(": ")[0]
                                                   for part in c.split("; ")))
                           for c in changed["changes"]]})
        if several:
            net.insert(0, "family", [family_name(r) for _, r in changed.iterrows()])
        blocks.append(("table", net))
    # each changed verdict's parts (rule: old -> new) split once, not once per rule
    split = [(("" if not several else f"{family_name(row)}: ") + f"{row['claim']}: ",
              [(name, said) for name, sep, said in (part.partition(": ")
                                                    for part in row["changes"].split("; "))
               if sep])
             for row in changed.to_dict("records")]
    for rule in RULES:
        mine = [lead + "; ".join(said for name, said in parts if name == rule.name)
                for lead, parts in split if any(name == rule.name for name, _ in parts)]
        blocks += [("h3", f"{rule.date}: {rule.name}"),
                   ("p", f"**Rule:** {rule.what} **Why:** {rule.why}"),
                   ("ul", mine) if mine else ("p", "It changed no verdict.")]
    if moved is not None:
        blocks += [("h3", f"Headlines the rules of {LATEST} moved"),
                   ("p", "Each claim's headline comes from its testbed closest to the "
                         "thesis's (the ranking is unchanged); judged under the rules before "
                         f"{LATEST} and under those in force, these headlines differ:")]
        blocks.append(("table", pd.DataFrame(moved, columns=["claim", "before", "now"]))
                      if moved else ("p", "They moved no headline."))
    return blocks


def division_blocks(claims: pd.DataFrame) -> list[Block]:
    """What each testbed's weights were measured to divide (judge/claims/division.py)."""
    if "division" not in claims:
        return []
    shown = claims.drop_duplicates(FAMILY)
    return [("h2", "What each testbed's weights divide"),
            ("p", "Measured on validation pairs no claim uses (judge/claims/division.py): two "
                  "equal random readers at 80/20 (the weights divide at all where the 80% "
                  "reader gets at least 0.65), and readers of 128 KiB against 8 KiB at equal "
                  "weights, random and sequential (device time, as the thesis's weights, "
                  "only where both divide time). A testbed without them shows its "
                  "controller's documented mechanism. A check whose claim depends on the "
                  "weights is not testable where they divided nothing, or where a controller "
                  "that acts only past a budget (iocost) held none of its tenants back."),
            ("table", pd.DataFrame({"family": [family_name(r) for _, r in shown.iterrows()],
                                    "what its weights divide": shown["division"]}))]


def without_run_ids(text: str) -> str:
    """`text` without the run ids the ledger lists (the runs' CSV has them)."""
    for note in RUN_NOTES:
        text = text.split(note, 1)[0]
    text = re.sub(rf" \((?:{RUN_ID}[ ,]*)+\)", "", text)  # "left out (vm-... vm-...)"
    return re.sub(rf"(?:{RUN_ID}[ ,]*)+", "(see the runs) ", text).rstrip()


def starvation_blocks(starved: pd.DataFrame) -> list[Block]:
    flagged = starved[starved["starved"]]
    blocks: list[Block] = [("h2", "Starved runs"), (
        "p", "A tenant is starved in a run when a full second passes without a byte for it "
             "while its tool runs, or its share of the run's bytes is below a quarter of what "
             "its weight promises. Such runs stay in the tests; each claim counts those it used. "
             f"Every starved run, with its seconds without a byte and its share: [{RUNS_FILE}]"
             f"({RUNS_FILE}) (role `starved`).")]
    if flagged.empty:
        return [*blocks, ("p", "None.")]
    table = (flagged.groupby(["campaign", "host", "arm", "tenant", "target_share"],
                             observed=True)
             .agg(runs=("run_id", "nunique"), most_zero_seconds=("zero_seconds", "max"),
                  lowest_share=("achieved_share", "min"))
             .reset_index().round(3))
    return [*blocks, ("table", table)]


def left_out_blocks(left: tuple[pd.DataFrame, pd.DataFrame] | None,
                    campaigns: set[str]) -> list[Block]:
    """The runs not in the analysis (a damaged, incomplete, unusable or duplicate run folder)
    and those kept with a note, of the ledger's campaigns, each named by campaign and run id
    (report/left_out.py)."""
    if left is None:
        return []
    skipped, noted = (table[table["campaign"].isin(campaigns)] for table in left)
    blocks: list[Block] = [("h2", "Runs left out"), (
        "p", "Run folders tidy could not use are not in any verdict: each with why (restore a "
             "damaged one with `git checkout -- <folder>`); runs whose counters disagree "
             "within what sampling explains are kept, with a note (data/SCHEMA.md).")]
    if skipped.empty:
        blocks.append(("p", "Not in the analysis: none."))
    else:
        blocks.append(("ul", [f"{r.campaign} `{r.run_id}`: {r.status}: {r.reason}"
                              for r in skipped.itertuples()]))
    if not noted.empty:
        blocks += [("p", "Kept with a note:"),
                   ("ul", [f"{r.campaign} `{r.run_id}`: {r.note}" for r in noted.itertuples()])]
    return blocks


def ids(text: Any) -> list[str]:
    return str(text).split() if isinstance(text, str) else []


def runs_table(checks: pd.DataFrame, starved: pd.DataFrame) -> pd.DataFrame:
    """Every run behind a check (claim, part, test, role) and every starved tenant-run, one row
    each: what the ledger counts."""
    rows = [{**{key: check[key] for key in (*FAMILY, "claim", "part", "test")},
             "role": role, "run_id": run}
            for check in tuples.records(checks) for column, role in ROLES.items()
            for run in ids(check[column])]
    used = pd.DataFrame(rows, columns=[*FAMILY, "claim", "part", "test", "role", "run_id"])
    flagged = starved[starved["starved"]].assign(role="starved")
    return pd.concat([used, flagged.reindex(columns=[
        "campaign", "host", "role", "run_id", "arm", "tenant", "zero_seconds",
        "achieved_share", "target_share"])], ignore_index=True)


def counted(text: Any, what: str) -> str:
    n = len(ids(text))
    return f"; {what}: {n}" if n else ""


def pool_text(row: Mapping[str, Any]) -> str:
    """A pool check's member blocks and agreement ("" off a pool)."""
    members, agreed = row.get("members"), row.get("agreement")
    if not isinstance(members, str) or not members:
        return ""
    return (f"; member blocks (values): {members}"
            + (f"; agreement: {agreed}" if isinstance(agreed, str) and agreed else ""))


def check_item(row: Mapping[str, Any]) -> str:
    head = f"**{row['test']}** ({row['part']} half)"
    if row["status"] != MEASURED:
        return f"{head}: {row['status']}: {without_run_ids(row['why_not'])}{pool_text(row)}"
    shown = values_text(row)
    shown = f" = {shown}" if shown else ""
    scope = f"; this testbed differs in: {row['differs']}" if row["differs"] else ""
    tost = (f", 90% [{row['tost_low']:.3g}, {row['tost_high']:.3g}]"
            if pd.notna(row["tost_low"]) else "")
    runs = (f"runs: {len(ids(row['runs']))}{counted(row['starved_runs'], 'starved')}"
            f"{counted(row['excluded_runs'], 'left out as CPU-bound')} ([ids]({RUNS_FILE}))")
    return (f"{head}: **{row['outcome']}**: ours {effect_text(row)}{tost}{shown} "
            f"(n {row['n']}), thesis {row['thesis']}; {row['test_name']}: p = "
            f"{row['p_for']:.3g} (opposite: {row['p_against']:.3g}); smallest detectable "
            f"{detectable_text(row)}{scope}; {runs}{pool_text(row)}")


def pool_blocks(claims: pd.DataFrame, checks: pd.DataFrame) -> list[Block]:
    """Per pool family: its members with their runs, how the statistics treat them, and the
    agreement check's outcomes counted, each member that differs named with its checks.
    Nothing in a ledger without a pool."""
    if "members" not in claims or claims["members"].isna().all():
        return []
    from journalbench.judge.claims.agreement import AGREES, DIFFERS, UNDETERMINED

    blocks: list[Block] = [
        ("h2", "Pools: member blocks and agreement"),
        ("p", "A pool's runs are one family, dealt so that every condition's repetitions "
              "spread evenly over its members. Every check's statistic is stratified by "
              "member, each a fixed block (the contrast within each member, combined; the "
              "spread within members; with one member, the test itself). The agreement check "
              "compares each member's effect with the other members' on the check's scale: "
              f"*{DIFFERS}* where its 90% interval lies entirely beyond x{STABLE_RATIO} (a "
              f"ratio) or {SHARE_MARGIN} share points (Holm over the family's checks and "
              f"members), *{AGREES}* where it lies within, *{UNDETERMINED}* otherwise. A check "
              "with a member that differs is not testable here rather than pooled "
              "(docs/hosts.md).")]
    for _, row in claims.dropna(subset=["members"]).drop_duplicates(FAMILY).iterrows():
        mine = checks
        for key in FAMILY:
            mine = mine[mine[key] == row[key]]
        lines = mine["agreement"].dropna() if "agreement" in mine else pd.Series(dtype=str)
        comparisons = [part for line in lines for part in str(line).split("; ") if part]
        counts = {o: sum(part.split(" ")[1].rstrip(":") == o for part in comparisons)
                  for o in (AGREES, UNDETERMINED, DIFFERS)}
        differing = [f"{test}: {part}" for test, line in zip(mine["test"], mine.get(
            "agreement", pd.Series(index=mine.index, dtype=object)), strict=True)
            if isinstance(line, str) for part in line.split("; ")
            if part.split(" ")[1:2] == [f"{DIFFERS}:"]]
        blocks.append(("p", f"**{family_name(row)}**: members {row['members']}; member "
                            "comparisons: " + ", ".join(f"{n} {o}" for o, n in counts.items())
                            + "."))
        if differing:
            blocks.append(("ul", differing))
    return blocks


def claim_blocks(claim: str, claims: list[dict], checks: dict[tuple, list[dict]], figures: str,
                 root: Path) -> list[Block]:
    """The claim's section from its rows of the claims table, one per family; `checks`: the
    checks' rows by claim and family. `figures`: the figures folder relative to `root`, the
    ledger's folder; a figure is linked when it exists."""
    info = CLAIMS[claim]
    blocks: list[Block] = [("h2", f"{claim} ({info.where})"),
                           ("p", f"**Thesis:** {info.statement}.")]
    for row in claims:
        links = ", ".join(f"[{name}]({figures}/{row['campaign']}/{name}.png)"
                          for name in info.figures
                          if (root / figures / row["campaign"] / f"{name}.png").is_file())
        testbed = testbed_text(row)
        blocks.append(("h3", f"{family_name(row)}: {row['verdict']}"
                             + (f" (testbed {testbed})" if testbed else "")))
        parts = f" **Parts:** {row['parts']}." if row["parts"] else ""
        blocks.append(("p", f"**Why:** {without_run_ids(row['why'])}.{parts}"
                       + (f" **Figure:** {links}" if links else "")))
        family = checks.get((claim, *(row[key] for key in FAMILY)), [])
        if family:
            blocks.append(("ul", [check_item(r) for r in family]))
    return blocks


def factors_blocks(evidence: pd.DataFrame | None) -> list[Block]:
    """Each claim's testbed factors with their mechanisms, and what the studies measured of
    them (judge/claims/contrasts.py): the decision per claim and factor, each check's change."""
    from journalbench.judge.claims.contrasts import decisions
    from journalbench.judge.claims.mechanisms import MECHANISMS

    blocks: list[Block] = [
        ("h2", "What the studies measured of the factors"),
        ("p", "A claim depends on a testbed factor through a mechanism (each below, with its "
              "source; docs/claims.md lists every claim's). Where a study measured the "
              "claim's checks under both values of a factor, varying it alone on one campaign "
              "and host, the measurement decides for the checks it measured: *dropped* where "
              "every check's change of effect lay within its smallest effect of interest "
              "(TOST, Holm over the claims of the contrast), *kept* where the change was "
              "significant, *undecided* otherwise (the mechanism stands)."),
        ("ul", [f"**{m.name}** ({m.factor}): {m.text}" for m in MECHANISMS.values()])]
    if evidence is None or evidence.empty:
        return [*blocks, ("p", "No contrast among these campaigns' families.")]
    decided = decisions(evidence)
    blocks.append(("table", decided.rename(columns={"dropped": "checks it was dropped for",
                                                    "by": "contrasts"})))
    shown = evidence.assign(**{c: evidence[c].astype(float).round(4) for c in (
        "change", "low", "high", "p_equivalent", "claim_p_equivalent_holm",
        "claim_p_change_holm")})
    blocks.append(("table", shown[["campaign", "factor", "from", "to", "claim", "test",
                                   "margin", "change", "low", "high", "p_equivalent",
                                   "claim_p_equivalent_holm", "claim_p_change_holm",
                                   "outcome", "excluded"]]))
    return blocks


def document(title: str, claims: pd.DataFrame, checks: pd.DataFrame, starved: pd.DataFrame,
             figures: str, root: Path, evidence: pd.DataFrame | None = None,
             moved: list[tuple[str, str, str]] | None = None,
             left: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> list[Block]:
    """The ledger's blocks; `moved`: the headlines the latest rules moved; `left`: the runs
    left out and those kept with a note (report/left_out.py), of every campaign (the ledger
    shows its own)."""
    blocks: list[Block] = [("h1", title), *intro(claims), *summary(claims),
                           *changes_blocks(claims, moved), *division_blocks(claims),
                           *factors_blocks(evidence),
                           *pool_blocks(claims, checks), *starvation_blocks(starved),
                           *left_out_blocks(left, set(claims["campaign"].astype(str)))]
    # rows grouped once: selecting them from the frames claim by claim was most of the time
    rows: dict[str, list[dict]] = {}
    for row in tuples.records(claims):
        rows.setdefault(row["claim"], []).append(row)
    by_family: dict[tuple, list[dict]] = {}
    for row in tuples.records(checks):
        by_family.setdefault((row["claim"], *(row[key] for key in FAMILY)), []).append(row)
    for claim in CLAIMS:
        blocks += claim_blocks(claim, rows.get(claim, []), by_family, figures, root)
    return blocks


def markdown(blocks: list[Block]) -> str:
    out = []
    for kind, content in blocks:
        if kind in ("h1", "h2", "h3"):
            out.append(f"{'#' * int(kind[1])} {content}")
        elif kind == "ul":
            out.append("\n".join(f"- {item}" for item in content))
        elif kind == "table":
            out.append(content.to_markdown(index=False))
        else:
            out.append(str(content))
    return "\n\n".join(out) + "\n"


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it for Markdown: lowercase, punctuation dropped,
    spaces to dashes (the HTML ledger's headings get the same ids)."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def inline_html(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    text = re.sub(r"\*(.+?)\*", r"<i>\1</i>", text)
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', text)


def to_html(blocks: list[Block]) -> str:
    body = []
    for kind, content in blocks:
        if kind in ("h1", "h2", "h3"):
            body.append(f"<{kind} id=\"{slug(str(content))}\">{inline_html(str(content))}"
                        f"</{kind}>")
        elif kind == "ul":
            body.append("<ul>" + "".join(f"<li>{inline_html(i)}</li>" for i in content)
                        + "</ul>")
        elif kind == "table":
            body.append(content.to_html(index=False, border=0, classes="ledger"))
        else:
            body.append(f"<p>{inline_html(str(content))}</p>")
    style = ("body{font-family:sans-serif;max-width:70em;margin:auto;line-height:1.4}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}")
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>Claims ledger</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")


def csv_table(claims: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    keys = [*FAMILY, "claim"]
    merged = claims[[*keys, "verdict", "testbed", "why", "parts", "differs", "changes",
                     "p_for_holm", "p_against_holm"]].rename(
        columns={"differs": "scope_differs"}).merge(
        checks, on=keys, how="left")
    merged["unit"] = [unit_of(row) if pd.notna(row["kind"]) else ""
                      for row in tuples.records(merged)]
    return merged.reindex(columns=CSV_COLUMNS)


def write(target: Path, title: str, claims: pd.DataFrame, checks: pd.DataFrame,
          starved: pd.DataFrame, figures: str, evidence: pd.DataFrame | None = None,
          moved: list[tuple[str, str, str]] | None = None,
          left: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> list[Path]:
    """target.md, target.html, target.csv and the runs they count (RUNS_FILE beside them)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    blocks = document(title, claims, checks, starved, figures, target.parent, evidence, moved,
                      left)
    paths = [*(target.with_suffix(s) for s in (".md", ".html", ".csv")),
             target.parent / RUNS_FILE]
    paths[0].write_text(markdown(blocks))
    paths[1].write_text(to_html(blocks))
    csv_table(claims, checks).to_csv(paths[2], index=False)
    runs_table(checks, starved).to_csv(paths[3], index=False)
    return paths
