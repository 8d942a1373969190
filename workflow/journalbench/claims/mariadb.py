"""The MariaDB (MySQL) claims: C5-C7, C11-C14, C16, C19, C20. Their checks come with the
MariaDB + sysbench workload; until then each is a pending entry of the ledger. A check goes
here as in fio.py: `@checks_of("C11")` on a builder returning `checks.*` (registry.py)."""

from __future__ import annotations

from journalbench.claims.registry import pending

WHAT = "MariaDB + sysbench checks (not encoded yet)"
for claim in ("C5", "C6", "C7", "C11", "C12", "C13", "C14", "C16", "C19", "C20"):
    pending(claim, WHAT)
