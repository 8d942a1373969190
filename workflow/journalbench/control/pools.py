"""A campaign on a pool: the record of its lost members and of the runs dealt again.

The deal itself is a pure function of the plan and the members (plan/deal.py). What changes it
is a member lost: it stops taking runs (`lose`: dispatch marks a member it cannot reach after
its transport's attempts; `journalbench pool lose` one the user knows broken, e.g. one that
fails check-host), its runs not yet landed wait, and `journalbench pool redeal` deals them to
the other members by the same rule. The record, `data/raw/<campaign>/<pool>/pool.json`, keeps
which members are lost and which runs moved to whom, so every later step (Snakemake's lanes,
dispatch, status, a resume) reads one deal. It sits beside the pool's run folders, whose
host.json records the member that ran each: nothing landed moves or runs again.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench import runfolder
from journalbench.errors import ConfigError
from journalbench.plan import deal as deals
from journalbench.plan.campaign import PlannedRun

POOL = "pool.json"


@dataclass
class Record:
    """A pool's record in one campaign: lost members (name -> when and why) and the runs a
    re-deal moved (run id -> member), with what happened in order."""

    lost: dict[str, dict[str, str]] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)


def record_path(raw: Path, campaign: str, pool: str) -> Path:
    return raw / campaign / pool / POOL


def read(raw: Path, campaign: str, pool: str) -> Record:
    """The pool's record; an empty one when none was written (nothing lost)."""
    path = record_path(raw, campaign, pool)
    try:
        data = json.loads(path.read_text())
        return Record(dict(data["lost"]), dict(data["moved"]), list(data["events"]))
    except FileNotFoundError:
        return Record()
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{path}: not a pool record ({error}); restore it from git or "
                          "delete it with care: it says which runs moved") from None


@contextmanager
def changing(raw: Path, campaign: str, pool: str) -> Iterator[Record]:
    """The record, locked against this controller's other dispatches (a lock on the pool's
    folder: no lock file left anywhere), written back atomically."""
    path = record_path(raw, campaign, pool)
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        record = read(raw, campaign, pool)
        yield record
        tmp = path.with_name(f".{POOL}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"lost": record.lost, "moved": record.moved,
                                   "events": record.events}, indent=1, sort_keys=True) + "\n")
        tmp.rename(path)
    finally:
        os.close(folder)  # and the lock with it


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def moved(hosts: list[dict[str, Any]], campaign: str,
          raw: Path) -> dict[str, dict[str, str]]:
    """Per pool among `hosts`, the runs its re-deals moved (Plan.for_hosts' `moved`)."""
    return {pool: read(raw, campaign, pool).moved for pool in deals.members_of(hosts)}


def lose(raw: Path, campaign: str, pool: str, member: str, why: str) -> None:
    """Mark a member lost: it takes no more runs until it rejoins."""
    with changing(raw, campaign, pool) as record:
        if member not in record.lost:
            record.lost[member] = {"at": now(), "why": why}
            record.events.append(f"{now()} lost {member}: {why}")


def rejoin(raw: Path, campaign: str, pool: str, member: str) -> str:
    """A lost member takes its runs again (those not dealt to the others meanwhile)."""
    with changing(raw, campaign, pool) as record:
        if member not in record.lost:
            return f"pool {pool}: member {member} is not lost"
        del record.lost[member]
        record.events.append(f"{now()} rejoined {member}")
    return f"pool {pool}: member {member} takes its runs again"


def refuse_lost(raw: Path, run: PlannedRun) -> None:
    """A run dealt to a lost member waits: refused in one line saying how to go on."""
    lost = read(raw, run.campaign, run.host).lost.get(run.member)
    if lost is not None:
        raise ConfigError(
            f"{record_path(raw, run.campaign, run.host)}: member {run.member} of pool "
            f"{run.host} is lost since {lost['at']} ({lost['why']}): run {run.run_id} waits; "
            f"`journalbench pool redeal --campaign {run.campaign} --hosts HOSTS --member "
            f"{run.member}` deals its runs to the other members, `journalbench pool rejoin` "
            "takes it back")


def redeal(runs: list[PlannedRun], members: list[str], raw: Path, pool: str,
           member: str) -> tuple[int, dict[str, int]]:
    """Deal the runs of `member` (marked lost if it was not) that have not landed to the
    pool's other members, lost ones left out; `runs`: the pool's whole plan, as dealt now.
    A run whose folder holds anything (landed, or damaged: the user's to restore) stays.
    Returns how many moved, and to whom."""
    if member not in members:
        raise ConfigError(f"pool {pool}: no member {member} (members: {', '.join(members)})")
    mine = [run for run in runs if run.host == pool]
    if not mine:
        raise ConfigError(f"pool {pool}: no planned run")
    campaign = mine[0].campaign
    landed = {run.run_id for run in mine if runfolder.holds_files(run.folder(raw))}
    with changing(raw, campaign, pool) as record:
        record.lost.setdefault(member, {"at": now(), "why": "re-dealt by hand"})
        dealt = {run.run_id: run.member for run in mine}
        try:
            new = deals.redeal([(run.run_id, run.spec) for run in mine], dealt, members,
                               set(record.lost), landed, moving_from={member})
        except ValueError as error:
            raise ConfigError(f"{record_path(raw, campaign, pool)}: {error}") from None
        record.moved.update(new)
        counts: dict[str, int] = {}
        for target in new.values():
            counts[target] = counts.get(target, 0) + 1
        record.events.append(f"{now()} re-dealt {len(new)} runs of {member}: "
                             + ", ".join(f"{n} to {m}" for m, n in sorted(counts.items())))
    return len(new), counts


def members(hosts: list[dict[str, Any]], pool: str) -> list[str]:
    """The pool's members among `hosts`, in the pool file's order."""
    found = deals.members_of(hosts).get(pool)
    if not found:
        pools = ", ".join(sorted(deals.members_of(hosts))) or "none"
        raise ConfigError(f"hosts: no pool {pool} among them (pools: {pools})")
    return found


def lost_members(hosts: list[dict[str, Any]], campaign: str,
                 raw: Path) -> Mapping[str, dict[str, dict[str, str]]]:
    """Per pool, its lost members with when and why."""
    return {pool: read(raw, campaign, pool).lost for pool in deals.members_of(hosts)}
