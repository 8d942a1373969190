"""The MySQL claims' operating point: the largest sysbench thread count at which the vm arm's
emulated guest keeps up with its disk (formats.guest.keeps_up: its vCPU saturated in no second
and at most half busy), fixed by the emulator alone, before any claim's run, and then the same
for every arm (equal offered concurrency). The I/O calibration (mariadb_calibrate) raises the
clients until the device saturates, as the thesis did (Sec 4.1.1, p. 36); under TCG the guest
then runs at 99% of its vCPU and its pace is the emulator's, so the VM halves of the MySQL
claims were not testable at that count.

The sweep (`journalbench guest-point`, cli/guestpoint.py, as root) runs the vm arm's MariaDB
alone at 1, 2, 4, 8, ... threads, each count an ordinary run of this agent (its run folder kept
under <state_dir>/calibration/, never in a campaign's data), and records per count the guest's
busy share and saturated seconds over its measured sysbench's threads (tidy's guest columns:
the snapshots of the server's counters around it and its start-up left out), its vCPU time
per transaction
(busy share x 1000 / transactions/s: what a KVM guest could save at most) and transactions/s.
No claim's condition is looked at. The record is cached per host, device profile and tables,
and names the acceleration its guests had (a host that gains KVM measures again, --again; the
judgement reads every run's own guests anyway, preconditions.py). A run whose mariadb
workload asks `threads: guest` reads it and keeps it, with its sweep, in host.json's
`calibration.mariadb_guest_point` (like the other calibrations), and fails with one line
naming the command when there is none.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from journalbench.agent.workloads import mariadb_server
from journalbench.agent.workloads.mariadb_server import cache_key
from journalbench.errors import AgentError
from journalbench.formats.guest import BUSY_LIMIT, SATURATED, keeps_up

GUEST = "guest"  # the mariadb workload's `threads` that asks for the operating point
LADDER = (1, 2, 4, 8, 16, 32, 64)  # the I/O calibration's counts (its cap: 64)
STEP_S = 60  # a step's measured window: the campaign's (mysql-point.yaml)
WARMUP_S = 5  # the MariaDB runs' warm-up
TABLES, TABLE_SIZE = mariadb_server.TABLES, mariadb_server.TABLE_SIZE  # the sweep's tables
TENANT = "victim"  # the sweep's one tenant, at the weight of the MySQL claims' alone runs
WEIGHT = 700
# 2 (2026-11-29): a count's guest seconds are those of its measured sysbench, bounded on the
# guest's /proc/uptime (formats/guest.py); method 1 took the run's nominal window, whose first
# seconds held the counters' snapshot before the client (a mariadb client started under TCG):
# every count of the first sweep had that one second saturated, and no count was chosen.
# 3 (2026-11-29): from its threads' start (tidy/parse/mariadb.threads_phase): the client's
# start-up (its Lua script, its connections) kept the vCPU busy for a second before any
# transaction; method 2's records are read again from their kept run folders (`--reread`), the
# runs' raw files hold everything this method reads
METHOD = 3
RECORD = "mariadb_guest_point"  # its key in host.json's calibration


def spec_of(threads: int, seconds: int, warmup: int, profile: str) -> dict[str, Any]:
    """One count's run spec: the vm arm's MariaDB alone (the default tables), at the MySQL
    claims' weight, on the device profile named."""
    return {"arm": "vm", "duration_s": seconds, "warmup_s": warmup, "repetition": 1,
            "device": profile,
            "tenants": [{"name": TENANT, "weight": WEIGHT,
                         "workload": {"tool": "mariadb", "threads": threads}}]}


def step(threads: int, busy_mean: float, saturated_seconds: int, seconds: int, tps: float,
         latency_ms: float) -> dict[str, Any]:
    """One count's figures: the guest's busy share and saturated seconds (of `seconds` over
    the measured window), its vCPU time per transaction, transactions/s and their mean
    latency, and whether the guest kept up."""
    share = saturated_seconds / seconds if seconds else float("nan")
    return {"threads": threads, "busy_share": round(busy_mean, 4),
            "saturated_seconds": saturated_seconds, "seconds": seconds,
            "tps": round(tps, 3), "latency_ms": round(latency_ms, 3),
            "vcpu_ms_per_tx": round(1000 * busy_mean / tps, 3) if tps > 0 else None,
            "keeps_up": bool(seconds) and keeps_up(busy_mean, share)}


def choose(steps: list[dict[str, Any]]) -> int | None:
    """The largest count whose guest kept up, among the counts below the first that did not
    (a count that kept up above one that did not is not taken: the guest's load rises with its
    clients, so that is chance); None when the guest did not keep up even at the first."""
    chosen = None
    for found in sorted(steps, key=lambda s: s["threads"]):
        if not found["keeps_up"]:
            break
        chosen = found["threads"]
    return chosen


def path_for(host: dict[str, Any], profile: Any, tables: int, table_size: int,
             method: int = METHOD) -> Path:
    """Where the host's point for this device profile and tables is kept (read by `method`)."""
    text = json.dumps([profile.facts(), host["device"], cache_key(tables, table_size), method],
                      sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return (Path(host["state_dir"]) / "calibration"
            / f"{host['name']}-{profile.NAME}-mariadb-guest-point-{digest}.json")


def runs_folder(path: Path) -> Path:
    """The sweep's run folders, beside its record."""
    return path.with_suffix("")


def record_of(steps: list[dict[str, Any]], *, profile: str, accel: str, tables: int,
              table_size: int, step_s: int, warmup_s: int, runs: Path) -> dict[str, Any]:
    return {"threads": choose(steps), "sweep": steps, "busy_limit": BUSY_LIMIT,
            "saturated_at": SATURATED, "step_s": step_s, "warmup_s": warmup_s,
            "method": METHOD, "profile": profile, "accel": accel, "tables": tables,
            "table_size": table_size, "runs": str(runs),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def reread_of(earlier: dict[str, Any], steps: list[dict[str, Any]],
              source: Path) -> dict[str, Any]:
    """An earlier method's record read again by this method from its kept run folders
    (`steps`, one per count of its sweep): its measurement's facts kept (when measured, where,
    with what), the figures, the choice and the method this one's, and where it came from."""
    if earlier.get("method") == METHOD:
        raise AgentError(f"{source}: read by method {METHOD} already: nothing to read again")
    if [s["threads"] for s in steps] != [s["threads"] for s in earlier["sweep"]]:
        raise AgentError(f"{source}: the steps read again are not its sweep's counts")
    return {**earlier, "threads": choose(steps), "sweep": steps, "method": METHOD,
            "read_from": {"file": str(source), "method": earlier.get("method"),
                          "threads": earlier.get("threads")},
            "read_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def earlier_path(host: dict[str, Any], profile: Any, tables: int,
                 table_size: int) -> Path | None:
    """The host's record for this profile and tables by the latest earlier method, if any."""
    for method in range(METHOD - 1, 0, -1):
        path = path_for(host, profile, tables, table_size, method)
        if path.is_file():
            return path
    return None


def step_folder(record: dict[str, Any], threads: int) -> Path:
    """The run folder of a sweep's count (cli/guestpoint.py lays them out so)."""
    return Path(record["runs"]) / f"threads-{threads}"


def write(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.rename(path)


def command(host: dict[str, Any], profile: Any) -> str:
    return f"journalbench guest-point --host {host['name']} --profile {profile.NAME}"


def read(host: dict[str, Any], profile: Any, tables: int, table_size: int) -> dict[str, Any]:
    """The host's cached point for this profile and tables, with its sweep and file; one
    line naming the command that measures it when there is none, or no count kept up."""
    path = path_for(host, profile, tables, table_size)
    if not path.is_file():
        earlier = earlier_path(host, profile, tables, table_size)
        how = (f"read its record of an earlier method ({earlier}) again, as root: "
               f"{command(host, profile)} --reread" if earlier is not None else
               f"measure it first, as root: {command(host, profile)}")
        raise AgentError(f"no guest operating point of host {host['name']} on profile "
                         f"{profile.NAME} ({tables} x {table_size} rows) by method "
                         f"{METHOD}: {how}")
    record = json.loads(path.read_text())
    if record.get("threads") is None:
        first = (record.get("sweep") or [{}])[0]
        raise AgentError(f"{path}: the guest kept up at no thread count (at "
                         f"{first.get('threads')}: {first.get('busy_share')} busy, saturated "
                         f"{first.get('saturated_seconds')} of {first.get('seconds')} s): "
                         "no operating point")
    return {**record, "file": str(path)}
