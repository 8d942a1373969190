"""The agent bundle's command line: `run` and `teardown` on this host, nothing else.

Its inputs are plain JSON files the controller wrote after validating them with the schemas
(`journalbench deploy` writes the host file, `run_remote` the spec), so it needs no YAML or
jsonschema: the bundle runs on a host's bare python.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from journalbench import __version__
from journalbench.agent import commands
from journalbench.errors import ConfigError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="journalbench-agent",
        description="The journalbench agent: run one spec on this host, or tear it down.")
    parser.add_argument("--version", action="version", version=f"journalbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    host_help = "host file (JSON, as deploy writes it)"
    commands.add_run_parser(subparsers, host_help).set_defaults(func=cmd_run)
    commands.add_teardown_parser(subparsers, host_help).set_defaults(func=cmd_teardown)
    return parser


def read_json(path: str) -> dict[str, Any]:
    try:
        document = json.loads(Path(path).read_text())
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})") from None
    except ValueError as error:
        raise ConfigError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: top level: expected an object")
    return document


def cmd_run(args: argparse.Namespace) -> int:
    return commands.run(read_json(args.spec), read_json(args.host), args.out,
                        source=args.spec, verbose=args.verbose,
                        teardown_first=args.teardown_first)


def cmd_teardown(args: argparse.Namespace) -> int:
    return commands.teardown_host(read_json(args.host))


def main(argv: list[str] | None = None) -> int:
    return commands.main(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
