"""`journalbench dispatch`: one planned run of a campaign on its host, landing atomically.

Every host, this machine included, is driven the same way: `run_remote` over the host's
transport (SSH, or Local for `transport: local`). The run is fetched into `<run_id>.partial` next
to its final folder and renamed only once its manifest verifies, so `data/raw` only ever holds
complete runs or nothing. Snakemake calls this once per missing run; it also prints campaign
progress and an ETA.

On a pool (control/pools.py) the run goes to the member it is dealt to and lands under the
pool's name; a member that cannot be reached is marked lost and its runs wait (refused at
once) until `journalbench pool redeal` deals them to the others or `pool rejoin` takes it back.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from journalbench import runfolder
from journalbench.control import pools, progress
from journalbench.control.hosts import load_hosts
from journalbench.control.progress import eta_seconds
from journalbench.control.runremote import run_remote
from journalbench.control.transport import CommandFailed, CommandTimeout, TransportError
from journalbench.errors import AgentError
from journalbench.plan import deal as deals
from journalbench.plan import plan as plans
from journalbench.plan.campaign import PlannedRun, missing, unlanded


def hms(seconds: float) -> str:
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m{int(seconds % 60):02d}s"


def folders(runs: list[PlannedRun], left: list[PlannedRun],
            raw: Path) -> tuple[list[Path], list[Path]]:
    """The landed runs of the campaign (those not `left`), and every other landed run of its
    hosts (each kind of run's set-up time, whatever its campaign)."""
    campaigns, hosts = {r.campaign for r in runs}, {r.host for r in runs}
    missing_ids = {(r.host, r.run_id) for r in left}
    own = [r.folder(raw) for r in runs if (r.host, r.run_id) not in missing_ids]
    others = [f for f in raw.glob("*/*/*")
              if f.parent.name in hosts and f.parent.parent.name not in campaigns]
    return own, others


def progress_line(campaign: str, runs: list[PlannedRun], left: list[PlannedRun],
                  raw: Path) -> str:
    eta = eta_seconds(left, *folders(runs, left, raw))
    return (f"campaign {campaign}: {len(runs) - len(left)}/{len(runs)} runs done, "
            f"{len(left)} left, ETA {hms(eta)}")


def on_device(runs: list[PlannedRun], device: str | None) -> list[PlannedRun]:
    """The runs on the device profile `device` instead of their own (None: their own)."""
    return [replace(r, spec={**r.spec, "device": device}) for r in runs] if device else runs


def devices_of(runs: list[PlannedRun]) -> str:
    """The device profiles the runs ask, named ("the host's" for its own disk)."""
    return ", ".join(sorted({str(r.spec.get("device", "the host's")) for r in runs}))


def planned_seconds(runs: list[PlannedRun], landed: list[progress.Overheads],
                    device: str | None = None) -> float:
    """The whole plan's wall time, done or not (on `device` instead of the campaign's own),
    from the overheads of the landed runs (`landed`: the campaign's, then its hosts' other
    campaigns', as `folders` gives them)."""
    return progress.estimate(on_device(runs, device), landed)


def planned_line(runs: list[PlannedRun], left: list[PlannedRun], raw: Path,
                 device: str | None) -> str:
    """The whole plan's wall time, done or not; on `device` instead of the campaign's own."""
    landed = [progress.overheads(found) for found in folders(runs, left, raw)]
    where = device or devices_of(runs)
    return f"planned: {len(runs)} runs, {hms(planned_seconds(runs, landed, device))} on {where}"


def plain_modes(folder: Path) -> None:
    """A run's files readable data, never executable (a tool's output can be created 0755:
    fio's JSON, the database logs): files 0644, folders 0755, as git keeps them (100644)."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def land(partial: Path, final: Path) -> None:
    plain_modes(partial)
    problems = runfolder.manifest_problems(partial)
    if problems:
        raise AgentError(f"run folder {partial} did not verify: {problems[0]}")
    if final.exists():  # Snakemake makes the output's parent folder before the job runs
        if any(final.iterdir()):
            raise AgentError(f"{final}: exists and is not empty; refusing to overwrite a run")
        final.rmdir()
    partial.rename(final)


def refuse_landed(final: Path) -> None:
    """Refuse to measure a run whose folder holds files, before the experiment starts: a
    landed run is never measured again, and a damaged one is restored or deleted by the user
    (no data lost); land() checks again, for a run that landed meanwhile."""
    if not runfolder.holds_files(final):
        return
    why = runfolder.first_damage(final)
    if why is None:
        raise AgentError(f"{final}: the run has landed; refusing to measure it again")
    raise AgentError(f"{runfolder.damage_line(final, why)}; refusing to measure over it")


def lane_path(host: str) -> Path:
    return Path(tempfile.gettempdir()) / f"journalbench-lane-{host}.lock"


def still_at(path: Path, handle: IO[str]) -> bool:
    """Whether the file `handle` has open (and locked) is still the one at `path`: a lane's
    holder removes the file before it lets go, so a waiter may lock one no longer there."""
    try:
        held = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(handle.fileno())
    return (held.st_dev, held.st_ino) == (mine.st_dev, mine.st_ino)


@contextmanager
def controller_lane(host: str) -> Iterator[None]:
    """Wait for this controller's other run on the same host (Snakemake's lane resources do
    the same when the profile is in use; this holds however Snakemake is invoked).

    The lock file is removed by its holder, before it lets go, so that no host leaves one
    behind in the temporary folder; a waiter that locked the file after it was removed (or
    replaced) finds it no longer at its path and locks the one there instead."""
    path = lane_path(host)
    while True:
        handle = path.open("a")
        fcntl.flock(handle, fcntl.LOCK_EX)
        if still_at(path, handle):
            break
        handle.close()
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        handle.close()


def clear_lane(host: str) -> bool:
    """Remove the lane lock a killed controller left behind (a holder removes its own), unless a
    controller holds the lane now; whether one was removed (`journalbench teardown`)."""
    path = lane_path(host)
    try:
        handle = path.open("r")
    except FileNotFoundError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a controller runs on the host
        if not still_at(path, handle):
            return False  # removed or replaced meanwhile: another controller's
        path.unlink()  # while locked, as a holder does
        return True


def planned_runs(campaign: str, hosts: list[dict[str, Any]], raw: Path, claims: str = "",
                 chunk: str = "", plans_folder: Path = plans.PLAN_DIR) -> list[PlannedRun]:
    """The campaign's runs on `hosts` (its plan kept in `plans_folder`), each pool's dealt as
    its record says (re-deals)."""
    plan = plans.current(campaign, plans_folder)
    return plan.for_hosts(hosts, claims, chunk, pools.moved(hosts, plan.campaign, raw))


def pool_lines(runs: list[PlannedRun], left: list[PlannedRun], hosts: list[dict[str, Any]],
               raw: Path) -> list[str]:
    """Per pool: a line per member (runs done and left, its ETA, or lost and since when) and
    the pool's (its ETA: its slowest member's, the members running in parallel)."""
    lines = []
    campaign = runs[0].campaign if runs else ""
    lost = pools.lost_members(hosts, campaign, raw)
    for pool, members in deals.members_of(hosts).items():
        mine = [r for r in runs if r.host == pool]
        mine_left = [r for r in left if r.host == pool]
        landed = folders(mine, mine_left, raw)
        etas = []
        for member in members:
            theirs = [r for r in mine if r.member == member]
            waiting = [r for r in mine_left if r.member == member]
            line = (f"pool {pool} member {member}: {len(theirs) - len(waiting)}/{len(theirs)} "
                    f"runs done, {len(waiting)} left")
            if member in lost[pool]:
                since = lost[pool][member]
                line += f", lost since {since['at']} ({since['why']})"
                if waiting:
                    line += (": its runs wait (`journalbench pool redeal --member "
                             f"{member}` deals them to the others)")
            else:
                eta = eta_seconds(waiting, *landed)
                etas.append(eta)
                line += f", ETA {hms(eta)}"
            lines.append(line)
        lines.append(f"pool {pool}: {len(mine) - len(mine_left)}/{len(mine)} runs done, "
                     f"{len(mine_left)} left, ETA {hms(max(etas, default=0.0))} "
                     f"({len(members) - len(lost[pool])} of {len(members)} members in "
                     "parallel)")
    return lines


def status(campaign: str, hosts: str, raw: Path, claims: str = "",
           device: str | None = None, plans_folder: Path = plans.PLAN_DIR) -> list[str]:
    """Where a campaign stands on its hosts: runs done and left with an ETA, the whole plan's
    time (on `device` instead of its own, if given), on a pool each member's and the pool's
    progress and ETA, and a line per damaged run folder (the campaign stops on it)."""
    loaded = load_hosts(hosts)
    runs = planned_runs(campaign, loaded, raw, claims, plans_folder=plans_folder)
    left, damaged = unlanded(runs, raw)  # once for every line
    return [progress_line(runs[0].campaign if runs else campaign, runs, left, raw),
            planned_line(runs, left, raw, device),
            *pool_lines(runs, left, loaded, raw),
            *(runfolder.damage_line(r.folder(raw), f"no {runfolder.MANIFEST}") for r in damaged)]


def dispatch(campaign: str, hosts: str, host_name: str, run_id: str, raw: Path,
             claims: str = "", plans_folder: Path = plans.PLAN_DIR) -> None:
    """Run one planned run of the campaign on its host (on a pool: the member it is dealt to)
    and land it in `raw` (the campaign's plan kept in `plans_folder`)."""
    loaded = load_hosts(hosts)
    by_name = {h["name"]: h for h in loaded}
    runs = planned_runs(campaign, loaded, raw, claims, plans_folder=plans_folder)
    matches = [r for r in runs if r.host == host_name and r.run_id == run_id]
    if not matches:
        raise AgentError(f"run {run_id} on {host_name} is not in campaign {campaign}")
    run = matches[0]
    host = by_name[run.lane]
    final = run.folder(raw)
    refuse_landed(final)
    if run.member:
        pools.refuse_lost(raw, run)
    partial = final.with_name(final.name + runfolder.PARTIAL)
    if partial.exists():
        shutil.rmtree(partial)  # left by an interrupted attempt: never analysed, re-run now
    with controller_lane(host["name"]):
        shown = [r for r in runs if r.lane == run.lane] if run.member else runs
        print(progress_line(run.campaign, shown, missing(shown, raw), raw)
              + (f" (pool {run.host} member {run.member})" if run.member else ""),
              file=sys.stderr)
        started = time.monotonic()
        try:
            run_remote(host, run.spec, partial)
        except TransportError as error:
            # unreachable after the transport's attempts (not a command that failed or ran
            # too long, which is the run's): it takes no more runs
            if run.member and not isinstance(error, CommandTimeout | CommandFailed):
                pools.lose(raw, run.campaign, run.host, run.member, str(error))
            raise
        land(partial, final)
    where = f"{run.member} (pool {run.host})" if run.member else host["name"]
    print(f"run {run.run_id} on {where} done in {time.monotonic() - started:.1f} s",
          file=sys.stderr)
