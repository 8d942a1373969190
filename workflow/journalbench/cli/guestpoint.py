"""`journalbench guest-point`: measure a host's guest operating point for the MySQL claims
(agent/workloads/guest_point.py) before any claim's run: the vm arm's MariaDB alone at each
thread count of the ladder, each an ordinary run of the agent (kept beside the record under
<state_dir>/calibration/, never among a campaign's runs), each read as tidy reads a run. The
sweep stops after the first count whose guest was CPU-bound (saturated in half its seconds or
more): past it the emulator sets the pace for certain."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from journalbench.agent.workloads import guest_point
from journalbench.errors import ConfigError

HOST_HELP = "host name in hosts/ or host file path (this machine's: transport local)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "guest-point", help="measure the host's guest operating point of the MySQL claims "
                            "(root)",
        description="Run the vm arm's MariaDB alone at each thread count and record, per "
                    "count, the guest's busy share, its saturated seconds, its vCPU time per "
                    "transaction and transactions/s; the point is the largest count whose "
                    "guest was saturated in no second and at most half busy. Runs with "
                    "`threads: guest` read it (cached per host and device profile).")
    parser.add_argument("--host", default="local", help=HOST_HELP)
    parser.add_argument("--profile", help="device profile (default: the host's own)")
    parser.add_argument("--threads", default=",".join(str(n) for n in guest_point.LADDER),
                        help="the counts, rising (default: %(default)s)")
    parser.add_argument("--seconds", type=int, default=guest_point.STEP_S,
                        help="measured seconds per count (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=guest_point.WARMUP_S,
                        help="warm-up seconds per count (default: %(default)s)")
    parser.add_argument("--again", action="store_true",
                        help="measure again where the host has a record (replacing it)")
    parser.add_argument("--reread", action="store_true",
                        help="read the host's record of an earlier method again, by this "
                             "one, from its kept run folders (no new run)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every command")
    parser.set_defaults(func=cmd_guest_point)


def counts_of(text: str) -> list[int]:
    """"1,2,4" -> [1, 2, 4]: rising counts of 1-64, or one line saying what is wrong."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--threads {text}: not a comma-separated list of counts") from None
    if not counts or counts != sorted(set(counts)) or counts[0] < 1 or counts[-1] > 64:
        raise ConfigError(f"--threads {text}: counts must rise, each from 1 to 64")
    return counts


def step_of(folder: Path, threads: int) -> dict[str, Any]:
    """A count's figures from its run folder, over the measured window as tidy reads it."""
    from journalbench import runfolder
    from journalbench.tidy import rows
    from journalbench.tidy.parse import mariadb

    spec = rows.read_spec(folder)
    run = rows.load_run(folder, spec, rows.read_json(folder / runfolder.HOST))
    workload = next(t["workload"] for t in spec["tenants"] if t["name"] == guest_point.TENANT)
    loaded = mariadb.load(folder, guest_point.TENANT, workload)
    # the guest's seconds of its measured sysbench's threads (its counters and its total time
    # bound them on the guest's clock)
    phase = mariadb.client_phase(loaded)
    if phase is None:
        raise ConfigError(f"{folder}: its MariaDB counters record no /proc/uptime around the "
                          "client (a run of method 1): it cannot be read by this method; "
                          "measure anew (--again)")
    report = rows.guest_report(run, guest_point.TENANT, phase.working)
    tenant = mariadb.columns(loaded, workload)
    return guest_point.step(threads, report.vcpu_busy_mean, report.saturated_seconds,
                            report.seconds, tenant["ops_s"], tenant["op_lat_mean_ms"])


def reread(host: dict[str, Any], profile: Any, path: Path) -> dict[str, Any]:
    """The host's record of an earlier method read again by this one from its kept run
    folders, written where this method's record goes (the earlier one left as it is)."""
    from journalbench import runfolder

    earlier = guest_point.earlier_path(host, profile, guest_point.TABLES,
                                       guest_point.TABLE_SIZE)
    if earlier is None:
        raise ConfigError(f"no record of an earlier method of host {host['name']} on profile "
                          f"{profile.NAME}: nothing to read again (measure: "
                          f"{guest_point.command(host, profile)})")
    record = json.loads(earlier.read_text())
    steps = []
    for found in record["sweep"]:
        folder = guest_point.step_folder(record, found["threads"])
        if not (folder / runfolder.MANIFEST).is_file():
            raise ConfigError(f"{earlier}: field runs: no complete run folder {folder}: "
                              "measure anew (--again)")
        steps.append(step_of(folder, found["threads"]))
        print(f"read again: {line(steps[-1])} (by method {record.get('method')}: "
              f"{found['busy_share']:.0%} busy, saturated {found['saturated_seconds']} of "
              f"{found['seconds']} s)", flush=True)
    new = guest_point.reread_of(record, steps, earlier)
    guest_point.write(path, new)
    return new


def host_accel(host: dict[str, Any]) -> str:
    """The acceleration the vm arm's guests get on this host (its KVM probe, cached per
    boot), which the record names."""
    from journalbench.agent import disk
    from journalbench.agent.arms.vm.arm import choose_accel, vm_root

    return choose_accel(host, vm_root(disk.state_root(host)))[0]


def line(found: dict[str, Any]) -> str:
    return (f"{found['threads']:>2} threads: guest {found['busy_share']:.0%} busy, saturated "
            f"{found['saturated_seconds']} of {found['seconds']} s, "
            f"{found['vcpu_ms_per_tx']} ms of vCPU a transaction, {found['tps']:.1f} tps "
            f"({found['latency_ms']:.1f} ms each): "
            f"{'keeps up' if found['keeps_up'] else 'does not keep up'}")


def cmd_guest_point(args: argparse.Namespace) -> int:
    from journalbench.agent import commands, disk
    from journalbench.agent.registry import profile_for
    from journalbench.agent.run import execute
    from journalbench.control.hosts import load_host

    host = load_host(args.host)
    if host["transport"] != "local":
        raise ConfigError(f"{host['_file']}: field transport: guest-point measures this "
                          "machine's host only (transport local)")
    counts = counts_of(args.threads)
    commands.need_root()
    commands.console_logging(args.verbose)
    profile = profile_for(host, {"device": args.profile} if args.profile else {},
                          disk.state_root(host))
    accel = host_accel(host)
    path = guest_point.path_for(host, profile, guest_point.TABLES, guest_point.TABLE_SIZE)
    if args.reread:
        if args.again:
            raise ConfigError("--reread reads kept runs again, --again measures anew: one")
        record = reread(host, profile, path)
    elif path.is_file() and not args.again:
        print(f"{path}: measured already (--again measures anew):")
        record = guest_point.read(host, profile, guest_point.TABLES, guest_point.TABLE_SIZE)
    else:
        folder = guest_point.runs_folder(path) / time.strftime("%Y%m%dT%H%M%S")
        steps = []
        for threads in counts:
            out = folder / f"threads-{threads}"
            spec = guest_point.spec_of(threads, args.seconds, args.warmup, profile.NAME)
            execute(spec, host, out, source=f"guest-point, {threads} threads")
            steps.append(step_of(out, threads))
            print(line(steps[-1]), flush=True)
            if steps[-1]["saturated_seconds"] * 2 >= steps[-1]["seconds"]:
                break  # CPU-bound: past it the emulator sets the pace for certain
        record = guest_point.record_of(steps, profile=profile.NAME, accel=accel,
                                       tables=guest_point.TABLES,
                                       table_size=guest_point.TABLE_SIZE,
                                       step_s=args.seconds, warmup_s=args.warmup, runs=folder)
        guest_point.write(path, record)
    for found in record["sweep"]:
        print(line(found))
    chosen = record["threads"]
    print(f"guest operating point of {host['name']} on {profile.NAME} ({accel}): "
          + (f"{chosen} threads" if chosen else "none (the guest kept up at no count)")
          + f" ({path})")
    return 0
