"""Each claim's headline verdict: the verdict of its testbed closest to the thesis's, over every
campaign that offers its testbeds for the claim (a campaign file's `headline`: "all", or a list
of claims), with every other such testbed's verdict beside it.

Closest, in order (fixed 2026-11-27, before the headline was built from it):
1. all its parts measured (none missing or not testable there), else the most parts measured;
2. the fewest factors the claim depends on in which the testbed differs from the thesis's
   (scope.py, after the measured drops of contrasts.py), over its measured parts;
3. the most seconds measured behind the claim's parts (the sum of their runs' windows), then
   the most runs; then the family's name, so the choice is one.

Rule 3 counted runs alone until 2026-11-27, when it became seconds, before thesis-nested's
verdicts were first computed: a count weighs evidence fairly only between equal windows, and
thesis-nested's runs (60 s, the span of the thesis's elapsed-time figures), sized by
`journalbench power`, are fewer than thesis-v2's 20 s runs of the same conditions. Of the
campaigns shipped then it moved no headline (24 claims, with and without the seconds).

A testbed is a family of the ledger (campaign, host, device profile, cgroup version, BFQ
setting, I/O control).
A family with no run of the claim offers nothing for it.

The ranking is not changed by rules of judging; what it headlines is. `moves` lists each
claim whose headline testbed or verdict the latest rules (rules.LATEST) moved: the same ranking
over the tables as judged before them (each claim's and check's `*_before` columns) against
today's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from journalbench.judge import tuples
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.verdicts import (
    ALL_RULES,
    BEFORE,
    FAMILY,
    MEASURED,
    MISSING,
    in_force_factors,
    qualified,
)
from journalbench.plan.campaign import named_testbeds

Eligible = Callable[[str], "str | set[str]"]  # campaign -> "all" or the claims it offers
Seconds = Mapping[tuple[str, str], float]  # (campaign, run id) -> the run's window, s
# short names of BFQ's tunables in a testbed's label
TUNABLE_WORDS = {"strict_guarantees": "sg", "slice_idle_us": "idle", "low_latency": "ll"}


@dataclass
class Candidate:
    family: dict[str, Any]  # FAMILY's values
    label: str  # a testbed's name for a reader ("thesis-v2 v2/iocost hdd")
    claim: dict[str, Any]  # its row of the claims table
    checks: list[dict[str, Any]] = field(repr=False)
    parts: int = 0
    measured: int = 0
    factors: list[str] = field(default_factory=list)
    runs: int = 0
    seconds: float = 0.0  # the runs' windows summed (0 where not given: runs decide)

    @property
    def complete(self) -> bool:
        return self.parts > 0 and self.measured == self.parts

    def rank(self) -> tuple:
        """Smaller is closer (module doc)."""
        return (not self.complete, -self.measured, len(self.factors), -self.seconds,
                -self.runs, self.label)

    def unmeasured(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if c["status"] != MEASURED]


def label(family: Mapping[str, Any], claims: pd.DataFrame) -> str:
    """A family's name as a testbed: its campaign, cgroup version and I/O control, and what
    tells it from the campaign's other families (device profile, BFQ setting, host)."""
    campaign = claims[claims["campaign"] == family["campaign"]]
    versions = family.get("cgroup_version") or "?"
    words = [str(family["campaign"]), f"v{versions}/{family['io_control']}"]
    if campaign["device_profile"].nunique() > 1:
        words.append(str(family["device_profile"]))
    settings = campaign.loc[campaign["io_control"] == "bfq", "bfq"]
    if settings.nunique() > 1 and family["io_control"] == "bfq":
        named = [t for t in named_testbeds(str(family["campaign"]))
                 if t.get("io_control") == "bfq"]
        if named:  # the campaign file names its BFQ testbeds: "v2/bfq-time" beside "v2/bfq"
            words[1] = f"v{versions}/{testbed_name(family, named) or 'bfq'}"
        else:  # the tunables whose values tell the campaign's BFQ settings apart
            parsed = [tunables(str(setting)) for setting in settings.unique()]
            telling = {key for one in parsed for key in one
                       if len({other.get(key) for other in parsed}) > 1}
            words.append(" ".join(f"{TUNABLE_WORDS.get(k, k)}={v}"
                                  for k, v in tunables(str(family["bfq"])).items()
                                  if k in telling))
    if campaign["host"].nunique() > 1:
        words.append(f"@{family['host']}")
    return " ".join(words)


def testbed_name(family: Mapping[str, Any], named: list[dict[str, Any]]) -> str | None:
    """The name of the campaign file's testbed whose cgroup version (if it names one) and BFQ
    tunables the family's runs read back (None: the campaign's unnamed BFQ testbed)."""
    read_back = tunables(str(family["bfq"]))
    for testbed in named:
        if (str(testbed.get("cgroup_version", family.get("cgroup_version")))
                == str(family.get("cgroup_version"))
                and all(read_back.get(k) == str(v) for k, v in testbed.get("bfq", {}).items())):
            return str(testbed["name"])
    return None


def tunables(setting: str) -> dict[str, str]:
    """A BFQ setting's tunables ("low_latency=0 max_budget=1000000"), in its order."""
    return dict(part.split("=", 1) for part in str(setting).split() if "=" in part)


def as_before(claims: pd.DataFrame, checks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claims and checks as judged before the latest rules (their `*_before` columns)."""
    claims = claims.assign(verdict=claims["verdict_before"], testbed=claims["testbed_before"],
                           factors=claims["factors_before"])
    return claims, checks.assign(status=checks["status_before"],
                                 outcome=checks["outcome_before"])


def candidates(claims: pd.DataFrame, checks: pd.DataFrame, eligible: Eligible,
               seconds: Seconds | None = None,
               active: frozenset[str] = ALL_RULES) -> dict[str, list[Candidate]]:
    """Per claim, the testbeds (families of offering campaigns) with a run of it, under the
    rules `active` (the factors a check's testbed differs in)."""
    by_family: dict[tuple, list[dict]] = {}
    for check in tuples.records(checks):
        by_family.setdefault((*(check[k] for k in FAMILY), check["claim"]), []).append(check)
    found: dict[str, list[Candidate]] = {claim: [] for claim in CLAIMS}
    offers = {c: eligible(c) for c in claims["campaign"].unique()}
    labels: dict[tuple, str] = {}  # a family's label, made once for its claims (FAMILY holds
    # every field `label` reads)
    for row in tuples.records(claims):
        offer = offers[row["campaign"]]
        if offer != "all" and row["claim"] not in offer:
            continue
        mine = by_family.get((*(row[k] for k in FAMILY), row["claim"]), [])
        runs = {r for c in mine for r in str(c.get("runs") or "").split()}
        if not runs or all(c["status"] == MISSING for c in mine):
            continue
        measured = [c for c in mine if c["status"] == MEASURED]
        factors = list(dict.fromkeys(f for c in (measured or mine)
                                     for f in in_force_factors(c, active)))
        window = sum((seconds or {}).get((str(row["campaign"]), run), 0.0) for run in runs)
        family = tuple(row[k] for k in FAMILY)
        if family not in labels:
            labels[family] = label(row, claims)
        found[row["claim"]].append(Candidate(
            {k: row[k] for k in FAMILY}, labels[family], row, mine, len(mine),
            len(measured), factors, len(runs), float(window)))
    return found


def closest(claims: pd.DataFrame, checks: pd.DataFrame, eligible: Eligible,
            seconds: Seconds | None = None, active: frozenset[str] = ALL_RULES
            ) -> dict[str, tuple[Candidate | None, list[Candidate]]]:
    """Per claim: (its headline testbed, the others in order of closeness); (None, []) where
    no offering campaign ran it."""
    out: dict[str, tuple[Candidate | None, list[Candidate]]] = {}
    for claim, found in candidates(claims, checks, eligible, seconds, active).items():
        ranked = sorted(found, key=Candidate.rank)
        out[claim] = (ranked[0], ranked[1:]) if ranked else (None, [])
    return out


def why_chosen(chosen: Candidate, others: list[Candidate]) -> str:
    """Why this testbed gives the headline, in a line."""
    parts = ("its one part measured" if chosen.complete and chosen.parts == 1
             else f"all {chosen.parts} parts measured" if chosen.complete
             else f"{chosen.measured} of {chosen.parts} parts measured")
    scope = CLAIMS[chosen.claim["claim"]].scope
    differs = (f"differs in {len(chosen.factors)} factor{'s' if len(chosen.factors) != 1 else ''}"
               if scope else "no thesis testbed to differ from")
    runs = (f"{chosen.runs} runs ({chosen.seconds / 60:.0f} min measured)" if chosen.seconds
            else f"{chosen.runs} runs")
    return (f"{parts}; {differs}; {runs}; "
            f"{len(others)} other testbed{'' if len(others) == 1 else 's'}")


def headline_text(chosen: Candidate | None) -> str:
    """A headline as a rule change lists it: its verdict with its testbed, on which family."""
    if chosen is None:
        return "no testbed"
    row = chosen.claim
    return (f"{qualified(row['verdict'], row.get('testbed') or '', chosen.factors)} on "
            f"{chosen.label}")


def moves(claims: pd.DataFrame, checks: pd.DataFrame, eligible: Eligible,
          seconds: Seconds | None = None,
          now: Mapping[str, tuple[Candidate | None, list[Candidate]]] | None = None
          ) -> list[tuple[str, str, str]]:
    """(claim, headline before the latest rules, headline now) of every claim whose headline
    testbed, verdict or factors those rules moved; none where the tables lack the `*_before`
    columns (judged before they existed). `now`: closest() of the same tables, where the
    caller made it already."""
    if "verdict_before" not in claims or "status_before" not in checks:
        return []
    if now is None:
        now = closest(claims, checks, eligible, seconds)
    then = closest(*as_before(claims, checks), eligible, seconds, BEFORE)
    found = []
    for claim, (chosen, _) in now.items():
        old = then.get(claim, (None, []))[0]
        if headline_text(old) != headline_text(chosen):
            found.append((claim, headline_text(old), headline_text(chosen)))
    return found
