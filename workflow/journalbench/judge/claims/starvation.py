"""C24, ours: journal accounting can starve a tenant. Seen on this package's first runs (a
modern kernel, BFQ): a high-fsync victim at 70% whose jbd2 thread was moved into its cgroup got
4-13% of the disk beside a 30% streaming writer, with whole seconds at zero bytes. Its level is
the package's own starvation line (journalbench.judge.starved.STARVED_SHARE of what the weight
promises), fixed before these runs; no journal-regime precondition, as the mechanism is the
scheduler's, not the journal's cost."""

from __future__ import annotations

import pandas as pd

from journalbench.judge import selection, starved
from journalbench.judge.claims import checks, rules
from journalbench.judge.claims.checks import Check
from journalbench.judge.claims.fio import where
from journalbench.judge.claims.registry import checks_of
from journalbench.vocabulary import JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL

VICTIM_SHARE = 0.7
STARVED_LEVEL = starved.STARVED_SHARE * VICTIM_SHARE  # 0.175 of the disk


@checks_of("C24")
def c24(runs: pd.DataFrame, experiments: pd.DataFrame) -> list[Check]:
    rows = selection.starvation_pair(runs, experiments)
    accounted, per = where(rows, arm=JOURNAL_ACCOUNTED), where(rows, arm=PER_CONTAINER_JOURNAL)
    return [
        checks.level("C24", f"{JOURNAL_ACCOUNTED}: the 70% high-fsync victim's share beside a "
                     f"30% no-fsync writer, below {STARVED_LEVEL:.3g} (a quarter of its "
                     "weight's)", accounted, "achieved_share", STARVED_LEVEL, -1,
                     thesis="none (the thesis: accounting restores 70/30)"),
        checks.ratio("C24", "the victim's share, per-container over journal-accounted", per,
                     accounted, "achieved_share", thesis="none (the thesis: accounting helps)",
                     until=rules.C24_SHARES),
        checks.difference("C24", "the victim's share, per-container minus journal-accounted",
                          per, accounted, "achieved_share",
                          thesis="none (the thesis: accounting helps)", since=rules.C24_SHARES),
    ]
