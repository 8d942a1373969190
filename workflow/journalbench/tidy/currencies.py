"""Disk shares in two more currencies beside bytes (tidy/rows.py): requests and device time.

Both come from the sampler's devtime.bt (definitions: data/README.md) on every line of runs
sampled since; older runs have neither, and every column here is then None. The sums follow
the byte shares' rules, currency X being `requests` or device time:
  cgroup X  = the tenant lines' X (its cgroups' requests, jbd2 threads sitting in them included)
  own X     = cgroup X - X of the jbd2 threads that sat in that cgroup (per interval)
  jbd2 X    = X of the jbd2 thread(s) journalling the tenant's own volume
  shared X  = X of jbd2 threads journalling no single tenant (the shared journal)
  total     = sum of own X over tenants + X of every jbd2 thread
  own_X_share = own / total, jbd2_X_share = jbd2 / total, shared_jbd2_X_share = shared / total
  achieved_time_share = cgroup time / sum of cgroup time over tenants (what BFQ's weights split)
  other_time_share    = device time owned by no tenant cgroup and no jbd2 thread (the root
                        cgroup's flushers, requests whose first bio was not seen) / the device
                        line's time
The scheduler wait (insert -> issue, summed the same way) is given per request: own_wait_ms =
own wait / own requests, jbd2_wait_ms and shared_jbd2_wait_ms likewise; None in runs sampled
before it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench.formats.samples import Sample
from journalbench.tidy import tolerance

NS = 1e9
MS = 1e6
WAIT_COLUMNS = ("own_wait_ms", "jbd2_wait_ms", "shared_jbd2_wait_ms")
RUN_COLUMNS = (
    "own_requests", "jbd2_requests", "own_requests_share", "jbd2_requests_share",
    "shared_jbd2_requests_share",
    "own_time_s", "jbd2_time_s", "own_time_share", "jbd2_time_share", "shared_jbd2_time_share",
    "achieved_time_share", "other_time_share", *WAIT_COLUMNS,
)
SAMPLE_COLUMNS = ("requests", "own_requests", "time_s", "own_time_s", "time_share", "wait_s")


def traced(samples: list[Sample]) -> bool:
    """Whether the run's samples carry requests and device time (on every line)."""
    return bool(samples) and all(sample.requests is not None for sample in samples)


def same_cgroup(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip("/") == b.strip("/")


def journals_in_cgroups(samples: list[Sample]) -> dict[int, list[Sample]]:
    """For every tenant line (by index): the jbd2 lines of the same interval whose thread sat
    in its cgroup. Found once per run: every currency's own amounts subtract them."""
    journals: dict[float, list[Sample]] = defaultdict(list)
    for sample in samples:
        if sample.kind == "jbd2":
            journals[sample.t].append(sample)
    return {index: [j for j in journals.get(sample.t, ()) if same_cgroup(j.cgroup, sample.cgroup)]
            for index, sample in enumerate(samples) if sample.kind == "tenant"}


@dataclass
class Sums:
    """One currency's whole-run sums of cgroup, own, jbd2 (per tenant), shared and device
    amounts, and its device lines' (amount, seconds) for tolerance.busiest."""

    cgroup: dict[str, int]
    own: dict[str, int]
    jbd2: dict[str, int]
    shared: int = 0
    device: int = 0
    device_lines: list[tuple[float, float]] = field(default_factory=list)


def amounts(sample: Sample) -> tuple[int, int, int, int]:
    """A line's amount in each of SUMMED: its bytes, requests, device time, scheduler wait
    (0 where not sampled)."""
    return sample.bytes, sample.requests or 0, sample.time_ns or 0, sample.wait_ns or 0


SUMMED = ("bytes", "requests", "time", "wait")


def summed(samples: list[Sample], tenants: list[str],
           journals: dict[int, list[Sample]] | None = None) -> dict[str, Sums]:
    """The sums of every currency of SUMMED, in one pass over the lines (a pass per currency,
    and one more each for the tenants' own amounts and the tolerance, were a tenth of tidy's
    time). A tenant's own amount is its line's less that of the jbd2 threads in its cgroup in
    that interval (`journals`: journals_in_cgroups, if found already)."""
    if journals is None:
        journals = journals_in_cgroups(samples)
    width = range(len(SUMMED))
    cgroup, own, jbd2 = ({tenant: [0] * len(SUMMED) for tenant in tenants} for _ in range(3))
    shared, device = [0] * len(SUMMED), [0] * len(SUMMED)
    device_lines: list[tuple[tuple[int, ...], float]] = []
    for index, sample in enumerate(samples):
        kind, amount = sample.kind, amounts(sample)
        if kind == "tenant":
            if sample.source in cgroup:
                line_cgroup, line_own = cgroup[sample.source], own[sample.source]
                for i in width:
                    line_cgroup[i] += amount[i]
                    line_own[i] += amount[i]
                for journal in journals[index]:
                    journal_amount = amounts(journal)
                    for i in width:
                        line_own[i] -= journal_amount[i]
        elif kind == "jbd2":
            into = shared if sample.tenant is None else jbd2.get(sample.tenant)
            if into is not None:
                for i in width:
                    into[i] += amount[i]
        elif kind == "device":
            for i in width:
                device[i] += amount[i]
            if sample.dt > 0:
                device_lines.append((amount, sample.dt))
    return {name: Sums({t: cgroup[t][i] for t in tenants}, {t: own[t][i] for t in tenants},
                       {t: jbd2[t][i] for t in tenants}, shared[i], device[i],
                       [(float(line[i]), dt) for line, dt in device_lines])
            for i, name in enumerate(SUMMED)}


def settled(path: Path, found: Sums, what: str, unit: str = "") -> dict[str, Any]:
    """A currency's sums with each tenant's own sum below 0 by no more than sampling explains
    taken as 0 and noted (tolerance.py), and their total."""
    own = dict(found.own)
    notes = tolerance.settle(path, own, what, tolerance.busiest(found.device_lines), unit)
    return {"cgroup": found.cgroup, "own": own, "jbd2": found.jbd2, "shared": found.shared,
            "device": found.device,
            "total": sum(own.values()) + sum(found.jbd2.values()) + found.shared,
            "notes": notes}


def ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def run_columns(path: Path, samples: list[Sample], tenants: list[str],
                journals: dict[int, list[Sample]] | None = None,
                found: dict[str, Sums] | None = None) -> dict[str, dict]:
    """The RUN_COLUMNS of every tenant (None throughout for runs sampled without them;
    `journals`: journals_in_cgroups, `found`: summed, if found already)."""
    if not traced(samples):
        return {tenant: dict.fromkeys((*RUN_COLUMNS, "counter_note")) for tenant in tenants}
    if found is None:
        found = summed(samples, tenants, journals)
    requests = settled(path, found["requests"], "requests", "")
    time = settled(path, found["time"], "device time", " ns")
    charged = sum(time["cgroup"].values())
    waits, wait_notes = per_request_waits(path, samples, tenants, requests, found["wait"])
    return {
        tenant: {
            **waits[tenant],
            "own_requests": requests["own"][tenant], "jbd2_requests": requests["jbd2"][tenant],
            "own_requests_share": ratio(requests["own"][tenant], requests["total"]),
            "jbd2_requests_share": ratio(requests["jbd2"][tenant], requests["total"]),
            "shared_jbd2_requests_share": ratio(requests["shared"], requests["total"]),
            "own_time_s": time["own"][tenant] / NS, "jbd2_time_s": time["jbd2"][tenant] / NS,
            "own_time_share": ratio(time["own"][tenant], time["total"]),
            "jbd2_time_share": ratio(time["jbd2"][tenant], time["total"]),
            "shared_jbd2_time_share": ratio(time["shared"], time["total"]),
            "achieved_time_share": ratio(time["cgroup"][tenant], charged),
            "other_time_share": ratio(time["device"] - time["total"], time["device"]),
            "counter_note": "; ".join(
                found for found in (requests["notes"].get(tenant), time["notes"].get(tenant),
                                    wait_notes.get(tenant)) if found) or None,
        }
        for tenant in tenants
    }


def per_request_waits(path: Path, samples: list[Sample], tenants: list[str],
                      requests: dict[str, Any], found: Sums
                      ) -> tuple[dict[str, dict[str, float | None]], dict[str, str]]:
    """(mean scheduler wait per request (ms) of each tenant's own, its jbd2's and the shared
    jbd2's requests, None throughout for runs sampled before the wait was; the notes of
    tolerance.settle), from the wait's sums `found`."""
    if not all(sample.wait_ns is not None for sample in samples):
        return {tenant: dict.fromkeys(WAIT_COLUMNS) for tenant in tenants}, {}
    wait = settled(path, found, "scheduler wait", " ns")
    return {tenant: {
        "own_wait_ms": ratio(wait["own"][tenant] / MS, requests["own"][tenant]),
        "jbd2_wait_ms": ratio(wait["jbd2"][tenant] / MS, requests["jbd2"][tenant]),
        "shared_jbd2_wait_ms": ratio(wait["shared"] / MS, requests["shared"]),
    } for tenant in tenants}, wait["notes"]
