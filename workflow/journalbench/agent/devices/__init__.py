"""Device profiles, one module each; `PROFILES` is the one list of profile names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.devices.hdd import Hdd, HddWriteCache
from journalbench.agent.devices.native import Native
from journalbench.errors import AgentError

PROFILES: dict[str, type[DeviceProfile]] = {
    p.NAME: p for p in (Native, Hdd, HddWriteCache)
}
DEFAULT_PROFILE = Native.NAME


def profile_for(host: dict[str, Any], spec: dict[str, Any], root: Path) -> DeviceProfile:
    """The spec's `device` if it names one, else the host's `device.profile`; parameters
    from the host's `device_profiles.<name>`."""
    name = spec.get("device") or host["device"].get("profile", DEFAULT_PROFILE)
    try:
        cls = PROFILES[name]
    except KeyError:
        raise AgentError(f"unknown device profile {name!r}; this agent has "
                         f"{', '.join(PROFILES)}") from None
    return cls(host, root, dict(host.get("device_profiles", {}).get(name, {})))

