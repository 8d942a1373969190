"""What the notebooks wrote, each with where it belongs: every figure
(figures/<campaign>/<name>.png) and table (results/<campaign>/<name>.csv) of the configured
campaign's notebooks, with its caption, the claims it shows, the study it is part of, and the
campaign whose runs it shows.

All of them sit under the configured campaign's folders, but a notebook may draw another
campaign's runs (its metadata's `otherwise`: the BFQ and device-class studies, the database
notebooks where the configured campaign runs no database) or show one beside its own (`beside`:
fileprep's table). So each file's notebook is looked up in the executed notebooks
(results/<campaign>/notebooks/): the names its `plots.save(fig, figures, NAME)` and
`views.write_table(table, results, NAME)` calls give (a literal, an f-string matched as a
pattern, or a variable the cell sets to one), and the campaign papermill ran it on.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from journalbench.judge.claims.catalog import CLAIMS

FIGURE, TABLE = "figure", "table"
# the call that writes a file -> what it writes; the file's name is its third argument
WRITERS = {"save": FIGURE, "write_table": TABLE}
# the studies: notebooks whose files are about no one claim, and the campaigns shown beside
# one (their files are named after them), each with its title
STUDIES = {
    "bfq": "BFQ's settings: what the thesis could not see",
    "controller": "The cgroup version and the I/O controller: which findings depend on them?",
    "device-class": "The device class: does a verdict depend on the disk?",
    "fileprep": "File preparation: how jbd2's share depends on how the file was laid out",
}
CAPTIONS = Path(__file__).resolve().parents[2] / "report" / "captions.yaml"
# said once above a page's figures, not at the end of every caption
HOST_NOTE = ("Each figure's title names its host, each device profile with what an fsync costs "
             "there and, where it draws one, a VM under TCG; the kernels, the device's raw "
             "fsync latency and the CPU-bound VM runs are in the host line its notebook prints "
             "first.")
CLAIM_ID = re.compile(r"C\d+")
# the claims a caption begins with: "C22, C23 (thesis Fig ...)", "C6/C20: ..."
LEADING_CLAIMS = re.compile(r"^C\d+(?:\s*(?:,|/|and)\s*C\d+)*")
CLAIM_PREFIX = re.compile(r"^c(\d+)-")


@dataclass(frozen=True)
class Output:
    name: str
    kind: str  # FIGURE or TABLE
    path: Path  # the PNG, or the table's CSV, relative to the folder holding figures/
    campaign: str  # whose runs it shows
    notebook: str  # the notebook that wrote it ("" when no executed notebook names it)
    claims: tuple[str, ...]  # the claims it shows; none for a study's
    study: str  # the study it is part of ("" for a claim's own)
    caption: str


@dataclass(frozen=True)
class Written:
    """A notebook's run as papermill recorded it: the names it writes, the campaign whose runs
    it drew, and the campaigns it shows beside them."""
    notebook: str
    campaign: str
    beside: tuple[str, ...]
    patterns: tuple[tuple[str, re.Pattern[str]], ...]  # (kind, file name)

    def writes(self, kind: str, name: str) -> bool:
        return any(k == kind and p.fullmatch(name) for k, p in self.patterns)


def name_pattern(node: ast.expr,
                 assigned: dict[str, list[ast.expr]]) -> re.Pattern[str] | None:
    """The file names a call's name argument can take: a literal, an f-string whose
    substitutions match any text, or a variable the cell assigns one of those (`assigned`);
    None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.compile(re.escape(node.value))
    if isinstance(node, ast.JoinedStr):
        return re.compile("".join(re.escape(part.value) if isinstance(part, ast.Constant)
                                  else ".+" for part in node.values))
    if isinstance(node, ast.Name):
        found = [p for value in assigned.get(node.id, []) if (p := name_pattern(value, {}))]
        return re.compile("|".join(f"(?:{p.pattern})" for p in found)) if found else None
    return None


def assignments(tree: ast.AST) -> dict[str, list[ast.expr]]:
    """The values a cell assigns to each plain name (name = "c11-..." in a loop)."""
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
    return found


def python_of(source: str) -> str:
    """A code cell without its IPython lines (magics, shell escapes): those are not Python."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def written_names(source: str) -> Iterator[tuple[str, re.Pattern[str]]]:
    """(kind, name pattern) of every writing call in a code cell; a cell Python still cannot
    parse writes nothing."""
    try:
        tree = ast.parse(python_of(source))
    except SyntaxError:
        return
    assigned = assignments(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        named = [k.value for k in node.keywords if k.arg == "name"] or node.args[2:3]
        if called in WRITERS and named and (
                pattern := name_pattern(named[0], assigned)) is not None:
            yield WRITERS[called], pattern


def executed(path: Path) -> Written:
    """What an executed notebook wrote, and on which campaign's runs (papermill's `source`
    where the notebook drew another campaign's, else its `campaign`)."""
    try:
        notebook = json.loads(path.read_text())
        parameters = notebook["metadata"]["papermill"]["parameters"]
        campaign = str(parameters.get("source", parameters["campaign"]))
    except (json.JSONDecodeError, KeyError) as error:
        raise ValueError(f"{path}: not a notebook papermill executed ({error})") from None
    cells = [cell for cell in notebook.get("cells", []) if cell.get("cell_type") == "code"]
    patterns = tuple(found for cell in cells
                     for found in written_names("".join(cell.get("source", ""))))
    beside = notebook["metadata"].get("journalbench", {}).get("beside", [])
    return Written(path.stem, campaign, tuple(beside), patterns)


def caption_claims(caption: str) -> tuple[str, ...]:
    match = LEADING_CLAIMS.match(caption.strip())
    return tuple(CLAIM_ID.findall(match.group(0))) if match else ()


def claims_of(name: str, kind: str, caption: str) -> tuple[str, ...]:
    """The claims a file shows: those its caption begins with, and the claims whose catalog
    entry lists the figure; a file without either, the claim its name begins with (c9-...)."""
    found = [*caption_claims(caption),
             *(c for c, info in CLAIMS.items() if kind == FIGURE and name in info.figures)]
    if not found and (match := CLAIM_PREFIX.match(name)):
        found = [f"C{match.group(1)}"]
    return tuple(sorted(dict.fromkeys(c for c in found if c in CLAIMS), key=claim_number))


def claim_number(claim: str) -> int:
    return int(claim[1:])


def place(name: str, kind: str, notebooks: Iterable[Written],
          campaign: str) -> tuple[str, str, str]:
    """(notebook, campaign shown, study) of a file: a campaign shown beside the notebook's own
    names its files; a file no notebook names stays with the configured `campaign`."""
    for notebook in notebooks:
        if not notebook.writes(kind, name):
            continue
        for other in notebook.beside:
            if name.startswith(f"{other}-"):
                return notebook.notebook, other, other
        study = notebook.notebook if notebook.notebook in STUDIES else ""
        return notebook.notebook, notebook.campaign, study
    return "", campaign, ""


def load_captions(path: Path = CAPTIONS) -> dict[str, str]:
    try:
        captions = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not YAML: {' '.join(str(error).split())}") from None
    if not isinstance(captions, dict):
        raise ValueError(f"{path}: expected a mapping of figure name -> caption")
    return {str(name): " ".join(str(text).split()) for name, text in captions.items()}


def find(root: Path, campaign: str, captions: dict[str, str] | None = None) -> list[Output]:
    """Every figure and table the configured `campaign`'s notebooks wrote under `root`
    (figures/<campaign>/, results/<campaign>/), placed; claims in order, then studies."""
    captions = load_captions() if captions is None else captions
    notebooks = [executed(path) for path in
                 sorted((root / "results" / campaign / "notebooks").glob("*.ipynb"))]
    files = [(FIGURE, path) for path in (root / "figures" / campaign).glob("*.png")]
    files += [(TABLE, path) for path in (root / "results" / campaign).glob("*.csv")
              if path.stem != "claims"]  # the ledger's CSV is the ledger's, not a notebook's
    found = []
    for kind, path in files:
        notebook, shown, study = place(path.stem, kind, notebooks, campaign)
        caption = captions.get(path.stem, "") if kind == FIGURE else ""
        claims = () if study else claims_of(path.stem, kind, caption)
        found.append(Output(path.stem, kind, path.relative_to(root), shown, notebook, claims,
                            study, caption))
    return sorted(found, key=order)


def order(output: Output) -> tuple[Any, ...]:
    """Claims' files by their first claim, the catalog's figures first (as the catalog lists
    them), then by name; studies' after."""
    first = output.claims[0] if output.claims else ""
    listed = CLAIMS[first].figures if first else ()
    return (output.study != "" or not first, claim_number(first) if first else 0,
            output.study, output.kind != FIGURE,
            listed.index(output.name) if output.name in listed else len(listed), output.name)


def of_claim(outputs: Iterable[Output], claim: str) -> list[Output]:
    return [o for o in outputs if claim in o.claims]


def main_figure(outputs: Iterable[Output], claim: str, campaign: str) -> Output | None:
    """The claim's figure for the results at a glance: its first figure of `campaign`'s runs
    (the catalog's first where drawn)."""
    return next((o for o in of_claim(outputs, claim)
                 if o.kind == FIGURE and o.campaign == campaign), None)


def studies(outputs: Iterable[Output]) -> dict[str, list[Output]]:
    found: dict[str, list[Output]] = {}
    for output in outputs:
        if output.study:
            found.setdefault(output.study, []).append(output)
    return found
