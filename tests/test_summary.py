"""The results at a glance (journalbench/report/summary.py), on the verdicts the judge really
produces. The pipeline's own summary and report, in a browser, are tested in
tests/test_report.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from journalbench.judge.claims import scope, verdicts
from journalbench.judge.claims.catalog import CLAIMS, HEADLINES
from journalbench.report import headline, summary


def check(**given: object) -> dict:
    row = {"claim": "C8", "part": "container", "test": "a check", "status": verdicts.MEASURED,
           "why_not": "", "outcome": verdicts.INCONCLUSIVE, "p_for": 0.5, "p_against": 0.5,
           "thesis": "x1", "kind": "ratio", "effect": 1.0, "low": 0.9, "high": 1.1,
           "ours_a": 2.0, "ours_b": 2.0, "unit": "MB/s", "column": "throughput_mb_s",
           "starved_runs": "", "excluded_runs": "", "differs": "", "differs_short": ""}
    return {**row, **given}


def test_every_claim_has_a_headline_of_one_line() -> None:
    assert list(HEADLINES) == list(CLAIMS)
    assert all(0 < len(text) <= 100 and "\n" not in text for text in HEADLINES.values())


def test_a_claim_whose_parts_had_no_runs_is_not_run_here() -> None:
    """verdicts.verdict calls it partially measured, nothing measured yet: shown as not run."""
    claim = SimpleNamespace(claim="C8", p_for_holm=float("nan"), p_against_holm=float("nan"))
    missing = [check(status=verdicts.MISSING, why_not="no runs of this condition",
                     outcome=verdicts.MISSING)]
    verdict, why = verdicts.verdict(claim, missing, {})
    assert verdict == verdicts.PARTIAL
    assert summary.shown_verdict(verdict, why) == summary.NOT_RUN
    # measured in part: its verdict stays, whatever it is
    supported = SimpleNamespace(claim="C8", p_for_holm=0.001, p_against_holm=1.0)
    verdict, why = verdicts.verdict(supported, [check(p_for=0.001), *missing], {})
    assert verdict == verdicts.PARTIAL and summary.shown_verdict(verdict, why) == verdict
    assert summary.shown_verdict(verdicts.REPRODUCED, "every check") == verdicts.REPRODUCED


def test_the_deciding_part_is_the_strongest_against_else_the_weakest_for() -> None:
    weak = check(test="weak", p_for=0.3, outcome=verdicts.INCONCLUSIVE)
    strong = check(test="strong", p_for=0.001, outcome=verdicts.REPRODUCED)
    against = check(test="against", p_for=1.0, p_against=0.01,
                    outcome=verdicts.CONTRADICTED)
    more = check(test="more against", p_for=1.0, p_against=0.0001,
                 outcome=verdicts.CONTRADICTED)
    untested = check(test="untested", status=verdicts.NOT_TESTABLE, p_for=float("nan"),
                     outcome=verdicts.NOT_TESTABLE)
    assert summary.deciding([strong, weak, untested])["test"] == "weak"
    assert summary.deciding([strong, against, more, weak])["test"] == "more against"
    assert summary.deciding([untested]) is None


def test_rests_on_names_the_differing_factors_and_the_untestable_parts() -> None:
    claim = {"claim": "C8", "differs": "VM acceleration", "testbed": verdicts.DIFFERS}
    parts = [check(), check(status=verdicts.NOT_TESTABLE,
                            why_not="a database's VM half under TCG: the emulated CPU ...")]
    said = summary.rests_on(claim, parts)
    assert said == ("this testbed differs in: VM acceleration; 1 of its 2 parts not testable: "
                    "a database's VM half under TCG")
    alike = summary.rests_on({"claim": "C8", "differs": "", "testbed": verdicts.LIKE}, parts)
    assert alike.startswith("a testbed like the thesis's in every factor")
    assert "no testbed of the thesis's" in summary.rests_on(
        {"claim": "C24", "differs": "", "testbed": verdicts.OURS}, [check(claim="C24")])


def test_missing_parts_are_counted_as_not_run_here() -> None:
    assert summary.shown_parts("1 reproduced, 4 missing, 3 not testable") == (
        "1 reproduced, 4 not run here, 3 not testable")


def row(**given: object) -> summary.Row:
    fields = {"claim": "C8", "where": "Fig 4.3", "headline": HEADLINES["C8"], "thesis": "x1",
              "ours": "x1.1 [1, 1.2]", "effect": "x1.1 [1, 1.2]", "part": "a | b",
              "verdict": "inconclusive", "parts": "1 inconclusive", "rests_on": "-",
              "figure": None}
    return summary.Row(**{**fields, **given})


def test_a_familys_table_escapes_pipes_and_links_the_claim_page() -> None:
    text = summary.document("demo", [({"campaign": "demo", "host": "h", "device_profile": "hdd",
                                       "cgroup_version": 1, "bfq": "sg=1",
                                       "io_control": "bfq"}, [row()])],
                            pd.DataFrame(columns=["campaign", "run_id", "folder", "status",
                                                  "reason"]), {}, {},
                            summary.Links(report="r/", root=""))
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(lines) == 2 and lines[0].count("|") == 8
    assert "[C8](r/claims/C8.html) Fig 4.3" in lines[1] and "a \\| b" in lines[1]
    assert lines[1].count(" | ") == 6


def test_the_readme_block_is_replaced_between_its_markers() -> None:
    text = f"# T\n\nFirst paragraph.\n\n{headline.START}\nold\n{headline.END}\n\nRest.\n"
    new = headline.replace_block(text, "| new |")
    assert headline.between_markers(new) == "| new |"
    assert new.startswith("# T\n\nFirst paragraph.\n\n") and new.endswith("\n\nRest.\n")
    assert headline.replace_block(new, "| new |") == new
    with pytest.raises(ValueError, match="README.md: no '<!-- summary:start -->'"):
        headline.replace_block("# T\n", "| new |")
    assert headline.between_markers("# T\n") is None


def test_the_readme_command_says_what_is_missing(tmp_path: Path, capsys) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# T\n")
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow" / "config.yaml").write_text("campaign: thesis-hdd\n")
    assert headline.main(["--readme", str(readme), "--root", str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert "no judged tables" in error and "make reproduce" in error
    assert readme.read_text() == "# T\n"


def test_run_folders_left_out_are_counted_and_named_by_campaign_and_run_id() -> None:
    def document(skipped: pd.DataFrame, noted: pd.DataFrame | None = None) -> str:
        return summary.document("q", [], skipped, {}, {}, summary.Links(report="r/", root=""),
                                noted=noted)

    none = pd.DataFrame(columns=["campaign", "run_id", "folder", "status", "reason"])
    assert "None: every run folder in data/raw was read." in document(none)
    skipped = pd.DataFrame([("q", "vm-0123456789ab", "data/raw/q/local/vm-0123456789ab",
                             "incomplete", "MANIFEST.json missing")], columns=none.columns)
    text = document(skipped, pd.DataFrame([("q", "vm-0123456789aa", "tenant 'b': ...")],
                                          columns=["campaign", "run_id", "note"]))
    assert "1 run folder(s) are not in the analysis" in text
    assert "git checkout -- <folder>" in text
    assert ("- q `vm-0123456789ab` (`data/raw/q/local/vm-0123456789ab`): incomplete: "
            "MANIFEST.json missing") in text
    assert "- q `vm-0123456789aa`: tenant 'b': ..." in text


def test_the_thesis_value_is_cut_to_its_number() -> None:
    from journalbench.report.claim_model import thesis_value

    assert thesis_value("none (Fig 3.7 shows KVM only): holds 70/30 is ours") == "none"
    assert thesis_value("holds 70/30 (Fig 3.7: ~70% / ~30%, p. 33)") == "holds 70/30"


def test_each_differing_factor_has_a_word() -> None:
    assert summary.differs_tags("what the weights divide, VM acceleration") == "weights, VM"
    assert summary.differs_tags("") == ""
    tags = [f.tag for f in scope.FACTORS.values()]
    assert len(set(tags)) == len(tags) and all(" " not in t for t in tags)


def test_verdicts_are_counted_with_their_testbed() -> None:
    rows = [row(verdict="contradicted", testbed=verdicts.LIKE),
            row(verdict="contradicted", testbed=verdicts.DIFFERS),
            row(verdict="inconclusive", testbed=verdicts.DIFFERS),
            row(verdict="not testable here", testbed="")]
    assert summary.count(rows) == (
        "2 contradicted (1 on a testbed like the thesis's, 1 where it differs), "
        "1 inconclusive (1 where it differs), 1 not testable here")


def test_a_campaign_of_many_families_counts_verdicts_not_claims() -> None:
    """Over 3 families the thesis's claims are 2, with 6 verdicts; ours is C24, named once
    (it read "the thesis's 6 claims" and "ours (C24, C24, C24)")."""
    family = [row(claim="C8", verdict="inconclusive"), row(claim="C9", verdict="contradicted"),
              row(claim="C24", verdict="reproduced")]
    found = [({"host": f"h{i}"}, family) for i in range(3)]
    text = summary.campaign_tally(found)
    assert text == ("3 families, each judging a claim once: the thesis's 2 claims, 6 verdicts: "
                    "3 contradicted, 3 inconclusive; ours (C24), 3 verdicts: 3 reproduced")
    assert summary.campaign_tally(found[:1]) == (
        "1 family; the thesis's 2 claims: 1 contradicted, 1 inconclusive; ours (C24): "
        "1 reproduced")
