"""Where a notebook reads and writes: resolved from the repository, which the package knows
(plan.REPOSITORY), never from the working directory, so papermill run from the repository's
root, from notebooks/ or with --cwd anywhere reads the same runs and writes the same files,
all inside the repository. A `campaign` with no runs there is one line naming those that
have them (IPython shows an UnknownCampaign as its message alone)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from journalbench.plan.campaign import campaign_path
from journalbench.plan.plan import REPOSITORY


class UnknownCampaign(ValueError):
    """A campaign no run folder is of: its message alone, in a notebook too."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook: no traceback
        return [f"UnknownCampaign: {self}"]


class Paths(NamedTuple):
    source: str  # the campaign whose runs the notebook shows
    processed: str  # its tidy tables
    raw: str  # its run folders
    figures: str  # where the notebook's figures go (the campaign given)
    results: str  # where its tables go


def campaigns(root: Path = REPOSITORY) -> list[str]:
    """The campaigns with runs in the repository (data/raw/<campaign>, with a campaign file)."""
    raw = root / "data" / "raw"
    return sorted(p.name for p in raw.iterdir()
                  if p.is_dir() and campaign_path(p.name).is_file()) if raw.is_dir() else []


def known(campaign: str, root: Path = REPOSITORY) -> str:
    """`campaign`, or UnknownCampaign naming those that exist."""
    found = campaigns(root)
    if campaign not in found:
        raise UnknownCampaign(f"campaign {campaign!r}: no runs in {root / 'data' / 'raw'}; "
                              f"campaigns with runs: {', '.join(found) or 'none'}")
    return campaign


def resolve(campaign: str, processed: str | None = None, raw: str | None = None,
            figures: str | None = None, results: str | None = None,
            notebook: str | None = None, source: str | None = None,
            root: Path = REPOSITORY) -> Paths:
    """A notebook's paths: what its parameters gave, the rest derived in the repository from
    `campaign` (and, for a `notebook` that may draw another campaign's runs, its source as the
    pipeline chooses it: report/notebooks.py). A campaign whose runs would be read from the
    repository must have some there (UnknownCampaign otherwise)."""
    from journalbench.report import notebooks

    derived = processed is None or raw is None  # runs read from the repository
    if derived:
        known(campaign, root)
    source = source or (notebooks.source(notebook, campaign) if notebook else campaign)
    if derived:
        known(source, root)
    return Paths(source, processed or str(root / "data" / "processed" / source),
                 raw or str(root / "data" / "raw" / source),
                 figures or str(root / "figures" / campaign),
                 results or str(root / "results" / campaign))


def beside(campaign: str, processed: str, raw: str) -> tuple[str, str]:
    """(tidy tables, run folders) of a campaign a notebook shows beside its own: next to its
    own (`processed`, `raw`), wherever those were resolved or given."""
    return str(Path(processed).parent / campaign), str(Path(raw).parent / campaign)
