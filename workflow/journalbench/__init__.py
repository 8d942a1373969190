"""journalbench: VMs vs containers, disk performance and isolation, and the shared ext4 journal."""

__version__ = "0.1.0"
