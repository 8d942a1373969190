"""The names the agent and the controller both use: arms, workload tools, device profiles and
I/O controls, each in its one order. Stdlib only and free of logic, so the agent's bundle and
every controller stage (plan, tidy, judge, report) can import it without importing each
other; the agent's registry (agent/registry.py) holds the classes behind the names, and a test
checks the two agree, as it checks the schemas' enums against these lists.
"""

from __future__ import annotations

# -- arms, in the thesis's order (its figures put the VM first), then ours -------------------------
VM = "vm"
SHARED_JOURNAL = "shared-journal"
PER_CONTAINER_JOURNAL = "per-container-journal"
JOURNAL_ACCOUNTED = "journal-accounted"
# ours, not the thesis's: each per-container journal in a cgroup of its own at its tenant's
# weight (controlled, charged to nobody's budget but its own), between the two above
JOURNAL_CGROUP = "journal-cgroup"
THESIS_ARMS = (VM, SHARED_JOURNAL, PER_CONTAINER_JOURNAL, JOURNAL_ACCOUNTED)
ARMS = (*THESIS_ARMS, JOURNAL_CGROUP)
THESIS_CONTAINER_ARMS = (SHARED_JOURNAL, PER_CONTAINER_JOURNAL, JOURNAL_ACCOUNTED)
CONTAINER_ARMS = (*THESIS_CONTAINER_ARMS, JOURNAL_CGROUP)

# -- the workload tools a run spec may name ------------------------------------------------------
TOOLS = ("fio", "mariadb", "redis")

# -- device profiles: the host's own device first, then the emulated ones -------------------------
NATIVE = "native"
PROFILES = (NATIVE, "hdd", "hdd-wcache")
DEFAULT_PROFILE = NATIVE

# -- how tenants' disk weights are enforced -------------------------------------------------------
BFQ = "bfq"
IOCOST = "iocost"  # cgroup v2 only
IO_CONTROLS = (BFQ, IOCOST)
# What a run that names none gets, and what every run made before the field existed used:
# leaving it out of a spec keeps the run ids of existing specs.
DEFAULT_IO_CONTROL = BFQ
# iocost's QoS procedures (agent/iocontrol/: costmodel.py the knee, interleaved.py the model of
# two interleaved streams at a fixed rate), each a named, versioned rule fixed before its first
# run. The knee is what a run that names none gets, and what every iocost run made before the
# field existed used (or preceded): left out of a spec, the run ids of existing specs stay.
IOCOST_KNEE = "knee-of-p95-latency-against-load-v1"
IOCOST_INTERLEAVED = "interleaved-model-fixed-vrate-v1"
IOCOST_QOS = (IOCOST_KNEE, IOCOST_INTERLEAVED)
DEFAULT_IOCOST_QOS = IOCOST_KNEE

# -- what a container tenant's file system sits on (host.json layout, tidy's container_volume) ----
# the test device itself (one ext4 for every tenant), a partition of it each (blocks fixed when
# the partition was made), or an image file each whose blocks the host's file system allocates
# as the tenant first writes them (OpenVZ's Ploop, the thesis's per-container volumes: an arm
# that builds such volumes records `volume_allocation: on-demand` for each tenant)
WHOLE_DEVICE = "the test device"
PARTITION = "a partition"
ON_DEMAND_IMAGE = "an image allocated on demand"
OTHER_VOLUME = "another volume"
