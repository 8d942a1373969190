"""A campaign on a pool: each planned run dealt to one member, a pure function of the plan and
the members (a resume, or a `claims=`/`chunk=` part of the campaign, deals every run to the same
member).

The rule (`deal`): the runs are taken in the plan's order (repetition-major: every condition
once, then every condition again); each goes to a member among those that have had the fewest
runs of its condition so far, the one with the least estimated time dealt so far (ties: the
members' order in the pool file). So

- every condition's repetitions are spread over the members as evenly as they divide (a member
  has at most one more of a condition than another): each member is a complete block of the
  design, which the analysis treats it as (judge/blocked.py);
- the members' estimated times differ by at most about one run's: where a condition's
  repetitions do not divide evenly, the extra ones go to the members with the least time;
- each member's runs, in plan order, cycle through every condition before repeating one, as
  one host's do.

A run's estimated time is the plan's part of `journalbench status`'s (control/progress.py):
its warm-up and measured window plus the mean set-up of a run whose kind has not run yet. The
set-up that landed runs took is left out on purpose: it changes as runs land, and the deal must
not. A member that is lost has its runs not yet landed dealt again to the others by the same
rule (`redeal`), which the controller records (control/pools.py) so every later step reads the
same deal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from journalbench import window

# the set-up and teardown a run is estimated at before any of its kind landed
# (control/progress.py's fallback)
UNKNOWN_OVERHEAD_S = 10.0


def planned_seconds(spec: Mapping[str, Any]) -> float:
    """A run's estimated time from its spec alone: warm-up, window and the default set-up."""
    return window.warmup_of(dict(spec)) + float(spec["duration_s"]) + UNKNOWN_OVERHEAD_S


def condition_of(spec: Mapping[str, Any]) -> str:
    """What a run's repetitions share: its spec without the repetition (and the fields the
    agent adds)."""
    return json.dumps({k: v for k, v in spec.items()
                       if k not in ("repetition", "run_id", "campaign", "host")},
                      sort_keys=True, separators=(",", ":"))


def deal(runs: Sequence[tuple[str, Mapping[str, Any]]], members: Sequence[str],
         seconds: Callable[[Mapping[str, Any]], float] = planned_seconds,
         start: Mapping[str, float] | None = None) -> dict[str, str]:
    """run id -> member for `runs` ((run id, spec) in plan order); `start`: time the members
    already hold (a re-deal's survivors)."""
    if not members:
        raise ValueError("a deal needs at least one member")
    if len(set(members)) != len(members):
        raise ValueError(f"members must be unique, got {list(members)}")
    order = {member: index for index, member in enumerate(members)}
    load = {member: float((start or {}).get(member, 0.0)) for member in members}
    counts: dict[tuple[str, str], int] = {}
    dealt: dict[str, str] = {}
    for run_id, spec in runs:
        condition = condition_of(spec)
        fewest = min(counts.get((condition, m), 0) for m in members)
        chosen = min((m for m in members if counts.get((condition, m), 0) == fewest),
                     key=lambda m: (load[m], order[m]))
        dealt[run_id] = chosen
        counts[(condition, chosen)] = fewest + 1
        load[chosen] += seconds(spec)
    return dealt


def redeal(runs: Sequence[tuple[str, Mapping[str, Any]]], dealt: Mapping[str, str],
           members: Sequence[str], lost: Iterable[str], landed: Iterable[str],
           moving_from: Iterable[str] | None = None,
           seconds: Callable[[Mapping[str, Any]], float] = planned_seconds) -> dict[str, str]:
    """The runs of the members `moving_from` (default: every `lost` one) not yet `landed`,
    dealt by the same rule to the members not lost, each starting from the time it still has
    to run: run id -> new member (what the controller records). Landed runs stay where they
    are, whoever ran them."""
    lost, landed = set(lost), set(landed)
    source = lost if moving_from is None else set(moving_from)
    survivors = [member for member in members if member not in lost | source]
    if not survivors:
        raise ValueError("every member of the pool is lost: no member can take its runs")
    moving = [(run_id, spec) for run_id, spec in runs
              if dealt.get(run_id) in source and run_id not in landed]
    left = {member: 0.0 for member in survivors}
    for run_id, spec in runs:
        if dealt.get(run_id) in left and run_id not in landed:
            left[dealt[run_id]] += seconds(spec)
    return deal(moving, survivors, seconds, left)


def members_of(hosts: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """pool -> its members' names in the pool file's order; hosts not pooled are left out."""
    pools: dict[str, list[str]] = {}
    for host in hosts:
        if host.get("pool"):
            pools.setdefault(str(host["pool"]), []).append(str(host["name"]))
    return pools


def loads(runs: Sequence[tuple[str, Mapping[str, Any]]], dealt: Mapping[str, str],
          seconds: Callable[[Mapping[str, Any]], float] = planned_seconds) -> dict[str, float]:
    """Each member's estimated time under a deal."""
    found: dict[str, float] = {}
    for run_id, spec in runs:
        member = dealt[run_id]
        found[member] = found.get(member, 0.0) + seconds(spec)
    return found
