"""The `journalbench` command line. Each subcommand lives in the module that does the work;
the module exposes `register(subparsers)` and sets `func` on its parser. Command modules import
only the standard library at top level (the agent bundle runs on hosts without our venv); heavy
imports go inside the handler."""

from __future__ import annotations

import argparse
import importlib
import sys

from journalbench import __version__
from journalbench.errors import AgentError, ConfigError

COMMAND_MODULES = (
    "journalbench.agent.commands",  # run, teardown
    "journalbench.tidy",  # tidy
    "journalbench.remote",  # check-host, deploy
    "journalbench.dispatch",  # dispatch, status
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="journalbench",
        description="Re-run the thesis's VM vs container disk experiments and analyse them.",
    )
    parser.add_argument("--version", action="version", version=f"journalbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except (ConfigError, AgentError) as error:
        print(f"journalbench: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
