"""The pipeline judges each campaign once: `journalbench claims --tables-only` keeps the
ledger's tables beside the tidy tables, and the notebooks' tests and the ledger's documents
(`--reuse`) come from them, saying what judging anew says."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO
from journalbench.cli import main as cli
from journalbench.judge import claims as claims_package
from journalbench.judge.claims import judged
from journalbench.report import views

SHIPPED = REPO / "data" / "raw" / "quick-redis"  # small, and it tests claims


def refuse(*_: object, **__: object) -> None:
    raise AssertionError("judged again")


@pytest.mark.skipif(not SHIPPED.is_dir(), reason="no shipped quick-redis runs")
def test_tables_only_then_reuse_gives_the_same_ledger_and_tests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    processed = tmp_path / "processed" / "quick-redis"
    runs, samples, experiments = views.load(processed, SHIPPED)  # tidied into tmp_path
    fresh = claims_package.host_tests(runs, experiments, samples)
    assert judged.read(processed) is None
    assert cli.main(["claims", str(processed), "--results", str(tmp_path / "plain")]) == 0
    assert cli.main(["claims", str(processed), "--tables-only"]) == 0
    assert all(path.is_file() for path in judged.paths(processed))
    assert not (tmp_path / "results").exists()  # --tables-only writes no ledger

    monkeypatch.setattr(claims_package, "ledger", refuse)
    monkeypatch.setattr(judged, "host_tests", refuse)
    assert cli.main(["claims", str(processed), "--results", str(tmp_path / "reused"),
                     "--reuse"]) == 0
    for name in ("claims.csv", "quick-redis/claims.csv", "claims.md"):
        assert (tmp_path / "reused" / name).read_text() == \
            (tmp_path / "plain" / name).read_text(), name
    kept = claims_package.tests_of(processed, runs, experiments, samples)
    keys = ["claim", "test"]
    pd.testing.assert_frame_equal(
        kept.sort_values(keys).reset_index(drop=True)[fresh.columns],
        fresh.sort_values(keys).reset_index(drop=True), check_dtype=False)
    claims, checks, starved, evidence = judged.read(processed)  # judged again: one fewer
    judged.write(processed, (claims, checks.iloc[1:], starved, evidence))
    assert len(claims_package.tests_of(processed, runs, experiments, samples)) == len(kept) - 1


def test_without_the_tables_a_notebook_judges_on_its_own(tmp_path: Path) -> None:
    """A notebook opened on a fresh clone (no pipeline run): tests_of judges the runs."""
    from test_claims import JOURNAL_BOUND, Plan, c10

    plan = Plan()
    plan.regime(*JOURNAL_BOUND)
    c10(plan, [0.70, 0.69, 0.71, 0.70, 0.72], [0.40, 0.42, 0.39, 0.41, 0.40])
    runs, samples, experiments = plan.tables()
    tests = claims_package.tests_of(tmp_path, runs, experiments, samples)
    assert set(tests.loc[tests["claim"] == "C10", "outcome"]) == {"reproduced"}


@pytest.mark.skipif(not SHIPPED.is_dir(), reason="no shipped quick-redis runs")
def test_the_notebooks_runner_judges_in_its_kernel_as_the_command_does(tmp_path: Path,
                                                                       capsys) -> None:
    """The pipeline judges in the notebooks' kernel, before the notebooks (which read the
    tables): the same tables as `journalbench claims --tables-only`, and a notebook sees
    them; a campaign that cannot be judged stops the runner with one line."""
    from test_notebooks_run import notebook

    from journalbench.report import notebooks

    processed = tmp_path / "data" / "processed" / "quick-redis"
    views.load(processed, SHIPPED)  # tidied into tmp_path
    assert cli.main(["claims", str(processed), "--tables-only"]) == 0
    by_command = judged.read(processed)
    for path in judged.paths(processed):
        path.unlink()
    notebook(tmp_path / "notebooks" / "reads.ipynb",
             "from journalbench.judge.claims import judged\n"
             f"print(len(judged.read({str(processed)!r})[0]), 'claims judged')\n")
    relative = processed.relative_to(tmp_path)  # as the pipeline gives it: from ROOT
    assert notebooks.run("quick-redis", tmp_path, ["reads"], judge=[relative]) == 0
    for mine, theirs in zip(judged.read(processed), by_command, strict=True):
        pd.testing.assert_frame_equal(mine, theirs)
    printed = capsys.readouterr().out
    assert "claims: quick-redis judged" in printed and "judging:" in printed
    executed = (tmp_path / "results" / "quick-redis" / "notebooks" / "reads.ipynb").read_text()
    assert f"{len(by_command[0])} claims judged" in executed
    assert notebooks.run("quick-redis", tmp_path, ["reads"],
                         judge=[relative.parent / "nothing"]) == 1
    assert "judging in the notebooks' kernel failed: FileNotFoundError" in \
        capsys.readouterr().err


@pytest.mark.skipif(not SHIPPED.is_dir(), reason="no shipped quick-redis runs")
def test_the_notebooks_runner_writes_the_ledgers_and_report_the_command_writes(
        tmp_path: Path, capsys) -> None:
    """After the notebooks, in the same kernel, the runner writes the ledgers and the report
    (`--results`): the same files as `journalbench claims --reuse --report` from the tables
    judged there; a report it cannot write stops the runner with one line."""
    from test_notebooks_run import notebook

    from journalbench.report import notebooks

    processed = tmp_path / "data" / "processed" / "quick-redis"
    views.load(processed, SHIPPED)  # tidied into tmp_path
    # a notebook sets pandas' display options for its reader (3 decimals): the ledgers after
    # it are written as the command writes them all the same
    notebook(tmp_path / "notebooks" / "none.ipynb",
             "from journalbench.report import views\nviews.readable()\n")
    relative = processed.relative_to(tmp_path)
    assert notebooks.run("quick-redis", tmp_path, ["none"], judge=[relative],
                         results=Path("results")) == 0
    assert "ledgers and report:" in capsys.readouterr().out
    assert cli.main(["claims", str(processed), "--results", str(tmp_path / "command"),
                     "--reuse", "--report", "quick-redis"]) == 0
    for name in ("claims.md", "claims.csv", "claims-runs.csv", "quick-redis/claims.md",
                 "summary.md", "report/index.html"):
        assert (tmp_path / "results" / name).read_text() == \
            (tmp_path / "command" / name).read_text(), name
    assert notebooks.run("quick-redis", tmp_path, ["none"], judge=[relative],
                         results=Path("results2")) == 0
    assert notebooks.run("nowhere", tmp_path, ["none"], judge=[relative],
                         results=Path("results3")) == 1
    err = capsys.readouterr().err
    assert "claims: --report:" in err and "writing the ledgers in the notebooks' kernel " \
        "failed: RuntimeError" in err, err


BFQ = REPO / "data" / "raw" / "bfq"  # eight families, most of their checks without runs


@pytest.mark.skipif(not BFQ.is_dir(), reason="no shipped bfq runs")
def test_the_judges_shortcuts_give_the_tables_judging_in_full_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three shortcuts of the judge (verdicts.py): the row of a check without runs is made once
    for the families alike in it (empty_key), the checks of a claim no experiment names are
    built once for the families alike in what they read (unnamed_key), and the rule changes
    do not judge again for a precondition rule that gave no check a reason (inert). On the
    shipped campaign with the most families all are taken, and judging without them gives the
    same tables."""
    from journalbench.judge.claims import registry, verdicts

    runs, samples, experiments = views.load(tmp_path / "processed" / "bfq", BFQ)
    taken = {"empty": 0, "inert": 0, "built": 0}
    empty_key, inert, build = verdicts.empty_key, verdicts.inert, registry.build

    def counted_key(claim: str, check: object) -> tuple | None:
        key = empty_key(claim, check)
        taken["empty"] += key is not None
        return key

    def counted_inert(rule: str, rows: list[dict]) -> bool:
        found = inert(rule, rows)
        taken["inert"] += found
        return found

    def counted_build(claim: str, *tables: pd.DataFrame) -> list:
        taken["built"] += 1
        return build(claim, *tables)

    monkeypatch.setattr(verdicts, "empty_key", counted_key)
    monkeypatch.setattr(verdicts, "inert", counted_inert)
    monkeypatch.setattr(registry, "build", counted_build)
    short = verdicts.ledger(runs, samples, experiments)
    # 8 families x 24 claims, 19 of them named by no experiment: built for the first only
    assert taken["built"] == 8 * 5 + 19, taken
    assert taken["empty"] > 100 and taken["inert"] > 8, taken
    monkeypatch.setattr(verdicts, "empty_key", lambda claim, check: None)
    monkeypatch.setattr(verdicts, "inert", lambda rule, rows: False)
    full = verdicts.ledger(runs, samples, experiments)
    assert taken["built"] == 8 * 5 + 19 + 8 * 24, taken
    for made, judged_in_full in zip(short, full, strict=True):
        pd.testing.assert_frame_equal(made, judged_in_full)


MYSQL_POINT = REPO / "data" / "raw" / "mysql-point"  # every arm, MariaDB and fio tenants


@pytest.mark.skipif(not MYSQL_POINT.is_dir(), reason="no shipped mysql-point runs")
def test_a_claim_no_experiment_names_has_only_checks_without_runs(tmp_path: Path) -> None:
    """What the unnamed shortcut rests on (verdicts.unnamed_key): every builder picks its runs
    through its claim's experiments, so with the same runs and an experiments table naming no
    claim, every claim's checks are without runs (fails for a builder that reads rows of
    other experiments), while with the campaign's own experiments its claims have some."""
    from journalbench.judge.claims import dbruns, registry, verdicts
    from journalbench.judge.claims.catalog import CLAIMS

    runs, samples, experiments = views.load(tmp_path / "processed", MYSQL_POINT)
    runs = dbruns.with_swing(verdicts.with_family(runs), samples)  # as the ledger's
    none = experiments.assign(claims="")
    for claim in CLAIMS:
        assert all(verdicts.empty_key(claim, check) is not None
                   for check in registry.build(claim, runs, none)), claim
    measured = [claim for claim in CLAIMS
                if any(verdicts.empty_key(claim, check) is None
                       for check in registry.build(claim, runs, experiments))]
    assert measured == ["C5", "C6", "C7", "C11", "C12", "C13", "C14", "C16", "C19", "C20"]

