"""The claims a campaign names are the catalogue's (catalog.py, the one list): the campaign
schema checks only an id's shape (C and a number), this that it names a claim, when the
campaign is planned (`journalbench plan`, the pipeline's first job, before any run is
measured). Adding a claim to the catalogue is all a campaign needs to name it."""

from __future__ import annotations

from collections.abc import Mapping

from journalbench.errors import ConfigError
from journalbench.judge.claims.catalog import CLAIMS, Claim, id_ranges, unknown
from journalbench.plan.experiments import CLAIM_SEPARATOR
from journalbench.plan.plan import Plan


def named(plan: Plan) -> dict[str, list[str]]:
    """The claim ids the campaign names, by the field naming them."""
    fields: dict[str, list[str]] = {}
    for row in plan.experiments:
        ids = [c for c in row["claims"].split(CLAIM_SEPARATOR) if c]
        fields.setdefault(f"experiments.{row['experiment']}.claims", []).extend(ids)
    headline = plan.facts.get("headline")
    if isinstance(headline, list):
        fields["headline"] = list(headline)
    return fields


def check(plan: Plan, claims: Mapping[str, Claim] = CLAIMS) -> None:
    """ConfigError, one line naming the file and the field, for a claim the catalogue lacks."""
    for where, ids in named(plan).items():
        strays = unknown(ids, claims)
        if strays:
            raise ConfigError(f"{plan.source}: field {where}: {', '.join(strays)} is no claim "
                              f"of judge/claims/catalog.py ({id_ranges(claims)})")
