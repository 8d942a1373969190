"""`journalbench dispatch`: one planned run of a campaign on its host, landing atomically.

Every host, this machine included, is driven the same way: `run_remote` over the host's
transport (SSH, or Local for `transport: local`). The run is fetched into `<run_id>.partial` next
to its final folder and renamed only once its manifest verifies, so `data/raw` only ever holds
complete runs or nothing. Snakemake calls this once per missing run; it also prints campaign
progress and an ETA.
"""

from __future__ import annotations

import argparse
import fcntl
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from journalbench import runfolder
from journalbench.control.hosts import load_hosts
from journalbench.control.progress import eta_seconds
from journalbench.control.runremote import run_remote
from journalbench.errors import AgentError
from journalbench.plan.campaign import PlannedRun, missing, plan


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dispatch", help="run one planned run of a campaign on its host (used by Snakemake)")
    parser.add_argument("--campaign", required=True)
    parser.add_argument("--hosts", required=True, help="host files/names or an inventory")
    parser.add_argument("--host", required=True, help="which of the hosts runs it")
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--raw", type=Path, default=Path("data/raw"))
    parser.add_argument("--claims", default="", help=CLAIMS_HELP)
    parser.set_defaults(func=cmd_dispatch)
    status = subparsers.add_parser("status", help="runs done / total of a campaign, and an ETA")
    status.add_argument("--campaign", required=True)
    status.add_argument("--hosts", default="hosts/local.yaml")
    status.add_argument("--raw", type=Path, default=Path("data/raw"))
    status.add_argument("--claims", default="", help=CLAIMS_HELP)
    status.add_argument("--device", help="estimate the plan on this device profile instead "
                                         "(from the landed runs of each kind on it)")
    status.set_defaults(func=cmd_status)


CLAIMS_HELP = "only the experiments that test one of these claims (C8,C9)"


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


def planned_line(runs: list[PlannedRun], left: list[PlannedRun], raw: Path,
                 device: str | None) -> str:
    """The whole plan's wall time, done or not; on `device` instead of the campaign's own."""
    landed = folders(runs, left, raw)
    if device:
        runs = [replace(r, spec={**r.spec, "device": device}) for r in runs]
    where = device or ", ".join(sorted({str(r.spec.get("device", "the host's")) for r in runs}))
    return f"planned: {len(runs)} runs, {hms(eta_seconds(runs, *landed))} on {where}"


def cmd_status(args: argparse.Namespace) -> int:
    runs = plan(args.campaign, load_hosts(args.hosts), args.claims)
    left = missing(runs, args.raw)  # reads every planned run's manifest: once for both lines
    print(progress_line(runs[0].campaign if runs else args.campaign, runs, left, args.raw))
    print(planned_line(runs, left, args.raw, args.device))
    return 0


def land(partial: Path, final: Path) -> None:
    problems = runfolder.manifest_problems(partial)
    if problems:
        raise AgentError(f"run folder {partial} did not verify: {problems[0]}")
    if final.exists():  # Snakemake makes the output's parent folder before the job runs
        if any(final.iterdir()):
            raise AgentError(f"{final}: exists and is not empty; refusing to overwrite a run")
        final.rmdir()
    partial.rename(final)


@contextmanager
def controller_lane(host: str) -> Iterator[None]:
    """Wait for this controller's other run on the same host (Snakemake's lane resources do
    the same when the profile is in use; this holds however Snakemake is invoked)."""
    path = Path(tempfile.gettempdir()) / f"journalbench-lane-{host}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def cmd_dispatch(args: argparse.Namespace) -> int:
    hosts = {h["name"]: h for h in load_hosts(args.hosts)}
    runs = plan(args.campaign, list(hosts.values()), args.claims)
    matches = [r for r in runs if r.host == args.host and r.run_id == args.run_id]
    if not matches:
        raise AgentError(f"run {args.run_id} on {args.host} is not in campaign {args.campaign}")
    run = matches[0]
    host = hosts[args.host]
    final = run.folder(args.raw)
    partial = final.with_name(final.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)  # left by an interrupted attempt: never analysed, re-run now
    with controller_lane(host["name"]):
        print(progress_line(run.campaign, runs, missing(runs, args.raw), args.raw),
              file=sys.stderr)
        started = time.monotonic()
        run_remote(host, run.spec, partial)
        land(partial, final)
    print(f"run {run.run_id} on {host['name']} done in {time.monotonic() - started:.1f} s",
          file=sys.stderr)
    return 0
