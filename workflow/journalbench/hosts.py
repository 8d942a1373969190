"""Test hosts: load and validate `hosts/*.yaml`, fill in defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench.errors import ConfigError
from journalbench.schemas import load_validated

HOSTS_DIR = Path(__file__).resolve().parent.parent.parent / "hosts"
DEFAULT_STATE_DIR = "/var/lib/journalbench"
DEFAULT_BFQ = {"strict_guarantees": 1}


def host_path(name_or_path: str) -> Path:
    """`local` means hosts/local.yaml; anything with a slash or .yaml suffix is a path."""
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml", ".json")):
        return Path(name_or_path)
    return HOSTS_DIR / f"{name_or_path}.yaml"


def load_host(name_or_path: str) -> dict[str, Any]:
    path = host_path(name_or_path)
    host = load_validated(path, "host")
    if host["transport"] == "ssh" and "ssh" not in host:
        raise ConfigError(f"{path}: field ssh: required when transport is ssh")
    host.setdefault("state_dir", DEFAULT_STATE_DIR)
    host["bfq"] = {**DEFAULT_BFQ, **host.get("bfq", {})}
    if host["device"]["kind"] == "image":
        host["device"].setdefault("size_gb", 12)
    host["_file"] = str(path)
    return host
