"""The notebooks take their parameters from papermill: the `parameters` cell holds values only
(papermill injects its own cell after it), and the cell after it derives what is still None from
the campaign given. A notebook run by hand from a fresh clone leaves nothing in the repository
but its declared outputs (figures/, results/, data/processed/, data/plan/: all ignored by git).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, VENV_BIN
from journalbench.report import notebooks

NAMES = sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
PATHS = ("processed", "raw", "figures", "results")


def cells_of(name: str) -> list[dict[str, Any]]:
    return json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text())["cells"]


def parameter_cells(name: str) -> tuple[str, str]:
    """The source of the `parameters` cell, and the derivation that opens the cell after it
    (up to the end of its `resolve(...)` statement; the cell goes on to load the runs)."""
    cells = cells_of(name)
    at = next(i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", []))
    after = "".join(cells[at + 1]["source"])
    start = after.index(" = resolve(")
    depth, end = 0, start
    for end in range(after.index("(", start), len(after)):  # the call's closing parenthesis
        depth += {"(": 1, ")": -1}.get(after[end], 0)
        if depth == 0:
            break
    return "".join(cells[at]["source"]), after[:end + 1]


def run_cells(name: str, injected: dict[str, str]) -> dict[str, Any]:
    """The two cells as papermill runs them: the defaults, its injected values, the derivation."""
    given, derive = parameter_cells(name)
    space: dict[str, Any] = {}
    exec(given, space)  # the notebook's own cells
    space.update(injected)
    exec(derive, space)
    return space


@pytest.mark.parametrize("name", NAMES)
def test_the_parameters_cell_holds_values_only(name: str) -> None:
    """Each statement assigns a literal (a string, or None for what is derived): a value
    computed there from `campaign` would keep the default's, as papermill injects after it."""
    given, _ = parameter_cells(name)
    for statement in ast.parse(given).body:
        assert isinstance(statement, ast.Assign), (name, ast.unparse(statement))
        assert isinstance(statement.value, ast.Constant), (name, ast.unparse(statement))
    defaults = run_cells(name, {})
    assert isinstance(defaults["campaign"], str)
    assert all(defaults[path] is not None for path in PATHS), name


@pytest.mark.parametrize("name", NAMES)
def test_a_campaign_given_changes_what_the_notebook_reads(name: str) -> None:
    """`papermill -p campaign quick`: figures and tables go under quick, and the runs read are
    those the pipeline would choose for quick (its own, or the campaign the notebook needs)."""
    space = run_cells(name, {"campaign": "quick"})
    source = notebooks.source(name, "quick")
    # in the repository, whatever the working directory
    assert space["processed"] == str(REPO / "data" / "processed" / source), name
    assert space["raw"] == str(REPO / "data" / "raw" / source), name
    assert (space["figures"], space["results"]) == (str(REPO / "figures" / "quick"),
                                                    str(REPO / "results" / "quick"))


def test_a_database_notebook_given_a_campaign_without_its_tool_reads_its_own() -> None:
    assert run_cells("mysql", {"campaign": "quick"})["raw"] == str(REPO / "data/raw/quick-mysql")
    assert run_cells("mysql", {})["raw"] == str(REPO / "data/raw/thesis-hdd")  # it runs MariaDB


@pytest.mark.parametrize("name", NAMES)
def test_a_campaign_without_runs_is_one_line_naming_those_with_runs(name: str) -> None:
    from journalbench.report.notebook_paths import UnknownCampaign

    with pytest.raises(UnknownCampaign) as caught:
        run_cells(name, {"campaign": "thesis-v3"})
    (line,) = caught.value._render_traceback_()  # what IPython shows: this line alone
    assert line.startswith("UnknownCampaign: campaign 'thesis-v3': no runs in ")
    assert "campaigns with runs: " in line and "thesis-v2" in line and "thesis-hdd" in line


def test_the_controller_study_defaults_to_its_own_campaign_beside_the_host_testbed() -> None:
    space = run_cells("controller", {})
    assert (space["campaign"], space["source"], space["baseline"]) == (
        "thesis-nested", "thesis-nested", "thesis-hdd")


@pytest.mark.parametrize("name", NAMES)
def test_the_pipelines_explicit_values_are_kept(name: str, tmp_path: Path) -> None:
    given = {k: str(v) for k, v in notebooks.parameters("quick", tmp_path, name).items()}
    space = run_cells(name, given)
    assert {k: space[k] for k in given} == given, name


# -- a notebook run as a student runs it, on a fresh clone (slow: it tidies a campaign) ---------

OTHER = "thesis-v2"  # a shipped campaign other than the notebooks' default (thesis-hdd)
NOTEBOOK = "claims"
# papermill from the repository's root, from notebooks/, and from the clone's parent with the
# kernel's working directory (--cwd) in a folder outside the clone
PLACES = {"root": ("", []), "notebooks": ("notebooks", []), "cwd": ("..", ["--cwd", "elsewhere"])}


def landed_runs(raw: Path) -> int:
    """The campaign's complete run folders (a run id once, whichever host ran it)."""
    return len({manifest.parent.name for manifest in raw.glob("*/*/MANIFEST.json")})


def printed(notebook: Path) -> str:
    return "".join("".join(o.get("text", "")) for cell in json.loads(notebook.read_text())["cells"]
                   for o in cell.get("outputs", []))


@pytest.fixture(scope="module")
def student_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`git clone` of this repository, then `papermill -p campaign thesis-v2` on the claims
    notebook from the clone's root, from its notebooks/ folder and from the clone's parent
    with --cwd, with the clone's own package (PYTHONPATH); then a campaign without runs."""
    work = tmp_path_factory.mktemp("student")
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=600)
    (work / "home").mkdir()
    (work / "elsewhere").mkdir()
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(work / "home"),
           "PYTHONPATH": str(clone / "workflow"), "MPLBACKEND": "Agg"}

    def papermill(place: str, campaign: str) -> subprocess.CompletedProcess:
        folder, more = PLACES[place]
        out = work / f"out-{place}-{campaign}.ipynb"
        return subprocess.run(
            [str(VENV_BIN / "papermill"), str(clone / "notebooks" / f"{NOTEBOOK}.ipynb"),
             str(out), "-p", "campaign", campaign, "-k", "python3", "--no-progress-bar",
             *more], cwd=clone / folder, env=env, capture_output=True, text=True, timeout=1800)

    runs = {}
    for place in PLACES:
        result = papermill(place, OTHER)
        assert result.returncode == 0, (place, result.stderr[-3000:])
        runs[place] = printed(work / f"out-{place}-{OTHER}.ipynb")
    bad = papermill("root", "thesis-v3")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=clone, capture_output=True, text=True, check=True).stdout
    beside = sorted(p.name for p in work.iterdir())
    elsewhere = sorted(str(p) for p in (work / "elsewhere").rglob("*"))
    yield {"clone": clone, "status": status, "printed": runs, "bad": bad, "beside": beside,
           "elsewhere": elsewhere,
           "bad_notebook": work / "out-root-thesis-v3.ipynb"}
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.slow
def test_papermill_from_anywhere_runs_on_the_campaigns_runs(student_run: dict[str, Any]) -> None:
    """The same run count from the root, from notebooks/ and with --cwd: the campaign given."""
    clone = student_run["clone"]
    expected = landed_runs(clone / "data" / "raw" / OTHER)
    assert expected != landed_runs(clone / "data" / "raw" / "thesis-hdd")  # the default's differ
    for place, text in student_run["printed"].items():
        counts = [int(n) for n in re.findall(r"^(\d+) runs, \d+ tenant rows$", text,
                                             re.MULTILINE)]
        assert counts == [expected], (place, text[:2000])
        assert f"campaign {OTHER}\n" in text, place  # the notebook names the campaign given


@pytest.mark.slow
def test_a_notebook_leaves_nothing_in_the_repository_but_its_outputs(
        student_run: dict[str, Any]) -> None:
    clone = student_run["clone"]
    # the clone's own package ran (its plan is in the clone's data/plan), not this checkout's
    assert (clone / "data" / "plan" / f"{OTHER}.json").is_file()
    assert (clone / "data" / "processed" / OTHER / "runs.parquet").is_file()
    assert student_run["status"] == "", student_run["status"]
    # nothing beside the clone but the notebooks papermill wrote where it was told
    assert student_run["elsewhere"] == []  # the kernel's working directory: nothing there
    assert student_run["beside"] == sorted(["clone", "home", "elsewhere", *(
        f"out-{place}-{OTHER}.ipynb" for place in PLACES), "out-root-thesis-v3.ipynb"])


@pytest.mark.slow
def test_a_campaign_without_runs_stops_the_notebook_with_one_line(
        student_run: dict[str, Any]) -> None:
    bad = student_run["bad"]
    assert bad.returncode != 0
    cells = json.loads(student_run["bad_notebook"].read_text())["cells"]
    errors = [o for cell in cells for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    (error,) = errors
    assert len(error["traceback"]) == 1, error["traceback"]
    assert "campaign 'thesis-v3': no runs in " in error["traceback"][0]
    assert "campaigns with runs: " in error["traceback"][0] and OTHER in error["traceback"][0]
