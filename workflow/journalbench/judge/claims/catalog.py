"""The one list of the thesis's claims: id, where the thesis shows it, what it says (in our
words, with its numbers, and in one line: HEADLINES), which of our figures shows our side, and
the testbed factors its result depends on, each through a mechanism (mechanisms.py; scope.py
reads the factors' values). docs/claims.md explains each claim's tests, margins and
preconditions at length."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from journalbench.judge.claims.mechanisms import (
    DEVICE,
    LOAD,
    MECHANISMS,
    PLATFORM,
    VIRTUALIZATION,
    WEIGHTS,
    WRITEBACK,
)


def consolidation(device: str, weights: str | None) -> dict[str, str]:
    """A thesis claim's mechanisms, factor -> mechanism (mechanisms.py): its own for the
    device and, where its tenants compete, for what the weights divide; and those every claim
    of disks shared under cgroup weights has: who is charged for a buffered writer's
    write-back, the VM's acceleration (its VM halves) and the Ploop volumes under the arms the
    thesis ran on OpenVZ. scope.py says where each applies to a check's runs."""
    found = {DEVICE: device, **({WEIGHTS: weights} if weights else {}),
             WRITEBACK: "writeback-charge", VIRTUALIZATION: "tcg-emulation",
             PLATFORM: "ploop-allocation"}
    for factor, name in found.items():
        if MECHANISMS[name].factor != factor:
            raise ValueError(f"mechanism {name} is of factor {MECHANISMS[name].factor}, "
                             f"not {factor}")
    return found


# the claims' own mechanisms, by what they measure (mechanisms.py has each sentence)
ALONE = consolidation("device-request-cost", None)  # one instance: no weights compete
PAIRED = consolidation("device-request-cost", "weights-interference")
SPLIT = consolidation("device-division", "weights-split")
SIZE = consolidation("device-request-size", "weights-size")
JOURNAL = consolidation("device-commit", "weights-interference")  # fsyncs beside a neighbour
JOURNAL_SPLIT = consolidation("device-commit", "weights-split")  # shares beside the journal
# the MySQL claims': also the database's client load (sysbench's threads: its operating point)
MYSQL = {**JOURNAL, LOAD: "group-commit"}
MYSQL_SPLIT = {**JOURNAL_SPLIT, LOAD: "group-commit"}


OURS_WHERE = "ours (not in the thesis)"  # where a claim of ours is "in the thesis"


@dataclass(frozen=True)
class Claim:
    id: str
    where: str  # the thesis's figure, table or section
    statement: str  # the claim with the thesis's numbers, in our words
    figures: tuple[str, ...] = ()  # our figures of it (figures/<campaign>/<name>.png)
    mechanisms: dict[str, str] = field(default_factory=dict)  # factor -> mechanism

    @property
    def scope(self) -> tuple[str, ...]:
        """The testbed factors its result depends on (each through its mechanism)."""
        return tuple(self.mechanisms)


CLAIMS: dict[str, Claim] = {c.id: c for c in (
    Claim("C1", "Fig 3.5", "one instance alone: containers beat the VM in each of the four fio "
          "base workloads", ("c1-base-alone",), ALONE),
    Claim("C2", "Fig 3.6", "two instances at 70/30 running the same base workload: the 70% "
          "container beats the 70% VM", ("c2-base-paired",), PAIRED),
    Claim("C3", "Fig 3.7", "two sequential writers at 70/30: KVM, LXC and OpenVZ each hold "
          "~70/30 (our per-container-journal and journal-accounted splits are ours: the thesis "
          "shows none)", ("c3-split",), SPLIT),
    Claim("C4", "Fig 3.4", "weights ignore request size (the thesis: they divide \"disk "
          "time\", p. 29, or the \"I/O request rate\", p. 30): a 30% writer of 64 KiB I/Os gets "
          "more bandwidth than a 70% writer of 16 KiB I/Os", ("c4-io-size",), SIZE),
    Claim("C5", "Fig 4.1", "MySQL, two instances: the VM beats the containers (one "
          "instance's throughput: LXC 22%, OpenVZ 25% below KVM)",
          ("c5-mysql-one-or-two",), MYSQL),
    Claim("C6", "Fig 4.2", "MySQL at 70/30: the VM holds the split, container shares swing "
          "between 0% and 55%",
          ("c6-mysql-pair-split", "c6-mysql-pair-swing"), MYSQL_SPLIT),
    Claim("C7", "Sec 4.2.1", "MySQL issues 27 fsync/s in the VM, 14/s in LXC, 12/s in OpenVZ",
          ("c7-mysql-fsyncs",), MYSQL),
    Claim("C8", "Fig 4.3", "a high-fsync victim: the container's throughput falls as the "
          "neighbour goes no -> low -> high fsync; the VM's stays constant (~2.5 MB/s) and "
          "beats the containers whenever the victim fsyncs often (containers win only when "
          "both run no-fsync); the thesis states no weights here",
          ("c8-victim-throughput",), JOURNAL),
    Claim("C9", "Table 4.1", "the high-fsync victim's mean fsync latency beside a no/low/high "
          "neighbour: LXC 33.81/38.86/44.09 ms (OpenVZ 31.78/39.81/50.41) rising; KVM "
          "18.58/18.94/18.27 ms constant", ("c9-fsync-latency",), JOURNAL),
    Claim("C10", "Fig 4.6, 4.7 (p. 44)", "a low-fsync container at 70%: ~60% of the disk "
          "beside a no-fsync neighbour (isolation \"slightly violated\"; KVM holds 70%), "
          "50-30% (LXC) or 50% (OpenVZ) beside a high-fsync one, x1.2-2.0 less; jbd2's share "
          "of the disk rises 10% -> 28% (LXC), 9% -> 21% (OpenVZ)",
          ("c10-low-fsync-share",), JOURNAL_SPLIT),
    Claim("C11", "Fig 4.8, Table 4.2", "MySQL at 70% beside a no/low/high-fsync neighbour: VM "
          "~425 req/s constant; containers drop no -> low and recover at high; container "
          "fsync latency 72-160 ms against the VM's ~27 ms",
          ("c11-mysql-70-by-neighbour",), MYSQL),
    Claim("C12", "Fig 4.9, Table 4.3", "MySQL at 30%: VM ~220 req/s; container fsync latency "
          "86-172 ms against the VM's ~24.5 ms; containers beat the VM only beside a "
          "high-fsync neighbour", ("c11-mysql-30-by-neighbour",), MYSQL),
    Claim("C13", "Fig 4.10-4.15", "a MySQL container at 70% beside a no-fsync writer gets ~20% "
          "of the disk and jbd2 ~20%; the VM keeps 70/30", ("c19-mysql-70-share",), MYSQL_SPLIT),
    Claim("C14", "Sec 4.3", "the VM beats LXC and OpenVZ in MySQL by up to 2x and 2.4x",
          ("c5-mysql-one-or-two", "c11-mysql-70-by-neighbour"), MYSQL),
    Claim("C15", "Fig 5.2", "sequential writers: per-container journaling costs nothing alone, "
          "beats the shared journal in consolidation (high-fsync fsync latency 80 -> 58 ms), "
          "and stays below the VM beside a high-fsync writer", ("c15-arms-throughput",), JOURNAL),
    Claim("C16", "Fig 5.3, 5.4", "MySQL: per-container journaling up to 1.3x over shared, "
          "journal accounting up to 3.4x over shared, 2.6x over per-container and 1.4x over "
          "the VM", (), MYSQL),
    Claim("C17", "Fig 5.5, Table 5.3", "two high-fsync writers at 70/30: per-container "
          "journaling alone swings 35-65%; with journal accounting 70/30 holds and the 30% "
          "writer waits longer for fsync (86 ms) than the 70% one (45 ms)",
          ("c17-split",), JOURNAL_SPLIT),
    Claim("C18", "Fig 5.6", "a high-fsync victim with journal accounting: stable (~2.7 MB/s) "
          "whatever the neighbour, and above the VM in every case",
          ("c18-victim-by-neighbour",), JOURNAL),
    Claim("C19", "Fig 5.7-5.10", "MySQL at 70% with journal accounting holds ~70% beside every "
          "neighbour (~25-50% without)", ("c19-mysql-70-share",), MYSQL_SPLIT),
    Claim("C20", "Fig 5.11, 5.12", "MySQL beside MySQL: journal accounting splits 70/30 like "
          "the VM, with more throughput than the VM", ("c6-mysql-pair-split",), MYSQL_SPLIT),
    Claim("C21", "Fig 5.14", "Redis alone: containers beat the VM", ("c21-redis-alone",), ALONE),
    Claim("C22", "Fig 5.15, Table 5.4", "Redis beside a buffered no/low/high-fsync "
          "neighbour: the VM ~1300 ops/s constant (fsync ~33 ms), containers fall as the "
          "neighbour fsyncs more (LXC fsync 47.6/58.5/65.7 ms, OpenVZ 43.8/51.71/57.5); the VM "
          "wins beside low and high", ("c22-redis-by-neighbour",), JOURNAL),
    Claim("C23", "Fig 5.16", "Redis: per-container journaling up to 1.5x over shared (~2200 "
          "ops/s), journal accounting adds little",
          ("c22-redis-by-neighbour", "c23-redis-share"), JOURNAL),
    # not the thesis's: seen here, on a modern kernel with BFQ (the thesis names no I/O
    # scheduler, and its journal-accounted arm ran on OpenVZ 7.0.10's own kernel), so it has
    # no figure of the thesis to compare with and no testbed of the thesis's to scope it by
    Claim("C24", OURS_WHERE, "journal accounting can starve: a high-fsync "
          "victim at 70% whose jbd2 thread sits in its cgroup gets less than a quarter of its "
          "weight's share beside a 30% streaming (no-fsync) writer, and less than without "
          "accounting (found on this machine's own disk, campaigns quick and bfq; "
          "where it holds and where not: its verdict on each testbed, counted per device)",
          ("c24-starvation",), {}),
)}
# Everything else derives the claims from CLAIMS: the thesis's and ours (by `where`), the ids a
# campaign may name (the pipeline refuses any other before it starts: unknown), and how the
# summary, the report and the ledger name them (id_ranges: "C1-C23").
OURS = tuple(c for c, claim in CLAIMS.items() if claim.where == OURS_WHERE)
THESIS_CLAIMS = tuple(c for c in CLAIMS if c not in OURS)
CLAIM_ID = re.compile(r"^C([1-9][0-9]*)$")  # the shape the campaign schema checks


def unknown(ids: Iterable[str], claims: Mapping[str, Claim] = CLAIMS) -> list[str]:
    """The ids among `ids` that name no claim of the catalogue, each once, in order."""
    return [i for i in dict.fromkeys(ids) if i not in claims]


def id_ranges(ids: Iterable[str]) -> str:
    """Claim ids with runs of consecutive numbers joined: "C1-C23", "C1-C3, C5", "C24"."""
    numbers = []
    for i in ids:
        match = CLAIM_ID.match(i)
        if match is None:
            raise ValueError(f"{i!r}: not a claim id (C and a number)")
        numbers.append(int(match.group(1)))
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"C{r[0]}" if len(r) == 1 else f"C{r[0]}-C{r[-1]}" for r in runs)

# Each claim in one line, words without the thesis's numbers (the statement above has them):
# the first column of the results at a glance (results/summary.md, the README, the report).
HEADLINES: dict[str, str] = {
    "C1": "One instance alone: containers are faster than the VM",
    "C2": "Two instances at 70/30: the 70% container is faster than the 70% VM",
    "C3": "Two sequential writers at 70/30: every arm holds the split",
    "C4": "Weights ignore request size: a 30% writer of large I/Os outruns a 70% one of small",
    "C5": "MySQL, two instances: the VM is faster than the containers",
    "C6": "MySQL at 70/30: the VM holds the split, the containers' shares swing",
    "C7": "MySQL fsyncs about twice as often in the VM as in a container",
    "C8": "A high-fsync victim slows as its neighbour fsyncs more in a container, not in the VM",
    "C9": "The victim's fsync latency rises with its neighbour's fsyncs in a container, not in "
          "the VM",
    "C10": "A low-fsync container loses its share beside a high-fsync neighbour; jbd2's share "
           "rises",
    "C11": "MySQL at 70%: the VM is steady whatever the neighbour; containers' fsyncs are slower",
    "C12": "MySQL at 30%: the VM wins except beside a high-fsync neighbour; containers' fsyncs "
           "are slower",
    "C13": "A MySQL container at 70% beside a streaming writer gets a fraction of the disk; the "
           "VM keeps 70%",
    "C14": "The VM beats LXC and OpenVZ in MySQL by up to 2x",
    "C15": "Per-container journals: free alone, better than a shared journal beside others, "
           "below the VM",
    "C16": "MySQL: per-container journals and journal accounting beat a shared journal",
    "C17": "Two high-fsync writers at 70/30: journal accounting holds the split",
    "C18": "With journal accounting a high-fsync victim is steady whatever its neighbour, above "
           "the VM",
    "C19": "MySQL at 70% with journal accounting keeps its share beside every neighbour",
    "C20": "MySQL beside MySQL: journal accounting splits 70/30 like the VM, and is faster",
    "C21": "Redis alone: containers are faster than the VM",
    "C22": "Redis beside a buffered writer: the VM is steady, containers slow as it fsyncs more",
    "C23": "Redis: per-container journals beat a shared journal; accounting adds little",
    "C24": "Where journal accounting starves a high-fsync victim beside a streaming writer "
           "(per device)",
}
