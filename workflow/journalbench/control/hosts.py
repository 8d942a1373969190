"""Test hosts: load and validate `hosts/*.yaml`, fill in defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journalbench.errors import ConfigError
from journalbench.plan.schemas import load_validated, read_document
from journalbench.vocabulary import DEFAULT_PROFILE

HOSTS_DIR = Path(__file__).resolve().parents[3] / "hosts"
DEFAULT_STATE_DIR = "/var/lib/journalbench"
DEFAULT_BFQ = {"strict_guarantees": 1}
DEFAULT_PYTHON = "python3"
DEFAULT_IMAGE_GB = 12
DEFAULT_REQUIRE_KVM = False
DEFAULT_NESTED = {"memory_mb": 4096, "vcpus": 2, "accel": "auto", "boot_timeout_s": 120}
DEFAULT_SSH = {
    "port": 22,
    "user": "root",
    "use_agent": False,
    "sudo": False,
    "known_hosts": "~/.ssh/known_hosts",
    "trust_on_first_use": False,
    "connect_timeout_s": 15,
    "keepalive_s": 15,
    "keepalive_count_max": 4,
    "connect_attempts": 3,
}


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
    if "ssh" in host:
        ssh = host["ssh"] = {**DEFAULT_SSH, **host["ssh"]}
        if "key_file" not in ssh and not ssh["use_agent"]:
            raise ConfigError(f"{path}: field ssh.key_file: required unless ssh.use_agent is true")
        if ssh["user"] != "root" and not ssh["sudo"]:
            raise ConfigError(
                f"{path}: field ssh.sudo: user {ssh['user']} is not root and the agent needs "
                "root; set sudo: true (passwordless) or log in as root"
            )
    if host["transport"] == "nested" or "nested" in host:
        nested_defaults(host, path)
    host.setdefault("python", DEFAULT_PYTHON)
    host.setdefault("state_dir", DEFAULT_STATE_DIR)
    host.setdefault("require_kvm", DEFAULT_REQUIRE_KVM)
    host["bfq"] = {**DEFAULT_BFQ, **host.get("bfq", {})}
    if host["device"]["kind"] == "image":
        host["device"].setdefault("size_gb", DEFAULT_IMAGE_GB)
    host["_file"] = str(path)
    return host


def nested_defaults(host: dict[str, Any], path: Path) -> None:
    """A nested host's own fields (control/nested/), checked across the file."""
    if host["transport"] != "nested":
        raise ConfigError(f"{path}: field nested: only a host with transport: nested has one")
    if "ssh" in host:
        raise ConfigError(f"{path}: field ssh: a nested host is reached through the port the "
                          "controller forwards to its guest; remove ssh")
    if host["device"]["kind"] != "image":
        raise ConfigError(f"{path}: field device.kind: a nested host's disks are made on this "
                          "machine: use kind: image")
    nested = host["nested"] = {**DEFAULT_NESTED, **host.get("nested", {})}
    nested.setdefault("profiles", [host["device"].get("profile", DEFAULT_PROFILE)])


def load_hosts(spec: str) -> list[dict[str, Any]]:
    """Hosts from a comma-separated list of host files/names, or an inventory file that
    lists host files under `hosts:` (paths relative to the inventory)."""
    hosts = []
    for item in [s for s in spec.split(",") if s]:
        path = Path(item)
        document = read_document(path) if path.suffix in (".yaml", ".yml") else None
        if isinstance(document, dict) and "hosts" in document and "name" not in document:
            for entry in document["hosts"]:
                hosts.append(load_host(str(path.parent / entry)))
        else:
            hosts.append(load_host(item))
    names = [h["name"] for h in hosts]
    if len(set(names)) != len(names):
        raise ConfigError(f"hosts {spec}: host names must be unique, got {names}")
    if not hosts:
        raise ConfigError("hosts: no host given")
    return hosts
