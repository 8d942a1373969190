"""What each claim's checks need of a testbed, as their builders declare it: each check built
on no runs at all (the ledger's empty tables) still carries its half (`part`) and its
preconditions (`needs`, preconditions.py), whatever a campaign measured. docs/experiments.md's
table of the claims' runs says from these which device class and which VM acceleration a claim
needs (report/claim_runs.py)."""

from __future__ import annotations

import pandas as pd

from journalbench.judge.claims import registry
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.dbruns import SWING
from journalbench.plan import experiments as planned
from journalbench.tidy.rows import RUNS_COLUMNS

Needs = dict[str, frozenset[str]]  # a claim's half (checks.CONTAINER, "vm") -> preconditions


def empty(columns: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """A table of `columns` (name, dtype) without rows."""
    return pd.DataFrame({name: pd.Series(dtype="object" if dtype == "string" else dtype)
                         for name, dtype in columns})


def declared(claim: str) -> list[Check]:
    """The claim's checks built on no runs: what each compares, its half and its needs."""
    runs = empty((*RUNS_COLUMNS, (SWING, "float64")))
    return registry.build(registry.known(claim), runs, empty(planned.COLUMNS))


def by_part(checks: list[Check]) -> Needs:
    """The preconditions of the checks of each half (a half without any: an empty set)."""
    found: dict[str, set[str]] = {}
    for check in checks:
        found.setdefault(check.part, set()).update(check.needs)
    return {part: frozenset(needs) for part, needs in found.items()}


def of_claims() -> dict[str, Needs]:
    """Each claim of the catalogue, in its order: its halves' preconditions."""
    return {claim: by_part(declared(claim)) for claim in CLAIMS}
