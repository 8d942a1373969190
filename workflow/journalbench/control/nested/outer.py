"""What the machine below a nested host spends on a run: the CPU of the guest's QEMU (every
tenant's CPU, emulated under TCG) and of the device profile's emulator (the `hdd` model's
nbdkit), over the run's workload phase, and how busy this machine was meanwhile. A run on this
machine records its emulator's CPU itself (host.json `device_profile.emulator_cpu_share`); a
nested host's agent cannot see the processes below it, so the controller reads them when the
agent's log says the workloads start and stop (runfolder.WORKLOADS_START/DONE) and adds them to
the run folder as outer.json."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench import runfolder


@dataclass(frozen=True)
class Reading:
    at: float  # time.monotonic()
    qemu_s: float  # CPU seconds the guest's QEMU has used
    emulator_s: float  # those of the device profiles' emulators (nbdkit)
    busy_ticks: int  # this machine's non-idle CPU ticks, all cores
    total_ticks: int


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used; 0 for one that is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of this machine since boot (/proc/stat's first line)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return sum(values) - idle, sum(values)


def pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_now(folder: Path, qemu_pid: int) -> Reading:
    """The machine's processes as they stand: QEMU by its pid, the emulators by the pid files
    under the machine's folder (disks/<profile>/nbdkit.pid)."""
    emulators = [pid for pid in (pid_in(p) for p in sorted(folder.glob("disks/*/nbdkit.pid")))
                 if pid is not None]
    busy, total = machine_ticks()
    return Reading(time.monotonic(), process_cpu(qemu_pid),
                   sum(process_cpu(pid) for pid in emulators), busy, total)


def record(start: Reading, end: Reading, cores: int | None = None) -> dict[str, Any]:
    """outer.json's content: each share is CPU seconds over the phase's wall seconds (a share
    of one core, as emulator_cpu_share is); `busy_share` is of all this machine's cores."""
    wall = max(end.at - start.at, 1e-9)
    ticks = max(end.total_ticks - start.total_ticks, 1)
    return {
        "phase": "workloads (warm-up and window), from the agent's log lines "
                 f"{runfolder.WORKLOADS_START!r} to {runfolder.WORKLOADS_DONE!r}",
        "wall_s": round(wall, 3),
        "qemu_cpu_s": round(end.qemu_s - start.qemu_s, 3),
        "qemu_cpu_share": round((end.qemu_s - start.qemu_s) / wall, 4),
        "emulator_cpu_s": round(end.emulator_s - start.emulator_s, 3),
        "emulator_cpu_share": round((end.emulator_s - start.emulator_s) / wall, 4),
        "busy_share": round((end.busy_ticks - start.busy_ticks) / ticks, 4),
        "cores": cores or os.cpu_count(),
    }


def add_to_run(dest: Path, content: dict[str, Any]) -> None:
    """outer.json into a fetched run folder, and its manifest written again over every file."""
    (dest / runfolder.OUTER).write_text(json.dumps(content, indent=1, sort_keys=True) + "\n")
    runfolder.write_manifest(dest)
