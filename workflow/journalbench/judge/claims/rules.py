"""The rules of judging that changed after data were seen, each dated, with why. The ledger
applies them openly: it judges every family once with the rules in force and once with each
rule's predecessors only, and lists every verdict a rule changed, old -> new
(verdicts.rule_changes). A rule fixed before any data of its kind was taken is not listed here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    date: str
    what: str
    why: str


SCOPE, PARTS, TCG, GUEST_FSYNC, WRITEBACK, C24_SHARES, HOST_CPU = (
    "scope", "parts", "tcg", "guest-fsync", "writeback", "c24-shares", "host-cpu")
SYMMETRIC, REASONS, MEASURED, TUNED_ON = "symmetric", "reasons", "measured", "tuned-on"
WEIGHTS_MEASURED, WEIGHTS_IN_PLAY, CONTRAST_WELCH = (
    "weights-measured", "weights-in-play", "contrast-welch")
VM_DB_BUSY, VM_DB_THREADS = "vm-db-busy", "vm-db-threads"
# the rules that change only the testbed a verdict is qualified by, never its outcome
QUALIFYING = (REASONS, MEASURED, WEIGHTS_MEASURED, CONTRAST_WELCH)
# the qualifying rules whose changes need every campaign's contrasts (their drops), so that
# contrasts.apply lists them, not a family's own judgement (verdicts.rule_changes)
CONTRASTED = (MEASURED, WEIGHTS_MEASURED, CONTRAST_WELCH)
RULES: tuple[Rule, ...] = (
    Rule(SCOPE, "2026-11-25",
         "A result against the thesis on a testbed that differs from the thesis's in a factor "
         "the claim's mechanism depends on (device class, what the weights divide, cgroup "
         "version and write-back attribution, virtualization and its acceleration, the "
         "container platform: judge/claims/scope.py) is \"not "
         "reproduced here\", with the differing factors; \"contradicted\" is kept for results "
         "where every such factor matches.",
         "An independent recomputation matched the ledger's numbers, but \"contradicted\" "
         "read as \"the thesis was wrong\" where it meant \"this testbed differs\": cgroup v1, "
         "BFQ's sector budgets, TCG."),
    Rule(PARTS, "2026-11-25",
         "A claim whose parts disagree (a check significantly for it, another significantly "
         "against it, each at its claim's Holm level) is \"mixed\", with each part's outcome; "
         "never one part's word for all.",
         "C15 and C18 were \"contradicted\" while their other parts reproduced."),
    Rule(TCG, "2026-11-25",
         "Under TCG a database's VM half is not testable; a fio VM half is judged only where "
         "every guest of its runs was at most 25% busy (before: unless a tenant-run was "
         "saturated in half its seconds).",
         "Guests kept by the old screen were 83-89% busy: C14's and C22's VM halves measured "
         "the CPU emulation (Redis ~480 ops/s in a VM against ~10,000 in a container). Every "
         "direct-I/O fio guest was at most 21% busy, every database guest at least 40%."),
    Rule(GUEST_FSYNC, "2026-11-25",
         "A check of a database's fsync latency in a VM (MariaDB's, traced by the host) is not "
         "testable (the guest's calls are made in its own kernel, which the host does not "
         "trace), whatever else its runs show.",
         "The same untraced guest fsync showed as \"CPU-bound, too few left\" or as "
         "\"missing\", by chance."),
    Rule(WRITEBACK, "2026-11-25",
         "A check involving a writer through the page cache without fsync (its write-back "
         "left to the kernel's flushers), its bytes or its effect on a neighbour, is not "
         "testable where that write-back is charged to no tenant (cgroup v1; tidy's "
         "writeback_attributed).",
         "On this cgroup v1 host a buffered no-fsync writer's cgroup was charged 0-0.27 MB "
         "while fio wrote 1.2-3.0 GB in 20 s: the neighbour escaped its weight (thesis-hdd, "
         "C22 and C23). A buffered writer that fsyncs was charged 97-104% of its bytes."),
    Rule(C24_SHARES, "2026-11-25",
         "C24's comparison of the victim's share, per-container against journal-accounted, is a "
         "difference of shares (Welch t on shares), not a ratio on the log scale.",
         "A share of 0, total starvation, has no log: the check became \"not testable\" "
         "exactly when C24 is strongest."),
    Rule(HOST_CPU, "2026-11-26",
         "A check other than the databases' with a run on a test host that records its own "
         "CPUs (the nested cgroup-v2 host, whose vCPUs run every tenant) in which one of them "
         "was saturated in half the run's seconds or more is not testable (the bound a VM's "
         "vCPU is held to); the databases' checks leave such runs out, as they always did.",
         "The nested host runs its tenants under TCG. Written after the first runs of "
         "thesis-v2 had landed (none judged yet); its first 144 runs had no vCPU saturated, "
         "so it changed no verdict."),
    Rule(SYMMETRIC, "2026-11-27",
         "A check's outcome says what its runs show on their testbed, whichever way it goes: "
         "reproduced, contradicted, inconclusive or not testable, each carrying the factors "
         "in which that testbed differs from the thesis's (\"where the testbed differs in "
         "X\") or saying it differs in none (\"on a testbed like the thesis's\"); \"not "
         "reproduced here\" is retired.",
         "Under the scope rule a differing factor turned a result against the thesis into "
         "\"not reproduced here\" while a result for it on the same testbed stayed "
         "\"reproduced\" (C17 under iocost: the accounted 70% share reproduced, "
         "accounted-over-per-container not reproduced here, on the same runs)."),
    Rule(REASONS, "2026-11-27",
         "A claim depends on a factor only through a mechanism stated in one sentence with "
         "its source (judge/claims/mechanisms.py; catalog.py gives each claim its own for "
         "the device and the weights). The container platform factor becomes the "
         "per-container volume: the thesis's Ploop allocates a container's blocks on demand "
         "in an image on the host's file system, journaled by the host's one jbd2; it "
         "matches a testbed whose per-container volumes are such images (tidy's "
         "container_volume), where before it could never match.",
         "An independent review found the platform factor matched no testbed (no "
         "per-container-journal or journal-accounted check could be contradicted) and no "
         "mechanism named for it or for any claim's factors."),
    Rule(MEASURED, "2026-11-27",
         "Where a study measured a claim's checks under both values of a factor on one "
         "campaign and host, varying that factor alone (the device profile; the I/O "
         "controller, BFQ against iocost), the measurement decides for the checks it "
         "measured: each check's change of effect within its smallest effect of interest "
         "(TOST, Holm over the claims of the contrast) drops the factor; a significant "
         "change beyond it keeps it; otherwise the mechanism stands (judge/claims/"
         "contrasts.py).",
         "An independent review found a factor excusing a result where the package's own "
         "study found it did not matter: C10's share effect x0.917 (v1/bfq), x0.922 "
         "(v2/bfq), x0.945 (v2/iocost), \"not reproduced here: weights differ\" on the "
         "BFQ testbeds only."),
    Rule(TUNED_ON, "2026-11-27",
         "A check on a testbed whose I/O controller's settings were chosen on its claim's own "
         "condition is not testable there (preconditions.TUNED_ON names each such choice): the "
         "settings were fitted on the outcome the check judges.",
         "thesis-v2's iocost QoS (p95 write latency 18,519 us) was picked on 70/30 direct "
         "64 KiB writer pairs, C3's condition, after the kernel's automatic QoS and a 2x "
         "target had divided nothing; an independent review found C3 under iocost no "
         "independent test. The controller contrasts already left it out; its verdict there "
         "stood until this rule."),
    Rule(WEIGHTS_MEASURED, "2026-11-29",
         "What a testbed's weights divide is measured, not named (judge/claims/division.py): "
         "on validation pairs no claim uses, two equal random readers at 80/20 (the weights "
         "divide at all where the heavier gets at least halfway from 0.50 to 0.80) and, at "
         "equal weights, readers of 128 KiB against 8 KiB requests, random and sequential "
         "(device time or bytes). The weights are like the thesis's (disk time, whatever the "
         "access pattern) only where both patterns' pairs showed device time divided; a "
         "testbed without them shows its controller's documented mechanism, as such, and "
         "differs. The sequential pair joined the same day, after weights-hdd's first runs "
         "showed BFQ charging random readers by time (0.43 of the time to the 128 KiB "
         "reader, 0.92 of the bytes), as its code charges a slow queue's time.",
         "An independent recomputation found C4 headlined \"reproduced, like the thesis's\" "
         "from thesis-nested v2/iocost, where iocost divided nothing (its own validation: "
         "the 80% reader 0.497-0.499; no tenant-second of C4's pair throttled): the testbed "
         "counted as like the thesis's because the controller's name said \"modelled device "
         "time\" (scope.DIVIDES)."),
    Rule(WEIGHTS_IN_PLAY, "2026-11-29",
         "A check whose claim depends on the weights (where its tenants compete) is not "
         "testable on a testbed whose weights were measured to divide nothing, nor under a "
         "controller that holds a group back only past its budget (iocost) where its own "
         "per-second record shows none of the check's tenants held back (no second waited, in "
         "debt or delayed), or keeps no such record. A scheduler that orders every request by "
         "weight (BFQ) acts by construction where its validation passed. The gate asks "
         "whether the weights were in play, never whether the outcome agreed with the thesis.",
         "Under the blind QoS thesis-nested's iocost divided nothing (80/20 readers 0.50; 0 "
         "of 480 tenant-seconds throttled in C4's pair, 0 of 600 in C3's, 0 of 720 in "
         "C17's): its C3, C4 and C17 verdicts measured no enforcement, not iocost's weights."),
    Rule(CONTRAST_WELCH, "2026-11-29",
         "The change of a check's effect between two testbeds (contrasts.py) is a t statistic "
         "with Welch-Satterthwaite degrees of freedom from each check's own standard error "
         "and degrees of freedom (before: each standard error read off its 95% interval, "
         "normal tails); a factor is dropped only by an equivalence whose margin is at most "
         "the check's smallest effect of interest, and never where the same change is "
         "significant: one decision per check, the ledger's, the controller study's and the "
         "notebook's. Two settings of one controller (BFQ's tunables, iocost's QoS procedure) "
         "are a contrast of the weights factor where both testbeds' weights were measured on "
         "validation pairs (fixed before weights-nested's first run).",
         "At n = 3 normal tails are anti-conservative (C10's change p 3e-8 where Welch gives "
         "0.0015; a TOST p near 1e-175), and C10's weights factor was dropped by an "
         "equivalence while the controller study counted the same change as a dependence."),
    Rule(VM_DB_BUSY, "2026-11-29",
         "Under TCG a database's VM half is judged where every guest of every run of its "
         "conditions (those left out as CPU-bound too) kept up with its disk: its vCPU "
         "saturated (>= 95% busy) in no second and at most half busy over the measured window "
         "(formats.guest.keeps_up), as at the MySQL claims' guest operating point "
         "(agent/workloads/guest_point.py); where a guest was busier the half stays not "
         "testable, saying how busy (before: never under TCG, rule tcg). At half busy a "
         "closed-loop client's transaction waits for the emulated CPU about as long as it is "
         "served, at most (docs/claims.md).",
         "Seven claims (C5, C6, C7, C12, C14, C21, C22) had no verdict because every VM of "
         "this machine runs under TCG, where at the I/O-saturating 64 sysbench threads "
         "thesis-hdd's MariaDB guest was 74-99% busy. A lab (MariaDB alone in the vm arm, "
         "hdd, 20 s) found the guest 32% busy and never saturated at 2 threads (~4.2 ms of "
         "vCPU a ~26 ms transaction), 51% at 4, 92% and saturated in a fifth of its seconds "
         "at 16: below saturation the transaction's time is the disk's again. The tcg rule's "
         "25% was set where fio's direct-I/O guests sat; what sets a closed-loop client's "
         "pace is whether it queues for the CPU. Written before any run at such a point."),
    Rule(VM_DB_THREADS, "2026-11-29",
         "A MariaDB guest's seconds, for the rule vm-db-busy (and its vCPU columns), are those "
         "of its sysbench's threads: from the client's end less sysbench's total time, whose "
         "timer starts once every thread has opened its connection, to the client's end "
         "(before: from the client's start, its start-up included; tidy keeps that reading "
         "as vcpu_busy_client_mean and vcpu_saturated_client_share).",
         "In mysql-point's 143-run pilot 5 of the 7 MariaDB guests vm-db-busy refused were "
         "refused for one saturated second each, and in all 5 it was the same second: the "
         "guest-report second whose middle lay 0.03-0.31 s after the client's start, before "
         "sysbench's threads started (0.53-0.80 s after it), 98% busy with almost no disk "
         "I/O: sysbench loading its script and opening 8 connections under TCG, no "
         "transaction. Read from the pilot's raw files, before any verdict of the campaign "
         "was read; the guest operating point's sweep (method 3) was read again the same way "
         "and chose the same 8 threads."),
)
NAMES = tuple(rule.name for rule in RULES)
LATEST = max(rule.date for rule in RULES)  # the day of the latest changes
