"""The Redis claims: C21-C23. Their checks come with the Redis + YCSB workload; until then each
is a pending entry of the ledger. A check goes here as in fio.py (registry.py)."""

from __future__ import annotations

from journalbench.claims.registry import pending

WHAT = "Redis + YCSB checks (not encoded yet)"
for claim in ("C21", "C22", "C23"):
    pending(claim, WHAT)
