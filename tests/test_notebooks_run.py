"""The pipeline's notebooks job (journalbench.notebooks): papermill in one process, with the
campaign's parameters, on a real Jupyter kernel; a failing cell names the notebook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journalbench import notebooks


def notebook(path: Path, source: str) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "id": "p",
              "metadata": {"tags": ["parameters"]},
              "outputs": [], "source": 'campaign = "x"\nresults = "y"\n'},
             {"cell_type": "code", "execution_count": None, "id": "c", "metadata": {},
              "outputs": [], "source": source}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}))


def test_notebooks_run_in_order_with_the_campaigns_parameters(tmp_path: Path, capsys) -> None:
    notebook(tmp_path / "notebooks" / "one.ipynb",
             "from pathlib import Path\n"
             "(Path(results) / 'seen').write_text(campaign)\n")
    notebook(tmp_path / "notebooks" / "two.ipynb", "print(campaign)\n")
    assert notebooks.run("demo", tmp_path, ["one", "two"]) == 0
    assert (tmp_path / "results" / "demo" / "seen").read_text() == "demo"
    for name in ("one", "two"):
        assert (tmp_path / "results" / "demo" / "notebooks" / f"{name}.ipynb").is_file()
    assert "one:" in capsys.readouterr().out


@pytest.mark.parametrize("names", [["bad", "never"]])
def test_a_failing_cell_names_its_notebook_and_stops(tmp_path: Path, capsys, names) -> None:
    notebook(tmp_path / "notebooks" / "bad.ipynb", "raise ValueError('no runs')\n")
    notebook(tmp_path / "notebooks" / "never.ipynb", "print(1)\n")
    assert notebooks.run("demo", tmp_path, names) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("notebooks/bad.ipynb: cell") and "ValueError: no runs" in err, err
    assert not (tmp_path / "results" / "demo" / "notebooks" / "never.ipynb").exists()
