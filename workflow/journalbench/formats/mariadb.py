"""A MariaDB tenant's counters and set-up facts (written by agent/workloads/mariadb.py).

`mariadb-<t>-counters.txt`, format version 1, one record per line:

    journalbench-mariadb-counters 1         header
    clk_tck N                               kernel ticks per second (/proc/PID/stat times)
    before clock SECONDS                    wall clock, then the server's /proc/PID/stat line
    before server_stat PID (mariadbd) S ... and SHOW GLOBAL STATUS, one variable a line
    before status NAME VALUE
    before uptime SECONDS                   the host's /proc/uptime as the client starts
    client_cpu REAL USER SYS                bash's `time` of the sysbench client
    after uptime SECONDS                    /proc/uptime as the client has ended
    after clock / after server_stat / after status ...
    end                                     footer: without it the file is truncated

The two `uptime` lines (since 2026-11-29; absent before) bound the measured client's run on the
clock of the host it ran on (a VM's guest: the clock of its own report, formats/guest.py), so
the snapshots around it, which start a client process of their own, fall outside it.

`mariadb-<t>.json`: threads (and where they came from), where the client ran, the set-up times.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench.formats import problem, read_text


# the file of a tenant's output in its run folder
def mariadb_counters_file(tenant: str) -> str:
    """The server's status and CPU time before and after, and the client's CPU time."""
    return f"mariadb-{tenant}-counters.txt"


def mariadb_facts_file(tenant: str) -> str:
    """The mariadb workload's set-up: threads, client location, copy and start times."""
    return f"mariadb-{tenant}.json"


# how a tenant's thread count was chosen (its facts' `threads_from`): raised until the device
# saturated (the I/O calibration, as the thesis raised its clients), the host's guest
# operating point (the count at which the vm arm's emulated guest keeps up), or the spec's own
IO_SATURATION, GUEST_POINT, SPEC = "io-saturation", "guest", "spec"


def client_point(threads_from: str) -> str:
    """IO_SATURATION, GUEST_POINT or SPEC, from the facts' `threads_from` ("calibration
    <file>", "guest point <file>", "spec")."""
    if threads_from.startswith("guest point"):
        return GUEST_POINT
    return IO_SATURATION if threads_from.startswith("calibration") else SPEC


HEADER = "journalbench-mariadb-counters 1"
PHASES = ("before", "after")
# MariaDB 10.8 and later count log fsyncs in Innodb_data_fsyncs and no longer have this one
LOG_FSYNCS = "Innodb_os_log_fsyncs"


@dataclass(frozen=True)
class Snapshot:
    clock_s: float
    server_ticks: int  # utime + stime of mariadbd
    status: dict[str, str]
    uptime_s: float | None = None  # /proc/uptime next to the client's run (None: not recorded)


@dataclass(frozen=True)
class Counters:
    path: str
    clk_tck: int
    before: Snapshot
    after: Snapshot
    client_real_s: float
    client_cpu_s: float  # user + sys

    @property
    def elapsed_s(self) -> float:
        return self.after.clock_s - self.before.clock_s

    @property
    def client_phase(self) -> tuple[float, float] | None:
        """When the measured client ran, on its host's /proc/uptime clock: from after the
        snapshot before it to before the snapshot after it (None in files without them)."""
        if self.before.uptime_s is None or self.after.uptime_s is None:
            return None
        return self.before.uptime_s, self.after.uptime_s

    def delta(self, name: str) -> int | None:
        """The growth of a status counter; None when this server has no such counter."""
        if name not in self.before.status and name not in self.after.status:
            return None
        try:
            return int(self.after.status[name]) - int(self.before.status[name])
        except (KeyError, ValueError):
            raise problem(self.path, f"status {name} not a number before and after") from None

    @property
    def data_fsyncs(self) -> int:
        count = self.delta("Innodb_data_fsyncs")
        if count is None:
            raise problem(self.path, "no Innodb_data_fsyncs in the server's status")
        return count

    @property
    def log_fsyncs(self) -> int | None:
        return self.delta(LOG_FSYNCS)

    @property
    def server_cpu_share(self) -> float:
        """mariadbd's CPU time over the measured phase, as a share of one core."""
        ticks = self.after.server_ticks - self.before.server_ticks
        return ticks / self.clk_tck / self.elapsed_s

    @property
    def client_cpu_share(self) -> float:
        return self.client_cpu_s / self.client_real_s


def snapshot(path: Path, phase: str, lines: dict[str, list[tuple[int, str]]],
             status: dict[str, str]) -> Snapshot:
    def one(kind: str) -> tuple[int, str]:
        found = lines.get(f"{phase} {kind}", [])
        if len(found) != 1:
            raise problem(path, f"{len(found)} '{phase} {kind}' lines, expected 1")
        return found[0]

    number, clock = one("clock")
    try:
        clock_s = float(clock)
    except ValueError:
        raise problem(path, f"'{phase} clock' is {clock!r}", number) from None
    number, stat = one("server_stat")
    fields = stat.rsplit(")", 1)[-1].split()
    try:  # after the command name: state is field 3, utime and stime are fields 14 and 15
        ticks = int(fields[11]) + int(fields[12])
    except (IndexError, ValueError):
        raise problem(path, "'server_stat' is not a /proc/PID/stat line", number) from None
    if not status:
        raise problem(path, f"no '{phase} status' lines (SHOW GLOBAL STATUS failed?)")
    uptime = None
    if f"{phase} uptime" in lines:  # recorded since 2026-11-29
        number, text = one("uptime")
        try:
            uptime = float(text)
        except ValueError:
            raise problem(path, f"'{phase} uptime' is {text!r}", number) from None
        if not uptime >= 0:
            raise problem(path, f"'{phase} uptime' is {text!r}", number)
    return Snapshot(clock_s, ticks, status, uptime)


def parse_counters(path: Path | str) -> Counters:
    """A complete counters file; ParseError naming the file if truncated or malformed."""
    path = Path(path)
    text = read_text(path).splitlines()
    if text[0] != HEADER:
        raise problem(path, f"not a MariaDB counters file (no '{HEADER}' header)", 1)
    if text[-1] != "end":
        raise problem(path, "truncated: no 'end' footer (the measured phase did not finish)",
                      len(text))
    lines: dict[str, list[tuple[int, str]]] = {}
    # the status lines (all but a few) go to their phase's SHOW GLOBAL STATUS at once: name,
    # whitespace, value
    status: dict[str, dict[str, str]] = {phase: {} for phase in PHASES}
    for number, line in enumerate(text[1:-1], start=2):
        words = line.split(" ", 2)
        if words[0] in PHASES and len(words) == 3:
            if words[1] == "status":
                pair = words[2].split(None, 1)
                if not pair:
                    raise problem(path, "a status line without a name", number)
                status[words[0]][pair[0]] = pair[1].strip() if len(pair) == 2 else ""
            else:
                lines.setdefault(f"{words[0]} {words[1]}", []).append((number, words[2]))
        elif words[0] in ("clk_tck", "client_cpu") and len(words) > 1:
            lines.setdefault(words[0], []).append((number, line.split(" ", 1)[1]))
        else:
            raise problem(path, "unexpected line", number)
    try:
        clk_tck = int(lines["clk_tck"][0][1])
        real, user, system = (float(v) for v in lines["client_cpu"][0][1].split())
    except (KeyError, ValueError):
        raise problem(path, "no valid 'clk_tck' or 'client_cpu REAL USER SYS' line") from None
    counters = Counters(str(path), clk_tck, snapshot(path, "before", lines, status["before"]),
                        snapshot(path, "after", lines, status["after"]), real, user + system)
    if counters.elapsed_s <= 0 or real <= 0:
        raise problem(path, "measured phase of zero length")
    if (counters.before.uptime_s is None) != (counters.after.uptime_s is None):
        raise problem(path, "an 'uptime' line before the client without one after it, or the "
                            "reverse")
    phase = counters.client_phase
    if phase is not None and phase[1] <= phase[0]:
        raise problem(path, f"'after uptime' {phase[1]} is not after 'before uptime' {phase[0]}")
    return counters


def parse_facts(path: Path | str) -> dict[str, Any]:
    """The set-up facts; ParseError naming the file and field if one is missing."""
    path = Path(path)
    try:
        facts = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise problem(path, f"not valid JSON ({error.msg})", error.lineno) from None
    wanted = {"threads": int, "threads_from": str, "client_location": str,
              "buffer_pool_mb": int, "tables": int, "table_size": int}
    for name, kind in wanted.items():
        if not isinstance(facts.get(name), kind) or isinstance(facts.get(name), bool):
            raise problem(path, f"'{name}' missing or not {kind.__name__}")
    setup = facts.get("setup_s")
    if not isinstance(setup, dict) or not isinstance(setup.get("total"), (int, float)):
        raise problem(path, "'setup_s.total' missing or not a number")
    return facts
