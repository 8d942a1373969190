"""The campaign's commands: `plan` (data/plan/<campaign>.json), `dispatch` (one planned run,
what Snakemake runs per missing run), `status` (runs done, ETA) and `unlock` (a killed
Snakemake's stale lock) and `locate` (a landed run's folder)."""

from __future__ import annotations

import argparse
from pathlib import Path

from journalbench.control import dispatch, locks
from journalbench.errors import ConfigError
from journalbench.plan import plan
from journalbench.runfolder import locate

HOSTS_OWN = "the host's own"
CLAIMS_HELP = "only the experiments that test one of these claims (C8,C9)"
PLANS_HELP = ("folder of the plans (default: the repository's data/plan; the pipeline gives "
              "its working directory's)")


def register(subparsers: argparse._SubParsersAction) -> None:
    planner = subparsers.add_parser(
        "plan", help="plan campaigns once: data/plan/<campaign>.json",
        description="Expand each CAMPAIGN (a name in workflow/campaigns/ or a campaign file) "
                    "into its run specs and their experiments, and keep the plan in PLANS "
                    "(every step reads it; it is made again when the campaign file or the "
                    "planning code changes).")
    planner.add_argument("campaigns", metavar="CAMPAIGN", nargs="+")
    planner.add_argument("--plans", type=Path, default=plan.PLAN_DIR, help=PLANS_HELP)
    planner.set_defaults(func=cmd_plan)
    parser = subparsers.add_parser(
        "dispatch", help="run one planned run of a campaign on its host (used by Snakemake)")
    parser.add_argument("--campaign", required=True)
    parser.add_argument("--hosts", required=True, help="host files/names or an inventory")
    parser.add_argument("--host", required=True, help="which of the hosts runs it")
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--raw", type=Path, default=Path("data/raw"))
    parser.add_argument("--claims", default="", help=CLAIMS_HELP)
    parser.add_argument("--plans", type=Path, default=plan.PLAN_DIR, help=PLANS_HELP)
    parser.set_defaults(func=cmd_dispatch)
    status = subparsers.add_parser("status", help="runs done / total of a campaign, and an ETA")
    status.add_argument("--campaign", required=True)
    status.add_argument("--hosts", default="hosts/local.yaml")
    status.add_argument("--raw", type=Path, default=Path("data/raw"))
    status.add_argument("--claims", default="", help=CLAIMS_HELP)
    status.add_argument("--plans", type=Path, default=plan.PLAN_DIR, help=PLANS_HELP)
    status.add_argument("--device", help="estimate the plan on this device profile instead "
                                         "(from the landed runs of each kind on it)")
    status.set_defaults(func=cmd_status)
    parser = subparsers.add_parser(
        "unlock", help="remove the Snakemake lock a killed run left (refuses while one runs)")
    parser.add_argument("--directory", type=Path, default=Path("."),
                        help="the workflow's working directory (default: this one)")
    parser.set_defaults(func=cmd_unlock)
    finder = subparsers.add_parser(
        "locate", help="the folder of a landed run the ledger or a figure names",
        description="Print the run folder of RUN (a run id, or campaign/host/run id). The same "
                    "run id can name runs of several campaigns or hosts (the id hashes the "
                    "spec only): an ambiguous id is refused; give --campaign and --host.")
    finder.add_argument("run", metavar="RUN")
    finder.add_argument("--campaign")
    finder.add_argument("--host")
    finder.add_argument("--raw", type=Path, default=Path("data/raw"))
    finder.set_defaults(func=cmd_locate)


def cmd_plan(args: argparse.Namespace) -> int:
    from journalbench.judge.claims import known  # the catalogue: pandas comes with it

    for campaign in args.campaigns:
        made = plan.current(campaign, args.plans)
        known.check(made)
        facts = made.facts
        print(f"{plan.path_of(Path(made.source), args.plans)}: campaign {made.campaign}, "
              f"{len(made.runs)} runs in {len({r['experiment'] for r in made.experiments})} "
              f"experiments; tools {', '.join(facts['tools'])}; devices "
              f"{', '.join(str(d) if d else HOSTS_OWN for d in facts['devices'])}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    for line in dispatch.status(args.campaign, args.hosts, args.raw, args.claims, args.device,
                                args.plans):
        print(line)
    return 0


def cmd_dispatch(args: argparse.Namespace) -> int:
    dispatch.dispatch(args.campaign, args.hosts, args.host, args.run_id, args.raw, args.claims,
                      args.plans)
    return 0


def cmd_unlock(args: argparse.Namespace) -> int:
    workdir = args.directory.resolve()
    if not workdir.is_dir():
        raise ConfigError(f"{args.directory}: not a directory")
    alive = locks.workflow_processes(workdir)
    if alive:
        pid, command = alive[0]
        raise ConfigError(f"{workdir}: Snakemake still runs here (pid {pid}: {command[:120]}); "
                          "its lock is not stale, not removing it")
    removed = locks.remove_lock(workdir)
    print(f"{workdir}: {'removed the stale Snakemake lock' if removed else 'was not locked'}")
    return 0


def cmd_locate(args: argparse.Namespace) -> int:
    print(locate(args.raw, args.run, args.campaign, args.host))
    return 0
