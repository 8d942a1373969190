"""Where each figure and table the notebooks wrote belongs (journalbench/report/outputs.py):
the notebook that wrote it, found in executed notebooks, gives the campaign whose runs it
shows and its study; its caption gives its claims."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from journalbench.judge.claims.catalog import CLAIMS
from journalbench.report import outputs


def notebook(path: Path, cells: list[str], parameters: dict, beside: list[str] = ()) -> Path:
    path.write_text(json.dumps({
        "metadata": {"papermill": {"parameters": parameters},
                     "journalbench": {"beside": list(beside)}},
        "cells": [{"cell_type": "code", "source": source} for source in cells]}))
    return path


def test_files_are_placed_by_the_notebook_that_wrote_them(tmp_path: Path) -> None:
    results = tmp_path / "results" / "main" / "notebooks"
    results.mkdir(parents=True)
    notebook(results / "bfq.ipynb", ['plots.save(fig, figures, "bfq-shares")\n%matplotlib x',
                                     'views.write_table(t, results, "bfq-verdicts")'],
             {"campaign": "main", "source": "bfq"})
    notebook(results / "fsync.ipynb",
             ['for b in ["no", "high"]:\n    plots.save(fig, figures, f"c10-beside-{b}")',
              'views.write_table(t, results, "fileprep-share")',
              'for share in (70, 30):\n    name = f"c11-mysql-{share}"\n'
              '    plots.save(fig, figures, name)'],
             {"campaign": "main"}, beside=["fileprep"])
    figures = tmp_path / "figures" / "main"
    figures.mkdir(parents=True)
    for name in ("bfq-shares", "c10-beside-high", "c11-mysql-30", "c3-stray"):
        (figures / f"{name}.png").write_bytes(b"\x89PNG")
    for name in ("bfq-verdicts", "fileprep-share", "claims"):
        (results.parent / f"{name}.csv").write_text("a\n1\n")
    captions = {"c11-mysql-30": "C12 (thesis Fig 4.9): MariaDB at 30%",
                "c10-beside-high": "C10: shares"}
    found = {o.name: o for o in outputs.find(tmp_path, "main", captions)}
    assert set(found) == {"bfq-shares", "bfq-verdicts", "c10-beside-high", "c11-mysql-30",
                          "c3-stray", "fileprep-share"}  # the ledger's claims.csv is not one
    assert (found["bfq-shares"].campaign, found["bfq-shares"].study) == ("bfq", "bfq")
    assert found["bfq-verdicts"].kind == outputs.TABLE and found["bfq-verdicts"].study == "bfq"
    assert (found["fileprep-share"].campaign, found["fileprep-share"].study) == ("fileprep",
                                                                                  "fileprep")
    assert found["c10-beside-high"].claims == ("C10",)
    assert found["c11-mysql-30"].claims == ("C12",)  # its caption's claim, not its name's
    assert found["c11-mysql-30"].notebook == "fsync"  # named through a variable
    assert found["c11-mysql-30"].path == Path("figures/main/c11-mysql-30.png")
    stray = found["c3-stray"]  # no notebook names it: the configured campaign's, by its name
    assert (stray.notebook, stray.campaign, stray.claims) == ("", "main", ("C3",))


def test_a_notebook_papermill_did_not_run_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps({"metadata": {}, "cells": []}))
    with pytest.raises(ValueError, match="x.ipynb: not a notebook papermill executed"):
        outputs.executed(path)


def test_captions_name_their_claims() -> None:
    assert outputs.caption_claims("C22, C23 (thesis Fig 5.15, 5.16): Redis") == ("C22", "C23")
    assert outputs.caption_claims("C6/C20: the split") == ("C6", "C20")
    assert outputs.caption_claims("What the thesis could not see: C8-C10") == ()


def test_every_caption_names_claims_the_catalog_knows() -> None:
    for name, caption in outputs.load_captions().items():
        assert set(outputs.caption_claims(caption)) <= set(CLAIMS), name


def test_captions_that_are_not_a_mapping_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "captions.yaml"
    path.write_text("- a list\n")
    with pytest.raises(ValueError, match="captions.yaml: expected a mapping"):
        outputs.load_captions(path)
    path.write_text("c1: [unclosed\n")
    with pytest.raises(ValueError, match="captions.yaml: not YAML"):
        outputs.load_captions(path)


def test_every_file_the_notebooks_write_is_named_so_the_report_can_place_it(repo: Path) -> None:
    """Each plots.save / views.write_table call of the shipped notebooks names its file by a
    literal, an f-string or a variable set to one: a name the report cannot read would leave
    the file with the configured campaign, perhaps not the one whose runs it shows."""
    for path in sorted((repo / "notebooks").glob("*.ipynb")):
        cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        for cell in cells:
            source = "".join(cell["source"])
            calls = source.count("plots.save(") + source.count("write_table(")
            assert len(list(outputs.written_names(source))) == calls, (path.name, source)


def test_each_caption_ends_on_what_its_own_figure_shows() -> None:
    """No sentence closes more than one caption (the host line is said once per page,
    outputs.HOST_NOTE), and the thesis's mechanism is given as its claim, not as a fact."""
    captions = outputs.load_captions()
    last = [re.split(r"(?<=\.)\s+", caption.strip())[-1] for caption in captions.values()]
    repeated = {s for s in last if last.count(s) > 1}
    assert not repeated, repeated
    for name, caption in captions.items():
        for sentence in re.split(r"(?<=\.)\s+", caption):
            if "divide disk time" in sentence:
                assert "thesis" in sentence, (name, sentence)
