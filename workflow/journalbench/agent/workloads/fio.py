"""fio, the thesis's micro-benchmark: presets, the data file's preparation, the command line.

File preparation (`prep`), what the measured writes land on:
- `overwrite`: a file written in full before the run; writes overwrite allocated blocks, and the
  job cycles over the file (`size_mb`) as often as it gets round.
- `fallocate`: what fio itself does for a write job on a new file: the file's blocks are
  allocated but unwritten (fallocate(2)), so each write's extent is converted by a journaled
  metadata update.
- `append`: a new, empty file that every write extends (block allocation and the file size
  are journaled).
The last two measure a regime only while the file has room: the file is sized from the run
(`file_size`), and a run whose writes reached the file's end fails (`wrap_problem`) instead of
silently measuring writes that overwrite what the run itself wrote.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from journalbench.agent.requires import Tool
from journalbench.agent.system import log, tool_version
from journalbench.agent.workloads.base import Process, TenantShell, Workload, spawn_into
from journalbench.errors import AgentError
from journalbench.formats.fio import (  # at the top: the bundle ships it
    fio_file,
    parse_fio,
    summarise,
)

PRESETS: dict[str, dict[str, Any]] = {
    "no-fsync": {"rw": "write", "bs": "64k", "fsync": 0},
    "low-fsync": {"rw": "write", "bs": "64k", "fsync": 20},
    "high-fsync": {"rw": "write", "bs": "64k", "fsync": 5},
    "randread-16k": {"rw": "randread", "bs": "16k", "fsync": 0},
    "randwrite-16k": {"rw": "randwrite", "bs": "16k", "fsync": 0},
    "seqread-64k": {"rw": "read", "bs": "64k", "fsync": 0},
    "seqwrite-64k": {"rw": "write", "bs": "64k", "fsync": 0},
    # the Redis experiments' neighbours write through the page cache (thesis Sec 5.4)
    "buffered-no-fsync": {"rw": "write", "bs": "64k", "fsync": 0, "direct": 0},
    "buffered-low-fsync": {"rw": "write", "bs": "64k", "fsync": 20, "direct": 0},
    "buffered-high-fsync": {"rw": "write", "bs": "64k", "fsync": 5, "direct": 0},
}
DATA_FILE = "fio.dat"
DEFAULT_SIZE_MB = 256
LAYOUT_TIMEOUT_S = 600

PREPS = ("overwrite", "fallocate", "append")
# What a campaign's write workloads get when it names no prep: fio's own default for a write
# job on a new file, as the thesis ran fio with nothing but its job parameters (see
# workflow/campaigns/quick.yaml and data/README.md).
DEFAULT_PREP = "fallocate"
# What a run spec without `prep` means: every run made before the field existed overwrote a
# pre-written file, and a hand-written spec keeps meaning what it meant.
ABSENT_PREP = "overwrite"
# A fallocate/append file holds this many times what the device's calibrated sequential rate
# could write in the run: the calibration probe is a short single-writer burst, and writers on
# this host's fast disk were seen up to ~1.4x above it. A run that still outgrows it fails.
SIZE_MARGIN = 2.0
# left free on a tenant's file system for its metadata (extent blocks) and other files
RESERVE_BYTES = 64 << 20
MIN_FILE_BYTES = 16 << 20
MIB = 1 << 20


def is_read(preset: str) -> bool:
    return PRESETS[preset]["rw"] in ("read", "randread")


def is_random(preset: str) -> bool:
    return PRESETS[preset]["rw"].startswith("rand")


def preps_for(preset: str) -> tuple[str, ...]:
    """Reads need written data; appending is sequential by nature."""
    if is_read(preset):
        return ("overwrite",)
    if is_random(preset):
        return ("overwrite", "fallocate")
    return PREPS


def prep_of(workload: dict[str, Any]) -> str:
    """The prep of a run spec's fio workload (absent: `ABSENT_PREP`)."""
    return str(workload.get("prep", ABSENT_PREP))


def planned(workload: dict[str, Any], experiment_prep: str | None) -> dict[str, Any]:
    """A campaign's fio workload as its run spec holds it: the tenant's own prep, else the
    experiment's, else `DEFAULT_PREP` (reads: overwrite). A prep equal to what an absent one
    means is left out, so runs of a campaign pinned to it keep their ids."""
    preset = workload.get("preset")
    chosen = workload.get("prep", experiment_prep)
    if chosen is None:
        chosen = ABSENT_PREP if preset in PRESETS and is_read(preset) else DEFAULT_PREP
    rest = {k: v for k, v in workload.items() if k != "prep"}
    return rest if chosen == ABSENT_PREP else {**rest, "prep": chosen}


def job(workload: dict[str, Any]) -> dict[str, Any]:
    """The preset with the spec's overrides applied (block size for claim C4, file size)."""
    settings = dict(PRESETS[workload["preset"]])
    settings["bs"] = workload.get("bs", settings["bs"])
    settings["size_mb"] = workload.get("size_mb", DEFAULT_SIZE_MB)
    settings["prep"] = prep_of(workload)
    return settings


def check(tenant: str, workload: dict[str, Any]) -> None:
    """The rules the schema states, for specs that reach the agent without it."""
    prep, preset = prep_of(workload), workload["preset"]
    if prep not in preps_for(preset):
        raise AgentError(f"tenant {tenant}: fio preset {preset} cannot use prep {prep} "
                         f"(it allows {', '.join(preps_for(preset))})")


def size_bytes(text: str) -> int:
    """fio's size notation (16k, 64k, 1m, 4096) in bytes, powers of 1024."""
    match = re.fullmatch(r"(\d+)([kKmMgG]?)", text)
    if not match:
        raise ValueError(f"not a size: {text!r}")
    return int(match[1]) << {"": 0, "k": 10, "m": 20, "g": 30}[match[2].lower()]


def file_size(seconds: float, mb_s: float, free_bytes: int, sharing: int,
              bs: int) -> tuple[int, int, bool]:
    """(size, estimate, bounded) of a direct writer's fallocate/append file in bytes: what
    `seconds` of writing at the calibrated `mb_s` can fill, times SIZE_MARGIN; bounded by the
    file system's free space split among the `sharing` tenants still to prepare on it. Rounded
    down to whole MiB (a multiple of any preset's bs)."""
    estimate = math.ceil(seconds * mb_s * 1e6 * SIZE_MARGIN)
    bound = (free_bytes - RESERVE_BYTES) // max(1, sharing)
    size = min(estimate, bound) // MIB * MIB
    return size - size % bs, estimate, bound < estimate


def buffered_size(free_bytes: int, sharing: int, bs: int) -> int:
    """A buffered writer's fallocate/append file: an even share of the file system's free
    space among the `sharing` tenants on it, rounded down to whole MiB."""
    size = (free_bytes - RESERVE_BYTES) // max(1, sharing) // MIB * MIB
    return size - size % bs


def parse_filefrag(text: str) -> tuple[int, list[tuple[int, int, bool]]]:
    """`filefrag -v` -> (block size, [(first block, length, written)]) of a file's extents."""
    block = re.search(r"blocks of (\d+) bytes", text)
    if block is None:
        raise ValueError("filefrag -v output without a block size")
    extents = []
    row = re.compile(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+\d+\.\.\s*\d+:\s+(\d+):.*?$")
    for line in text.splitlines():
        match = row.match(line)
        if match:
            extents.append((int(match[1]), int(match[3]), "unwritten" not in line))
    return int(block[1]), extents


def written_bytes(block: int, extents: list[tuple[int, int, bool]]) -> int:
    return sum(length for _, length, written in extents if written) * block


def reached_end(size: int, block: int, extents: list[tuple[int, int, bool]],
                sequential: bool) -> bool:
    """Whether a fallocated file's writes reached its end: for sequential writes the extent
    holding the last block is written; for random ones no unwritten extent is left."""
    if not sequential:
        return all(written for _, _, written in extents)
    last = (size - 1) // block
    return any(first <= last < first + length and written
               for first, length, written in extents)


def stops_at_end(settings: dict[str, Any]) -> bool:
    """A buffered writer of a fallocated file runs without `time_based`: fio stops when its
    writes reach the file's end, so a job shorter than its runtime says the file filled. The
    file's extents cannot say it without a sync that writes the page cache out (95 s on `hdd`
    beside Redis); the file is deleted instead, dropping its dirty pages."""
    return settings.get("direct", 1) == 0 and settings["prep"] == "fallocate"


def stopped_early(runtime_s: float, duration_s: int) -> bool:
    """fio's job ended before its runtime (1% slack for its timer): it ran out of file."""
    return runtime_s < duration_s * 0.99


def wrap_problem(tenant: str, prep: str, size: int, fio_bytes: int, filled: bool,
                 log_name: str) -> str | None:
    """Why a fallocate/append run did not keep its regime, or None."""
    if fio_bytes > size:
        what = f"fio wrote {fio_bytes} bytes after its warm-up into a {size}-byte file"
    elif filled:
        what = f"its writes reached the end of the {size}-byte file"
    else:
        return None
    return (f"tenant {tenant}: {prep} file wrapped: {what}, so later writes overwrote the "
            f"run's own (see {log_name}); the run would measure another regime")


def layout_command(directory: str, workload: dict[str, Any]) -> list[str]:
    """Write the whole data file once, so measured writes overwrite allocated blocks and
    reads read real data, and no tenant starts while another is still laying out. Queued
    (libaio, 16 deep) so that a disk with a seek and a rotation, real or emulated, streams it
    instead of waiting a turn between requests."""
    return [
        "fio", "--name=layout", f"--filename={directory}/{DATA_FILE}", "--rw=write", "--bs=1m",
        f"--size={job(workload)['size_mb']}m", "--direct=1", "--ioengine=libaio",
        "--iodepth=16", "--output-format=terse",
    ]


def create_command(directory: str, workload: dict[str, Any], size: int) -> list[str]:
    """fio's own set-up of the measured job's file and nothing else (`create_only`): for
    `fallocate` a file of `size` bytes allocated by fio's default fallocate mode, for `append`
    an empty file."""
    settings = job(workload)
    args = ["fio", "--name=create", f"--filename={directory}/{DATA_FILE}",
            f"--rw={settings['rw']}", f"--bs={settings['bs']}", f"--size={size}",
            "--create_only=1", "--output-format=terse"]
    if settings["prep"] == "append":
        args += ["--fallocate=none", "--file_append=1"]
    return args


def run_command(tenant: str, directory: str, workload: dict[str, Any], duration_s: int,
                warmup_s: int = 0, size: int | None = None) -> list[str]:
    """The measured job: `warmup_s` of ramp (left out of fio's figures) before `duration_s`
    of measurement; `size` is the file's size in bytes (default: size_mb)."""
    settings = job(workload)
    args = [
        "fio", f"--name={tenant}", f"--filename={directory}/{DATA_FILE}",
        f"--rw={settings['rw']}", f"--bs={settings['bs']}",
        f"--size={size}" if size is not None else f"--size={settings['size_mb']}m",
        f"--direct={settings.get('direct', 1)}", "--ioengine=psync", "--iodepth=1",
        *([] if stops_at_end(settings) else ["--time_based"]),
        f"--runtime={duration_s}", "--output-format=json+",
    ]
    if warmup_s:
        args.append(f"--ramp_time={warmup_s}")
    if settings["prep"] == "append":
        args += ["--fallocate=none", "--file_append=1"]
    if settings["fsync"]:
        args.append(f"--fsync={settings['fsync']}")
    return args


def file_report(tenant: str) -> str:
    """What the run found of a fallocate/append file: its size, bytes written, filled."""
    return f"fio-{tenant}-file.json"


class Fio(Workload):
    TOOL = "fio"
    TOOLS = (Tool("fio", "fio", True, "fio workloads"),
             Tool("filefrag", "e2fsprogs", True, "fio fallocate files"))
    PRESETS = PRESETS

    @classmethod
    def planned(cls, workload: dict[str, Any], experiment: dict[str, Any]) -> dict[str, Any]:
        return planned(workload, experiment.get("prep"))

    def __init__(self, tenant: str, settings: dict[str, Any], duration_s: int) -> None:
        super().__init__(tenant, settings, duration_s)
        check(tenant, settings)
        self.prep = prep_of(settings)
        self.size: int | None = None  # bytes of a fallocate/append file

    def versions(self) -> dict[str, str]:
        return {"fio": tool_version("fio", "--version")}

    def path(self, shell: TenantShell) -> str:
        return f"{shell.data_dir}/{DATA_FILE}"

    def prepare(self, shell: TenantShell) -> None:
        if self.prep == "overwrite":
            shell.run(layout_command(shell.data_dir, self.settings), timeout=LAYOUT_TIMEOUT_S)
            return
        self.size = self.sized(shell)
        shell.run(create_command(shell.data_dir, self.settings, self.size),
                  timeout=LAYOUT_TIMEOUT_S)

    def prepares_apart(self) -> bool:
        # a file of a fixed size; a fallocate/append file sized from the free space depends on
        # the files the tenants before it on the same volume made
        return self.prep == "overwrite" or "size_mb" in self.settings

    def sized(self, shell: TenantShell) -> int:
        """The file's size: size_mb when the spec gives it, else from the run's length, the
        device's calibrated rate and the free space of the tenant's file system."""
        if "size_mb" in self.settings:
            return int(self.settings["size_mb"]) * MIB
        settings = job(self.settings)
        free = int(shell.run(["df", "-B1", "--output=avail", shell.data_dir]).split()[-1])
        sharing = shell.sharing
        left = len(sharing) - sharing.index(self.tenant) if self.tenant in sharing else 1
        if settings.get("direct", 1) == 0:
            # write-back leaves in large requests, faster than the calibrated 64 KiB direct rate
            # (a guest on hdd: 1 GB in 22 s against 7.5 MB/s), so no rate bounds a buffered
            # writer: its file takes an even share of the free space of its file system, the
            # same for every tenant on it (they may write during the run: a Redis AOF grows)
            tenants = len(sharing) or 1
            size = buffered_size(free, tenants, size_bytes(settings["bs"]))
            log.info("tenant %s: %s file of %d MiB (buffered: an even share of %d MiB free)",
                     self.tenant, self.prep, size >> 20, free >> 20)
            return self.checked(size, free, tenants)
        seconds = self.warmup_s + self.duration_s
        size, estimate, bounded = file_size(seconds, self.device_mb_s(), free, left,
                                            size_bytes(settings["bs"]))
        self.checked(size, free, left)
        if bounded:
            log.warning("tenant %s: %s file bounded to %d MiB by free space (%d s at the "
                        "device's rate would need %d MiB): a run that outgrows it fails",
                        self.tenant, self.prep, size >> 20, seconds, estimate >> 20)
        log.info("tenant %s: %s file of %d MiB", self.tenant, self.prep, size >> 20)
        return size

    def checked(self, size: int, free: int, sharing: int) -> int:
        if size < MIN_FILE_BYTES:
            raise AgentError(f"tenant {self.tenant}: no room for a {self.prep} file "
                             f"({free >> 20} MiB free, shared by {sharing} tenant(s))")
        return size

    def device_mb_s(self) -> float:
        """The device's sequential write rate from the run's calibration (the faster of the
        run's probe and the reference)."""
        calibration = self.calibration or {}
        rates = [part.get("seq_write_mb_s") for part in
                 (calibration.get("probe", {}), calibration.get("reference", {}))]
        known = [float(r) for r in rates if r]
        if not known:
            raise AgentError(f"tenant {self.tenant}: a {self.prep} file is sized from the "
                             "device's calibrated sequential rate, and this run has none")
        return max(known)

    def start(self, shell: TenantShell, out: Path) -> list[Process]:
        argv = run_command(self.tenant, shell.data_dir, self.settings, self.duration_s,
                           self.warmup_s, self.size)
        return [spawn_into(shell, argv, f"fio in {self.tenant}",
                           out / fio_file(self.tenant),
                           out / f"fio-{self.tenant}.stderr")]

    def finish(self, shell: TenantShell, out: Path) -> None:
        """A fallocate/append file must not have wrapped: the run fails if it did."""
        if self.prep == "overwrite" or self.size is None:
            return
        log_name = fio_file(self.tenant)
        summary = summarise(parse_fio(out / log_name))
        fio_bytes = summary.io_bytes
        sequential = not is_random(self.settings["preset"])
        written: int | None
        if stops_at_end(job(self.settings)):
            written, filled = None, stopped_early(summary.runtime_s, self.duration_s)
            shell.run(["rm", "-f", self.path(shell)])
        elif self.prep == "append":
            length = int(shell.run(["stat", "-c", "%s", self.path(shell)]).strip())
            written, filled = length, length >= self.size
        else:
            block, extents = parse_filefrag(shell.run(["filefrag", "-s", "-v",
                                                       self.path(shell)]))
            written = written_bytes(block, extents)
            filled = reached_end(self.size, block, extents, sequential)
        report = {"prep": self.prep, "size_bytes": self.size, "written_bytes": written,
                  "fio_bytes_after_warmup": fio_bytes, "filled": filled}
        (out / file_report(self.tenant)).write_text(json.dumps(report, sort_keys=True) + "\n")
        problem = wrap_problem(self.tenant, self.prep, self.size, fio_bytes, filled, log_name)
        if problem:
            raise AgentError(problem)

    def outputs(self) -> list[str]:
        files = [fio_file(self.tenant)]
        return files + ([file_report(self.tenant)] if self.prep != "overwrite" else [])
