"""Whether two analyses of the same runs made the same outputs (a script, not a test): the
tables, the ledger and the figures before and after a change that should alter no result.

    .venv/bin/python benchmarks/same_outputs.py BEFORE AFTER

BEFORE and AFTER are each a repository's root (or a copy of its outputs) holding
data/processed/, results/ and figures/ as `snakemake --cores 1` left them. Compared:
- every parquet table of data/processed/ (the tidy cache excepted): the same columns, types
  and values (NaN equal to NaN, floats bit for bit);
- every other file of results/ and figures/ byte for byte (the ledger, the report's pages,
  the notebooks' CSV and Markdown tables, the figures' PNG and PDF), except
- the executed notebooks (results/<campaign>/notebooks/*.ipynb), whose run times and kernel
  ids differ each time: their cells' sources and outputs (text, tables, the figures' images)
  are compared instead, without execution counts and metadata, a stream's text joined
  however the kernel's flushes cut it;
- the pipeline's own marker files (.snakemake_timestamp, missing-runs.txt, landed-runs.txt).

Where each analysis wrote its own root (the notebooks' parameters, skipped runs' folders, the
report's paths), it is read as "<root>": two checkouts in different places compare equal.
Prints one line per difference and exits 1 if there is any, else says how much was compared.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FOLDERS = ("data/processed", "results", "figures")
SKIPPED_PARTS = ("cache",)  # tidy's cache (data/processed/<campaign>/cache/): its write ids
# the pipeline's own markers: Snakemake's, and the lists of missing and landed runs that make
# tidy run again (workflow/rules/)
SKIPPED_NAMES = (".snakemake_timestamp", ".gitkeep", "missing-runs.txt", "landed-runs.txt")


def files(root: Path) -> dict[str, Path]:
    found = {}
    for folder in FOLDERS:
        base = root / folder
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            relative = path.relative_to(root)
            if (path.is_file() and path.name not in SKIPPED_NAMES
                    and not set(SKIPPED_PARTS) & set(relative.parts[:-1])):
                found[str(relative)] = path
    return found


ROOT = "<root>"


def rooted(frame: Any, root: Path) -> Any:
    """The frame with its root written as ROOT in every string column."""
    import pandas as pd

    for name in frame.columns:
        if frame[name].dtype == object or isinstance(frame[name].dtype, pd.StringDtype):
            frame[name] = frame[name].map(
                lambda v: v.replace(str(root), ROOT) if isinstance(v, str) else v)
    return frame


def table_difference(before: Path, after: Path, roots: tuple[Path, Path]) -> str | None:
    import pandas as pd
    import pyarrow.parquet as pq

    a, b = pq.read_table(before), pq.read_table(after)
    if not a.schema.equals(b.schema, check_metadata=False):
        return f"schemas differ: {a.schema} / {b.schema}"
    try:
        pd.testing.assert_frame_equal(rooted(a.to_pandas(), roots[0]),
                                      rooted(b.to_pandas(), roots[1]), check_exact=True)
    except AssertionError as error:
        return " ".join(str(error).split())[:300]
    return None


def notebook_cells(path: Path, root: Path) -> list[dict[str, Any]]:
    """A notebook's cells as compared: type, source and outputs, without counts and metadata
    (papermill's timings, the kernel's ids)."""
    cells = []
    for cell in json.loads(path.read_text().replace(str(root), ROOT))["cells"]:
        outputs: list[dict[str, Any]] = []
        for output in cell.get("outputs", []):
            output = {key: value for key, value in output.items()
                      if key not in ("execution_count", "metadata")}
            last = outputs[-1] if outputs else {}
            if (output.get("output_type") == last.get("output_type") == "stream"
                    and output.get("name") == last.get("name")):
                # one stream's text, however the kernel's flushes cut it into outputs
                last["text"] = "".join(last["text"]) + "".join(output["text"])
                continue
            if output.get("output_type") == "stream":
                output["text"] = "".join(output["text"])
            outputs.append(output)
        cells.append({"type": cell["cell_type"], "source": "".join(cell["source"]),
                      "outputs": outputs})
    return cells


def notebook_difference(before: Path, after: Path, roots: tuple[Path, Path]) -> str | None:
    a, b = notebook_cells(before, roots[0]), notebook_cells(after, roots[1])
    if len(a) != len(b):
        return f"{len(a)} cells against {len(b)}"
    for index, (one, other) in enumerate(zip(a, b, strict=True)):
        if one != other:
            what = "source" if one["source"] != other["source"] else "outputs"
            return f"cell {index} ({one['source'][:60]!r}...): {what} differ"
    return None


def difference(name: str, before: Path, after: Path, roots: tuple[Path, Path]) -> str | None:
    if name.endswith(".parquet"):
        return table_difference(before, after, roots)
    if name.endswith(".ipynb"):
        return notebook_difference(before, after, roots)
    a, b = before.read_bytes(), after.read_bytes()
    if a == b or a.replace(bytes(roots[0]), ROOT.encode()) == b.replace(bytes(roots[1]),
                                                                        ROOT.encode()):
        return None
    return "bytes differ"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    old, new = files(args.before), files(args.after)
    problems = [f"only in {args.before}: {name}" for name in sorted(old.keys() - new.keys())]
    problems += [f"only in {args.after}: {name}" for name in sorted(new.keys() - old.keys())]
    kinds: dict[str, int] = {}
    for name in sorted(old.keys() & new.keys()):
        why = difference(name, old[name], new[name],
                         (args.before.resolve(), args.after.resolve()))
        if why is not None:
            problems.append(f"{name}: {why}")
        kind = Path(name).suffix or name
        kinds[kind] = kinds.get(kind, 0) + 1
    for line in problems:
        print(line)
    compared = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    if problems:
        print(f"{len(problems)} difference(s) ({compared} compared)")
        return 1
    print(f"same outputs: {compared}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
