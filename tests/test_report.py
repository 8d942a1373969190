"""The HTML report a reviewer opens: the shipped data's analysis and `snakemake --report`, run
in a scratch directory, rendered in headless Chromium; the ledger and every figure, with its
caption, are in it. Never runs an experiment: the shipped runs must cover the campaign plan."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import VENV_BIN, stop_workflow_processes

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def report(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    work = tmp_path_factory.mktemp("report")
    for name in ("Snakefile", "workflow", "notebooks", "profiles", "hosts"):
        (work / name).symlink_to(repo / name)
    (work / "data").mkdir()
    (work / "data" / "raw").symlink_to(repo / "data" / "raw")
    snakemake = str(VENV_BIN / "snakemake")

    def run(*args: str) -> str:
        result = subprocess.run([snakemake, *args], cwd=work, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        return result.stdout + result.stderr

    try:
        planned = run("--cores", "1", "--dry-run")
        assert "run_experiment" not in planned, "the shipped runs do not cover the campaign"
        run("--cores", "1")
        run("--report", "results/report.html")
        yield work / "results" / "report.html"
    finally:
        stop_workflow_processes(work)


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
