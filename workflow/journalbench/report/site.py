"""The HTML report a reviewer opens, results/report/ (a folder that works opened from disk):

- index.html: each claim on its closest testbed (headline.py, from claim_model.py's model),
  the configured campaign's results at a glance (summary.py's rows), the run folders left
  out, links to every other page;
- claims/<claim>.html: the claim's statement, then its testbeds ordered by evidence: its
  headline testbed first (verdict, why this one, ours against the thesis, its checks, its
  figures, its runs), then every other testbed in a section of its own that opens on a click,
  with the same parts; runs/<claim>.csv lists the runs of every testbed (campaign, testbed,
  run id, the check it feeds);
- campaigns/<campaign>.html: every other campaign's results at a glance, per family;
- studies/<study>.html: the studies' figures and tables (BFQ's settings, the device class,
  file preparation) under the campaign whose runs they show.

Figures and tables are copied in (figures/, tables/), so every link is relative and stays in
the folder but for the ledgers (results/<campaign>/claims.html) beside it. It is written with
the ledger, in the same process (cli/claims.py --report): the judged tables are in memory and
Python and pandas start once. Snakemake's own report (`snakemake --report`) stays the
provenance view: it files results under categories and cannot lay out a page per claim.
Also writes results/summary.md.
"""

from __future__ import annotations

import csv
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment
from markupsafe import Markup

from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.verdicts import (
    FAMILY,
    MARGIN_KINDS,
    MEASURED,
    detectable_text,
    effect_text,
    values_text,
)
from journalbench.plan.plan import headline_claims
from journalbench.report import check_plot, claim_model, headline, left_out, notebooks, summary
from journalbench.report import outputs as written
from journalbench.report.claim_model import split_runs
from journalbench.report.ledger import inline_html, without_run_ids
from journalbench.report.outputs import FIGURE, STUDIES, Output

Judged = tuple[pd.DataFrame, ...]  # claims, checks, starved, evidence
# A claim's runs file: a row per testbed, check and run it rests on (or left out as
# CPU-bound). A page names no run: its runs are behind a link (runs/<claim>.csv). A run id is
# its arm and 12 hex digits (runfolder.py); the verdict's why ends with the notes
# verdicts.runs_note appends, which list them.
RUNS_COLUMNS = ["campaign", "testbed", "run_id", "claim", "part", "test", "outcome", "used",
                "starved", *(k for k in FAMILY if k != "campaign")]
CHECK_PLOTS = "checks"  # the testbeds' check figures, under the report's figures/


def environment() -> Environment:
    from journalbench.report.render import environment as shared

    return shared()


def anchor(labels: Mapping[str, Any]) -> str:
    """A family's id in a page: its labels, lowercase, non-alphanumerics as dashes."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(str(labels[k]) for k in FAMILY).lower()).strip("-")


def family_views(found: Sequence[tuple[dict[str, Any], list[summary.Row]]]) -> list[dict]:
    return [{"label": summary.family_heading(labels), "anchor": anchor(labels), "rows": rows,
             "tally": summary.sentence(summary.tally(rows)), "labels": labels}
            for labels, rows in found]


def check_view(check: Mapping[str, Any]) -> dict[str, str]:
    """A check as its claim page's table shows it."""
    view = {"part": check["part"], "test": check["test"], "thesis": check["thesis"],
            "differs": check["differs"], "why_not": "", "outcome": check["outcome"],
            "ours": "—", "medians": "", "n": "", "p": "", "detectable": ""}
    if check["status"] != MEASURED:
        return {**view, "why_not": without_run_ids(check["why_not"])}
    tost = (f"; 90% [{check['tost_low']:.3g}, {check['tost_high']:.3g}]"
            if check["kind"] in MARGIN_KINDS and pd.notna(check["tost_low"]) else "")
    return {**view, "ours": effect_text(check) + tost, "medians": values_text(check),
            "n": str(check["n"]), "p": f"{check['p_for']:.3g} / {check['p_against']:.3g}",
            "detectable": detectable_text(check)}


def runs_rows(checks: Iterable[Mapping[str, Any]], testbed: str = "") -> list[dict[str, Any]]:
    """A row per check and run it rests on (or left out as CPU-bound), with its testbed."""
    rows = []
    for check in checks:
        starved = set(split_runs(check.get("starved_runs")))
        base = {**{k: check[k] for k in FAMILY}, "testbed": testbed, "claim": check["claim"],
                "part": check["part"], "test": check["test"], "outcome": check["outcome"]}
        rows += [{**base, "run_id": run, "used": "yes", "starved": run in starved}
                 for run in split_runs(check["runs"])]
        rows += [{**base, "run_id": run, "used": "left out: CPU-bound", "starved": False}
                 for run in split_runs(check.get("excluded_runs"))]
    return rows


def write_runs(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, RUNS_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


WIDE_COLUMNS = 9  # a table with more columns is folded (render_table)


def render_table(path: Path) -> Markup:
    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise ValueError(f"{path}: not a table: {' '.join(str(error).split())}") from None
    # four significant digits: the CSV keeps every digit
    shown = Markup(table.to_html(index=False, border=0, classes="data", na_rep="",
                                 float_format=lambda x: f"{x:.4g}"))
    if table.shape[1] <= WIDE_COLUMNS:
        return shown
    # too wide for a 1280 px screen: a click away, its notebook shows what a reader needs
    return Markup(f"<details><summary>all {table.shape[1]} columns, {len(table)} rows</summary>"
                  f"{shown}</details>")


def study_findings(root: Path, campaign: str, study: str) -> list[Markup]:
    """What a study's notebook found, a line each (results/<campaign>/<study>-findings.md,
    Markdown lines it computed from its tables): the study's page opens with them."""
    path = root / "results" / campaign / f"{study}-findings.md"
    if not path.is_file():
        return []
    return [Markup(inline_html(line.strip())) for line in path.read_text().splitlines()
            if line.strip()]


def grouped(items: Iterable[Output]) -> dict[str, list[Output]]:
    """Outputs by the campaign whose runs they show, figures before tables."""
    found: dict[str, list[Output]] = {}
    for item in sorted(items, key=lambda o: o.kind != FIGURE):
        found.setdefault(item.campaign, []).append(item)
    return found


def reading_order(root: Path, campaign: str) -> list[dict[str, str]]:
    """The notebooks in reading order with what each teaches, as the index links them (from
    results/report/): the executed copy where the pipeline ran it for `campaign`, else the
    notebook itself."""
    found = []
    for name, teaches in notebooks.reading_order():
        executed = root / "results" / campaign / "notebooks" / f"{name}.ipynb"
        link = (f"../{campaign}/notebooks/{name}.ipynb" if executed.is_file()
                else f"../../notebooks/{name}.ipynb")
        found.append({"name": name, "teaches": teaches, "link": link})
    return found


class Site:
    """The report of the configured `campaign` from every campaign's judged tables."""

    def __init__(self, root: Path, campaign: str, judged: Mapping[str, Judged],
                 skipped: pd.DataFrame, captions: dict[str, str] | None = None,
                 seconds: Mapping[tuple[str, str], float] | None = None,
                 noted: pd.DataFrame | None = None, runs: str = "",
                 moved: list[tuple[str, str, str]] | None = None) -> None:
        if campaign not in judged:
            raise ValueError(f"campaign {campaign}: not judged (no claims.parquet in "
                             f"data/processed/{campaign})")
        self.root, self.campaign, self.judged, self.skipped = root, campaign, judged, skipped
        self.noted = pd.DataFrame(columns=left_out.NOTED) if noted is None else noted
        self.runs = runs  # the main campaigns' runs counted (headline.run_counts)
        self.outputs = written.find(root, campaign, captions)
        self.families = {name: summary.families(tables[0], tables[1], self.outputs)
                         for name, tables in judged.items()}
        self.others = [name for name in judged if name != campaign]
        self.studies = written.studies(self.outputs)
        self.model = claim_model.build(judged, headline_claims, self.outputs, seconds,
                                       without_run_ids, moved)
        self.env = environment()

    def common(self, base: str) -> dict[str, Any]:
        return {"base": base, "campaign": self.campaign, "all_claims": list(CLAIMS),
                "host_note": written.HOST_NOTE, "introduction": summary.introduction(),
                "other_campaigns": self.others, "study_names": list(self.studies),
                "how_to_read": Markup(inline_html(summary.HOW_TO_READ))}

    def headline_view(self, base: str) -> dict[str, Any]:
        """The headline section of the index: the model and its sentences, the main testbeds
        grouped by campaign (a header each over its testbeds' narrow columns)."""
        shown = headline.context(self.model, self.judged, self.campaign,
                                 summary.Links(report=base, root=""),
                                 f"{base}../claims.html#changes-to-the-rules", runs=self.runs)
        return {**shown, "disclosure": Markup(inline_html(str(shown["disclosure"]))),
                "how": Markup(inline_html(headline.HOW_TO_READ)),
                "groups": headline.by_campaign(self.model.main)}

    def render(self, target: Path, template: str, **context: Any) -> Path:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.env.get_template(template).render(**context))
        return target

    def other_lines(self) -> dict[str, str]:
        return {name: summary.campaign_tally(self.families[name]) for name in self.others}

    def study_lines(self) -> dict[str, str]:
        return {name: f"{STUDIES.get(name, name)} (runs of campaign {items[0].campaign})"
                for name, items in self.studies.items()}

    def copy_outputs(self, out: Path) -> dict[str, Markup]:
        """Figures and tables into the report's folder; each table rendered as HTML."""
        (out / "figures").mkdir(parents=True, exist_ok=True)
        (out / "tables").mkdir(parents=True, exist_ok=True)
        tables = {}
        for item in self.outputs:
            folder = "figures" if item.kind == FIGURE else "tables"
            shutil.copyfile(self.root / item.path, out / folder / item.path.name)
            if item.kind != FIGURE:
                tables[item.name] = render_table(self.root / item.path)
        return tables

    def claim_pages(self, out: Path, tables: Mapping[str, Markup]) -> list[Path]:
        """A page per claim, its testbeds ordered by evidence, each with its check figure
        (figures/checks/) and its rows in the claim's runs file (runs/<claim>.csv)."""
        plots = out / "figures" / CHECK_PLOTS
        plots.mkdir(parents=True, exist_ok=True)
        pages = []
        for claim in self.model.claims:
            drawn: dict[str, str] = {}
            rows: list[dict[str, Any]] = []
            for testbed in claim.testbeds:
                rows += runs_rows(testbed.checks, testbed.label)
                figure = check_plot.svg(f"{claim.claim} on {testbed.label}: each check's "
                                        "effect and 95% interval", testbed.checks)
                if figure:
                    name = f"{claim.claim}-{testbed.anchor}.svg"
                    (plots / name).write_text(figure)
                    drawn[testbed.anchor] = f"{CHECK_PLOTS}/{name}"
            write_runs(out / "runs" / f"{claim.claim}.csv", rows)
            pages.append(self.render(
                out / "claims" / f"{claim.claim}.html", "claim.html.j2", **self.common("../"),
                claim=claim.claim, headline=claim.headline, where=claim.where,
                statement=claim.statement, model=claim, plots=drawn,
                checks={t.anchor: [check_view(c) for c in t.checks] for t in claim.testbeds},
                outputs=grouped(claim.outputs), tables=tables))
        return pages

    def write(self, results: Path) -> list[Path]:
        out = results / "report"
        if out.exists():  # no page of an earlier run is left behind
            shutil.rmtree(out)
        (out / "runs").mkdir(parents=True)
        tables = self.copy_outputs(out)
        pages = [self.render(out / "index.html", "index.html.j2", **self.common(""),
                             closest=self.headline_view(""),
                             families=family_views(self.families[self.campaign]),
                             skipped=self.skipped.to_dict("records"),
                             noted=self.noted.to_dict("records"),
                             others=self.other_lines(), studies=self.study_lines(),
                             reading=reading_order(self.root, self.campaign))]
        pages += self.claim_pages(out, tables)
        for name in self.others:
            drawn = [s for s, items in self.studies.items() if items[0].campaign == name]
            pages.append(self.render(out / "campaigns" / f"{name}.html", "campaign.html.j2",
                                     **self.common("../"), name=name, drawn=drawn,
                                     families=family_views(self.families[name])))
        for name, items in self.studies.items():
            shown = items[0].campaign
            page = ("../index.html" if shown == self.campaign
                    else f"../campaigns/{shown}.html" if shown in self.others else "")
            pages.append(self.render(out / "studies" / f"{name}.html", "study.html.j2",
                                     **self.common("../"), name=name,
                                     title=STUDIES.get(name, name), shown=shown,
                                     shown_page=page, notebook=items[0].notebook,
                                     items=items, tables=tables,
                                     findings=study_findings(self.root, self.campaign, name)))
        links = summary.Links(report="report/", root="../")
        lead = headline.document_section(self.model, self.judged, self.campaign, links,
                                         headline.CHANGES, self.runs)
        markdown = summary.document(
            self.campaign, self.families[self.campaign], self.skipped, self.other_lines(),
            self.study_lines(), links, lead, self.noted)
        (results / "summary.md").write_text(markdown)
        return [results / "summary.md", *pages]


def build(results: Path, campaign: str, judged: Mapping[str, Judged],
          processed: Iterable[Path],
          moved: list[tuple[str, str, str]] | None = None) -> list[Path]:
    """results/summary.md and results/report/ of the configured `campaign`; the figures and
    tables are those its notebooks wrote under results/'s parent (figures/, results/).
    `moved`: the headlines the latest rules moved, where the caller found them (the combined
    ledger's, of the same tables)."""
    processed = list(processed)
    site = Site(results.parent, campaign, judged, left_out.skipped_folders(processed),
                seconds=headline.run_seconds(processed), noted=left_out.noted_runs(processed),
                moved=moved)
    site.runs = headline.run_counts(site.model, processed)
    return site.write(results)
