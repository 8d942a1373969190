"""A nested test host: a QEMU guest that the controller boots on this machine and then reaches
over SSH like any other host, so that runs can be made on cgroup v2 (the thesis's cgroup
version, and every current distribution's) on a machine whose own init holds the v1 blkio
hierarchy.

- image.py: the guest's boot files: the VM arm's Debian kernel, and an initramfs of our own
  (the kernel package's bfq, overlay and virtio-net modules; an init that makes the host's
  read-only root writable with an overlay, and a PID 1 that starts sshd).
- machine.py: the guest on this machine: its disks (the host file's device profiles), QEMU,
  the host key it prints at boot, whether it runs, stopping it, what it leaves.
- transport.py: the SSH transport to it, which boots it when it is not running (one boot per
  campaign chunk, shared by every `journalbench dispatch` of the chunk), and the host document
  its agent gets.
- teardown.py: `journalbench teardown` of a nested host: inside first, then the machine.
"""
