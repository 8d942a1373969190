"""Agent subcommands: `journalbench run` and `journalbench teardown`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from journalbench.errors import AgentError


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="execute one run spec on this host (root)",
        description="Execute one run spec on this machine and write its run folder.")
    run.add_argument("spec", help="run spec (YAML or JSON)")
    run.add_argument("--host", default="local", help="host name in hosts/ or host file path")
    run.add_argument("--out", required=True, type=Path, help="run folder to create")
    run.add_argument("-v", "--verbose", action="store_true", help="log every command")
    run.set_defaults(func=cmd_run)
    teardown = subparsers.add_parser(
        "teardown", help="remove everything a crashed run left on this host (root)",
        description="Stop containers, restore jbd2 threads, unmount, detach loop devices and "
                    "remove cgroups left by runs of HOST, then check that nothing is left.")
    teardown.add_argument("--host", default="local", help="host name in hosts/ or host file path")
    teardown.set_defaults(func=cmd_teardown)


def load_inputs(spec_path: str | None, host_name: str) -> tuple[dict[str, Any] | None, dict]:
    """Validate with the schemas when jsonschema is importable (the controller); an agent
    bundle on a bare host gets plain JSON the controller already validated."""
    try:
        from journalbench.hosts import load_host  # noqa: PLC0415 (needs yaml + jsonschema)
        from journalbench.schemas import load_validated  # noqa: PLC0415
    except ImportError:
        host = json.loads(Path(host_name).read_text())
        spec = json.loads(Path(spec_path).read_text()) if spec_path else None
        return spec, host
    host = load_host(host_name)
    spec = load_validated(Path(spec_path), "run-spec") if spec_path else None
    return spec, host


def need_root() -> None:
    if os.geteuid() != 0:
        raise AgentError("the agent needs root (loop devices, cgroups, containers)")


def console_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    handler.setFormatter(logging.Formatter("journalbench: %(message)s"))
    logging.getLogger("journalbench.agent").addHandler(handler)


def cmd_run(args: argparse.Namespace) -> int:
    from journalbench.agent.run import execute  # noqa: PLC0415

    spec, host = load_inputs(args.spec, args.host)
    names = [t["name"] for t in spec["tenants"]]
    if len(set(names)) != len(names):
        raise AgentError(f"{args.spec}: field tenants: names must be unique, got {names}")
    if args.out.exists():
        raise AgentError(f"{args.out}: already exists; a run folder is never overwritten")
    need_root()
    console_logging(args.verbose)
    facts = execute(spec, host, args.out)
    print(f"run complete: {args.out} (setup {facts['timing']['setup_s']} s, "
          f"teardown {facts['timing']['teardown_s']} s)")
    return 0


def cmd_teardown(args: argparse.Namespace) -> int:
    from journalbench.agent.run import host_lock, residue, teardown  # noqa: PLC0415

    _, host = load_inputs(None, args.host)
    need_root()
    console_logging(False)
    with host_lock(host):
        before = residue(host)
        teardown(host)
    print(f"teardown of host {host['name']}: removed {len(before)} item(s); nothing left")
    return 0
