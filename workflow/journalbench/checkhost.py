"""`journalbench check-host HOST`: what the agent needs on HOST, a table of what is missing and
the apt-get command that installs it.

The tools come from the modules that run them (`journalbench.agent.packages`), the rest
(root, kernel, cgroups, BFQ, python, KVM, device, space) from one probe script run over the
host's transport.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from journalbench.agent import packages
from journalbench.deploy import MIN_PYTHON, layout_of
from journalbench.transport import Transport, for_host


@dataclass
class Check:
    name: str
    required: bool
    ok: bool
    found: str
    need: str
    package: str | None = None
    fix: str | None = None

    @property
    def status(self) -> str:
        if self.ok:
            return "ok"
        return "MISSING" if self.required else "missing (optional)"


# Facts about the host as key=value lines. Values from the host file arrive as $1.. only; the
# tool commands to look for follow them.
PROBE_SCRIPT = r"""
state=$1; py=$2; dev=$3; shift 3
echo "uid=$(id -u)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "cgroup_fs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null)"
awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ {f=1} END {exit !f}' /proc/mounts \
  && echo cgroup_v1_blkio=yes
for f in /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/unified/cgroup.controllers; do
  [ -f "$f" ] && grep -qw io "$f" && echo cgroup_v2_io=yes
done
bfq=no
grep -qw bfq /sys/block/*/queue/scheduler 2>/dev/null && bfq=active
[ "$bfq" = no ] && [ -d /sys/module/bfq ] && bfq=loaded
[ "$bfq" = no ] && modprobe -n bfq 2>/dev/null && bfq=module
echo "bfq=$bfq"
[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && echo kvm=yes
echo "python=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)"
for tool in "$@"; do
  echo "tool_$tool=$(command -v "$tool" 2>/dev/null)"
done
d=$state; while [ ! -d "$d" ]; do d=$(dirname "$d"); done
echo "space_dir=$d"
echo "space_kb=$(df -Pk "$d" | awk 'NR == 2 {print $4}')"
if [ -n "$dev" ]; then
  echo "device_path=$(readlink -f "$dev" 2>/dev/null)"
  [ -b "$dev" ] && echo device_block=yes
  [ -b "$dev" ] && echo "device_bytes=$(blockdev --getsize64 "$dev" 2>/dev/null)"
  grep -q "^$(readlink -f "$dev") " /proc/mounts && echo device_mounted=yes
fi
exit 0
"""


def probe_host(host: dict[str, Any], transport: Transport) -> dict[str, str]:
    # The tool list depends on the architecture (qemu-system-<arch>): ask that first.
    arch = transport.run(["uname", "-m"], timeout=60, retry=True).stdout.strip()
    device = host.get("device", {})
    result = transport.run(
        [
            "sh",
            "-c",
            PROBE_SCRIPT,
            "jb-check",
            layout_of(host).state_dir,
            host.get("python", "python3"),
            device.get("id", "") if device.get("kind") == "disk" else "",
            *(tool.command for tool in packages.tools(arch)),
        ],
        timeout=120,
        retry=True,
    )
    facts: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            facts[key.strip()] = value.strip()
    return facts


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def evaluate(host: dict[str, Any], facts: dict[str, str]) -> list[Check]:
    """Turn probe facts into checks (pure: tested without a host)."""
    return [
        *_system_checks(facts),
        _python_check(host, facts),
        *_tool_checks(facts),
        _kvm_check(facts),
        *_storage_checks(host, facts),
    ]


def _system_checks(facts: dict[str, str]) -> list[Check]:
    kernel = facts.get("kernel", "")
    v1 = facts.get("cgroup_v1_blkio") == "yes"
    v2 = facts.get("cgroup_v2_io") == "yes"
    cgroups = ", ".join(x for x, ok in (("v1 blkio", v1), ("v2 io", v2)) if ok) or (
        f"no blkio/io controller ({facts.get('cgroup_fs', '?')})"
    )
    bfq = facts.get("bfq", "no")
    return [
        Check("root", True, facts.get("uid") == "0", f"uid {facts.get('uid', '?')}",
              "root (or ssh.sudo)", fix="log in as root or set ssh.sudo: true"),
        Check("kernel", True, _version_tuple(kernel) >= (4, 12), kernel or "?",
              ">= 4.12 (BFQ)", fix="upgrade the kernel"),
        Check("cgroup", True, v1 or v2, cgroups, "v1 blkio or v2 io controller",
              fix="mount the blkio (v1) or enable the io controller (v2)"),
        Check("BFQ", True, bfq != "no", bfq, "bfq I/O scheduler",
              fix="modprobe bfq (kernel with CONFIG_IOSCHED_BFQ)"),
    ]


def _python_check(host: dict[str, Any], facts: dict[str, str]) -> Check:
    python = facts.get("python", "")
    return Check(
        "python",
        True,
        bool(python) and _version_tuple(python)[:2] >= MIN_PYTHON,
        python or "missing",
        f"{host.get('python', 'python3')} >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]}",
        package="python3" if not python else None,
        fix=None if not python else "install Python >= 3.11, set python:",
    )


def _tool_checks(facts: dict[str, str]) -> list[Check]:
    checks = []
    for tool in packages.tools(facts.get("arch", "x86_64")):
        path = facts.get(f"tool_{tool.command}", "")
        checks.append(Check(tool.command, tool.required, bool(path), path or "missing",
                            tool.purpose, tool.package))
    return checks


def _kvm_check(facts: dict[str, str]) -> Check:
    kvm = facts.get("kvm") == "yes"
    return Check("KVM", False, kvm, "/dev/kvm" if kvm else "no (VMs fall back to TCG)",
                 "fast vm arm", fix="enable virtualization / load kvm module")


def _storage_checks(host: dict[str, Any], facts: dict[str, str]) -> list[Check]:
    device = host.get("device", {})
    space_kb = int(facts.get("space_kb") or 0)
    checks = []
    if device.get("kind") == "image":
        need_kb = int(device.get("size_gb", 12)) * 1024 * 1024 + 1024 * 1024
        need = f">= {need_kb // (1024 * 1024)} GiB (image {device.get('size_gb', 12)} GiB + 1)"
    else:
        need_kb = 1024 * 1024
        need = ">= 1 GiB"
        found = facts.get("device_path") or "missing"
        if facts.get("device_mounted") == "yes":
            found += " (MOUNTED)"
        dev_ok = facts.get("device_block") == "yes" and facts.get("device_mounted") != "yes"
        checks.append(Check("device", True, dev_ok, found,
                            f"{device.get('id')}: block device, not mounted",
                            fix="fix device.id in the host file"))
    checks.append(Check(f"space in {facts.get('space_dir', '?')}", True, space_kb >= need_kb,
                        f"{space_kb / (1024 * 1024):.1f} GiB free", need,
                        fix="free space or move state_dir"))
    return checks


def apt_command(checks: list[Check]) -> str | None:
    packages = sorted({c.package for c in checks if not c.ok and c.package})
    if not packages:
        return None
    return "apt-get install -y " + " ".join(packages)


def format_checks(label: str, checks: list[Check]) -> str:
    rows = [("check", "status", "found", "needed for")]
    rows += [(c.name, c.status, c.found, c.need) for c in checks]
    widths = [min(max(len(r[i]) for r in rows), 48) for i in range(3)]
    lines = [f"host {label}"]
    for row in rows:
        lines.append(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[3]
        )
    missing = [c for c in checks if not c.ok]
    if not missing:
        lines.append("everything the agent needs is there")
    apt = apt_command(checks)
    if apt:
        lines.append(f"to install the missing packages: {apt}")
    for c in missing:
        if c.fix and not c.package:
            lines.append(f"{c.name}: {c.fix}")
    return "\n".join(lines)


def check_host(host: dict[str, Any], transport: Transport | None = None) -> list[Check]:
    own = transport is None
    transport = transport or for_host(host)
    try:
        return evaluate(host, probe_host(host, transport))
    finally:
        if own:
            transport.close()
