"""A generated block inside a hand-written document: the text between two HTML comments
(`<!-- name:start -->` ... `<!-- name:end -->`), which a command rewrites and a test compares
with what the shipped runs give (the README's headline, docs/experiments.md's claims' runs)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


class Markers:
    """The start and end comments of one kind of block, and what the block holds (for errors)."""

    def __init__(self, name: str, holds: str) -> None:
        self.start, self.end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        self.holds = holds

    def replace(self, text: str, new: str, where: str) -> str:
        """`text` with what lies between the markers replaced by `new`."""
        start, end = text.find(self.start), text.find(self.end)
        if start < 0 or end < start:
            raise ValueError(f"{where}: no '{self.start}' ... '{self.end}' markers around "
                             f"{self.holds}")
        return f"{text[:start + len(self.start)]}\n{new}\n{text[end:]}"

    def between(self, text: str) -> str | None:
        """What lies between the markers (without the newlines next to them); None without
        both."""
        start, end = text.find(self.start), text.find(self.end)
        if start < 0 or end < start:
            return None
        return text[start + len(self.start):end].strip("\n")

    def rewrite(self, path: Path, make: Callable[[], str], program: str,
                errors: tuple[type[Exception], ...] = (OSError, ValueError)) -> int:
        """A command's work: `path`'s block replaced by what `make` returns and the file
        written; an error of `errors` is one line on stderr (exit 1), nothing written."""
        try:
            text = self.replace(path.read_text(), make(), str(path))
        except errors as error:
            print(f"{program}: {error}", file=sys.stderr)
            return 1
        path.write_text(text)
        print(f"{program}: {path} rewritten")
        return 0
