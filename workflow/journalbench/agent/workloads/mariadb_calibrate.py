"""How many sysbench threads saturate this host's device: the thesis raised its clients "until
I/O saturates". Once per host, device profile and table set (cached beside the device's
calibration in <state_dir>/calibration/): one server alone on an ext4 over the whole test
device, server and client pinned to one core as a tenant is, its `k` indexes read into the
buffer pool as a tenant's are (Server.preload), sysbench oltp_insert at 1, 2, 4, 8, ... threads
for STEP_S each, until a doubling gains less than GAIN in transactions/s; the
count chosen is the last one that still gained (more threads only queue)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from journalbench.agent import disk
from journalbench.agent.system import log, sh
from journalbench.agent.workloads.mariadb_server import (
    DATA_NAME,
    CommandTimeout,
    LocalShell,
    Server,
    cache_key,
    prepared_datadir,
    stall_note,
    sysbench_argv,
)
from journalbench.errors import AgentError

STEP_S = 5
GAIN = 0.05
MAX_THREADS = 64
# 2: the server's `k` indexes are preloaded before the first step (Server.preload); method 1
# stepped from a cold buffer pool, so on a slow disk each step ran faster because the pool was
# warmer, not because of its threads (1 -> 64 threads: 0.67 -> 1,813 tps on the emulated HDD)
METHOD = 2
# a server that stalls in InnoDB itself (mariadb_server.stall_note) is a MariaDB defect, not a
# figure of the device: its calibration starts again from fresh tables, once, and says so
ATTEMPTS = 2


class ServerStalled(AgentError):
    """The calibration's server stopped answering because InnoDB's own writes stalled."""


def choose(steps: list[tuple[int, float]]) -> int:
    """The thread count after which doubling gained less than GAIN (or the last one tried)."""
    chosen = steps[0][0]
    for (_, before), (threads, tps) in zip(steps, steps[1:], strict=False):
        if tps < before * (1 + GAIN):
            break
        chosen = threads
    return chosen


def path_for(host: dict[str, Any], profile: Any, key: dict[str, Any]) -> Path:
    text = json.dumps([profile.facts(), host["device"], key, STEP_S, GAIN, METHOD],
                      sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return (Path(host["state_dir"]) / "calibration"
            / f"{host['name']}-{profile.NAME}-mariadb-threads-{digest}.json")


def threads(host: dict[str, Any], profile: Any, device: disk.Device, mount: Path,
            tables: int, table_size: int) -> dict[str, Any]:
    """The cached calibration of this host, profile and tables; measured when missing."""
    path = path_for(host, profile, cache_key(tables, table_size))
    if path.is_file():
        return {**json.loads(path.read_text()), "file": str(path)}
    tarball, _ = prepared_datadir(Path(host["state_dir"]), disk.state_root(host), tables,
                                  table_size)
    log.info("calibrating sysbench threads on profile %s (once per host and tables)",
             profile.NAME)
    stalls: list[str] = []
    while True:
        with profile.unmodelled():
            disk.wipe(device)
            disk.mkfs_ext4(device.path, "jb-calibrate")
            disk.mount_ext4(device.path, mount)
            sh("tar", "-xf", str(tarball), "-C", str(mount), timeout=1800)
        try:
            steps = measure(mount, tables, table_size)
            break
        except ServerStalled as stall:
            stalls.append(str(stall))
            if len(stalls) == ATTEMPTS:
                raise
            log.info("%s; calibrating again from a fresh copy of the tables (attempt %d of %d)",
                     stall, len(stalls) + 1, ATTEMPTS)
        finally:
            sh("umount", str(mount))
            mount.rmdir()
    record = {"threads": choose(steps), "steps": [{"threads": n, "tps": tps} for n, tps in steps],
              "step_s": STEP_S, "gain": GAIN, "method": METHOD, "tables": tables,
              "table_size": table_size, "stalled_attempts": stalls,
              "profile": profile.NAME,
              "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.rename(path)
    log.info("sysbench threads: %d (%s)", record["threads"], record["steps"])
    return {**record, "file": str(path)}


def measure(mount: Path, tables: int, table_size: int) -> list[tuple[int, float]]:
    from journalbench.formats import ParseError
    from journalbench.formats.sysbench import parse_sysbench

    shell = LocalShell()
    server = Server(shell, "host (thread calibration)", str(mount / DATA_NAME), str(mount),
                    mount / "mariadbd.log")
    steps: list[tuple[int, float]] = []
    try:
        server.start()
        server.preload(tables)
        count = 1
        while count <= MAX_THREADS:
            report = mount / f"sysbench-{count}.log"
            try:
                report.write_text(shell.run(sysbench_argv(str(mount), tables, table_size, "run",
                                                          count, STEP_S), timeout=STEP_S + 120))
            except CommandTimeout as timeout:
                note = stall_note(server.log_file)
                if note is None:
                    raise
                raise ServerStalled(f"the calibration server stalled at {count} threads "
                                    f"({note}): {timeout}") from None
            try:
                steps.append((count, parse_sysbench(report).tps))
            except ParseError as error:
                raise AgentError(f"thread calibration: {error}") from None
            if choose(steps) != count:
                break
            count *= 2
    finally:
        server.kill()
    return steps
