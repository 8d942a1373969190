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
# the rules that change only the testbed a verdict is qualified by, never its outcome
QUALIFYING = (REASONS, MEASURED)
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
)
NAMES = tuple(rule.name for rule in RULES)
