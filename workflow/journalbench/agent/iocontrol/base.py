"""The interface every I/O control implements: one way of enforcing tenants' disk weights.

An I/O control prepares the test device (its scheduler and tunables, set afresh and read back),
sets and reads back a tenant cgroup's weight, names the LXC key that sets that weight when a
container starts, reads a cgroup's byte and request counters, and says what host.json records
of it. It stands on the cgroup backend (agent/cgroups.py: what depends on the cgroup version
alone); a control that cannot work on a host's cgroup version says so in `refuses`, which the
registry asks before the run makes anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from journalbench.agent import cgroups, disk
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.iocounters import IoCounters
from journalbench.agent.requires import Tool
from journalbench.agent.system import read, write

# how a control enforces weights: it orders every request by weight (a scheduler: BFQ), or it
# holds a group back only once the group outruns its budget (a throttle: iocost), so that its
# weights are in play only where its own statistics show it held a group back
EVERY_REQUEST, PAST_BUDGET = "every-request", "past-budget"


class IoControl:
    NAME: ClassVar[str]
    SCHEDULER: ClassVar[str]  # what the device's queue/scheduler reads while it rules
    ENFORCES: ClassVar[str]  # EVERY_REQUEST or PAST_BUDGET
    DIVIDES: ClassVar[str]  # what its documentation says its weights divide, with the source
    TOOLS: ClassVar[tuple[Tool, ...]] = ()

    def __init__(self, backend: cgroups.Backend) -> None:
        self.backend = backend

    @classmethod
    def refuses(cls, backend: cgroups.Backend) -> str | None:
        """Why weights cannot be enforced this way on a host with this cgroup backend (one
        line, e.g. a control of cgroup v2 only on a v1 host), or None."""
        return None

    @classmethod
    def tunables(cls, host: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
        """The device tunables a run of `spec` on `host` sets (the spec's over the host's)."""
        return {}

    # -- clean-up by discovery (teardown, also after kill -9 of the agent) -----------------------

    @classmethod
    def leftovers(cls, host: dict[str, Any]) -> list[str]:
        """What a run under this control set on the host and teardown must undo."""
        return []

    @classmethod
    def clean(cls, host: dict[str, Any]) -> None:
        """Undo it (the device of a cut-off run may outlive the run: a nested host's disk)."""

    # -- the device ----------------------------------------------------------------------------

    def calibrate(self, host: dict[str, Any], profile: DeviceProfile, device: disk.Device,
                  state_root: Path, tunables: dict[str, Any]) -> None:
        """Before `prepare`, on the freshly attached device: measure what the control needs
        to know of it under the run's `tunables` (once per host and device profile, cached),
        if anything."""

    def prepare(self, device: disk.Device, tunables: dict[str, Any]) -> dict[str, str]:
        """Make the device enforce weights this way, afresh (nothing an earlier run set
        stays), apply `tunables`, and return every tunable as read back."""
        raise NotImplementedError

    # -- a tenant's cgroup ---------------------------------------------------------------------

    @property
    def weight_file(self) -> str:
        """The cgroup file holding a group's weight under this control."""
        raise NotImplementedError

    @property
    def counter_files(self) -> tuple[str, ...]:
        """The cgroup files `counters` reads."""
        raise NotImplementedError

    def parse_weight(self, text: str) -> int:
        """A group's own weight from its weight file's text."""
        raise NotImplementedError

    def counters(self, rel: str, devnum: str) -> IoCounters:
        """The group's bytes and requests on the device, its descendants' included."""
        raise NotImplementedError

    def controller_stats(self, rel: str, devnum: str) -> dict[str, float]:
        """The controller's own statistics of a group ("" the root) on the device, as the
        kernel exposes them (cumulative counters and instantaneous rates); {} when it has none
        beyond bytes and requests (BFQ without CONFIG_BFQ_CGROUP_DEBUG)."""
        return {}

    def weight(self, rel: str) -> int:
        return self.parse_weight(read(self.backend.path(rel) / self.weight_file))

    def set_weight(self, rel: str, weight: int) -> None:
        write(self.backend.path(rel) / self.weight_file, weight)

    def lxc_weight_key(self) -> str:
        return cgroups.lxc_key(self.backend.version, self.weight_file)

    # -- what the run records ------------------------------------------------------------------

    def record(self, tunables: dict[str, str], chosen_by: str) -> dict[str, Any]:
        """host.json's fields of this control: `scheduler`, and `io_control` (data/README.md);
        `chosen_by` says which named it: the spec, the host or the default."""
        return {
            "scheduler": self.SCHEDULER,
            "io_control": {
                "name": self.NAME, "chosen_by": chosen_by, "scheduler": self.SCHEDULER,
                "tunables": tunables, "cgroup_version": self.backend.version,
                "weight_file": self.weight_file, "counter_files": list(self.counter_files),
            },
        }
