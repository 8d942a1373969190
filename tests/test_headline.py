"""Each claim's headline verdict from its testbed closest to the thesis's
(journalbench/judge/claims/headline.py) and how the report shows it
(journalbench/report/headline.py): on constructed judged tables whose answer is known."""

from __future__ import annotations

import pandas as pd

from journalbench.judge.claims import headline
from journalbench.judge.claims.verdicts import DIFFERS, LIKE, MEASURED, MISSING
from journalbench.report import claim_model
from journalbench.report import headline as shown
from journalbench.report.summary import Links


def family(campaign: str, control: str = "bfq", device: str = "hdd", version: int = 1,
           host: str = "local") -> dict:
    return {"campaign": campaign, "host": host, "device_profile": device,
            "bfq": "sg=1" if control == "bfq" else "", "io_control": control,
            "iocost_qos": "", "hostnames": "box", "kernels": "6.18.1", "cgroup_version": version}


def judged(*families: tuple[dict, str, str, list[tuple[str, str, str]]]) -> dict[str, tuple]:
    """campaign -> (claims, checks) from (family, verdict, its factors, [(test, status,
    factors)]) of claim C4, each check with two runs of its own."""
    claims, checks = [], []
    for n, (labels, verdict, factors, parts) in enumerate(families):
        claims.append({**labels, "claim": "C4", "verdict": verdict, "why": "",
                       "testbed": DIFFERS if factors else LIKE, "factors": factors,
                       "differs": "what the weights divide" if factors else "",
                       "changes": "", "parts": ""})
        for i, (test, status, differing) in enumerate(parts):
            checks.append({**labels, "claim": "C4", "test": test, "part": test,
                           "starved_runs": "", "excluded_runs": "", "status": status,
                           "outcome": "reproduced", "p_for": 0.01, "p_against": 0.9,
                           "effect": 1.5, "low": 1.4, "high": 1.6, "kind": "ratio",
                           "thesis": "> x1", "ours_a": 3.0, "ours_b": 2.0, "unit": "MB/s",
                           "column": "throughput_mb_s", "why_not": "",
                           "runs": "" if status == MISSING else f"r{n}{i}a r{n}{i}b",
                           "factors": differing, "dropped": "", "legacy_factors": ""})
    claims_, checks_ = pd.DataFrame(claims), pd.DataFrame(checks)
    return {c: (claims_[claims_["campaign"] == c], checks_[checks_["campaign"] == c])
            for c in claims_["campaign"].unique()}


def everything(campaign: str) -> str:
    return "all"


def chosen(tables: dict[str, tuple]) -> tuple[headline.Candidate, list[headline.Candidate]]:
    claims = pd.concat([t[0] for t in tables.values()])
    checks = pd.concat([t[1] for t in tables.values()])
    return headline.closest(claims, checks, everything)["C4"]


def test_the_closest_testbed_has_every_part_measured_then_the_fewest_factors() -> None:
    tables = judged(
        (family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
        (family("b", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]),
        # like the thesis's too, but its second part has no runs there
        (family("c", "iocost", version=2), "partially measured", "",
         [("x", MEASURED, ""), ("y", MISSING, "")]))
    best, others = chosen(tables)
    assert best.family["campaign"] == "b" and best.claim["verdict"] == "reproduced"
    assert [o.family["campaign"] for o in others] == ["a", "c"]
    assert "its one part measured; differs in 0 factors" in headline.why_chosen(best, others)


def test_ties_go_to_the_testbed_with_more_runs() -> None:
    tables = judged(
        (family("a"), "reproduced", "weights", [("x", MEASURED, "weights")]),
        (family("b"), "inconclusive", "weights",
         [("x", MEASURED, "weights"), ("y", MEASURED, "weights")]))
    best, _ = chosen(tables)
    assert best.family["campaign"] == "b" and best.runs == 4


def test_ties_go_to_the_testbed_with_more_seconds_measured_before_more_runs() -> None:
    """Two testbeds alike in parts and factors: a's 4 runs of 20 s (80 s) against b's 2 runs
    of 60 s (120 s), its two parts on the same runs: b, by the seconds; a, by runs alone."""
    tables = judged(
        (family("a"), "reproduced", "weights",
         [("x", MEASURED, "weights"), ("y", MEASURED, "weights")]),
        (family("b"), "inconclusive", "weights",
         [("x", MEASURED, "weights"), ("y", MEASURED, "weights")]))
    claims = pd.concat([t[0] for t in tables.values()])
    checks = pd.concat([t[1] for t in tables.values()]).reset_index(drop=True)
    checks.loc[checks["campaign"] == "b", "runs"] = "r10a r10b"
    seconds = {("a", run): 20.0 for run in ("r00a", "r00b", "r01a", "r01b")}
    seconds |= {("b", run): 60.0 for run in ("r10a", "r10b")}
    best, others = headline.closest(claims, checks, everything, seconds)["C4"]
    assert best.family["campaign"] == "b" and (best.runs, best.seconds) == (2, 120.0)
    assert (others[0].runs, others[0].seconds) == (4, 80.0)
    assert "2 runs (2 min measured)" in headline.why_chosen(best, others)
    assert headline.closest(claims, checks, everything)["C4"][0].family["campaign"] == "a"


def test_without_a_complete_testbed_the_most_parts_measured_wins() -> None:
    tables = judged(
        (family("a"), "partially measured", "weights",
         [("x", MEASURED, "weights"), ("y", MEASURED, "weights"), ("z", MISSING, "")]),
        (family("b", "iocost", version=2), "partially measured", "",
         [("x", MEASURED, ""), ("y", MISSING, ""), ("z", MISSING, "")]))
    best, _ = chosen(tables)
    assert best.family["campaign"] == "a"
    assert claim_model.missing_text(best.checks) == "1/3 parts not measured: no runs here"


def test_a_campaign_offers_only_the_claims_its_file_names() -> None:
    tables = judged((family("a"), "reproduced", "weights", [("x", MEASURED, "weights")]),
                    (family("b", "iocost", version=2), "reproduced", "",
                     [("x", MEASURED, "")]))
    claims = pd.concat([t[0] for t in tables.values()])
    checks = pd.concat([t[1] for t in tables.values()])
    only_a = headline.closest(claims, checks, lambda c: "all" if c == "a" else {"C24"})
    best, others = only_a["C4"]
    assert best.family["campaign"] == "a" and others == []
    assert headline.closest(claims, checks, lambda c: set())["C4"] == (None, [])


def readme_table(model: claim_model.Model) -> list[list[str]]:
    """The README's table as rows of cells (its pipes unpadded)."""
    from journalbench.report.render import environment

    text = environment().get_template("headline.md.j2").module.table(
        model, Links(report="r/", root=""), claim_model.thesis_value, "|")
    return [line.split("|") for line in str(text).strip().splitlines()]


def test_the_headline_row_shows_its_testbed_and_a_symbol_per_main_testbed() -> None:
    tables = judged(
        (family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
        (family("b", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]))
    model = claim_model.build(tables, everything)
    line = model.of("C4")
    assert (line.verdict, line.testbed, line.kind) == ("reproduced", "b v2/iocost", LIKE)
    assert line.cells == {"a v1/bfq": "contradicted (differs: weights)"}
    assert model.main == ["a v1/bfq", "b v2/iocost"]  # in the order of their names
    assert line.marks(model.main) == ["✘", "**✔**"]
    head, _, *rows = readme_table(model)
    assert head == ["Claim", "Verdict", "Headline testbed", "Ours measures", "Ours, 95% CI",
                    "Thesis", "Differs in", "Caveat", "a v1/bfq", "b v2/iocost"]
    row = next(r for r in rows if r[0].startswith("[C4]"))
    assert row[0] == "[C4](r/claims/C4.html)"
    assert row[1] == "reproduced"  # one word
    assert row[2] == "[b v2/iocost](r/claims/C4.html#b-v2-iocost)"
    assert row[3] == "MB/s ratio, x"  # the unit and kind, then the check
    assert row[4:7] == ["x1.5 [1.4, 1.6]", "> x1", "none"]
    assert row[7] == "[2 runs](r/runs/C4.csv)"
    assert row[8:] == ["✘", "**✔**"]
    c1 = next(r for r in rows if r[0].startswith("[C1]"))
    assert c1[1:3] == ["unrun", "—"] and c1[8:] == ["—", "—"]
    # a verdict from a testbed offered for it alone: no column of its own
    picked = claim_model.build(tables, lambda c: "all" if c == "a" else {"C4"})
    assert picked.main == ["a v1/bfq"]
    assert picked.of("C4").testbed == "b v2/iocost"
    assert picked.of("C4").marks(picked.main) == ["✘"]
    # the thesis's 23 claims counted with the testbed each verdict rests on
    assert "1 reproduced (1 on a testbed like the thesis's)" in shown.tally(model.claims)


def test_the_caveat_names_the_runs_the_parts_not_measured_and_what_the_weights_divided(
        ) -> None:
    """C4 depends on the weights: the judge's `division` of its testbed joins its caveat;
    a testbed without one (before the judge wrote it) says the runs and parts alone."""
    tables = judged(
        (family("a"), "partially measured", "weights",
         [("x", MEASURED, "weights"), ("y", MISSING, "")]))
    claims, checks = tables["a"]
    plain = claim_model.build(tables, everything).of("C4")
    assert plain.caveat == "2 runs; 1/2 parts not measured: no runs here"
    divided = claims.assign(division_short="iocost divided nothing (80/20 readers 0.50)",
                            division_word="nothing")
    model = claim_model.build({"a": (divided, checks)}, everything,
                              seconds={("a", "r00a"): 60.0, ("a", "r00b"): 60.0})
    assert model.of("C4").caveat == (
        "2 runs (2 min); 1/2 parts not measured: no runs here; iocost divided nothing (80/20 "
        "readers 0.50)")
    from journalbench.judge.claims import division

    even, lopsided = division.Mean(0.5, 0.45, 0.55, 3), division.Mean(0.9, 0.85, 0.95, 3)
    heavy = division.Mean(0.76, 0.66, 0.86, 3)
    assert division.Division("bfq", "w", heavy, 0.8).short() == (
        "bfq divides (80/20 readers 0.76); time or bytes not measured")
    assert division.Division("bfq", "w", heavy, 0.8, (
        division.Sizes("random", "128 KiB against 8 KiB", even, lopsided),)).short() == (
        "bfq divides (80/20 readers 0.76); at equal weights random readers: time, sequential "
        "readers: not measured")
    assert division.not_measured_short("bfq") == "bfq's division not measured here"


def test_what_ours_measures_is_said_from_the_check() -> None:
    check = {"kind": "paired", "unit": " MB/s", "column": "throughput_mb_s",
             "test": "shared-journal: MB/s of the 30% 64 KiB writer over the 70% 16 KiB "
                     "writer, same runs"}
    assert claim_model.measure_text(check) == (
        "MB/s ratio, shared-journal: 30% 64 KiB writer / 70% 16 KiB writer")
    share = {"kind": "share", "unit": "", "column": "achieved_share",
             "test": "vm: the 70% writer's share beside a 30% writer"}
    assert claim_model.measure_text(share) == "share, vm: 70% writer's share beside a 30% writer"


def test_every_verdict_has_one_word_and_a_symbol() -> None:
    from journalbench.judge.claims.verdicts import VERDICTS
    from journalbench.report.summary import NOT_RUN

    for verdict in (*VERDICTS, NOT_RUN):
        assert " " not in claim_model.WORDS[verdict] and claim_model.SYMBOLS[verdict]
    assert len(set(claim_model.WORDS.values())) == len(claim_model.WORDS)


def test_a_claim_on_several_devices_is_counted_per_device() -> None:
    """C4's testbeds span the fast disk and the emulated HDD: the summary says where it holds
    and where not, each device's verdicts counted."""
    tables = judged(
        (family("h", version=2, device="hdd"), "contradicted", "", [("x", MEASURED, "")]),
        (family("n1", device="native"), "reproduced", "weights", [("x", MEASURED, "weights")]),
        (family("n2", device="native"), "reproduced", "weights", [("x", MEASURED, "weights")]),
        (family("n3", device="native"), "mixed", "weights", [("x", MEASURED, "weights")]),
        (family("h1", device="hdd"), "contradicted", "weights", [("x", MEASURED, "weights")]))
    line = claim_model.build(tables, everything).of("C4")
    assert line.testbed == "h v2/bfq"
    assert shown.by_device(line) == "on hdd 2 contradicted; on native 2 reproduced, 1 mixed"
    assert shown.others_text(line) == ("4 testbeds: on hdd 1 contradicted; "
                                       "on native 2 reproduced, 1 mixed")


def test_the_legend_names_each_campaigns_host_kernel_and_device_once() -> None:
    tables = judged(
        (family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
        (family("a", version=2), "mixed", "weights", [("x", MEASURED, "weights")]),
        (family("b", "iocost", version=2, host="far"), "inconclusive", "",
         [("x", MEASURED, "")]))
    model = claim_model.build(tables, everything)
    assert model.main == ["a v1/bfq", "a v2/bfq", "b v2/iocost"]
    text = shown.short_legend(tables, model.claims, model.main)
    assert text.startswith("Testbeds: a: host `local`, Linux 6.18, device hdd; b: host `far`, "
                           "Linux 6.18, device hdd; vN/x: cgroup version N, I/O control x."), text
    on_one = judged((family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
                    (family("b", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]))
    found = claim_model.build(on_one, everything)
    assert shown.short_legend(on_one, found.claims, found.main).startswith(
        "Testbeds: a, b: host `local`, Linux 6.18, device hdd; vN/x:")  # alike: named once


def test_the_model_asks_each_campaign_once_and_takes_the_moves_it_is_given() -> None:
    """claim_model.build asks `eligible` (plan.headline_claims, which hashes the campaign file
    and the planning code) once per campaign, not per claim row; the headlines the latest rules
    moved are the same whether found from its own closest() or given by the combined ledger
    (report/ledgers.py), and a given list is the model's."""
    tables = judged((family("a"), "reproduced", "", [("t", MEASURED, "")]),
                    (family("b", version=2), "contradicted", "weights", [("t", MEASURED, "w")]))
    for campaign, (claims, checks) in tables.items():  # before the latest rules: b was closer
        tables[campaign] = (claims.assign(
            verdict_before=claims["verdict"], testbed_before=claims["testbed"],
            factors_before=claims["factors"]),
            checks.assign(status_before=MISSING if campaign == "a" else MEASURED,
                          outcome_before=checks["outcome"]))
    asked: list[str] = []

    def eligible(campaign: str) -> str:
        asked.append(campaign)
        return "all"

    model = claim_model.build(tables, eligible)
    assert sorted(asked) == ["a", "b"]
    claims, checks = claim_model.combined(tables)
    found = headline.moves(claims, checks, everything)
    assert [claim for claim, _, _ in found] == ["C4"]  # a headline did move: b -> a
    assert model.moved == found
    assert headline.moves(claims, checks, everything,
                          now=headline.closest(claims, checks, everything)) == found
    given = [("C4", "before", "now")]
    assert claim_model.build(tables, everything, moved=given).moved is given
