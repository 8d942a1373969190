"""Which experiment of its campaign each run belongs to, and so which claims it tests.

A run folder records its campaign but not its experiment: identical specs of two experiments
are one run (journalbench.plan.campaign.expand). So when a campaign is planned, every
experiment's conditions are also expanded on their own, giving one row per planned run and
experiment: the plan keeps these rows (plan/plan.py) and tidy writes them as the
`experiments` table (data/SCHEMA.md). Which runs an experiment or a claim picks is
journalbench.judge.selection's `runs_for`.
"""

from __future__ import annotations

from typing import Any

from journalbench import runfolder
from journalbench.plan.campaign import conditions, expand

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
