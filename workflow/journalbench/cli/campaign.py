"""The campaign's commands: `plan` (data/plan/<campaign>.json), `dispatch` (one planned run,
what Snakemake runs per missing run), `status` (runs done, ETA), `unlock` (a killed
Snakemake's stale lock), `locate` (a landed run's folder) and `pool` (a pool's lost member:
lose, rejoin, redeal)."""

from __future__ import annotations

import argparse
from pathlib import Path

from journalbench.control import dispatch, locks, pools
from journalbench.control.hosts import load_hosts
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
    pool = subparsers.add_parser(
        "pool", help="a pool's lost member: lose, rejoin, or deal its runs to the others",
        description="A member of a pool that fails (cannot be reached, refuses check-host) "
                    "takes no more runs: dispatch marks one it cannot reach, `lose` one you "
                    "know broken. Its runs not yet landed wait until `redeal` deals them to "
                    "the pool's other members (recorded in data/raw/<campaign>/<pool>/"
                    "pool.json, read by every later step) or `rejoin` takes it back. Landed "
                    "runs never move or run again.")
    pool.add_argument("action", choices=("lose", "rejoin", "redeal"))
    pool.add_argument("--campaign", required=True)
    pool.add_argument("--hosts", required=True, help="the pool (name or file) or an inventory")
    pool.add_argument("--member", required=True)
    pool.add_argument("--pool", help="which pool, when HOSTS lists several")
    pool.add_argument("--why", default="marked lost by hand", help="lose: why (recorded)")
    pool.add_argument("--raw", type=Path, default=Path("data/raw"))
    pool.set_defaults(func=cmd_pool)


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


def cmd_pool(args: argparse.Namespace) -> int:
    hosts = load_hosts(args.hosts)
    named = [h for h in hosts if h["name"] == args.member and h.get("pool")]
    if not named or (args.pool and named[0]["pool"] != args.pool):
        raise ConfigError(f"hosts {args.hosts}: no pool member {args.member}"
                          + (f" in pool {args.pool}" if args.pool else ""))
    pool = named[0]["pool"]
    campaign = plan.current(args.campaign).campaign
    if args.action == "lose":
        pools.lose(args.raw, campaign, pool, args.member, args.why)
        print(f"pool {pool}: member {args.member} is lost: its runs wait "
              f"(`journalbench pool redeal` deals them to the others)")
    elif args.action == "rejoin":
        print(pools.rejoin(args.raw, campaign, pool, args.member))
    else:
        runs = dispatch.planned_runs(args.campaign, hosts, args.raw)
        moved, to = pools.redeal(runs, pools.members(hosts, pool), args.raw, pool, args.member)
        print(f"pool {pool}: {moved} runs of {args.member} dealt to "
              + (", ".join(f"{m} ({n})" for m, n in sorted(to.items())) or "no one")
              + "; run the campaign again to measure them")
    for line in dispatch.status(args.campaign, args.hosts, args.raw):
        if line.startswith(f"pool {pool}"):
            print(line)
    return 0
