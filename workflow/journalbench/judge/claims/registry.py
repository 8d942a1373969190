"""Where claim groups put their checks. A group module (fio.py, vm.py, mariadb.py, redis.py)
registers, for a claim of catalog.CLAIMS:

    @checks_of("C8")
    def c8_container(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
        rows = selection.by_beside(runs, experiments, "C8")  # runs picked by experiment
        return [checks.trend("C8", "...", rows, "throughput_mb_s", ...)]

and, for a part it cannot test yet (no check can be written for it), why:

    pending("Cn", "what is missing")

A builder gets one family's runs (one campaign, host and device profile) and the experiments
table, and returns its checks, with empty values when the campaign has no runs of a condition
(the ledger then says what is missing). The claim is the intersection of all its checks from
all groups.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import pandas as pd

from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import Check

Builder = Callable[[pd.DataFrame, pd.DataFrame], list[Check]]
BUILDERS: dict[str, list[Builder]] = defaultdict(list)
PENDING: dict[str, list[str]] = defaultdict(list)


def known(claim: str) -> str:
    if claim not in CLAIMS:
        raise ValueError(f"{claim}: not a claim of journalbench.judge.claims.catalog.CLAIMS")
    return claim


def checks_of(claim: str) -> Callable[[Builder], Builder]:
    def register(builder: Builder) -> Builder:
        BUILDERS[known(claim)].append(builder)
        return builder

    return register


def pending(claim: str, what: str) -> None:
    PENDING[known(claim)].append(what)


def build(claim: str, runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    return [check for builder in BUILDERS.get(claim, []) for check in builder(runs, experiments)]
