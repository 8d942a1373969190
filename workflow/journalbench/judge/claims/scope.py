"""The testbed factors a claim's mechanism depends on, the thesis's value of each (cited from
the thesis), and this testbed's, read from the runs behind a check. A check's outcome says what
its runs show on their testbed, whichever way it goes, and carries the factors in which that
testbed differs from the thesis's (verdicts.py): "reproduced where the testbed differs in X"
and "contradicted where the testbed differs in X" alike, or either "on a testbed like the
thesis's".

Which factors a check depends on: those its claim ties to it by a mechanism (catalog.py, each
claim's `mechanisms`; mechanisms.py says each in a sentence with its source), where they
apply to the check's runs: the weights only where tenants compete (two or more in a run),
write-back only where a container tenant or its neighbour leaves its write-back to the
kernel's flushers (writes through the page cache without fsync), the per-container volume
only where an arm the thesis ran on OpenVZ's Ploop is in it, every VM half on the VM's
virtualization too, and a MySQL check on its client load (how its sysbench threads were
chosen: raised until the device saturated, as the thesis's clients were, or the guest's
operating point below it). A study that measured a claim's effect under both values of a factor
drops or keeps it by that measurement (contrasts.py).

The thesis's testbed (p. 31): a 1 TB SAS disk; Linux 4.18 with cgroup v2 for LXC 3.0.4 and
KVM (QEMU 2.11.1); OpenVZ 7.0.10 for OpenVZ's containers, and so for every per-container
journal (each on a Ploop volume) and every journal accounting (cgclassify) of its Chapter 5
(pp. 58-62). The kernel era is no factor of its own: the journal's mechanics (ordered mode,
one jbd2 thread per file system) are those of 4.18 and 6.x alike; what changed between them
is the I/O control (WEIGHTS).

What a testbed's weights divide is measured (rule weights-measured, 2026-11-29: division.py):
its weights are like the thesis's only where its validation pairs showed them dividing device
time. A testbed without those pairs shows its controller's documented mechanism, as such, and
is unlike the thesis's (nothing measured it dividing time). Before that rule the controller's
name decided (`named`: iocost "modelled device time", like the thesis's; BFQ sectors): kept
only to list what the rule changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from journalbench.formats.mariadb import GUEST_POINT, IO_SATURATION, SPEC
from journalbench.judge.claims import division
from journalbench.judge.claims.mechanisms import (
    DEVICE,
    LOAD,
    PLATFORM,
    VIRTUALIZATION,
    WEIGHTS,
    WRITEBACK,
)
from journalbench.vocabulary import JOURNAL_ACCOUNTED, ON_DEMAND_IMAGE, PER_CONTAINER_JOURNAL, VM

# the arms the thesis ran on OpenVZ 7.0.10 with Ploop volumes (and cgclassify: pp. 58-62);
# its shared journal and its VM ran on Linux 4.18 with cgroup v2 as LXC and KVM (p. 31)
OPENVZ_ARMS = (PER_CONTAINER_JOURNAL, JOURNAL_ACCOUNTED)
HDD_PROFILES = ("hdd", "hdd-wcache")
HDD_FSYNC_MS = 5.0  # a device whose fsync takes this long or more is a rotating disk's class
# what each I/O control's weights divide by its name alone, as judged until the rule
# weights-measured (2026-11-29): kept only to list what that rule changed
NAMED_DIVIDES = {"bfq": "sectors of service (BFQ's budgets)", "iocost": "modelled device time"}
NAMED_TIME = "modelled device time"
# the fio presets whose write-back the kernel's flushers do (through the page cache, no
# fsync); a buffered writer that fsyncs writes its pages back itself, charged to its cgroup on
# v1 too (thesis-hdd: 97-104% of its bytes; a no-fsync writer's: 0-0.27 MB of GBs)
FLUSHED = ("buffered-no-fsync",)


# the tools whose `ops_s` counts transactions of a database in its guest (one autocommitted
# INSERT each), whose vCPU time per transaction the VM's acceleration factor states
DB_TRANSACTIONS = ("mariadb",)
# the runs' columns the factors read, and the preconditions (checks.Check.testbed)
COLUMNS = ("arm", "n_tenants", "preset", "beside", "io_control", "writeback_attributed",
           "cgroup_version", "virt_accel", "device_profile", "device_fsync_lat_ms", "kernel",
           "tool", "cpu_bound", "run_id", "container_volume", "vcpu_busy_mean", "ops_s",
           "op_lat_mean_ms", "client_threads", "client_point")


class Columns(Mapping[str, np.ndarray]):
    """The COLUMNS of a check's rows as arrays, each taken from the frame when first read:
    taking all of them for every check was a tenth of judging."""

    def __init__(self, rows: pd.DataFrame) -> None:
        self.rows = rows
        self.names = [c for c in COLUMNS if c in rows.columns]
        self.taken: dict[str, np.ndarray] = {}

    def __getitem__(self, column: str) -> np.ndarray:
        if column not in self.taken:
            if column not in self.names:
                raise KeyError(column)
            self.taken[column] = self.rows[column].to_numpy()
        return self.taken[column]

    def __contains__(self, column: object) -> bool:
        return column in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class Testbed:
    """The columns of a check's rows the factors read, as arrays: a pandas selection per factor
    and check cost about a second over the shipped campaigns."""

    def __init__(self, rows: pd.DataFrame) -> None:
        # what the family's weights were measured to divide (division.py), set by the judge
        # before any factor is asked; None: no measurement of them
        self.division: division.Division | None = None
        self.record: division.Record | None = None  # the family's cost statistics
        self.size = len(rows)
        self.columns = Columns(rows)
        self.vm = (self.columns["arm"] == VM if "arm" in self.columns
                   else np.zeros(self.size, dtype=bool))
        self.known: dict[tuple[str, str], bool] = {}  # (factor, "applies"|"matches") -> answer
        self.as_floats: dict[str, np.ndarray] = {}

    def asks(self, factor: Factor, question: str) -> bool:
        """Whether `factor` applies to these rows, or matches the thesis's value in them,
        asked once per check: the current scope and the legacy one ask the same."""
        key = (factor.name, factor.basis, question)
        if key not in self.known:
            self.known[key] = bool(getattr(factor, question)(self))
        return self.known[key]

    def values(self, column: str, mask: np.ndarray | None = None) -> list:
        """The column's distinct values (nulls left out), of the rows `mask` keeps."""
        if column not in self.columns:
            return []
        data = self.columns[column] if mask is None else self.columns[column][mask]
        return sorted({v for v in data.tolist() if not pd.isna(v)}, key=str)

    def floats(self, column: str) -> np.ndarray:
        """The column as floats (NaN where missing or not a number), made once per check; the
        caller gets a copy."""
        if column not in self.columns:
            return np.full(self.size, np.nan)
        if column not in self.as_floats:
            self.as_floats[column] = pd.to_numeric(pd.Series(self.columns[column]),
                                                   errors="coerce").to_numpy(float)
        return self.as_floats[column].copy()


@dataclass(frozen=True)
class Factor:
    name: str
    what: str  # the factor, for a reader
    short: str  # its name in a summary
    tag: str  # its name in a word, in the README's tables
    thesis: str  # the thesis's value, with where the thesis says it
    applies: Callable[[Testbed], bool]  # to a check's rows
    ours: Callable[[Testbed], str]  # this testbed's value in the rows
    matches: Callable[[Testbed], bool]
    basis: str = ""  # "named": the weights judged by the controller's name (NAMED_WEIGHTS)


def device_value(bed: Testbed) -> str:
    profiles = bed.values("device_profile") or ["native"]
    fsync = bed.floats("device_fsync_lat_ms")
    measured = (f", fsync {np.nanmedian(fsync):.3g} ms" if np.isfinite(fsync).any() else "")
    kinds = ["an emulated single-actuator HDD" if p in HDD_PROFILES else f"the host's {p} disk"
             for p in profiles]
    return f"{' + '.join(kinds)}{measured}"


def hdd_class(bed: Testbed) -> bool:
    """A rotating disk's: an HDD profile, or a device whose fsync took a rotating disk's time."""
    if not bed.size:
        return False
    profile = (np.isin(bed.columns["device_profile"], HDD_PROFILES)
               if "device_profile" in bed.columns else np.zeros(bed.size, dtype=bool))
    with np.errstate(invalid="ignore"):
        slow = bed.floats("device_fsync_lat_ms") >= HDD_FSYNC_MS
    return bool((profile | slow).all())


def weights_value(bed: Testbed) -> str:
    """What the testbed's weights were measured to divide, with the numbers, or its
    controller's documented mechanism where nothing measured it."""
    if bed.division is not None:
        return bed.division.describe()
    controls = bed.values("io_control") or ["bfq"]
    return "; ".join(division.not_measured(c) for c in controls)


def named_weights_value(bed: Testbed) -> str:
    controls = bed.values("io_control") or ["bfq"]
    return "; ".join(f"{c}: weights divide {NAMED_DIVIDES.get(c, 'an unknown quantity')}"
                     for c in controls)


def competing(bed: Testbed) -> bool:
    tenants = bed.floats("n_tenants")
    return bool((tenants > 1).any())


def divides_time(bed: Testbed) -> bool:
    """Measured to divide device time (division.py), as the thesis's weights did."""
    return bed.division is not None and bed.division.divides_time


def named_divides_time(bed: Testbed) -> bool:
    controls = bed.values("io_control")
    return bool(controls) and all(NAMED_DIVIDES.get(c) == NAMED_TIME for c in controls)


def flushed(bed: Testbed) -> bool:
    """Whether a container tenant of the rows, or a neighbour beside one, leaves its
    write-back to the kernel's flushers."""
    containers = ~bed.vm
    names = [*bed.values("preset", containers), *bed.values("beside", containers)]
    return any(n in FLUSHED for n in names)


def writeback_value(bed: Testbed) -> str:
    versions = bed.values("cgroup_version", ~bed.vm)
    attributed = bed.values("writeback_attributed", ~bed.vm)
    charged = ("its writer's cgroup" if attributed == [1] else
               "no tenant (the kernel's flushers)" if attributed == [0] else "unknown")
    return f"cgroup v{'+v'.join(str(int(v)) for v in versions) or '?'}: write-back charged " \
           f"to {charged}"


def attributed(bed: Testbed) -> bool:
    return bed.values("writeback_attributed", ~bed.vm) == [1]


def openvz_rows(bed: Testbed) -> np.ndarray:
    if "arm" not in bed.columns:
        return np.zeros(bed.size, dtype=bool)
    return np.isin(bed.columns["arm"], OPENVZ_ARMS)


def openvz(bed: Testbed) -> bool:
    return bool(openvz_rows(bed).any())


def volume_value(bed: Testbed) -> str:
    kinds = bed.values("container_volume", openvz_rows(bed))
    return (f"LXC containers, each file system on {' or '.join(kinds)}" if kinds
            else "LXC containers, their volumes not recorded")


def on_demand(bed: Testbed) -> bool:
    """Whether every per-container volume of the OpenVZ arms' rows is an image whose blocks
    are allocated as the container first writes them, as Ploop's are."""
    return bed.values("container_volume", openvz_rows(bed)) == [ON_DEMAND_IMAGE]


def accel_value(bed: Testbed) -> str:
    """The VM's acceleration; under TCG, for a database's transactions, the emulated guest's
    vCPU time per transaction beside the transaction's latency: at most what a KVM guest, whose
    CPU runs at native speed, would take off each transaction."""
    accel = bed.values("virt_accel", bed.vm)
    text = "+".join(a.upper() for a in accel) or "unknown acceleration"
    if "tcg" not in accel:
        return text
    database = bed.vm & database_rows(bed)
    with np.errstate(divide="ignore", invalid="ignore"):
        vcpu_ms = (1000 * bed.floats("vcpu_busy_mean") / bed.floats("ops_s"))[database]
    latency = bed.floats("op_lat_mean_ms")[database]
    known = np.isfinite(vcpu_ms) & np.isfinite(latency)
    if not known.any():
        return text
    return (f"{text}; the emulated guest's vCPU {np.median(vcpu_ms[known]):.3g} ms a transaction "
            f"against a {np.median(latency[known]):.3g} ms transaction (medians of "
            f"{int(known.sum())} vm tenant-runs): at most what KVM would save")


def database_rows(bed: Testbed) -> np.ndarray:
    if "tool" not in bed.columns:
        return np.zeros(bed.size, dtype=bool)
    return np.isin(bed.columns["tool"], DB_TRANSACTIONS)


HOW_CHOSEN = {IO_SATURATION: "raised until a doubling gained < 5% (the device's I/O calibration)",
              GUEST_POINT: "the guest's operating point (the largest count at which the emulated "
                           "guest was saturated in no second and at most half busy)",
              SPEC: "fixed by the run spec"}


def load_value(bed: Testbed) -> str:
    rows = database_rows(bed)
    counts = "/".join(str(int(t)) for t in bed.values("client_threads", rows)) or "?"
    points = bed.values("client_point", rows)
    how = ("; ".join(HOW_CHOSEN.get(p, p) for p in points) if points
           else "how they were chosen not recorded")
    return f"{counts} sysbench threads, {how}"


def at_saturation(bed: Testbed) -> bool:
    """Clients raised until the device saturated, as the thesis's were; a table that does not
    record how (made by hand, or before tidy's `client_point`) counts as the I/O calibration's,
    which chose every count before the guest operating point existed."""
    return all(p == IO_SATURATION for p in bed.values("client_point", database_rows(bed)))


THESIS_WEIGHTS = ("cgroup proportional weights dividing disk time (thesis pp. 29-30: the weights "
                  "\"specify the relative amount of disk time\")")
FACTORS: dict[str, Factor] = {f.name: f for f in (
    Factor(DEVICE, "device class", "device", "device",
           "a 1 TB SAS hard disk (thesis p. 31); KVM's high-fsync writer ~18.5 ms an fsync "
           "(Table 4.1, p. 43)",
           lambda bed: True, device_value, hdd_class),
    Factor(WEIGHTS, "the I/O controller and what its weights divide (measured)",
           "what the weights divide", "weights", THESIS_WEIGHTS,
           competing, weights_value, divides_time),
    Factor(WRITEBACK, "cgroup version and write-back attribution", "write-back attribution",
           "write-back",
           "cgroup v2 for LXC (thesis p. 31: \"Cgroupv2 is used with LXC and KVM\"), whose io "
           "and memory controllers charge a buffered writer's write-back to its cgroup",
           flushed, writeback_value, attributed),
    Factor(VIRTUALIZATION, "virtualization and its acceleration", "VM acceleration", "VM",
           "KVM (QEMU 2.11.1, 1 vCPU pinned to a core, 1 GB, thesis p. 31)",
           lambda bed: bool(bed.vm.any()), accel_value,
           lambda bed: bed.values("virt_accel", bed.vm) == ["kvm"]),
    Factor(LOAD, "the database's client load (its operating point)", "client load", "load",
           "MySQL's clients raised \"until I/O operations are saturated\" (thesis Sec 4.1.1, "
           "p. 36)", lambda bed: bool(database_rows(bed).any()), load_value, at_saturation),
    Factor(PLATFORM, "the per-container volume (the thesis's OpenVZ Ploop)",
           "per-container volume", "Ploop",
           "OpenVZ 7.0.10's Ploop: each container's ext4 on an image file of the host's file "
           "system, its blocks allocated on demand (\"dynamic allocation\", Sec 5.2.1, pp. "
           "58-59); accounting by cgclassify of each jbd2 (Sec 5.2.2, p. 60)",
           openvz, volume_value, on_demand),
)}


# the weights factor as it was judged before the rule weights-measured: by the controller's name
NAMED_WEIGHTS = Factor(WEIGHTS, "the I/O controller and what its weights divide",
                       "what the weights divide", "weights", THESIS_WEIGHTS, competing,
                       named_weights_value, named_divides_time, basis="named")


def depends(declared: tuple[str, ...], bed: Testbed, named: bool = False) -> list[Factor]:
    """The factors a check with these rows depends on: its claim's, where they apply, and
    virtualization wherever a VM half is in it; `named`: the weights judged by name."""
    names = [*declared, *([VIRTUALIZATION] if VIRTUALIZATION not in declared else [])]
    found = [NAMED_WEIGHTS if named and n == WEIGHTS else FACTORS[n] for n in names]
    return [f for f in found if bed.asks(f, "applies")]


def differs(declared: tuple[str, ...], rows: pd.DataFrame | Testbed,
            named: bool = False) -> list[Factor]:
    """The factors the check depends on whose value here is not the thesis's (`named`: the
    weights judged by the controller's name, as before the rule weights-measured)."""
    bed = rows if isinstance(rows, Testbed) else Testbed(rows)
    return [f for f in depends(declared, bed, named) if not bed.asks(f, "matches")]


def described(factor: Factor, rows: pd.DataFrame | Testbed) -> str:
    """A reader's line: "device class: here ...; the thesis's ..."."""
    bed = rows if isinstance(rows, Testbed) else Testbed(rows)
    return f"{factor.what}: here {factor.ours(bed)}; the thesis's {factor.thesis}"
