"""The VM arm's guest: a Debian kernel and a small initramfs, built from Debian packages only.

The initramfs holds busybox (from busybox-static) and the kernel's own virtio, 9p and ext4
modules; its init mounts the host's root read-only over 9p and hands over to the agent's
guest-side helper (`agent/arms/vm/side.py`), seen through a second 9p share. No disk image exists:
the guest runs the host's own binaries. `python3 -m journalbench.agent.arms.vm.image` builds it
into GUEST_DIR (what `make guest` does); a second call with the same kernel package does nothing.

Boot time matters (each run boots fresh guests, and TCG runs every instruction in software), so
the build leaves the kernel decompressed: QEMU starts an ELF kernel that carries a PVH entry
point directly, which saves the guest decompressing ~60 MB of xz (~3 s under TCG). The
initramfs is stored uncompressed for the same reason.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import os
import platform
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

GUEST_DIR = Path("/var/cache/journalbench/guest")
KERNEL, INITRD, INFO = "vmlinuz", "initrd.img", "guest.json"
ELF_KERNEL = "vmlinux"  # the same kernel, decompressed, when it has a PVH entry point
XZ_MAGIC = b"\xfd7zXZ\x00"
PVH_NOTE = (b"Xen\0", 18)  # XEN_ELFNOTE_PHYS32_ENTRY: QEMU boots such an ELF directly
READY = "journalbench-guest-ready"
PROBE_OK = "journalbench-probe-ok"

# What the guest's init loads, in this order after their dependencies: the PCI transport, the
# data disk, the command ports, the shared root, the guest's own file system.
MODULES = ("virtio_pci", "virtio_blk", "virtio_console", "9pnet_virtio", "9p", "crc32c_generic",
           "ext4")

INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod /lib/modules/$m || echo "insmod $m failed"; done
if [ -n "$jb_probe" ]; then echo "@PROBE@"; poweroff -f; fi
opts=trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro
mkdir -p /newroot
mount -t 9p -o $opts hostroot /newroot || { echo "9p root mount failed"; poweroff -f; }
mount -t tmpfs -o size=256m tmpfs /newroot/tmp
mount -t tmpfs -o size=64m tmpfs /newroot/run
mkdir -p /newroot/run/jbagent
mount -t 9p -o $opts jbagent /newroot/run/jbagent || { echo "9p agent mount failed"; poweroff -f; }
umount /proc /sys /dev
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mount -t tracefs nodev /newroot/sys/kernel/tracing
export PYTHONPATH=/run/jbagent/$jb_path PATH=/usr/sbin:/usr/bin:/sbin:/bin
# -S: no site-packages scan (the helper needs the standard library only), ~0.2 s under TCG
exec switch_root /newroot /usr/bin/python3 -S -m journalbench.agent.arms.vm.side
""".replace("@PROBE@", PROBE_OK)


def debian_arch() -> str:
    return run("dpkg", "--print-architecture").strip()


def run(*argv: str, cwd: Path | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise SystemExit(f"guest build: {' '.join(argv)} failed: {detail[-1] if detail else ''}")
    return done.stdout


def kernel_package() -> str:
    """The versioned kernel package the metapackage linux-image-<arch> points at."""
    meta = f"linux-image-{debian_arch()}"
    policy = run("apt-cache", "policy", meta)
    if "Candidate:" not in policy or "Candidate: (none)" in policy:
        # a fresh machine may have no package lists yet (make's system-deps only updates them
        # when it installs something)
        run("apt-get", "update", "-qq")
    for line in run("apt-cache", "depends", meta).splitlines():
        name = line.split(":", 1)[-1].strip()
        if line.strip().startswith("Depends:") and name.startswith("linux-image-"):
            return name
    raise SystemExit(f"guest build: {meta} depends on no linux-image package")


def package_version(name: str) -> str:
    for line in run("apt-cache", "policy", name).splitlines():
        if line.strip().startswith("Candidate:"):
            return line.split(":", 1)[1].strip()
    raise SystemExit(f"guest build: apt knows no candidate for {name}")


def fetch(packages: list[str], into: Path) -> Path:
    """Download and unpack Debian packages into `into`/root (apt's own download, verified)."""
    root = into / "root"
    run("apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", *packages, cwd=into)
    for deb in sorted(into.glob("*.deb")):
        run("dpkg-deb", "-x", str(deb), str(root))
    return root


def module_files(modules_dir: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in modules_dir.rglob("*.ko*"):
        found[path.name.split(".ko")[0].replace("-", "_")] = path
    return found


def module_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


def depends(data: bytes) -> list[str]:
    """The `depends=` field of a module's .modinfo section."""
    start = data.find(b"\0depends=")
    if start < 0:
        return []
    value = data[start + 9:data.index(b"\0", start + 1)].decode()
    return [d.replace("-", "_") for d in value.split(",") if d]


def load_order(wanted: tuple[str, ...], files: dict[str, Path]) -> list[str]:
    """Each wanted module present in the kernel, after everything it depends on."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order or name not in files:
            return
        for dep in depends(module_bytes(files[name])):
            visit(dep)
        order.append(name)

    for name in wanted:
        visit(name)
    return order


def cpio_newc(entries: list[tuple[str, int, bytes]]) -> bytes:
    """A newc cpio archive of (path, mode, content); directories have empty content."""
    out = io.BytesIO()
    for ino, (name, mode, data) in enumerate([*entries, ("TRAILER!!!", 0, b"")], start=1):
        encoded = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0]
        out.write(b"070701" + b"".join(b"%08X" % f for f in fields) + encoded)
        out.write(b"\0" * (-(110 + len(encoded)) % 4) + data + b"\0" * (-len(data) % 4))
    return out.getvalue()


def elf_kernel(bzimage: bytes) -> bytes | None:
    """The ELF kernel inside a bzImage, if it is xz-compressed and has a PVH entry point."""
    start = bzimage.find(XZ_MAGIC)
    if start < 0:
        return None
    try:
        elf = lzma.LZMADecompressor().decompress(bzimage[start:])
    except lzma.LZMAError:
        return None
    return elf if elf.startswith(b"\x7fELF\x02") and PVH_NOTE in elf_notes(elf) else None


def elf_notes(elf: bytes) -> list[tuple[bytes, int]]:
    """(name, type) of every note in a 64-bit little-endian ELF's PT_NOTE segments."""
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    notes = []
    for index in range(phnum):
        p_type, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", elf,
                                                           phoff + index * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        pos, end = offset, offset + size
        while pos + 12 <= end:
            namesz, descsz, kind = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz]
            notes.append((name, kind))
            pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return notes


def initramfs(busybox: bytes, modules: list[tuple[str, bytes]]) -> bytes:
    dirs = ["bin", "dev", "proc", "sys", "newroot", "lib", "lib/modules"]
    entries = [(d, 0o40755, b"") for d in dirs]
    entries.append(("bin/busybox", 0o100755, busybox))
    entries.append(("init", 0o100755, INIT.encode()))
    entries += [(f"lib/modules/{name}.ko", 0o100644, data) for name, data in modules]
    order = "".join(f"{name}.ko\n" for name, _ in modules)
    entries.append(("modules.order", 0o100644, order.encode()))
    return cpio_newc(entries)  # uncompressed: gunzip under TCG costs more than reading it


RECIPE_VERSION = "2"  # 2: decompressed PVH kernel, uncompressed initramfs


def recipe() -> str:
    """Changes whenever the build does (init, modules, format): then the guest is rebuilt, and
    the VM arm refuses a guest built by another recipe."""
    text = RECIPE_VERSION + INIT + ",".join(MODULES)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def built(target: Path, package: str, version: str) -> bool:
    try:
        info = json.loads((target / INFO).read_text())
    except (OSError, ValueError):
        return False
    return (info.get("package"), info.get("package_version"), info.get("recipe")) == (
        package, version, recipe())


def build(target: Path = GUEST_DIR) -> dict[str, str]:
    package = kernel_package()
    version = package_version(package)
    if built(target, package, version):
        return json.loads((target / INFO).read_text())
    with tempfile.TemporaryDirectory(prefix="jb-guest-") as tmp:
        root = fetch([package, "busybox-static"], Path(tmp))
        release = package.removeprefix("linux-image-")
        files = module_files(root / "lib/modules" / release)
        order = load_order(MODULES, files)
        missing = {"virtio_pci", "virtio_blk", "virtio_console", "9p", "ext4"} - set(order)
        if missing:
            raise SystemExit(f"guest build: {package} lacks modules {sorted(missing)}")
        image = initramfs((root / "bin/busybox").read_bytes(),
                          [(name, module_bytes(files[name])) for name in order])
        target.mkdir(parents=True, exist_ok=True)
        bzimage = (root / "boot" / f"vmlinuz-{release}").read_bytes()
        elf = elf_kernel(bzimage)
        boot = ELF_KERNEL if elf else KERNEL
        (target / f"{boot}.new").write_bytes(elf or bzimage)
        (target / f"{INITRD}.new").write_bytes(image)
    info = {"package": package, "package_version": version, "kernel_release": release,
            "modules": ",".join(order), "recipe": recipe(), "arch": platform.machine(),
            "boot_kernel": boot, "boot": "pvh" if elf else "bzimage"}
    for name in (boot, INITRD):
        os.replace(target / f"{name}.new", target / name)
    (target / (KERNEL if boot == ELF_KERNEL else ELF_KERNEL)).unlink(missing_ok=True)
    (target / INFO).write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    return info


if __name__ == "__main__":
    result = build(Path(sys.argv[1]) if len(sys.argv) > 1 else GUEST_DIR)
    print(f"guest kernel {result['kernel_release']} ({result['package_version']}) "
          f"and initramfs in {sys.argv[1] if len(sys.argv) > 1 else GUEST_DIR}")
