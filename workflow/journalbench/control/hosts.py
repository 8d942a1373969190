"""Test hosts: load and validate `hosts/*.yaml`, fill in defaults; a pool file's members.

A pool file (workflow/schemas/pool.schema.json) names identical hosts that share one campaign:
`load_hosts` returns its members, each with `pool` set to the pool's name (the folder its runs
land in, the ledger's host). Members must declare the same device, BFQ settings, I/O control,
device models and nested guest: a pool of hosts that differ is refused in one line naming the
pool file and the member (docs/hosts.md).
"""

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


# what a pool's members must declare alike (the device's own name, a disk's id, differs)
POOL_FIELDS = ("device", "bfq", "io_control", "device_profiles", "nested", "require_kvm")
DEVICE_OWN = ("id",)


def is_pool(document: Any) -> bool:
    return isinstance(document, dict) and "members" in document


def load_pool(path: Path) -> list[dict[str, Any]]:
    """A pool file's members, each with `pool` (the pool's name) and `_pool_file`; refused in
    one line when a member declares another device, BFQ settings, I/O control, device model
    or guest than the first member."""
    pool = load_validated(path, "pool")
    members = [load_host(str(path.parent / entry)) for entry in pool["members"]]
    first = members[0]
    for index, member in enumerate(members):
        if member["name"] == pool["name"]:
            raise ConfigError(f"{path}: field members.{index}: member {member['name']} has "
                              "the pool's name; a pool's runs land under its name, give the "
                              "member another")
        for key in POOL_FIELDS:
            mine, theirs = declared(member, key), declared(first, key)
            if mine != theirs:
                raise ConfigError(
                    f"{path}: field members.{index}: {member['name']} ({member['_file']}) "
                    f"declares {key} {mine!r}, {first['name']} {theirs!r}: a pool's members "
                    "must be identical (or list them as separate hosts: replicas)")
        member["pool"] = pool["name"]
        member["_pool_file"] = str(path)
    return members


def declared(host: dict[str, Any], key: str) -> Any:
    """What a host file declares of `key`, with its defaults (io_control: bfq)."""
    if key == "device":
        return {k: v for k, v in host["device"].items() if k not in DEVICE_OWN}
    if key == "io_control":
        return host.get("io_control", "bfq")
    return host.get(key)


def load_hosts(spec: str) -> list[dict[str, Any]]:
    """Hosts from a comma-separated list of host files/names, pool files/names (their members,
    each with `pool` set), or an inventory file that lists host or pool files under `hosts:`
    (paths relative to the inventory)."""
    hosts = []
    for item in [s for s in spec.split(",") if s]:
        path = host_path(item)
        document = read_document(path) if path.suffix in (".yaml", ".yml", ".json") else None
        if isinstance(document, dict) and "hosts" in document and "name" not in document:
            for entry in document["hosts"]:
                hosts += load_entry(path.parent / entry)
        elif is_pool(document):
            hosts += load_pool(path)
        else:
            hosts.append(load_host(item))
    names = [h["name"] for h in hosts]
    if len(set(names)) != len(names):
        raise ConfigError(f"hosts {spec}: host names must be unique, got {names}")
    pools = {h["pool"] for h in hosts if "pool" in h}
    clash = sorted(pools & set(names))
    if clash:
        raise ConfigError(f"hosts {spec}: {clash[0]} names both a pool and a host; runs of "
                          "both would land in one folder")
    if not hosts:
        raise ConfigError("hosts: no host given")
    return hosts


def load_entry(path: Path) -> list[dict[str, Any]]:
    """An inventory's entry: a host file, or a pool file's members."""
    document = read_document(path) if path.suffix in (".yaml", ".yml", ".json") else None
    return load_pool(path) if is_pool(document) else [load_host(str(path))]
