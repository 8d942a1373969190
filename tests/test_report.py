"""The HTML report a reviewer opens: the shipped data's analysis and `snakemake --report`, run
in a scratch directory, rendered in headless Chromium; the ledger and every figure, with its
caption, are in it. Never runs an experiment: the shipped runs must cover the campaign plan."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import browser
import pytest
import yaml

from conftest import Reproduced, unshipped_campaign
from journalbench.judge.claims.catalog import CLAIMS, HEADLINES
from journalbench.report import claim_model, headline

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def report(reproduced: Reproduced) -> Path:
    """The analysis of the shipped runs and its `snakemake --report`, made once for the
    session (conftest.reproduced: `make reproduce` in a scratch directory)."""
    return reproduced.work / "results" / "report.html"


def embedded(page: str, name: str) -> dict:
    """The report's `var <name> = {...}` data (Snakemake embeds every result in the page)."""
    start = page.index(f"var {name} = {{") + len(f"var {name} = ")
    return json.JSONDecoder().raw_decode(page, start)[0]


def rendered(path: Path) -> str:
    """The page's DOM after its scripts ran, as headless Chromium sees it."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
         "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def text(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make system-deps)")
def test_report_renders_with_the_ledger_and_every_captioned_figure(report: Path,
                                                                    repo: Path) -> None:
    shown = text(rendered(report))
    assert "Claims ledger" in shown and "Figures" in shown  # the report's menu, built by JS
    page = report.read_text()
    results = embedded(page, "results")
    figures = {Path(p).stem: r for p, r in results.items() if p.endswith(".png")}
    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    drawn = {p.stem for p in (report.parent.parent / "figures" / campaign).glob("*.png")}
    assert drawn and set(figures) == drawn
    captions = yaml.safe_load((repo / "workflow/report/captions.yaml").read_text())
    for name, result in figures.items():
        assert result["caption"].strip() and "no caption" not in result["caption"], name
        assert name in captions
        assert base64.b64decode(result["data_uri"].split(",", 1)[1])[:4] == b"\x89PNG"
    ledger = next(r for p, r in results.items() if p.endswith("claims.html"))
    html = base64.b64decode(ledger["data_uri"].split(",", 1)[1]).decode()
    ledger_file = report.parent / "embedded-ledger.html"
    ledger_file.write_text(html)
    ledger_text = text(rendered(ledger_file))
    for claim in ("C1", "C18", "C23"):
        assert f"{claim} (" in ledger_text
    assert "Starved runs" in ledger_text and "quick / local / native" in ledger_text
    assert f"{campaign} / local / " in ledger_text  # the configured campaign is judged too


def test_the_ledger_counts_runs_and_lists_them_beside_it(report: Path, repo: Path) -> None:
    """Inline run ids were half the ledger's text: each check counts its runs, claims-runs.csv
    lists every one of them, and every starved tenant-run."""
    import re

    import pandas as pd

    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    results = report.parent / campaign
    ledger = (results / "claims.md").read_text()
    assert not re.search(r"\b(vm|shared-journal|per-container-journal|journal-accounted)-"
                         r"[0-9a-f]{12}\b", ledger)
    assert "; runs: " in ledger and "([ids](claims-runs.csv))" in ledger
    listed = pd.read_csv(results / "claims-runs.csv")
    checks = pd.read_parquet(report.parent.parent / "data/processed" / campaign /
                             "checks.parquet")
    wanted = {(c.claim, c.test, run) for c in checks.itertuples() for run in str(c.runs).split()
              if isinstance(c.runs, str)}
    used = listed[listed["role"] == "used"]
    assert wanted and wanted == set(zip(used["claim"], used["test"], used["run_id"],
                                        strict=True))
    starved = pd.read_parquet(report.parent.parent / "data/processed" / campaign /
                              "starved.parquet")
    assert (listed["role"] == "starved").sum() == int(starved["starved"].sum())


# The claim-centric report (results/report/, journalbench/report/site.py) and the results at a
# glance (results/summary.md, the README's table), from the same pipeline run.

def report_folder(report: Path) -> Path:
    return report.parent / "report"


@pytest.fixture(scope="module")
def probed(report: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    if browser.CHROMIUM is None:
        pytest.skip("chromium not installed (make system-deps)")
    return browser.probe(report_folder(report), tmp_path_factory.mktemp("probe"))


def page(probed: dict[str, dict], path: Path) -> dict:
    return probed[path.resolve().as_uri()]


def shown_images(rendered: dict) -> set[str]:
    """The file names of the images a rendered page shows (loaded: natural width > 0)."""
    return {Path(src).name for src, width in rendered["images"] if width}


def test_no_page_of_the_report_has_a_broken_image_or_link(probed: dict[str, dict]) -> None:
    assert len(probed) >= 1 + len(CLAIMS)
    assert browser.problems(probed) == []


def test_every_claim_page_shows_its_figures_under_their_campaign(
        report: Path, probed: dict[str, dict], repo: Path) -> None:
    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    drawn = {p.stem for p in (report.parent.parent / "figures" / campaign).glob("*.png")}
    folder = report_folder(report)
    for claim, info in CLAIMS.items():
        rendered = page(probed, folder / "claims" / f"{claim}.html")
        assert f"{claim}: {HEADLINES[claim]}" in rendered["text"]
        listed = {f"{name}.png" for name in info.figures if name in drawn}
        assert listed <= shown_images(rendered), claim
        if listed:  # they show the configured campaign's runs, in its testbed's section
            # (a closed <details> of another testbed: in the page, not in its rendered text)
            html = (folder / "claims" / f"{claim}.html").read_text()
            assert f"Figures and tables of campaign {campaign}'s runs" in html, claim
        # its runs behind a link, never inline
        assert any(link.endswith(f"/runs/{claim}.csv") for link in rendered["links"])
        assert not re.search(r"\b(?:vm|shared-journal|journal-accounted)-[0-9a-f]{12}\b",
                             rendered["text"]), f"{claim}: run ids inline"
    every = set().union(*(shown_images(p) for p in probed.values()))
    assert {f"{name}.png" for name in drawn} <= every  # every figure is somewhere, loaded


def test_the_studies_figures_sit_under_the_campaign_whose_runs_they_show(
        report: Path, probed: dict[str, dict]) -> None:
    folder = report_folder(report)
    studies = {"bfq": ("bfq", "bfq-"), "device-class": ("quick", "device-class-")}
    for study, (campaign, prefix) in studies.items():
        rendered = page(probed, folder / "studies" / f"{study}.html")
        assert f"On the runs of campaign {campaign}" in rendered["text"]
        assert any(name.startswith(prefix) for name in shown_images(rendered))
    for claim in CLAIMS:  # no claim page files a study's figure under itself
        shown = shown_images(page(probed, folder / "claims" / f"{claim}.html"))
        assert not any(name.startswith(("bfq-", "device-class-")) for name in shown), claim


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make system-deps)")
def test_each_study_page_states_its_findings_on_a_1280x800_first_screen(
        report: Path, tmp_path: Path) -> None:
    """A study page opens with what its notebook found: every line of it wholly on the first
    screen of a 1280x800 window, under the title, and no page of a study scrolls sideways. The
    controller study's page exists once its campaign's runs are shipped."""
    folder = report_folder(report) / "studies"
    pages = sorted(folder.glob("*.html"))
    assert {"bfq.html", "device-class.html"} <= {p.name for p in pages}
    if unshipped_campaign("controller") is None:
        assert (folder / "controller.html") in pages, "the controller study has no page"
    for path in pages:
        screen = browser.first_screen(path, tmp_path, "h1, ul.findings > li")
        assert screen["page_width"] <= 1280, f"{path.name}: {screen['page_width']} px wide"
        title, *found = screen["marked"]
        assert title[1], f"{path.name}: its title is off the first screen"
        written = list(report.parent.glob(f"*/{path.stem}-findings.md"))
        lines = [line for f in written for line in f.read_text().splitlines() if line.strip()]
        assert len(found) == len(lines), f"{path.name}: {len(found)} findings shown of {lines}"
        off = [text for text, visible in found if not visible]
        assert not off, f"{path.name}: findings below the first screen at 1280x800: {off}"


def test_a_claim_without_runs_reads_not_run_here(report: Path) -> None:
    """The ledger's "partially measured" with "nothing measured yet" is shown as not run
    here, on every campaign's page; a claim partly measured keeps its verdict."""
    from journalbench.judge.claims import judged

    folder = report_folder(report)
    processed = report.parent.parent / "data" / "processed"
    for tables in filter(None, (judged.read(p) for p in sorted(processed.iterdir()))):
        claims = tables[0]
        campaign = str(claims["campaign"].iloc[0])
        path = folder / "campaigns" / f"{campaign}.html"
        html = path.read_text() if path.exists() else ""
        if not path.exists():  # the configured campaign's is the first page, after the
            # headline (each claim on its closest testbed, which names no "not run here")
            html = (folder / "index.html").read_text().split('<h2 id="campaign">', 1)[1]
        partial = claims["verdict"] == "partially measured"
        nothing = claims["why"].str.startswith("nothing measured yet")
        # each row's verdict, as the verdict macro marks it
        assert html.count("verdict v-partially-measured") == (partial & ~nothing).sum(), campaign
        assert html.count("verdict v-not-run-here") == (partial & nothing).sum(), campaign


def test_the_link_check_finds_a_broken_link_and_image(report: Path, tmp_path: Path) -> None:
    """The checks above can fail: a copy of the report with one link and one image broken."""
    if browser.CHROMIUM is None:
        pytest.skip("chromium not installed (make system-deps)")
    copy = tmp_path / "report"
    shutil.copytree(report_folder(report), copy)
    claim = copy / "claims" / "C1.html"
    html = claim.read_text()
    assert 'href="../runs/C1.csv"' in html
    claim.write_text(html.replace('href="../runs/C1.csv"', 'href="../runs/C1-gone.csv"', 1))
    shown = re.search(r'<img src="\.\./figures/([^"]+)"', html).group(1)
    (copy / "figures" / shown).unlink()
    index = copy / "index.html"
    index.write_text(index.read_text().replace('href="claims/C3.html"',
                                               'href="claims/C3.html#no-such-anchor"', 1))
    found = browser.problems(browser.probe(copy, tmp_path))
    assert any("C1-gone.csv leads nowhere" in p for p in found), found
    assert any(f"{shown} did not load" in p for p in found), found
    assert any("no #no-such-anchor" in p for p in found), found


def test_the_readme_shows_the_generated_headline(report: Path, repo: Path) -> None:
    readme = (repo / "README.md").read_text()
    shown = headline.between_markers(readme)
    assert shown is not None, f"README.md has no '{headline.START}' ... '{headline.END}' markers"
    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    wanted = headline.readme_from(report.parent.parent, campaign)
    assert shown == wanted, ("README.md's headline is stale: run `python -m "
                             "journalbench.report.headline --readme README.md` after `make "
                             "reproduce`")
    # a verdict per claim in one word, its headline testbed in words, a symbol per main testbed
    lines = shown.splitlines()
    head = next(line for line in lines if line.startswith("Claim")).split("|")
    assert head[:8] == ["Claim (pages built)", "Verdict", "Headline testbed", "Ours measures",
                        "Ours, 95% CI", "Thesis", "Differs in", "Caveat"]
    assert head[8:] and all(re.fullmatch(r"\S+ v\d/[\w-]+", name) for name in head[8:]), head
    rows = [line.split("|") for line in lines if line.startswith("[C")]
    assert [re.match(r"\[(C\d+)\]", row[0]).group(1) for row in rows] == list(CLAIMS)
    words = set(claim_model.WORDS.values())
    assert all(row[1] in words for row in rows), rows
    symbols = {*claim_model.SYMBOLS.values(), claim_model.NO_RUNS}
    for row in rows:
        assert len(row) == len(head)
        marks = row[8:]
        assert all(m.strip("*") in symbols for m in marks), row
        chosen = [m for m in marks if m.startswith("**")]  # the headline testbed's, where main
        testbed = re.match(r"\[([^\]]+)\]", row[2]).group(1)
        assert len(chosen) == (1 if testbed in head[8:] else 0), row
    # every verdict word the table uses is in the README's glossary
    glossary = readme.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    assert all(f"**{word}**" in glossary for word in words), glossary


def test_the_docs_state_the_controller_findings_the_notebook_computed(report: Path,
                                                                     repo: Path) -> None:
    """docs/findings.md's controller study is the notebook's own sentences (computed from its
    tables), not words typed beside them: the block equals this build's findings file."""
    from journalbench.report import controller_study

    docs = (repo / "docs" / "findings.md").read_text()
    shown = controller_study.DOCS_MARKERS.between(docs)
    assert shown is not None, "docs/findings.md has no controller-findings markers"
    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    built = report.parent / campaign / controller_study.FINDINGS_FILE
    assert shown == controller_study.docs_block(built.read_text()), (
        "docs/findings.md's controller findings are stale: run `python -m "
        "journalbench.report.controller_study --doc docs/findings.md` after `make reproduce`")
    assert "divided nothing" in shown and "journal-accounted" in shown


def test_summary_md_leads_with_the_headline_then_the_configured_campaigns_table(
        report: Path, repo: Path) -> None:
    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    text = (report.parent / "summary.md").read_text()
    assert text.startswith("# Results at a glance\n")
    lead, rest = text.split(f"## Campaign {campaign}, claim by claim", 1)
    assert "## Each claim on its closest testbed" in lead
    assert [re.match(r"\[(C\d+)\]", line).group(1) for line in lead.splitlines()
            if line.startswith("[C")] == list(CLAIMS)
    assert "[the ledger](claims.md#changes-to-the-rules)" in lead
    assert (report.parent / "claims.md").is_file()
    rows = [line for line in rest.splitlines() if line.startswith("| [C")]
    assert [re.match(r"\| \[(C\d+)\]", row).group(1) for row in rows] == list(CLAIMS)
    for row in rows:  # each claim's link and figure resolve from results/
        for link in re.findall(r"\]\(([^)]+)\)", row):
            assert (report.parent / link).is_file(), link
    assert "## Run folders left out" in text


def readme_rows(report: Path, repo: Path) -> list[list[str]]:
    """The README's headline rows as the build gives them, a list of cells each."""
    campaign = yaml.safe_load((repo / "workflow/config.yaml").read_text())["campaign"]
    block = headline.readme_from(report.parent.parent, campaign)
    return [line.split("|") for line in block.splitlines() if line.startswith("[C")]


def link_of(cell: str) -> tuple[str, str]:
    """(text, target) of a Markdown cell that is one link."""
    match = re.match(r"\[([^\]]+)\]\(([^)]+)\)", cell)
    assert match, cell
    return match.group(1), match.group(2)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make system-deps)")
def test_every_readme_row_leads_by_links_to_its_headline_testbeds_evidence(
        report: Path, repo: Path, tmp_path: Path) -> None:
    """A reviewer's path, claim by claim: from the README row's links (its claim page, its
    headline testbed's section) to that testbed's verdict, its number, its figure (loaded)
    and its runs file, and the runs file lists that testbed's runs."""
    import pandas as pd

    root = report.parent.parent  # the links are the README's, from the repository's root
    rows = readme_rows(report, repo)
    urls = {}
    for row in rows:
        claim, page = link_of(row[0])
        testbed, section = link_of(row[2])
        assert section.split("#")[0] == page, row  # the testbed's section of the claim's page
        path, anchor = section.split("#")
        urls[claim] = (root / path).resolve().as_uri() + "#" + anchor
    found = browser.sections(list(urls.values()), tmp_path)
    for row in rows:
        claim, _ = link_of(row[0])
        testbed, _ = link_of(row[2])
        shown = found[urls[claim]]
        assert "missing" not in shown and "error" not in shown, (claim, shown)
        model_verdict = next(v for v, w in claim_model.WORDS.items() if w == row[1])
        assert f"{model_verdict} on its headline testbed, {testbed}" in shown["text"], claim
        number = row[4]
        if number != "—":
            assert number in shown["text"], (claim, number)
            drawn = [src for src, width in shown["images"] if width]
            assert any(src.endswith(f"/figures/checks/{claim}-{urls[claim].split('#')[1]}.svg")
                       for src in drawn), (claim, shown["images"])
        runs_text, runs_link = link_of(row[7].split("; ")[0])
        runs_file = (root / runs_link).resolve()
        assert any(Path(link.split("#")[0].removeprefix("file://")) == runs_file
                   for link in shown["links"]), (claim, shown["links"])
        listed = pd.read_csv(runs_file)
        mine = listed[(listed["testbed"] == testbed) & (listed["used"] == "yes")]
        assert mine["run_id"].nunique() == int(runs_text.split()[0]), (claim, runs_text)
        assert set(mine["campaign"]) == {testbed.split()[0]}, claim


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make system-deps)")
def test_the_index_and_a_claim_page_fit_a_1280x800_window(report: Path, tmp_path: Path) -> None:
    folder = report_folder(report)
    for path in (folder / "index.html", folder / "claims" / "C4.html"):
        screen = browser.first_screen(path, tmp_path, "h1")
        assert screen["page_width"] <= 1280, f"{path.name}: {screen['page_width']} px wide"
        assert screen["marked"][0][1], f"{path.name}: its title is off the first screen"
