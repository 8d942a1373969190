"""docs/experiments.md's table of the claims' runs (journalbench/report/claim_runs.py): it is
the one the shipped plan, runs and checks give, its times are `journalbench status`'s, and its
device classes follow from the preconditions the claims' checks declare."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from journalbench.control import dispatch
from journalbench.judge.claims import needs
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import CONTAINER
from journalbench.judge.claims.preconditions import (
    DB_CPU,
    GUEST_FSYNC,
    JOURNAL_REGIME,
    VM_CPU,
    VM_DB,
)
from journalbench.report import claim_runs

DOC = "docs/experiments.md"
FRESH = "python -m journalbench.report.claim_runs --doc docs/experiments.md"


def test_the_doc_shows_the_table_the_shipped_runs_give(repo: Path, tmp_path: Path) -> None:
    shown = claim_runs.between_markers((repo / DOC).read_text())
    assert shown is not None, f"{DOC} has no '{claim_runs.START}' ... '{claim_runs.END}' markers"
    assert shown == claim_runs.block(repo), f"{DOC}'s claims' runs are stale: run `{FRESH}`"
    # the command rewrites only the block: on a copy, the doc comes back as it is
    copy = tmp_path / "experiments.md"
    shutil.copy(repo / DOC, copy)
    text = copy.read_text()
    copy.write_text(claim_runs.replace_block(text, "stale", str(copy)))
    assert claim_runs.main(["--doc", str(copy), "--root", str(repo)]) == 0
    assert copy.read_text() == text
    rows = [line.split(" | ")[0].lstrip("| ") for line in shown.splitlines()[2:]]
    assert rows == [*CLAIMS, claim_runs.WHOLE]


def test_each_rows_time_is_what_status_prints(repo: Path, tmp_path: Path) -> None:
    found, own = claim_runs.rows(claim_runs.CAMPAIGN, str(repo / claim_runs.HOSTS),
                                 repo / "data" / "raw", "native", tmp_path)
    assert own == "hdd"
    by_claim = {row.claim: row for row in found}
    for claim in ("C4", "C8"):
        row = by_claim[claim]
        for device, seconds in ((None, row.seconds), ("native", row.elsewhere)):
            lines = dispatch.status(claim_runs.CAMPAIGN, str(repo / claim_runs.HOSTS),
                                    repo / "data" / "raw", claim, device, tmp_path)
            assert lines[1] == (f"planned: {row.runs} runs, {dispatch.hms(seconds)} on "
                                f"{device or own}"), (claim, lines)
    whole = by_claim[claim_runs.WHOLE]
    assert whole.command.endswith("campaign=thesis-hdd")
    assert whole.runs >= max(row.runs for row in found[:-1])


@pytest.mark.parametrize(("seconds", "text"), [
    (2 * 3600 + 1 * 60 + 49, "2 h 02 min"), (29 * 60 + 10, "29 min"), (59 * 60 + 31, "1 h 00 min"),
    (10 * 3600 + 35 * 60 + 48, "10 h 36 min"), (29, "< 1 min"), (31, "1 min"),
])
def test_wall_times_are_told_to_the_minute(seconds: float, text: str) -> None:
    assert claim_runs.duration_text(seconds) == text


def test_the_device_class_follows_from_the_halves_preconditions() -> None:
    assert claim_runs.device_class({CONTAINER: frozenset()}) == "any"
    assert claim_runs.device_class({CONTAINER: frozenset({JOURNAL_REGIME, DB_CPU})}) == (
        "HDD-class (`hdd`)")
    # a fio VM half counts under TCG where its guests were I/O-bound; a database's does not
    assert claim_runs.device_class({"vm": frozenset({VM_CPU})}) == (
        "any; VM: KVM, or TCG with I/O-bound guests")
    assert claim_runs.device_class({
        CONTAINER: frozenset(), "vm": frozenset({VM_CPU, VM_DB, GUEST_FSYNC, JOURNAL_REGIME})},
    ) == "HDD-class (`hdd`); VM: KVM"


def test_every_claims_checks_declare_their_needs_without_runs() -> None:
    found = needs.of_claims()
    assert list(found) == list(CLAIMS)
    assert all(found.values()), [c for c, halves in found.items() if not halves]
    # C7 counts fsyncs: no journal regime (mariadb.py); C10 has no VM half; C1 only the VM's
    assert claim_runs.device_class(found["C7"]) == "any; VM: KVM"
    assert claim_runs.device_class(found["C10"]) == "HDD-class (`hdd`)"
    assert set(found["C1"]) == {"vm"}


def test_a_doc_without_markers_is_named() -> None:
    with pytest.raises(ValueError, match=r"^docs/x\.md: no '<!-- claim-runs:start -->'"):
        claim_runs.replace_block("no markers here", "table", "docs/x.md")
    assert claim_runs.between_markers("text") is None
