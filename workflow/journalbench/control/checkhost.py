"""`journalbench check-host HOST`: what the agent needs on HOST, a table of what is missing and
the apt-get command that installs it.

The tools come from the modules that run them (`journalbench.agent.packages`), the rest
(root, kernel, cgroups, BFQ, python, KVM, the VM guest build, device, space) from one probe
script run over the host's transport. Whether KVM works is known only by booting a guest under
it (on some hosts /dev/kvm opens but a guest hangs): check-host reads the answer the agent's
probe left for this host boot, or runs that probe itself and leaves its answer for the agent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from journalbench.agent import packages
from journalbench.agent.arms.vm import arm as vm
from journalbench.agent.arms.vm import image as guest_image
from journalbench.control.deploy import MIN_PYTHON, layout_of
from journalbench.control.reach import for_host
from journalbench.control.transport import Transport


@dataclass
class Check:
    name: str
    required: bool
    ok: bool
    found: str
    need: str
    package: str | None = None
    fix: str | None = None
    info: bool = False  # a property of the host, reported, never missing

    @property
    def status(self) -> str:
        if self.info:
            return "info"
        if self.ok:
            return "ok"
        return "MISSING" if self.required else "missing (optional)"


# Facts about the host as key=value lines. Values from the host file arrive as $1.. only; the
# tool commands to look for follow them.
PROBE_SCRIPT = r"""
state=$1; py=$2; dev=$3; guest=$4; guest_facts=$5; shift 5
echo "uid=$(id -u)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "cgroup_fs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null)"
awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ {f=1} END {exit !f}' /proc/mounts \
  && echo cgroup_v1_blkio=yes
for f in /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/unified/cgroup.controllers; do
  [ -f "$f" ] && grep -qw io "$f" && echo cgroup_v2_io=yes
  [ -f "$f" ] && echo "cgroup_v2_controllers=$(cat "$f")"
done
[ -f /sys/fs/cgroup/io.cost.qos ] && echo iocost=yes
bfq=no
grep -qw bfq /sys/block/*/queue/scheduler 2>/dev/null && bfq=active
[ "$bfq" = no ] && [ -d /sys/module/bfq ] && bfq=loaded
[ "$bfq" = no ] && modprobe -n bfq 2>/dev/null && bfq=module
echo "bfq=$bfq"
[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && echo kvm=yes
echo "python=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
echo "qemu_version=$(qemu-system-$(uname -m) --version 2>/dev/null | head -n 1)"
"$py" -c "$guest_facts" "$guest" 2>/dev/null
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


# The VM guest's build and the agent's cached KVM probe, as key=value lines (run by the host's
# python, with the guest folder as its argument).
GUEST_FACTS = """
import json, os, sys
folder = sys.argv[1]
try:
    info = json.load(open(os.path.join(folder, "guest.json")))
    kernel = info.get("boot_kernel", "vmlinuz")
    print("guest_recipe=" + str(info.get("recipe", "")))
    print("guest_kernel=" + str(info.get("kernel_release", "")))
    print("guest_boot_kernel=" + kernel)
    files = [os.path.join(folder, name) for name in (kernel, "initrd.img")]
    print("guest_files=" + ("yes" if all(map(os.path.isfile, files)) else "no"))
except (OSError, ValueError):
    pass
try:
    probe = json.load(open(os.path.join(folder, "@PROBE_CACHE@")))
    print("kvm_probe_key=" + json.dumps(probe["key"], sort_keys=True))
    print("kvm_probe=" + probe["result"])
except (OSError, ValueError, KeyError, TypeError):
    pass
""".replace("@PROBE_CACHE@", vm.PROBE_CACHE)


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
            str(guest_image.GUEST_DIR),
            GUEST_FACTS,
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
        *_system_checks(host, facts),
        _python_check(host, facts),
        *_tool_checks(facts),
        _guest_check(facts),
        _kvm_check(facts),
        *_storage_checks(host, facts),
    ]


def cgroup_version(facts: dict[str, str]) -> int | None:
    """The version the agent drives disk weights with: v1 blkio when the host has it (the
    agent's cgroups.detect), else v2 with io; None with neither."""
    if facts.get("cgroup_v1_blkio") == "yes":
        return 1
    return 2 if facts.get("cgroup_v2_io") == "yes" else None


def writeback_attributed(facts: dict[str, str]) -> bool:
    """Buffered writes are charged to their writer: cgroup v2 drives the disk, with memory
    and io both on it (agent/cgroups.py writeback_attributed)."""
    return cgroup_version(facts) == 2 and {"io", "memory"} <= set(
        facts.get("cgroup_v2_controllers", "").split())


def _cgroup_checks(host: dict[str, Any], facts: dict[str, str]) -> list[Check]:
    version = cgroup_version(facts)
    controllers = facts.get("cgroup_v2_controllers", "").split()
    if version == 1:
        found = "v1 blkio" + (f" (v2 beside it: {' '.join(controllers)})" if controllers else "")
    elif version == 2:
        found = "v2" + (f": {' '.join(controllers)}" if controllers else " io")
    else:
        found = f"no blkio/io controller ({facts.get('cgroup_fs', '?')})"
    wb = writeback_attributed(facts)
    why_not = ("cgroup v1 charges write-back to no tenant" if version == 1
               else "v2 without memory and io")
    iocost = facts.get("iocost") == "yes" and version == 2
    no_iocost = "no (cgroup v1)" if version == 1 else "no (no io.cost.qos)"
    wants_iocost = host.get("io_control") == "iocost"
    return [
        Check("cgroup", True, version is not None, found, "v1 blkio or v2 io controller",
              fix="mount the blkio (v1) or enable the io controller (v2)"),
        Check("writeback_attributed", False, True,
              "true: memory and io on v2" if wb else f"false: {why_not}",
              "buffered writers' bytes charged to their tenant", info=True),
        # iocost is a property of the host unless its host file asks for it
        Check("iocost", wants_iocost, iocost or not wants_iocost,
              "yes (io.cost.qos)" if iocost else no_iocost,
              "io_control: iocost (cgroup v2)", info=not wants_iocost,
              fix="a cgroup-v2 host whose kernel has CONFIG_BLK_CGROUP_IOCOST"),
    ]


def _system_checks(host: dict[str, Any], facts: dict[str, str]) -> list[Check]:
    kernel = facts.get("kernel", "")
    bfq = facts.get("bfq", "no")
    return [
        Check("root", True, facts.get("uid") == "0", f"uid {facts.get('uid', '?')}",
              "root (or ssh.sudo)", fix="log in as root or set ssh.sudo: true"),
        Check("kernel", True, _version_tuple(kernel) >= (4, 12), kernel or "?",
              ">= 4.12 (BFQ)", fix="upgrade the kernel"),
        *_cgroup_checks(host, facts),
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


GUEST_FIX = ("make guest, as root on the host (or `python3 -m journalbench.agent.arms.vm.image` "
             "with the agent on PYTHONPATH)")


def guest_ready(facts: dict[str, str]) -> bool:
    return (facts.get("guest_recipe") == guest_image.recipe()
            and facts.get("guest_files") == "yes")


def _guest_check(facts: dict[str, str]) -> Check:
    kernel = facts.get("guest_kernel", "")
    if not facts.get("guest_recipe"):
        found = f"missing ({guest_image.GUEST_DIR})"
    elif facts.get("guest_files") != "yes":
        found = f"{kernel}: kernel or initramfs missing"
    elif facts.get("guest_recipe") != guest_image.recipe():
        found = f"{kernel}: built by an older recipe"
    else:
        found = f"{kernel} ({facts.get('guest_boot_kernel', '?')})"
    return Check("VM guest", False, guest_ready(facts), found,
                 "vm arm: guest kernel + initramfs", fix=GUEST_FIX)


def probe_answer(facts: dict[str, str]) -> str | None:
    """The KVM probe's answer if it was given for this host boot, kernel, QEMU and guest."""
    key = vm.probe_key(facts.get("boot_id", ""), facts.get("kernel", ""),
                       facts.get("qemu_version", ""))
    if facts.get("kvm_probe_key") == json.dumps(key, sort_keys=True):
        return facts.get("kvm_probe")
    return None


def _kvm_check(facts: dict[str, str]) -> Check:
    need = "vm arm at full speed (else TCG)"
    if facts.get("kvm") != "yes":
        return Check("KVM", False, False, "no /dev/kvm: VMs run under TCG", need,
                     fix="enable virtualization / load the kvm module")
    answer = probe_answer(facts)
    if answer is None and not guest_ready(facts):
        return Check("KVM", False, False, "/dev/kvm, not probed: no VM guest to boot", need,
                     fix=f"{GUEST_FIX}; check-host then boots a probe guest under KVM")
    if answer is None:
        return Check("KVM", False, False, "/dev/kvm, not probed yet", need,
                     fix="run check-host (it boots a probe guest under KVM) or a vm run")
    if answer != "kvm":
        return Check("KVM", False, False, f"/dev/kvm, but {answer}: VMs run under TCG", need,
                     fix="VM runs fall back to TCG and are labelled so; for KVM, enable "
                         "(nested) virtualization for this host")
    return Check("KVM", False, True, "works (a probe guest booted)", need)


def probe_kvm(facts: dict[str, str], transport: Transport) -> None:
    """Boot the agent's probe guest under KVM over the transport, when /dev/kvm is there, the
    guest is built and no answer holds for this host boot; leave the answer where the agent
    reads it (so neither probes again until the host reboots)."""
    if facts.get("kvm") != "yes" or not guest_ready(facts) or probe_answer(facts) is not None:
        return
    argv = vm.probe_argv(facts.get("arch", "x86_64"), facts.get("guest_boot_kernel", ""),
                         "stdio")
    done = transport.run(["timeout", str(vm.PROBE_TIMEOUT_S), *argv],
                         timeout=vm.PROBE_TIMEOUT_S + 60, check=False)
    if guest_image.PROBE_OK in done.stdout:
        answer = "kvm"
    elif done.returncode == 124:  # timeout's own code: the guest hung
        answer = vm.probe_failed()
    else:
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        answer = f"QEMU under KVM exited {done.returncode}: {detail}"
    key = vm.probe_key(facts.get("boot_id", ""), facts.get("kernel", ""),
                       facts.get("qemu_version", ""))
    transport.run(["sh", "-c", 'cat > "$1"', "jb-probe", str(guest_image.GUEST_DIR /
                                                              vm.PROBE_CACHE)],
                  stdin=vm.probe_record(key, answer).encode(), timeout=60)
    facts["kvm_probe_key"], facts["kvm_probe"] = json.dumps(key, sort_keys=True), answer


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
    if not any(c.required for c in missing):
        optional = ", ".join(c.name for c in missing)
        lines.append("everything the agent needs is there"
                     + (f" (optional, missing: {optional})" if optional else ""))
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
        inside = transport.agent_host(host)  # a nested host: the guest's own view
        facts = probe_host(inside, transport)
        probe_kvm(facts, transport)
        return evaluate(inside, facts)
    finally:
        if own:
            transport.close()
