"""The nested host's pure parts: its host file (defaults, and the fields that do not go with
it, each refused in one line naming the file and the field), QEMU's command line (cgroup v1
off, the network closed but for one forward on the loopback address, every disk cache=none
with its profile's serial), and the host document its agent gets."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from journalbench.control.hosts import load_host
from journalbench.control.nested import image
from journalbench.control.nested import teardown as nested_teardown
from journalbench.control.nested.machine import LOCKS, Machine, check_safe, flock_path
from journalbench.control.nested.transport import agent_host, disk_id
from journalbench.errors import ConfigError

NESTED = """name: nt
transport: nested
state_dir: {state}
device: {{kind: image, size_gb: 4, profile: hdd}}
{extra}"""


def host_file(tmp_path: Path, extra: str = "", state: str = "/var/lib/jbt") -> Path:
    path = tmp_path / "nt.yaml"
    path.write_text(NESTED.format(state=state, extra=extra))
    return path


def test_a_nested_host_gets_its_defaults(tmp_path: Path) -> None:
    host = load_host(str(host_file(tmp_path)))
    assert host["nested"] == {"memory_mb": 4096, "vcpus": 2, "accel": "auto",
                              "boot_timeout_s": 120, "profiles": ["hdd"]}
    repo_host = load_host("nested")
    assert repo_host["transport"] == "nested" and repo_host["nested"]["profiles"] == [
        "hdd", "native"]


@pytest.mark.parametrize(("text", "field", "why"), [
    ("ssh: {address: h, key_file: k}", "ssh", "a nested host is reached through the port"),
    ("nested: {vcpus: 0}", "nested.vcpus", "0 is less than the minimum"),
])
def test_what_does_not_go_with_a_nested_host_is_refused(tmp_path: Path, text: str, field: str,
                                                         why: str) -> None:
    with pytest.raises(ConfigError, match=rf"nt.yaml: field {field}: .*{why}"):
        load_host(str(host_file(tmp_path, text)))


def test_a_nested_section_needs_transport_nested_and_an_image(tmp_path: Path) -> None:
    path = tmp_path / "l.yaml"
    path.write_text("name: l\ntransport: local\ndevice: {kind: image}\nnested: {vcpus: 2}\n")
    with pytest.raises(ConfigError, match=r"l.yaml: field nested: only a host with transport: "
                                          r"nested has one"):
        load_host(str(path))
    path.write_text("name: l\ntransport: nested\ndevice: {kind: disk, id: /dev/disk/by-id/x, "
                    "wipe: true}\n")
    with pytest.raises(ConfigError, match=r"l.yaml: field device.kind: a nested host's disks "
                                          r"are made on this machine"):
        load_host(str(path))


def test_state_dir_and_name_travel_on_the_kernel_command_line(tmp_path: Path) -> None:
    host = load_host(str(host_file(tmp_path, state="/var/lib/with space")))
    with pytest.raises(ConfigError, match=r"nt.yaml: field state_dir: a nested host's "
                                          r"state_dir may hold letters"):
        check_safe(host)


def test_qemu_closes_the_network_but_for_a_loopback_forward(tmp_path: Path) -> None:
    host = load_host(str(host_file(tmp_path, "nested: {profiles: [hdd, native]}")))
    machine = Machine(host)
    disks = {"hdd": {"drive": "file=nbd+unix:///?socket=/s,format=raw", "emulated": True},
             "native": {"drive": "file=/i,format=raw,aio=native", "emulated": False}}
    argv = machine.qemu_argv({"kernel": "/k"}, "tcg", "BLOB", disks, 40022)
    text = " ".join(argv)
    assert "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:40022-:22" in text
    assert "cgroup_no_v1=all" in text and "jb_authkey=BLOB" in text
    assert "jb_state=/var/lib/jbt" in text and "-smp 2" in text and "-m 4096" in text
    assert "file=nbd+unix:///?socket=/s,format=raw,if=none,id=disk0,cache=none" in text
    assert "virtio-blk-pci,drive=disk1,serial=jb-native" in text
    assert "path=/,security_model=none,readonly=on" in text
    assert str(machine.folder) in text  # teardown finds QEMU by the folder it names


def test_the_agent_sees_a_dedicated_disk_per_profile_and_the_machines_facts() -> None:
    host = {"name": "nt", "transport": "nested", "_file": "x.yaml", "state_dir": "/v",
            "device": {"kind": "image", "size_gb": 4, "profile": "hdd"},
            "nested": {"vcpus": 2}, "bfq": {"strict_guarantees": 1}}
    record = {"profiles": ["hdd", "native"], "accel": "tcg", "vcpus": 2, "boot_s": 4.3,
              "port": 1, "host_key": "k",
              "disks": {"hdd": {"drive": "d", "emulated": True, "serial": "jb-hdd"},
                        "native": {"drive": "d", "emulated": False, "serial": "jb-native"}}}
    inside = agent_host(host, record)
    assert inside["device"] == {"kind": "disk", "id": disk_id("hdd"), "wipe": True,
                                "profile": "hdd"}
    assert "_file" not in inside and inside["bfq"] == {"strict_guarantees": 1}
    assert inside["nested"]["disks"] == {
        "hdd": {"id": "/dev/disk/by-id/virtio-jb-hdd", "fast_flag": f"{image.FLAGS}/hdd"},
        "native": {"id": "/dev/disk/by-id/virtio-jb-native", "fast_flag": None}}
    facts = inside["nested"]["facts"]
    assert facts["accel"] == "tcg" and facts["boot_s"] == 4.3
    assert "drive" not in facts["disks"]["hdd"] and "port" not in facts


def test_teardown_leaves_no_lock_file_of_a_machine_that_does_not_run(tmp_path: Path) -> None:
    """What a killed controller leaves of a stopped machine (its folder, its lock files) goes."""
    host = load_host(str(host_file(tmp_path, state=str(tmp_path / "state"))))
    machine = Machine(host)
    for what in LOCKS:
        with machine.locked(what, fcntl.LOCK_EX):
            pass
    machine.folder.mkdir()
    (machine.folder / "console.log").write_text("")
    assert machine.residue() == [f"folder {machine.folder}"] + [
        f"lock file {machine.lock_file(what)}" for what in LOCKS]
    assert nested_teardown.teardown(host) == ["nothing left on this machine"]
    assert machine.residue() == [] and sorted(os.listdir(host["state_dir"])) == []


def test_a_waiter_on_a_removed_lock_file_locks_the_path_anew(tmp_path: Path) -> None:
    """Teardown removes a lock file while holding it; whoever waited on it meanwhile must hold
    the lock others see, not one on the removed file."""
    path = tmp_path / "m.nested-boot.lock"
    first = flock_path(path, fcntl.LOCK_EX)
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(flock_path(path, fcntl.LOCK_EX)))
    waiter.start()
    time.sleep(0.2)  # the waiter has opened the file and waits on it
    path.unlink()
    first.close()
    waiter.join(timeout=5)
    assert got, "the waiter did not get the lock"
    held = os.fstat(got[0].fileno())
    assert (held.st_dev, held.st_ino) == (path.stat().st_dev, path.stat().st_ino)
    with pytest.raises(BlockingIOError):  # a third controller sees the waiter's lock
        flock_path(path, fcntl.LOCK_EX | fcntl.LOCK_NB)
    got[0].close()
