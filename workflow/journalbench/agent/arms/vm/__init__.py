"""The vm arm: each tenant a QEMU guest booting the host's own kernel package over a read-only
9p root (arm.py). The guest's side runs only the stdlib: side.py serves commands on
virtio-serial ports inside the guest, relay.py carries one command from the host, report.py
samples the guest's vCPU and disk, tunnel.py opens byte tunnels a workload asks for, and
image.py builds the guest's kernel and initramfs (`make guest`). This package's `__init__`
imports nothing: the guest and every relay import their module alone."""
