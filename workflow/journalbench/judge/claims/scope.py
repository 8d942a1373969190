"""The testbed factors a claim's mechanism depends on, the thesis's value of each (cited from
the thesis), and this testbed's, read from the runs behind a check. A check judged where a
factor it depends on differs from the thesis's testbed says what the runs show on this
testbed, not that the thesis was wrong there: its opposite result is "not reproduced here",
and "contradicted" is kept for checks whose every such factor matches (verdicts.py).

Which factors a check depends on: those its claim declares (catalog.py `scope`), where they
apply to the check's runs: the weights only where tenants compete (two or more in a run),
write-back only where a container tenant or its neighbour leaves its write-back to the
kernel's flushers (writes through the page cache without fsync), the
container platform only where an arm the thesis ran on OpenVZ is in it, and every VM half on
the VM's virtualization too.

The thesis's testbed (p. 31): a 1 TB SAS disk; Linux 4.18 with cgroup v2 for LXC 3.0.4 and
KVM (QEMU 2.11.1); OpenVZ 7.0.10 "with its corresponding kernel and resources control", whose
kernel the thesis does not name, for OpenVZ's containers, and so for every per-container
journal (Ploop) and every journal accounting (cgclassify) of its Chapter 5 (pp. 60-62). The
kernel era is no factor of its own: the journal's mechanics (ordered mode, one jbd2 thread per
file system) are those of 4.18 and 6.x alike; what changed between them is the I/O control
(WEIGHTS), and the Chapter 5 arms' kernel is their platform's (PLATFORM).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from journalbench.vocabulary import JOURNAL_ACCOUNTED, PER_CONTAINER_JOURNAL, VM

DEVICE, WEIGHTS, WRITEBACK, VIRTUALIZATION, PLATFORM = (
    "device", "weights", "writeback", "virtualization", "platform")
# the arms the thesis ran on OpenVZ 7.0.10's own kernel (Ploop, cgclassify: pp. 60-62); its
# shared journal and its VM ran on Linux 4.18 with cgroup v2 as LXC and KVM (p. 31)
OPENVZ_ARMS = (PER_CONTAINER_JOURNAL, JOURNAL_ACCOUNTED)
HDD_PROFILES = ("hdd", "hdd-wcache")
HDD_FSYNC_MS = 5.0  # a device whose fsync takes this long or more is a rotating disk's class
# what each I/O control's weights divide (a module of agent/iocontrol/ per name)
DIVIDES = {"bfq": "sectors of service (BFQ's budgets)", "iocost": "modelled device time"}
TIME = "modelled device time"
# the fio presets whose write-back the kernel's flushers do (through the page cache, no
# fsync); a buffered writer that fsyncs writes its pages back itself, charged to its cgroup on
# v1 too (thesis-hdd: 97-104% of its bytes; a no-fsync writer's: 0-0.27 MB of GBs)
FLUSHED = ("buffered-no-fsync",)


@dataclass(frozen=True)
class Factor:
    name: str
    what: str  # the factor, for a reader
    short: str  # its name in a summary
    thesis: str  # the thesis's value, with where the thesis says it
    applies: Callable[[pd.DataFrame], bool]  # to a check's rows
    ours: Callable[[pd.DataFrame], str]  # this testbed's value in the rows
    matches: Callable[[pd.DataFrame], bool]


def values(rows: pd.DataFrame, column: str) -> list:
    return sorted({v for v in rows[column] if pd.notna(v)}, key=str) if column in rows else []


def device_value(rows: pd.DataFrame) -> str:
    profiles = values(rows, "device_profile") or ["native"]
    fsync = rows["device_fsync_lat_ms"].median() if "device_fsync_lat_ms" in rows else None
    measured = f", fsync {fsync:.3g} ms" if fsync is not None and pd.notna(fsync) else ""
    kinds = ["an emulated single-actuator HDD" if p in HDD_PROFILES else f"the host's {p} disk"
             for p in profiles]
    return f"{' + '.join(kinds)}{measured}"


def hdd_class(rows: pd.DataFrame) -> bool:
    """A rotating disk's: an HDD profile, or a device whose fsync took a rotating disk's time."""
    if rows.empty:
        return False
    profile = (rows["device_profile"].isin(HDD_PROFILES) if "device_profile" in rows
               else pd.Series(False, index=rows.index))
    slow = (rows["device_fsync_lat_ms"] >= HDD_FSYNC_MS if "device_fsync_lat_ms" in rows
            else pd.Series(False, index=rows.index))
    return bool((profile | slow).all())


def weights_value(rows: pd.DataFrame) -> str:
    controls = values(rows, "io_control") or ["bfq"]
    return "; ".join(f"{c}: weights divide {DIVIDES.get(c, 'an unknown quantity')}"
                     for c in controls)


def flushed(rows: pd.DataFrame) -> bool:
    """Whether a tenant of the rows, or a neighbour beside them, leaves its write-back to the
    kernel's flushers."""
    names = [*values(rows, "preset"), *values(rows, "beside")]
    return any(n in FLUSHED for n in names)


def containers(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["arm"] != VM] if "arm" in rows else rows


def openvz(rows: pd.DataFrame) -> bool:
    return "arm" in rows and bool(rows["arm"].isin(OPENVZ_ARMS).any())


def writeback_value(rows: pd.DataFrame) -> str:
    versions = values(rows, "cgroup_version")
    attributed = values(rows, "writeback_attributed")
    charged = ("its writer's cgroup" if attributed == [1] else
               "no tenant (the kernel's flushers)" if attributed == [0] else "unknown")
    return f"cgroup v{'+v'.join(str(int(v)) for v in versions) or '?'}: write-back charged " \
           f"to {charged}"


def platform_value(rows: pd.DataFrame) -> str:
    kernels = sorted({str(k).split("-")[0] for k in values(rows, "kernel")})
    return f"LXC containers on this host's Linux {', '.join(kernels) or '(unknown)'}"


def vm_rows(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["arm"] == VM] if "arm" in rows else rows.iloc[:0]


def accel_value(rows: pd.DataFrame) -> str:
    accel = values(vm_rows(rows), "virt_accel")
    return "+".join(a.upper() for a in accel) or "unknown acceleration"


FACTORS: dict[str, Factor] = {f.name: f for f in (
    Factor(DEVICE, "device class", "device",
           "a 1 TB SAS hard disk (thesis p. 31); KVM's high-fsync writer ~18.5 ms an fsync "
           "(Table 4.1, p. 43)",
           lambda rows: True, device_value, hdd_class),
    Factor(WEIGHTS, "the I/O controller and what its weights divide", "what the weights divide",
           "cgroup proportional weights dividing disk time (thesis pp. 29-30: the weights "
           "\"specify the relative amount of disk time\")",
           lambda rows: "n_tenants" in rows and bool((rows["n_tenants"] > 1).any()),
           weights_value,
           lambda rows: bool(values(rows, "io_control"))
           and all(DIVIDES.get(c) == TIME for c in values(rows, "io_control"))),
    Factor(WRITEBACK, "cgroup version and write-back attribution", "write-back attribution",
           "cgroup v2 for LXC (thesis p. 31: \"Cgroupv2 is used with LXC and KVM\"), whose io "
           "and memory controllers charge a buffered writer's write-back to its cgroup",
           lambda rows: flushed(containers(rows)), lambda rows: writeback_value(containers(rows)),
           lambda rows: values(containers(rows), "writeback_attributed") == [1]),
    Factor(VIRTUALIZATION, "virtualization and its acceleration", "VM acceleration",
           "KVM (QEMU 2.11.1, 1 vCPU pinned to a core, 1 GB, thesis p. 31)",
           lambda rows: not vm_rows(rows).empty, accel_value,
           lambda rows: values(vm_rows(rows), "virt_accel") == ["kvm"]),
    Factor(PLATFORM, "the container platform and its kernel", "container platform",
           "OpenVZ 7.0.10 with Ploop (and cgclassify for accounting) on OpenVZ's own kernel "
           "and resource control, neither named by the thesis (pp. 31, 60-62)",
           openvz, platform_value, lambda rows: False),
)}


def depends(declared: tuple[str, ...], rows: pd.DataFrame) -> list[Factor]:
    """The factors a check with these rows depends on: its claim's, where they apply, and
    virtualization wherever a VM half is in it."""
    names = [*declared, *([VIRTUALIZATION] if VIRTUALIZATION not in declared else [])]
    return [FACTORS[n] for n in names if FACTORS[n].applies(rows)]


def differs(declared: tuple[str, ...], rows: pd.DataFrame) -> list[Factor]:
    """The factors the check depends on whose value here is not the thesis's."""
    return [f for f in depends(declared, rows) if not f.matches(rows)]


def described(factor: Factor, rows: pd.DataFrame) -> str:
    """A reader's line: "device class: here ...; the thesis's ..."."""
    return f"{factor.what}: here {factor.ours(rows)}; the thesis's {factor.thesis}"
