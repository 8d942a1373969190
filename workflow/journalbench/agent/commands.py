"""The agent's two commands, `run` and `teardown`, on inputs already loaded and validated.

Two front ends call them: the bundle's entry point (`agent/main.py`, plain JSON the controller
validated) and the controller's `journalbench run` / `journalbench teardown` (cli/main.py, host and
spec files validated with the schemas).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from journalbench.errors import AgentError, ConfigError


def add_run_parser(subparsers: argparse._SubParsersAction, host_help: str,
                   host_default: str | None = None) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "run", help="execute one run spec on this host (root)",
        description="Execute one run spec on this machine and write its run folder.")
    parser.add_argument("spec", help="run spec file")
    _add_host(parser, host_help, host_default)
    parser.add_argument("--out", required=True, type=Path, help="run folder to create")
    parser.add_argument("--teardown-first", action="store_true",
                        help="first remove whatever an earlier run of the host left (as "
                             "`teardown` does), as part of this run's set-up")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every command")
    return parser


def add_teardown_parser(subparsers: argparse._SubParsersAction, host_help: str,
                        host_default: str | None = None) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "teardown", help="remove everything a crashed run left on this host (root)",
        description="Stop containers, restore jbd2 threads, unmount, detach loop devices and "
                    "remove cgroups left by runs of HOST, then check that nothing is left.")
    _add_host(parser, host_help, host_default)
    return parser


def _add_host(parser: argparse.ArgumentParser, help_text: str, default: str | None) -> None:
    parser.add_argument("--host", required=default is None, default=default, help=help_text)


def need_root() -> None:
    if os.geteuid() != 0:
        raise AgentError("the agent needs root (loop devices, cgroups, containers)")


def console_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    handler.setFormatter(logging.Formatter("journalbench: %(message)s"))
    logging.getLogger("journalbench.agent").addHandler(handler)


def run(spec: dict[str, Any], host: dict[str, Any], out: Path, *, source: str,
        verbose: bool = False, teardown_first: bool = False) -> int:
    """Execute spec (read from `source`) into the new run folder `out`; `teardown_first`:
    on a host cleaned first, in the same agent start."""
    names = [t["name"] for t in spec["tenants"]]
    if len(set(names)) != len(names):
        raise AgentError(f"{source}: field tenants: names must be unique, got {names}")
    if out.exists():
        raise AgentError(f"{out}: already exists; a run folder is never overwritten")
    need_root()
    console_logging(verbose)
    # imported here: the controller's command line builds this parser for every command, and
    # the run machinery is a tenth of a second of imports
    from journalbench.agent.run import execute

    facts = execute(spec, host, out, teardown_first=teardown_first, source=source)
    print(f"run complete: {out} (setup {facts['timing']['setup_s']} s, "
          f"teardown {facts['timing']['teardown_s']} s)")
    return 0


def teardown_host(host: dict[str, Any]) -> int:
    from journalbench.agent.run import host_lock, residue, teardown

    need_root()
    console_logging(False)
    with host_lock(host):
        before = residue(host)
        teardown(host)
    print(f"teardown of host {host['name']}: removed {len(before)} item(s); nothing left")
    return 0


def main(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse and run a subcommand; an error the user can act on is one line and exit 2. The
    controller's command line and the agent bundle's both end here."""
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except (ConfigError, AgentError) as error:
        print(f"journalbench: error: {error}", file=sys.stderr)
        return 2
