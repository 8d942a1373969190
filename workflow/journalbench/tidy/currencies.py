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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from journalbench.formats.samples import Sample
from journalbench.tidy import tolerance

NS = 1e9
CURRENCIES: dict[str, Callable[[Sample], int | None]] = {
    "requests": lambda sample: sample.requests,
    "time": lambda sample: sample.time_ns,
    "wait": lambda sample: sample.wait_ns,
}
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


def own_by_line(samples: list[Sample], value: Callable[[Sample], int | None],
                journals: dict[int, list[Sample]] | None = None) -> dict[int, int]:
    """For every tenant line (by index): its value minus that of the jbd2 threads that sat in
    the same cgroup during the same interval (`journals`: journals_in_cgroups, if found
    already)."""
    if journals is None:
        journals = journals_in_cgroups(samples)
    return {index: (value(samples[index]) or 0) - sum(value(j) or 0 for j in found)
            for index, found in journals.items()}


def sums(path: Path, samples: list[Sample], tenants: list[str],
         value: Callable[[Sample], int | None], what: str, unit: str = "",
         journals: dict[int, list[Sample]] | None = None) -> dict[str, Any]:
    """Whole-run cgroup, own, jbd2 (per tenant), shared and device sums of one currency; a
    tenant's own sum below 0 by no more than sampling explains is taken as 0 and noted
    (tolerance.py)."""
    own_lines = own_by_line(samples, value, journals)
    cgroup, own, jbd2 = (dict.fromkeys(tenants, 0) for _ in range(3))
    shared = device = 0
    for index, sample in enumerate(samples):
        amount = value(sample) or 0
        if sample.kind == "tenant" and sample.source in cgroup:
            cgroup[sample.source] += amount
            own[sample.source] += own_lines[index]
        elif sample.kind == "jbd2":
            if sample.tenant is None:
                shared += amount
            elif sample.tenant in jbd2:
                jbd2[sample.tenant] += amount
        elif sample.kind == "device":
            device += amount
    notes = tolerance.settle(path, own, what, tolerance.one_interval(samples, value), unit)
    return {"cgroup": cgroup, "own": own, "jbd2": jbd2, "shared": shared, "device": device,
            "total": sum(own.values()) + sum(jbd2.values()) + shared, "notes": notes}


def ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def run_columns(path: Path, samples: list[Sample], tenants: list[str],
                journals: dict[int, list[Sample]] | None = None) -> dict[str, dict]:
    """The RUN_COLUMNS of every tenant (None throughout for runs sampled without them;
    `journals`: journals_in_cgroups, if found already)."""
    if not traced(samples):
        return {tenant: dict.fromkeys((*RUN_COLUMNS, "counter_note")) for tenant in tenants}
    if journals is None:
        journals = journals_in_cgroups(samples)
    requests = sums(path, samples, tenants, CURRENCIES["requests"], "requests", "", journals)
    time = sums(path, samples, tenants, CURRENCIES["time"], "device time", " ns", journals)
    charged = sum(time["cgroup"].values())
    waits, wait_notes = per_request_waits(path, samples, tenants, requests, journals)
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
                      requests: dict[str, Any], journals: dict[int, list[Sample]] | None = None
                      ) -> tuple[dict[str, dict[str, float | None]], dict[str, str]]:
    """(mean scheduler wait per request (ms) of each tenant's own, its jbd2's and the shared
    jbd2's requests, None throughout for runs sampled before the wait was; the notes of
    tolerance.settle)."""
    if not all(sample.wait_ns is not None for sample in samples):
        return {tenant: dict.fromkeys(WAIT_COLUMNS) for tenant in tenants}, {}
    wait = sums(path, samples, tenants, CURRENCIES["wait"], "scheduler wait", " ns", journals)
    return {tenant: {
        "own_wait_ms": ratio(wait["own"][tenant] / MS, requests["own"][tenant]),
        "jbd2_wait_ms": ratio(wait["jbd2"][tenant] / MS, requests["jbd2"][tenant]),
        "shared_jbd2_wait_ms": ratio(wait["shared"] / MS, requests["shared"]),
    } for tenant in tenants}, wait["notes"]
