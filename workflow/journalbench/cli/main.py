"""The `journalbench` command line of the controller. `run` and `teardown` are the agent's own
commands (agent/commands.py), here on host and spec files validated with the schemas; every
other subcommand is in a module of this folder that exposes `register(subparsers)`, sets
`func` on its parser and calls the stage that does the work. The agent bundle has its own,
smaller entry point (agent/main.py)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from journalbench import __version__
from journalbench.errors import ConfigError

# each module and the subcommands it registers: a command line imports only its command's
# module (the others' imports, paramiko and jsonschema among them, were a quarter of a second
# of every pipeline step); --help and an unknown command import them all
COMMAND_MODULES = {
    "journalbench.cli.campaign": ("plan", "dispatch", "status", "unlock", "locate",
                                  "pool"),
    "journalbench.cli.tidy": ("tidy",),
    "journalbench.cli.claims": ("claims", "power"),
    "journalbench.cli.remote": ("check-host", "deploy", "run-remote", "recover",
                                "adopt-reference"),
    "journalbench.cli.guestpoint": ("guest-point",),
}
AGENT_COMMANDS = ("run", "teardown")  # the agent's own, on host and spec files validated here
HOST_HELP = "host name in hosts/ or host file path"


def wanted(command: str | None) -> list[str]:
    """The command modules a command line needs: its command's, or all of them."""
    mine = [name for name, commands in COMMAND_MODULES.items() if command in commands]
    return mine if mine or command in AGENT_COMMANDS else list(COMMAND_MODULES)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    from journalbench.agent import commands

    parser = argparse.ArgumentParser(
        prog="journalbench",
        description="Re-run the thesis's VM vs container disk experiments and analyse them.",
    )
    parser.add_argument("--version", action="version", version=f"journalbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_run_parser(subparsers, HOST_HELP, "local").set_defaults(func=cmd_run)
    commands.add_teardown_parser(subparsers, HOST_HELP, "local").set_defaults(func=cmd_teardown)
    for name in wanted(command):
        importlib.import_module(name).register(subparsers)
    return parser


def cmd_run(args: argparse.Namespace) -> int:
    from journalbench.agent import commands
    from journalbench.control.hosts import load_host
    from journalbench.plan.schemas import load_validated

    spec = load_validated(Path(args.spec), "run-spec")
    host = load_host(args.host)
    if host["transport"] == "nested":
        raise ConfigError(f"{host['_file']}: field transport: a nested host runs its agent in "
                          f"its guest: journalbench run-remote {args.spec} --host {args.host} "
                          f"--out {args.out}")
    return commands.run(spec, host, args.out, source=args.spec,
                        verbose=args.verbose, teardown_first=args.teardown_first)


def cmd_teardown(args: argparse.Namespace) -> int:
    from journalbench.agent import commands
    from journalbench.control.dispatch import clear_lane
    from journalbench.control.hosts import load_host
    from journalbench.control.nested import teardown as nested

    host = load_host(args.host)
    if clear_lane(host["name"]):
        print(f"teardown of host {host['name']}: removed the lane lock a killed controller left")
    if host["transport"] == "nested":  # a machine this one boots: inside, then the machine
        for line in nested.teardown(host):
            print(f"teardown of host {host['name']}: {line}")
        return 0
    return commands.teardown_host(host)


def main(argv: list[str] | None = None) -> int:
    from journalbench.agent import commands

    given = sys.argv[1:] if argv is None else argv
    command = next((arg for arg in given if not arg.startswith("-")), None)
    return commands.main(build_parser(command), argv)


if __name__ == "__main__":
    sys.exit(main())
