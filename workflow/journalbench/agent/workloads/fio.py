"""fio, the thesis's micro-benchmark: presets, the data-file layout, the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench import runfolder
from journalbench.agent.packages import Tool
from journalbench.agent.system import tool_version
from journalbench.agent.workloads.base import Process, TenantShell, Workload, spawn_into

PRESETS: dict[str, dict[str, Any]] = {
    "no-fsync": {"rw": "write", "bs": "64k", "fsync": 0},
    "low-fsync": {"rw": "write", "bs": "64k", "fsync": 20},
    "high-fsync": {"rw": "write", "bs": "64k", "fsync": 5},
    "randread-16k": {"rw": "randread", "bs": "16k", "fsync": 0},
    "randwrite-16k": {"rw": "randwrite", "bs": "16k", "fsync": 0},
    "seqread-64k": {"rw": "read", "bs": "64k", "fsync": 0},
    "seqwrite-64k": {"rw": "write", "bs": "64k", "fsync": 0},
}
DATA_FILE = "fio.dat"
DEFAULT_SIZE_MB = 256
LAYOUT_TIMEOUT_S = 600


def job(workload: dict[str, Any]) -> dict[str, Any]:
    """The preset with the spec's overrides applied (block size for claim C4, file size)."""
    settings = dict(PRESETS[workload["preset"]])
    settings["bs"] = workload.get("bs", settings["bs"])
    settings["size_mb"] = workload.get("size_mb", DEFAULT_SIZE_MB)
    return settings


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


def run_command(tenant: str, directory: str, workload: dict[str, Any],
                duration_s: int) -> list[str]:
    settings = job(workload)
    args = [
        "fio", f"--name={tenant}", f"--filename={directory}/{DATA_FILE}",
        f"--rw={settings['rw']}", f"--bs={settings['bs']}", f"--size={settings['size_mb']}m",
        "--direct=1", "--ioengine=psync", "--iodepth=1", "--time_based",
        f"--runtime={duration_s}", "--output-format=json+",
    ]
    if settings["fsync"]:
        args.append(f"--fsync={settings['fsync']}")
    return args


class Fio(Workload):
    TOOL = "fio"
    TOOLS = (Tool("fio", "fio", True, "fio workloads"),)
    PRESETS = PRESETS

    def versions(self) -> dict[str, str]:
        return {"fio": tool_version("fio", "--version")}

    def prepare(self, shell: TenantShell) -> None:
        shell.run(layout_command(shell.data_dir, self.settings), timeout=LAYOUT_TIMEOUT_S)

    def start(self, shell: TenantShell, out: Path) -> list[Process]:
        argv = run_command(self.tenant, shell.data_dir, self.settings, self.duration_s)
        return [spawn_into(shell, argv, f"fio in {self.tenant}",
                           out / runfolder.fio_file(self.tenant),
                           out / f"fio-{self.tenant}.stderr")]

    def outputs(self) -> list[str]:
        return [runfolder.fio_file(self.tenant)]
