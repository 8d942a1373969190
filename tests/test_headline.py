"""Each claim's headline verdict from its testbed closest to the thesis's
(journalbench/judge/claims/headline.py) and how the report shows it
(journalbench/report/headline.py): on constructed judged tables whose answer is known."""

from __future__ import annotations

import pandas as pd

from journalbench.judge.claims import headline
from journalbench.judge.claims.verdicts import DIFFERS, LIKE, MEASURED, MISSING
from journalbench.report import headline as shown
from journalbench.report.summary import Links


def family(campaign: str, control: str = "bfq", device: str = "hdd", version: int = 1,
           host: str = "local") -> dict:
    return {"campaign": campaign, "host": host, "device_profile": device,
            "bfq": "sg=1" if control == "bfq" else "", "io_control": control,
            "hostnames": "box", "kernels": "6.18.1", "cgroup_version": version}


def judged(*families: tuple[dict, str, str, list[tuple[str, str, str]]]) -> dict[str, tuple]:
    """campaign -> (claims, checks) from (family, verdict, its factors, [(test, status,
    factors)]) of claim C4, each check with two runs of its own."""
    claims, checks = [], []
    for n, (labels, verdict, factors, parts) in enumerate(families):
        claims.append({**labels, "claim": "C4", "verdict": verdict, "why": "",
                       "testbed": DIFFERS if factors else LIKE, "factors": factors,
                       "changes": "", "parts": ""})
        for i, (test, status, differing) in enumerate(parts):
            checks.append({**labels, "claim": "C4", "test": test, "status": status,
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
    assert "1 of its 3 parts not measured there: no runs here" == shown.missing_text(best)


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


def test_the_headline_row_shows_its_testbed_and_every_other_testbeds_outcome() -> None:
    tables = judged(
        (family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
        (family("b", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]))
    lines, main = shown.lines(tables, everything)
    line = next(x for x in lines if x.claim == "C4")
    assert (line.verdict, line.testbed, line.kind) == ("reproduced", "b v2/iocost", LIKE)
    assert line.cells == {"a v1/bfq": "contradicted (differs: weights)"}
    assert main == ["a v1/bfq", "b v2/iocost"]  # in the order of their names
    assert shown.cells(line, main) == ["contradicted (differs: weights)", "headline", "—"]
    table = shown.compact_table(lines, main, Links(report="r/", root=""))
    head, _, *rows = table.splitlines()
    assert head.split(" | ")[4:] == ["a v1/bfq", "b v2/iocost", "Other testbeds"]
    row = next(r for r in rows if r.startswith("[C4]")).split(" | ")
    assert row[1] == "**reproduced**, like the thesis's"
    assert row[4:] == ["contradicted", shown.CHOSEN, "—"]  # factors: the chosen one's, left
    # a verdict from a testbed offered for it alone is marked in the others' cell
    only_c4 = judged(
        (family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
        (family("b", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]))
    picked, beds = shown.lines(only_c4, lambda c: "all" if c == "a" else {"C4"})
    assert beds == ["a v1/bfq"]
    table = shown.compact_table(picked, beds, Links(report="r/", root=""))
    row = next(r for r in table.splitlines() if r.startswith("[C4]")).split(" | ")
    assert row[4:] == ["contradicted", f"{shown.CHOSEN} b v2/iocost"]
    # the thesis's 23 claims counted with the testbed each verdict rests on
    assert "1 reproduced (1 on a testbed like the thesis's)" in shown.tally(lines)


def test_the_readme_table_gives_each_campaign_one_column_of_its_testbeds_verdicts() -> None:
    """Three testbeds of one campaign share a column ("a v1/bfq, v2/bfq, v2/iocost"), each
    testbed's verdict in that order, the chosen one marked; a campaign without the claim shows
    one dash; the legend names each campaign's host, kernel and device once."""
    tables = judged(
        (family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
        (family("a", version=2), "mixed", "weights", [("x", MEASURED, "weights")]),
        (family("a", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]),
        (family("b", "iocost", version=2, host="far"), "inconclusive", "",
         [("x", MEASURED, "")]))
    lines, main = shown.lines(tables, everything)
    assert main == ["a v1/bfq", "a v2/bfq", "a v2/iocost", "b v2/iocost"]
    table = shown.compact_table(lines, main, Links(report="r/", root=""))
    head, _, *rows = table.splitlines()
    assert head.split(" | ")[4:] == ["a v1/bfq, v2/bfq, v2/iocost", "b v2/iocost",
                                     "Other testbeds"]
    c4 = next(r for r in rows if r.startswith("[C4]")).split(" | ")
    chosen_on = "b" if lines[0].testbed.startswith("b") else "a"
    assert c4[4:6] == (["contradicted, mixed, inconclusive", shown.CHOSEN] if chosen_on == "b"
                       else ["contradicted, mixed, " + shown.CHOSEN, "inconclusive"])
    c1 = next(r for r in rows if r.startswith("[C1]")).split(" | ")
    assert c1[4:] == ["—", "—", "—"]
    text = shown.short_legend(tables, lines, main)
    assert text.startswith("Testbeds: a: host `local`, Linux 6.18, device hdd; b: host `far`, "
                           "Linux 6.18, device hdd; vN/x: cgroup version N, I/O control x."), text
    on_one = judged((family("a"), "contradicted", "weights", [("x", MEASURED, "weights")]),
                    (family("b", "iocost", version=2), "reproduced", "", [("x", MEASURED, "")]))
    found, beds = shown.lines(on_one, everything)
    assert shown.short_legend(on_one, found, beds).startswith(
        "Testbeds: a, b: host `local`, Linux 6.18, device hdd; vN/x:")  # alike: named once


def test_a_claim_on_several_devices_is_counted_per_device() -> None:
    """C24's testbeds span the fast disk and the emulated HDD: its row and the summary say
    where it holds and where not, each device's verdicts counted."""
    from journalbench.report.headline import Line, by_device, others_text

    line = Line("C24", "ours", "x", "contradicted", testbed="hdd-a",
                cells={"n1": "reproduced", "n2": "reproduced", "n3": "mixed",
                       "h1": "contradicted (differs: weights)"},
                devices={"hdd-a": "hdd", "n1": "native", "n2": "native", "n3": "native",
                         "h1": "hdd"})
    assert by_device(line) == "on hdd 2 contradicted; on native 2 reproduced, 1 mixed"
    assert others_text(line) == ("4 testbeds: on native 2 reproduced, 1 mixed; "
                                 "on hdd 1 contradicted")
    one = Line("C8", "x", "x", "mixed", testbed="a", cells={"b": "mixed"},
               devices={"a": "hdd", "b": "hdd"})
    assert by_device(one) == ""
