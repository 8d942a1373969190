"""The nested host's boot files: the VM arm's guest kernel (`make guest`,
agent/arms/vm/image.py) and an initramfs of our own from the same Debian kernel package.

The VM arm's guest needs only virtio, 9p and ext4; a nested host also needs the network (sshd),
BFQ (a module in Debian's kernel) and overlayfs (the host's root, read-only over 9p, becomes
writable in the guest's memory: the agent's state, LXC's and /run). Building our own initramfs
leaves the VM arm's guest recipe as it is.

Its init (`INIT`, busybox) loads the modules, mounts the overlay root, the writable shares (the
device calibrations, kept on this machine across boots, and the emulators' set-up flags),
configures QEMU's user network and names the disks by their serial
(/dev/disk/by-id/virtio-<serial>, as udev would); then `STAGE2` runs as PID 1 from the host's
own python: the boot's cgroup version (v2 with every controller enabled in the root; or v1, a
hybrid layout as a systemd host's), a host key made at boot and printed on the console (the
controller pins it), sshd, and reaping orphans.

`python3 -m journalbench.control.nested.image` builds it into NESTED_DIR (`make guest` does);
stdlib only, so the system python runs it before any venv exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from journalbench.agent.arms.vm import image as guest_image

NESTED_DIR = Path("/var/cache/journalbench/nested")
INITRD, INFO = "initrd.img", "nested.json"
# the VM guest's modules, then the network card, overlayfs and BFQ
MODULES = (*guest_image.MODULES, "virtio_net", "overlay", "bfq")
RUN = "/run/jbnested"  # the guest's own folder: sshd's files, the shares below
FLAGS = f"{RUN}/flags"  # the emulators' set-up flags, shared with this machine
READY = "journalbench-nested-ready"
HOST_KEY = "journalbench-nested-hostkey"
GUEST_ADDRESS, GATEWAY = "10.0.2.15/24", "10.0.2.2"  # QEMU user networking's defaults

INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
fail() { echo "journalbench nested init: $1"; poweroff -f; }
for m in $(cat /modules.order); do insmod /lib/modules/$m || echo "insmod $m failed"; done
opts=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /lower /rw
mount -t 9p -o $opts,cache=loose,ro hostroot /lower || fail "9p root mount failed"
mount -t tmpfs -o size=${jb_rw_mb}m,mode=755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot \
  || fail "overlay root failed"
mount -t tmpfs -o size=1g,mode=1777 tmpfs /newroot/tmp
mount -t tmpfs -o size=256m,mode=755 tmpfs /newroot/run
mount -t tmpfs -o mode=700 tmpfs /newroot/root
mkdir -p /newroot@FLAGS@ /newroot$jb_state/calibration
mount -t 9p -o $opts calibration /newroot$jb_state/calibration || fail "calibration share"
mount -t 9p -o $opts flags /newroot@FLAGS@ || fail "flags share"
cp /stage2.py /newroot@RUN@/stage2.py
ip link set lo up
ip link set eth0 up
ip addr add @ADDRESS@ dev eth0
ip route add default via @GATEWAY@
mkdir -p /dev/disk/by-id
for b in /sys/block/vd*; do
  s=$(cat $b/serial 2>/dev/null)
  [ -n "$s" ] && ln -s ../../${b##*/} /dev/disk/by-id/virtio-$s
done
umount /proc /sys
mount --move /dev /newroot/dev
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
exec switch_root /newroot /usr/bin/python3 -S @RUN@/stage2.py
""".replace("@FLAGS@", FLAGS).replace("@RUN@", RUN).replace("@ADDRESS@", GUEST_ADDRESS) \
    .replace("@GATEWAY@", GATEWAY)

STAGE2 = '''"""PID 1 of a journalbench nested host (control/nested/image.py)."""
import os
import socket
import subprocess
import time

RUN = "@RUN@"


def sh(*argv):
    subprocess.run(argv, check=True)


def mount(kind, target, options=None):
    os.makedirs(target, exist_ok=True)
    sh("mount", "-t", kind, *(["-o", options] if options else []), kind, target)


# a cgroup-v1 boot's hierarchies, as a systemd host with the hybrid layout mounts them
V1_HIERARCHIES = ("cpuset", "cpu,cpuacct", "blkio", "memory", "devices", "freezer", "pids")


def cgroups():
    """The boot's cgroup version (jb_cgroup on the kernel's command line)."""
    if os.environ.get("jb_cgroup", "2") == "1":
        cgroup1()
    else:
        cgroup2()


def cgroup1():
    """cgroup v1: blkio and the other controllers each on a v1 hierarchy under a tmpfs at
    /sys/fs/cgroup, and cgroup v2 (with no controller) at /sys/fs/cgroup/unified: a systemd
    host's hybrid layout, as this package's own cgroup-v1 host has it."""
    mount("tmpfs", "/sys/fs/cgroup", "mode=755")
    for names in V1_HIERARCHIES:
        os.makedirs("/sys/fs/cgroup/" + names, exist_ok=True)
        sh("mount", "-t", "cgroup", "-o", names, "cgroup", "/sys/fs/cgroup/" + names)
    mount("cgroup2", "/sys/fs/cgroup/unified", "nsdelegate")


def cgroup2():
    """cgroup v2 alone (the kernel boots with cgroup_no_v1=all), every controller enabled
    for the groups below the root, as a systemd host delegates them."""
    mount("cgroup2", "/sys/fs/cgroup", "nsdelegate")
    root = "/sys/fs/cgroup/"
    for name in open(root + "cgroup.controllers").read().split():
        try:
            with open(root + "cgroup.subtree_control", "w") as control:
                control.write("+" + name)
        except OSError as error:
            print("journalbench nested: cannot enable " + name + ": " + str(error), flush=True)


def sshd():
    """A host key made now (the controller pins the one printed), the controller's key the only
    one authorized, root by key only."""
    key = RUN + "/ssh_host_ed25519_key"
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", key)
    with open(RUN + "/authorized_keys", "w") as keys:
        keys.write("ssh-ed25519 " + os.environ["jb_authkey"] + " journalbench-controller\\n")
    with open(RUN + "/sshd_config", "w") as config:
        config.write("\\n".join([
            "Port 22", "HostKey " + key, "AuthorizedKeysFile " + RUN + "/authorized_keys",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "UseDNS no",
            "PrintMotd no", "MaxStartups 50", "PidFile " + RUN + "/sshd.pid", ""]))
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    sh("/usr/sbin/sshd", "-f", RUN + "/sshd_config", "-E", RUN + "/sshd.log")
    return open(key + ".pub").read().split()[:2]


def main():
    socket.sethostname("jb-" + os.environ.get("jb_name", "nested"))
    cgroups()
    mount("tracefs", "/sys/kernel/tracing")
    mount("debugfs", "/sys/kernel/debug")
    mount("devpts", "/dev/pts", "newinstance,ptmxmode=0666")
    mount("tmpfs", "/dev/shm", "mode=1777")
    kind, blob = sshd()
    uptime = open("/proc/uptime").read().split()[0]
    print("@HOST_KEY@ " + kind + " " + blob, flush=True)
    print("@READY@ " + uptime, flush=True)


try:
    main()
except Exception as error:  # the controller reads the console: say why, then wait to be killed
    print("journalbench nested: boot failed: " + repr(error), flush=True)
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(1)
'''.replace("@RUN@", RUN).replace("@HOST_KEY@", HOST_KEY).replace("@READY@", READY)

RECIPE_VERSION = "1"


def recipe() -> str:
    """Changes whenever the build does; it includes the VM guest's recipe, whose kernel boots."""
    text = RECIPE_VERSION + INIT + STAGE2 + ",".join(MODULES) + guest_image.recipe()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def guest_info() -> dict[str, Any]:
    info_path = guest_image.GUEST_DIR / guest_image.INFO
    try:
        info: dict[str, Any] = json.loads(info_path.read_text())
    except (OSError, ValueError):
        raise SystemExit(f"nested host: no VM guest kernel in {guest_image.GUEST_DIR}: run "
                         "`make guest`") from None
    if info.get("recipe") != guest_image.recipe():
        raise SystemExit(f"nested host: the VM guest in {guest_image.GUEST_DIR} was built by "
                         "an older recipe: run `make guest`")
    return info


def built(target: Path, guest: dict[str, Any]) -> dict[str, Any] | None:
    try:
        info: dict[str, Any] = json.loads((target / INFO).read_text())
    except (OSError, ValueError):
        return None
    same = (info.get("package"), info.get("package_version"), info.get("recipe")) == (
        guest["package"], guest["package_version"], recipe())
    return info if same and (target / INITRD).is_file() else None


def initramfs(busybox: bytes, modules: list[tuple[str, bytes]]) -> bytes:
    dirs = ["bin", "dev", "proc", "sys", "newroot", "lib", "lib/modules"]
    entries = [(d, 0o40755, b"") for d in dirs]
    entries += [("bin/busybox", 0o100755, busybox), ("init", 0o100755, INIT.encode()),
                ("stage2.py", 0o100644, STAGE2.encode())]
    entries += [(f"lib/modules/{name}.ko", 0o100644, data) for name, data in modules]
    order = "".join(f"{name}.ko\n" for name, _ in modules)
    entries.append(("modules.order", 0o100644, order.encode()))
    return guest_image.cpio_newc(entries)


def build(target: Path = NESTED_DIR) -> dict[str, Any]:
    """The initramfs for the VM guest's kernel package (the very version it was built from),
    unless already built by this recipe."""
    guest = guest_info()
    done = built(target, guest)
    if done is not None:
        return done
    package, version = guest["package"], guest["package_version"]
    with tempfile.TemporaryDirectory(prefix="jb-nested-") as tmp:
        root = guest_image.fetch([f"{package}={version}", "busybox-static"], Path(tmp))
        files = guest_image.module_files(root / "lib/modules" / guest["kernel_release"])
        order = guest_image.load_order(MODULES, files)
        missing = {"virtio_net", "overlay", "bfq", "9p", "ext4"} - set(order)
        if missing:
            raise SystemExit(f"nested host: {package} lacks modules {sorted(missing)}")
        image = initramfs((root / "bin/busybox").read_bytes(),
                          [(name, guest_image.module_bytes(files[name])) for name in order])
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{INITRD}.new").write_bytes(image)
    os.replace(target / f"{INITRD}.new", target / INITRD)
    info = {"package": package, "package_version": version,
            "kernel_release": guest["kernel_release"], "modules": ",".join(order),
            "recipe": recipe(), "kernel": str(guest_image.GUEST_DIR / guest["boot_kernel"])}
    (target / INFO).write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    return info


if __name__ == "__main__":
    result = build(Path(sys.argv[1]) if len(sys.argv) > 1 else NESTED_DIR)
    print(f"nested host initramfs for {result['kernel_release']} ({result['package_version']}) "
          f"in {sys.argv[1] if len(sys.argv) > 1 else NESTED_DIR}")
