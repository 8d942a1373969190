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
    (up to its `results` line; the cell goes on to load the runs)."""
    cells = cells_of(name)
    at = next(i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", []))
    after = "".join(cells[at + 1]["source"])
    end = after.find("\n", after.index("results = results or"))
    return "".join(cells[at]["source"]), after[:end] if end >= 0 else after


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
    assert space["processed"] == f"../data/processed/{source}", name
    assert space["raw"] == f"../data/raw/{source}", name
    assert (space["figures"], space["results"]) == ("../figures/quick", "../results/quick")


def test_a_database_notebook_given_a_campaign_without_its_tool_reads_its_own() -> None:
    assert run_cells("mysql", {"campaign": "quick"})["raw"] == "../data/raw/quick-mysql"
    assert run_cells("mysql", {})["raw"] == "../data/raw/thesis-hdd"  # it runs MariaDB


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
NOTEBOOK = "journal-fixes"


def landed_runs(raw: Path) -> int:
    """The campaign's complete run folders (a run id once, whichever host ran it)."""
    return len({manifest.parent.name for manifest in raw.glob("*/*/MANIFEST.json")})


@pytest.fixture(scope="module")
def student_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`git clone` of this repository, then `papermill -p campaign thesis-v2` on one notebook
    from its notebooks/ folder, with the clone's own package (PYTHONPATH)."""
    work = tmp_path_factory.mktemp("student")
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=600)
    out = work / "out.ipynb"
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(work),
           "PYTHONPATH": str(clone / "workflow"), "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [str(VENV_BIN / "papermill"), f"{NOTEBOOK}.ipynb", str(out), "-p", "campaign", OTHER,
         "-k", "python3", "--no-progress-bar"],
        cwd=clone / "notebooks", env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=clone, capture_output=True, text=True, check=True).stdout
    printed = "".join("".join(o.get("text", "")) for cell in json.loads(out.read_text())["cells"]
                      for o in cell.get("outputs", []))
    yield {"clone": clone, "status": status, "printed": printed}
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.slow
def test_papermill_given_another_campaign_runs_on_its_runs(student_run: dict[str, Any]) -> None:
    counts = [int(n) for n in re.findall(r"^(\d+) runs, \d+ tenant rows$", student_run["printed"],
                                         re.MULTILINE)]
    clone = student_run["clone"]
    expected = landed_runs(clone / "data" / "raw" / OTHER)
    assert expected != landed_runs(clone / "data" / "raw" / "thesis-hdd")  # the default's differ
    assert counts == [expected], student_run["printed"][:2000]


@pytest.mark.slow
def test_a_notebook_leaves_nothing_in_the_repository_but_its_outputs(
        student_run: dict[str, Any]) -> None:
    clone = student_run["clone"]
    # the clone's own package ran (its plan is in the clone's data/plan), not this checkout's
    assert (clone / "data" / "plan" / f"{OTHER}.json").is_file()
    assert (clone / "figures" / OTHER).is_dir()
    assert student_run["status"] == "", student_run["status"]
