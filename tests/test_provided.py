"""A device profile a nested host's outer machine provides (agent/devices/provided.py): chosen
only on a nested host's document, by profile, with the profile's own name, bounds and facts;
a profile the machine was not booted with fails in one line; its fsync bounds are recorded,
not enforced."""

from __future__ import annotations

from pathlib import Path

import pytest

from journalbench.agent import registry
from journalbench.agent.devices import provided
from journalbench.agent.devices.hdd import Hdd
from journalbench.agent.devices.native import Native
from journalbench.errors import AgentError

HOST = {"name": "n", "state_dir": "/x",
        "device": {"kind": "disk", "id": "/dev/disk/by-id/virtio-jb-hdd", "wipe": True,
                   "profile": "hdd"},
        "nested": {"disks": {"hdd": {"id": "/dev/disk/by-id/virtio-jb-hdd",
                                     "fast_flag": "/run/jbnested/flags/hdd"},
                             "native": {"id": "/dev/disk/by-id/virtio-jb-native",
                                        "fast_flag": None}}}}


def test_a_nested_hosts_profile_is_the_profile_provided() -> None:
    profile = registry.profile_for(HOST, {}, Path("/x/n"))
    assert isinstance(profile, provided.Provided) and isinstance(profile, Hdd)
    assert (profile.NAME, profile.ACCEPT_FSYNC_MS, profile.ROTATIONAL) == ("hdd", (10.0, 25.0),
                                                                          True)
    assert not profile.ENFORCE_ACCEPT and Hdd.ENFORCE_ACCEPT
    facts = profile.facts()
    assert facts["profile"] == "hdd" and facts["disk"] == "/dev/disk/by-id/virtio-jb-hdd"
    assert facts["emulator"] is None and profile.cpu_seconds() is None  # none recorded
    recorded = {**HOST, "nested": {**HOST["nested"], "facts": {"disks": {
        "hdd": {"emulator": "nbdkit 1.32 (HDD model)"}}}}}
    facts = registry.profile_for(recorded, {}, Path("/x/n")).facts()
    assert facts["emulator"] == ("nbdkit 1.32 (HDD model) on the outer host, this guest's "
                                 "virtio-blk disk (cache=none)")
    native = registry.profile_for(HOST, {"device": "native"}, Path("/x/n"))
    assert isinstance(native, Native) and native.disk["fast_flag"] is None


def test_any_other_host_gets_the_profile_itself() -> None:
    host = {k: v for k, v in HOST.items() if k != "nested"}
    assert type(registry.profile_for(host, {}, Path("/x/n"))) is Hdd


def test_a_profile_the_machine_has_no_disk_of_fails_in_one_line() -> None:
    with pytest.raises(AgentError, match=r"^host n: the nested host was booted with device "
                                         r"profile\(s\) hdd, native, not hdd-wcache: name it in "
                                         r"the host file's nested.profiles"):
        registry.profile_for(HOST, {"device": "hdd-wcache"}, Path("/x/n"))


def test_a_set_up_flag_left_behind_is_residue_until_cleaned(tmp_path: Path) -> None:
    flag = tmp_path / "hdd"
    host = {**HOST, "nested": {"disks": {"hdd": {"id": "x", "fast_flag": str(flag)}}}}
    assert provided.leftover_flags(host) == []
    flag.touch()
    assert provided.leftover_flags(host) == [str(flag)]
    provided.clean(host)
    assert not flag.exists() and provided.leftover_flags(host) == []
