"""The thesis's claims as tests, fixed in code before data, and their verdicts.

- catalog.py: the one list of claims (id, where in the thesis, statement with its numbers).
- checks.py: a claim's tests (`Check`: ratio, paired, trend, equivalent, share, level,
  not-worse) and their evaluation: effect with a 95% interval, one-sided p both ways,
  smallest detectable effect.
- preconditions.py: what the testbed must offer for a check to be judged (KVM or no CPU-bound
  VM; the device's journal regime; database runs without a CPU-bound tenant).
- registry.py: how a claim group adds checks (`@checks_of("C8")`) or pending parts.
- one module per claim group: fio.py (container halves of the fio claims), vm.py (their VM
  halves), mariadb.py (the MySQL claims), redis.py (the Redis claims) and starvation.py (C24,
  ours: journal accounting starving a tenant under BFQ); dbruns.py holds what the database
  groups share (their tenants, the CPU-bound runs they leave out, the share swing).
- verdicts.py: checks -> verdict per claim and family, Holm over the claims of a family.
- power.py: runs needed; judged.py: the ledger's tables kept beside a campaign's tidy tables,
  read by the notebooks (journalbench/report/ledger.py writes the ledger's documents).

Use: `claims, checks, starved = journalbench.judge.claims.ledger(runs, samples, experiments)`.
docs/claims.md describes every claim's checks, margins and preconditions.
"""

from __future__ import annotations

import importlib

from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.judged import judged_of, tests_of
from journalbench.judge.claims.verdicts import VERDICTS, host_tests, ledger

GROUPS = ("fio", "vm", "mariadb", "redis", "starvation")  # each registers its checks on import
for _group in GROUPS:
    importlib.import_module(f"journalbench.judge.claims.{_group}")

# every neighbour a figure or table shows, by rising fsync rate: each group's own order
NEIGHBOUR_ORDER = list(dict.fromkeys(
    name for group in GROUPS
    for name in getattr(importlib.import_module(f"journalbench.judge.claims.{group}"),
                        "BESIDE", [])))


def beside_rank(beside: str) -> tuple[int, str]:
    """A sort key putting neighbours in NEIGHBOUR_ORDER, others last."""
    known = NEIGHBOUR_ORDER
    return (known.index(beside) if beside in known else len(known), beside)


__all__ = ["CLAIMS", "GROUPS", "NEIGHBOUR_ORDER", "VERDICTS", "beside_rank", "host_tests",
           "judged_of", "ledger", "tests_of"]
