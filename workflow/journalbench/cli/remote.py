"""Command line of the controller's host commands: `check-host`, `deploy`, `run-remote`,
`recover` (each over the host's transport, SSH or this machine) and `adopt-reference`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from journalbench.control import reference
from journalbench.control.checkhost import check_host, format_checks
from journalbench.control.deploy import deploy
from journalbench.control.hosts import load_host
from journalbench.control.nested.machine import Machine
from journalbench.control.reach import for_host
from journalbench.control.runremote import reap_and_teardown, run_remote
from journalbench.errors import ConfigError
from journalbench.plan.schemas import load_validated


def register(subparsers: argparse._SubParsersAction) -> None:
    check = subparsers.add_parser(
        "check-host",
        help="check that a test host has what the agent needs",
        description="Probe HOST (over its transport) for kernel, cgroup version, BFQ, LXC, fio, "
        "QEMU/KVM, python and free space; print what is missing and the apt-get "
        "command that installs it. Exit 1 when something required is missing.",
    )
    check.add_argument("host", help="host name in hosts/ or host file path")
    check.set_defaults(func=cmd_check_host)

    dep = subparsers.add_parser(
        "deploy",
        help="upload the agent bundle to a test host",
        description="Build the agent bundle (zipapp, stdlib only), upload it to "
        "<state_dir>/agent/ on HOST unless already there, and check it runs.",
    )
    dep.add_argument("host", help="host name in hosts/ or host file path")
    dep.add_argument("--force", action="store_true", help="upload even if already there")
    dep.set_defaults(func=cmd_deploy)

    run = subparsers.add_parser(
        "run-remote",
        help="run a spec on a host over its transport and fetch the run folder",
        description="Run SPEC on HOST (SSH or local) and fetch the run folder to OUT "
        "atomically. A complete OUT is kept; an interrupted run is torn down on "
        "the host and run again.",
    )
    run.add_argument("spec", help="run spec (YAML or JSON)")
    run.add_argument("--host", required=True, help="host name in hosts/ or host file path")
    run.add_argument("--out", required=True, type=Path, help="local run folder")
    run.add_argument("--attempts", type=int, default=3, help="tries after a lost connection")
    run.add_argument("--quiet", action="store_true", help="do not echo the agent's output")
    run.set_defaults(func=cmd_run_remote)

    rec = subparsers.add_parser(
        "recover",
        help="stop a cut-off run on a host and tear it down (over its transport)",
        description="Kill an agent left running by an interrupted run on HOST, then run "
        "`journalbench teardown` there.",
    )
    rec.add_argument("--host", required=True, help="host name in hosts/ or host file path")
    rec.set_defaults(func=cmd_recover)

    adopt = subparsers.add_parser(
        "adopt-reference",
        help="put a campaign's device reference back on its host before resuming it",
        description="Install on HOST the device calibration reference that the landed runs "
        "of CAMPAIGN on it were checked against (from their host.json), so the runs "
        "still to come are checked against the same device. Refuses when the runs "
        "disagree, or when the host already holds a different reference.")
    adopt.add_argument("campaign")
    adopt.add_argument("--host", required=True, help="host name in hosts/ or host file path")
    adopt.add_argument("--raw", type=Path, default=Path("data/raw"))
    adopt.set_defaults(func=cmd_adopt_reference)


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="journalbench: %(message)s")
    logging.getLogger("paramiko").setLevel(logging.WARNING)  # every connect is not news


def _echo(prefix: str) -> Callable[[str, str], None]:
    def echo(_stream: str, line: str) -> None:
        print(f"[{prefix}] {line}", file=sys.stderr, flush=True)

    return echo


def cmd_check_host(args: argparse.Namespace) -> int:
    host = load_host(args.host)
    checks = check_host(host)
    print(format_checks(host["name"], checks))
    if host["transport"] == "nested":
        print(machine_line(Machine(host).state()))
    return 1 if any(c.required and not c.ok for c in checks) else 0


def machine_line(record: dict[str, Any] | None) -> str:
    """What a nested host's machine is, for check-host's reader."""
    if record is None:
        return "nested machine: not running"
    return (f"nested machine: booted in {record['boot_s']} s under {record['accel']} "
            f"({record['vcpus']} vCPUs, {record['memory_mb']} MiB), disks "
            f"{', '.join(record['profiles'])}, sshd on 127.0.0.1:{record['port']}; "
            "journalbench teardown --host ... stops it")


def cmd_deploy(args: argparse.Namespace) -> int:
    _logging()
    host = load_host(args.host)
    with for_host(host) as transport:
        dep = deploy(host, transport, force=args.force)
    print(f"{host['name']}: agent bundle {dep.bundle} (python {dep.python_version})")
    return 0


def cmd_run_remote(args: argparse.Namespace) -> int:
    _logging()
    host = load_host(args.host)
    spec = load_validated(Path(args.spec), "run-spec")
    dest = run_remote(
        host,
        spec,
        args.out,
        attempts=args.attempts,
        on_output=None if args.quiet else _echo(host["name"]),
    )
    print(f"run folder complete: {dest}")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    host = load_host(args.host)
    if host["transport"] == "nested" and Machine(host).state() is None:
        print(f"{host['name']}: its nested machine does not run: nothing to recover")
        return 0
    with for_host(host) as transport:
        dep = deploy(host, transport)
        reap_and_teardown(dep, _echo(host["name"]))
    print(f"{host['name']}: torn down")
    return 0


def cmd_adopt_reference(args: argparse.Namespace) -> int:
    host = load_host(args.host)
    folder = args.raw / args.campaign / host["name"]
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no landed runs of campaign {args.campaign} on "
                          f"{host['name']}")
    references = reference.campaign_references(folder)
    if not references:
        raise ConfigError(f"{folder}: no complete run recorded a calibration reference")
    for line in reference.adopt(host, references):
        print(line)
    return 0
