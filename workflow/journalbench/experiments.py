"""Which experiment of its campaign each run belongs to, and so which claims it tests.

A run folder records its campaign but not its experiment: identical specs of two experiments
are one run (journalbench.campaign.expand). So the campaign file is read again and every
experiment's conditions are expanded on their own, giving one row per planned run and
experiment (the `experiments` table, data/SCHEMA.md). `runs_for` is the one place that picks
the runs of an experiment or a claim: claims.py, analysis.py and the notebooks all use it.

Top-level imports are stdlib only, like tidy.py's (tidy builds the table).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from journalbench import runfolder
from journalbench.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: tuple[tuple[str, str], ...] = (
    ("campaign", "string"), ("run_id", "string"), ("experiment", "string"),
    ("claims", "string"), ("condition", "string"), ("arm", "string"), ("repetition", "int64"),
)
CLAIM_SEPARATOR = " "


def condition_label(values: dict[str, Any]) -> str | None:
    """`neighbour=high-fsync,preset=...` for the experiment's vary values; None without vary."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values)) or None


def experiment_rows(campaign: dict[str, Any], source: str) -> list[dict[str, Any]]:
    """One row per planned run and experiment of a loaded campaign."""
    from journalbench.campaign import conditions, expand

    rows = []
    for experiment in campaign["experiments"]:
        for values in conditions(experiment):
            # the condition as a campaign of its own: expand() builds its specs exactly as
            # it builds the campaign's, so the run ids are the ones the runs were made under
            alone = {**experiment, "vary": {name: [value] for name, value in values.items()}}
            for spec in expand({**campaign, "experiments": [alone]}, source):
                rows.append({
                    "campaign": campaign["name"], "run_id": runfolder.run_id(spec),
                    "experiment": experiment["id"],
                    "claims": CLAIM_SEPARATOR.join(experiment["claims"]),
                    "condition": condition_label(values), "arm": spec["arm"],
                    "repetition": spec["repetition"],
                })
    return rows


def campaign_rows(name: str, path: Path) -> list[dict[str, Any]]:
    """The rows of campaign `name` from its file; ConfigError if the file names another."""
    from journalbench.campaign import load_campaign

    campaign = load_campaign(str(path))
    if campaign["name"] != name:
        raise ConfigError(f"{path}: field name: is {campaign['name']!r}, but the runs are of "
                          f"campaign {name!r}")
    return experiment_rows(campaign, str(path))


def has_claim(claims: str, claim: str) -> bool:
    return claim in claims.split(CLAIM_SEPARATOR)


def runs_for(runs: pd.DataFrame, experiments: pd.DataFrame, *, claim: str | None = None,
             experiment: str | None = None) -> pd.DataFrame:
    """The rows of `runs` whose run belongs to an experiment testing `claim` (or with id
    `experiment`) in its own campaign. A run of no experiment (made by hand, or of a campaign
    whose file tidy did not find) tests no claim."""
    chosen = experiments
    if claim is not None:
        # .loc: a plain [] with an empty list would select columns, not rows
        chosen = chosen.loc[[has_claim(c, claim) for c in chosen["claims"]]]
    if experiment is not None:
        chosen = chosen[chosen["experiment"] == experiment]
    keys = set(zip(chosen["campaign"], chosen["run_id"], strict=True))
    mask = [key in keys for key in zip(runs["campaign"], runs["run_id"], strict=True)]
    return runs[mask]
