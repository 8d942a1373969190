"""The testbed factors as the scope rule of 2026-11-25 had them, kept only so the ledger can
list, old -> new, what the rules of 2026-11-27 changed (rules.py: symmetric, reasons). Never a
verdict in force: under those rules a check's factors are scope.py's, each tied to its claim by
a mechanism (catalog.py).

Then, every claim of the thesis declared the same four factors (device, weights, write-back,
platform), with no mechanism for any, and the platform factor (LXC on this host's kernel
against OpenVZ 7.0.10 on its own) differed wherever it applied: an arm the thesis ran on
OpenVZ in a check's runs."""

from __future__ import annotations

from journalbench.judge.claims import scope
from journalbench.judge.claims.catalog import THESIS_CLAIMS

DECLARED = (scope.DEVICE, scope.WEIGHTS, scope.WRITEBACK, scope.PLATFORM)


def differs(claim: str, bed: scope.Testbed) -> list[str]:
    """The factors (names) in which a check's testbed differed from the thesis's under the
    scope rule as it was on 2026-11-25."""
    declared = DECLARED if claim in THESIS_CLAIMS else ()
    return [f.name for f in scope.depends(declared, bed, named=True)
            if f.name == scope.PLATFORM or not bed.asks(f, "matches")]
