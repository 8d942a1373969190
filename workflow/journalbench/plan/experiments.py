"""Which experiment of its campaign each run belongs to, and so which claims it tests.

A run folder records its campaign but not its experiment: identical specs of two experiments
are one run (journalbench.plan.campaign.expand). So when a campaign is planned, every spec is
kept with the experiment and condition that made it (campaign.made_specs), giving one row per
planned run and experiment: the plan keeps these rows (plan/plan.py) and tidy writes them as the
`experiments` table (data/SCHEMA.md). Which runs an experiment or a claim picks is
journalbench.judge.selection's `runs_for`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from journalbench.plan.campaign import Made

COLUMNS: tuple[tuple[str, str], ...] = (
    ("campaign", "string"), ("run_id", "string"), ("experiment", "string"),
    ("claims", "string"), ("condition", "string"), ("arm", "string"), ("repetition", "int64"),
)
CLAIM_SEPARATOR = " "


def condition_label(values: dict[str, Any]) -> str | None:
    """`neighbour=high-fsync,preset=...` for the experiment's vary values; None without vary."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values)) or None


def experiment_rows(campaign: dict[str, Any], source: str,
                    made: list[Made] | None = None) -> list[dict[str, Any]]:
    """One row per planned run and experiment of a loaded campaign, by experiment, then
    condition, then as planned (`made`: made_specs, if made already)."""
    if made is None:
        from journalbench.plan.campaign import made_specs  # agent's registry, jsonschema

        made = made_specs(campaign, source)
    rows = []
    for found in sorted(made, key=lambda found: (found.experiment, found.condition)):
        experiment = campaign["experiments"][found.experiment]
        rows.append({
            "campaign": campaign["name"], "run_id": found.run_id,
            "experiment": experiment["id"],
            "claims": CLAIM_SEPARATOR.join(experiment["claims"]),
            "condition": condition_label(found.values), "arm": found.spec["arm"],
            "repetition": found.spec["repetition"],
        })
    return rows
