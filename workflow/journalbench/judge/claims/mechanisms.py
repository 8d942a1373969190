"""Why a testbed factor can change a claim's result: one mechanism per (claim, factor), each a
sentence a reader can check against the thesis or the kernel's own documentation. A claim
depends on a factor only through one of these (catalog.py gives each claim its own); where a
study of ours measured the claim's effect under both values of the factor, its measurement
decides instead (contrasts.py: an effect shown equivalent drops the factor for the checks
measured, one shown to depend keeps it).

Sources, as cited: the thesis (page numbers of its own pagination); the kernel's
Documentation/block/bfq-iosched.rst and block/bfq-iosched.c (BFQ), Documentation/admin-guide/
cgroup-v2.rst (io.cost, Writeback) and cgroup-v1/blkio-controller.rst; QEMU's documentation of
TCG (docs/devel/tcg.rst)."""

from __future__ import annotations

from dataclasses import dataclass

DEVICE, WEIGHTS, WRITEBACK, VIRTUALIZATION, PLATFORM, LOAD = (
    "device", "weights", "writeback", "virtualization", "platform", "load")
FACTOR_NAMES = (DEVICE, WEIGHTS, WRITEBACK, VIRTUALIZATION, PLATFORM, LOAD)


@dataclass(frozen=True)
class Mechanism:
    name: str  # a short id, unique
    factor: str  # the factor it ties to a claim
    text: str  # the mechanism in one sentence, with where it is said


MECHANISMS: dict[str, Mechanism] = {m.name: m for m in (
    # -- the device class ---------------------------------------------------------------------
    Mechanism("device-commit", DEVICE,
              "An fsync waits for jbd2's commit, and a commit costs what the device takes to "
              "seek, write and flush its blocks (the thesis's disk: ~18.5 ms an fsync of a "
              "high-fsync writer in KVM, Table 4.1, p. 43), so on a device that commits in a "
              "fraction of a millisecond the commits a neighbour forces cost a tenant far less "
              "(the thesis expects flash to change the contention, p. 77)."),
    Mechanism("device-request-cost", DEVICE,
              "The VM adds a fixed cost to every request (a trap to QEMU and its device "
              "emulation, p. 28): where each request waits milliseconds for a disk that cost "
              "is lost in the service time, where the device answers in microseconds it "
              "decides which arm is faster."),
    Mechanism("device-request-size", DEVICE,
              "Whether a 64 KiB request buys more bytes than a 16 KiB one in the same disk "
              "time depends on the device's fixed cost per request against its cost per byte: "
              "a seek and a rotation dominate on the thesis's hard disk (p. 31), the bytes on "
              "a device without seeks."),
    Mechanism("device-division", DEVICE,
              "A controller divides the device by its service times: BFQ sizes budgets and "
              "idles by the device's measured peak rate (bfq-iosched.rst), iocost charges "
              "each request by the device's cost model (cgroup-v2.rst, io.cost.model), so the "
              "split two backlogged writers get is the device's as well as the weights'."),
    # -- what the weights divide --------------------------------------------------------------
    Mechanism("weights-split", WEIGHTS,
              "A share of bytes equals the weights where the controller divides bytes (BFQ "
              "assigns budgets \"measured in number of sectors\", block/bfq-iosched.c) but "
              "only for requests of equal cost where it divides disk time, as the thesis's "
              "weights do (\"the relative amount of disk time\", p. 29); and only over the "
              "I/O it controls: iocost never throttles the root cgroup (blk-iocost.c, "
              "ioc_rqos_throttle), where a jbd2 thread outside every tenant's cgroup sits, so "
              "under iocost those commits fall outside the split."),
    Mechanism("weights-size", WEIGHTS,
              "The claim is what the weights divide: dividing disk time a 30% writer of large "
              "requests moves more bytes than a 70% writer of small ones (pp. 29-30), "
              "dividing sectors (BFQ's budgets, block/bfq-iosched.c) it cannot."),
    Mechanism("weights-interference", WEIGHTS,
              "How long a tenant's requests and its journal's commits wait behind a neighbour "
              "is the controller's schedule: BFQ serves a queue until its budget of sectors is "
              "spent and idles for its next request (bfq-iosched.rst), a controller dividing "
              "disk time charges each request its time (p. 29), so the interference a "
              "neighbour causes depends on which (and iocost never throttles the root "
              "cgroup's I/O, blk-iocost.c ioc_rqos_throttle, a jbd2 in the root among it)."),
    # -- cgroup version and write-back --------------------------------------------------------
    Mechanism("writeback-charge", WRITEBACK,
              "A writer through the page cache without fsync leaves its write-back to the "
              "kernel's flusher threads, which cgroup v1 charges to no tenant "
              "(cgroup-v1/blkio-controller.rst: buffered writes are not controlled per group) "
              "and cgroup v2 to the cgroup that dirtied the pages (cgroup-v2.rst, Writeback), "
              "so on v1 such a neighbour escapes its weight."),
    # -- virtualization -----------------------------------------------------------------------
    Mechanism("tcg-emulation", VIRTUALIZATION,
              "Under TCG QEMU translates every guest instruction (docs/devel/tcg.rst), so each "
              "request of a VM spends emulated CPU time in the guest's file system, block "
              "layer and virtio driver that KVM runs at native speed; a VM half measures the "
              "emulator as well as the disk (the tcg precondition leaves out fio guests busier "
              "than 25%, the rule vm-db-busy database guests more than half busy or ever "
              "saturated)."),
    # -- a database's client load (its operating point) -----------------------------------------
    Mechanism("group-commit", LOAD,
              "The thesis raised its MySQL clients until I/O saturated (Sec 4.1.1, p. 36), "
              "where transactions queue for the log and one flush commits several (InnoDB's "
              "group commit, one jbd2 commit for many fsyncs); below saturation a transaction "
              "waits for its own commit instead of sharing a group commit, so what a commit, and "
              "a neighbour's journal traffic, costs each transaction can change with the client "
              "count."),
    # -- the container platform's per-container volume ----------------------------------------
    Mechanism("ploop-allocation", PLATFORM,
              "The thesis's per-container journals sat on Ploop, whose format module maps a "
              "container's blocks to an image file on the host's file system with \"dynamic "
              "allocation\" (Sec 5.2.1, pp. 58-59): a container's first write to a block grows "
              "its image, an allocation the host's one shared jbd2 journals for every "
              "container, which a volume with its blocks fixed in advance never does (its "
              "journal-accounted arm adds cgclassify, Sec 5.2.2, p. 60, which moves each jbd2 "
              "into its container's cgroup as ours does: no mechanism of its own)."),
)}
