"""What a reader needs to judge a run's numbers beyond the device itself: the machine (CPU,
RAM, whether it is itself virtual), the storage under the test device (its cache mode and
whether it honours FUA), each file system as made (dumpe2fs -h), the versions of the tools
that made them, the agent's own source, and how loaded the machine was before and after."""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

from journalbench.agent.system import mounts, read, sh

DUMPE2FS_KEYS = (
    "Filesystem features", "Journal features", "Total journal size", "Journal size",
    "Block size", "Inode size", "Default mount options", "Journal backup",
)


def first_line(path: str, prefix: str) -> str | None:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return None
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(prefix)),
                None)


def machine() -> dict[str, Any]:
    meminfo = first_line("/proc/meminfo", "MemTotal")
    return {
        "cpu_model": first_line("/proc/cpuinfo", "model name"),
        "ram_bytes": int(meminfo.split()[0]) * 1024 if meminfo else None,
        "virtualized": virtualization(),
    }


def virtualization() -> dict[str, Any]:
    """Whether this host is itself a VM or container (a guest's steal time and virtual disk
    are part of what its numbers mean)."""
    flags = first_line("/proc/cpuinfo", "flags") or ""
    found: dict[str, Any] = {"cpu_hypervisor_flag": "hypervisor" in flags.split()}
    if shutil.which("systemd-detect-virt"):
        found["systemd_detect_virt"] = sh("systemd-detect-virt", check=False).strip() or None
    return found


def backing_disk(path: str) -> str | None:
    """The whole disk under the file system holding `path` (for an image-backed device)."""
    source = sh("findmnt", "-n", "-o", "SOURCE", "--target", path, check=False).strip()
    name = Path(os.path.realpath(source)).name if source.startswith("/dev/") else ""
    sysfs = Path("/sys/class/block") / name
    if not name or not sysfs.exists():
        return None
    return sysfs.resolve().parent.name if (sysfs / "partition").exists() else name


def storage(named: str, device_name: str) -> dict[str, Any]:
    """Cache mode and FUA of the test device and of the disk under its image, where known."""
    found: dict[str, Any] = {}
    for role, name in (("test_device", device_name), ("under_image", backing_disk(named))):
        if name is None:
            continue
        queue = Path("/sys/block") / name / "queue"
        found[role] = {"name": name, "write_cache": optional(queue / "write_cache"),
                       "fua": optional(queue / "fua")}
    return found


def optional(path: Path) -> str | None:
    return read(path) if path.exists() else None


def file_system(volume: str) -> dict[str, Any]:
    out = sh("dumpe2fs", "-h", volume, check=False, timeout=60)
    fields = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in DUMPE2FS_KEYS:
            fields[key.strip()] = value.strip()
    options = next((o for source, _, _, o in mounts() if source == volume), None)
    return {"dumpe2fs": fields, "mount_options": options}


def tool_versions() -> dict[str, str]:
    return {"mkfs.ext4": version_line("mkfs.ext4", "-V"), "python": platform.python_version()}


def version_line(*argv: str) -> str:
    """First line a tool prints about its version (e2fsprogs print it on stderr)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "missing"
    text = (done.stdout.strip() or done.stderr.strip())
    return text.splitlines()[0] if text else "unknown"


def agent_source_hash() -> str:
    """sha256 over the agent package's files (also inside the zipapp the agent runs from)."""
    digest = hashlib.sha256()

    def walk(node: Any, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            name = f"{prefix}/{child.name}"
            if child.is_dir() and child.name != "__pycache__":
                walk(child, name)
            elif child.is_file() and not child.name.endswith(".pyc"):
                digest.update(name.encode() + b"\0" + child.read_bytes())

    walk(importlib.resources.files("journalbench.agent"), "agent")
    return digest.hexdigest()


def load() -> dict[str, Any]:
    """Load averages and cumulative CPU ticks (for steal and busy shares between two reads)."""
    cpu = read("/proc/stat").splitlines()[0].split()[1:]
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    return {"loadavg": read("/proc/loadavg").split()[:3],
            "cpu_ticks": dict(zip(names, (int(v) for v in cpu), strict=False))}


def load_between(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Shares of the machine's CPU time between two `load()` reads."""
    delta = {k: after["cpu_ticks"][k] - before["cpu_ticks"][k] for k in before["cpu_ticks"]}
    total = sum(delta.values()) or 1
    return {"before": before["loadavg"], "after": after["loadavg"],
            "steal_share": round(delta["steal"] / total, 4),
            "busy_share": round(1 - (delta["idle"] + delta["iowait"]) / total, 4)}
