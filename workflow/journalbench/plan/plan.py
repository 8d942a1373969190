"""A campaign's plan, made once and kept as `data/plan/<campaign>.json`: every run spec with its
stable run id, which experiment (condition, claims) each run belongs to, and what the campaign
asks of a host (its tools, device profiles, BFQ settings, I/O controls). Every later step reads
it instead of expanding the campaign again: the pipeline when it starts, `dispatch` and
`status`, tidy's experiments table, the notebooks runner.

A kept plan is used while its key matches: the sha256 of the campaign file and of the code that
plans (this folder, the workloads' planning, the run id and window rules, the run-spec
schema); otherwise it is made again. Plans are rebuilt from the campaign files alone, so
data/plan/ is never committed.

The folder defaults to the repository's data/plan (PLAN_DIR, beside this package), wherever the
caller runs: a notebook run from notebooks/ leaves nothing in the repository but its outputs.
The pipeline passes its working directory's data/plan explicitly (a Snakemake run in a scratch
directory keeps its plans there).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench.errors import ConfigError
from journalbench.plan import campaign as campaigns
from journalbench.plan import deal as deals
from journalbench.plan import experiments
from journalbench.plan.campaign import PlannedRun

PACKAGE = Path(__file__).resolve().parents[1]  # <repository>/workflow/journalbench
REPOSITORY = PACKAGE.parents[1]
PLAN_DIR = REPOSITORY / "data" / "plan"
# what planning reads besides the campaign file: a change to any of it plans again
PLANNING_CODE = (
    *sorted((PACKAGE / "plan").glob("*.py")), *sorted((PACKAGE / "agent/workloads").glob("*.py")),
    PACKAGE / "agent/registry.py", PACKAGE / "runfolder.py", PACKAGE / "window.py",
    PACKAGE / "vocabulary.py", PACKAGE.parent / "schemas/run-spec.schema.json",
    PACKAGE.parent / "schemas/campaign.schema.json",
)


@dataclass(frozen=True)
class Plan:
    campaign: str
    source: str  # the campaign file
    key: str
    facts: dict[str, Any]  # tests_claims, tools, devices, bfq_settings, io_controls, headline
    runs: list[dict[str, Any]] = field(repr=False)  # {run_id, spec}, repetition-major
    experiments: list[dict[str, Any]] = field(repr=False)  # rows of the experiments table

    def run_ids(self, claims: str = "") -> list[str]:
        """Every planned run id, or those of the experiments that test one of `claims`
        ("C8,C9"): what re-runs a claim's experiments alone, under the same ids."""
        wanted = {c.strip() for c in claims.split(",") if c.strip()}
        ids = [run["run_id"] for run in self.runs]
        if not wanted:
            return ids
        chosen = {row["run_id"] for row in self.experiments
                  if wanted & set(row["claims"].split(experiments.CLAIM_SEPARATOR))}
        if not chosen:
            raise ConfigError(f"campaign {self.campaign}: no experiment tests "
                              f"{', '.join(sorted(wanted))}")
        return [run_id for run_id in ids if run_id in chosen]

    def for_hosts(self, hosts: list[dict[str, Any]], claims: str = "", chunk: str = "",
                  moved: Mapping[str, Mapping[str, str]] | None = None) -> list[PlannedRun]:
        """Each host not pooled runs the whole matrix (hosts are replicas, compared per host);
        a pool runs it once, each run dealt to one member (plan/deal.py), over the whole plan
        whatever `claims` and `chunk` keep, so any part of it deals alike; `moved`: per pool,
        the runs a lost member's re-deal gave to another (control/pools.py). `chunk` keeps the
        runs of one part of the matrix (chunk_filter)."""
        specs = {run["run_id"]: run["spec"] for run in self.runs}
        keep = chunk_filter(chunk, self.campaign, self.experiments)
        chosen = [run_id for run_id in self.run_ids(claims) if keep(run_id, specs[run_id])]
        pools = deals.members_of(hosts)
        dealt = {pool: {**self.deal(members), **(moved or {}).get(pool, {})}
                 for pool, members in pools.items()}
        found: list[PlannedRun] = []
        for host in hosts:
            pool = host.get("pool")
            if not pool:
                found += [PlannedRun(self.campaign, host["name"], run_id, specs[run_id])
                          for run_id in chosen]
            elif host["name"] == pools[pool][0]:  # the pool's runs once, at its first member
                found += [PlannedRun(self.campaign, pool, run_id, specs[run_id],
                                     dealt[pool][run_id]) for run_id in chosen]
        return found

    def deal(self, members: list[str]) -> dict[str, str]:
        """run id -> member: every planned run dealt to the pool's members (plan/deal.py)."""
        return deals.deal([(run["run_id"], run["spec"]) for run in self.runs], members)


CHUNK_KEYS = ("cgroup_version", "repetitions", "experiment")


def chunk_filter(chunk: str, campaign: str, rows: list[dict[str, Any]] | None = None
                 ) -> Callable[[str, dict[str, Any]], bool]:
    """The runs (run id, spec) a chunk selector keeps: "cgroup_version=1,repetitions=1-2"
    keeps the runs asking cgroup v1 of repetitions 1 and 2; "experiment=validation" those of
    the experiments whose id starts with "validation" (`rows`: the plan's experiments rows);
    any keys together, or none: every run. A nested host boots as one cgroup version and
    switching costs a boot, so a campaign on several versions is measured in chunks of one
    version each, whose repetitions interleave with the other's chunks; a campaign whose
    validation pairs come first measures them as a chunk of their own (docs/nested-host.md)."""
    wanted: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in chunk.split(","))):
        key, _, value = part.partition("=")
        if key not in CHUNK_KEYS or not value:
            raise ConfigError(f"config chunk={chunk!r} (campaign {campaign}): {part!r} is not "
                              "cgroup_version=N, repetitions=A-B or experiment=PREFIX")
        wanted[key] = value
    prefix = wanted.get("experiment")
    of_prefix = {row["run_id"] for row in rows or []
                 if prefix is not None and str(row["experiment"]).startswith(prefix)}
    if prefix is not None and not of_prefix:
        raise ConfigError(f"config chunk={chunk!r} (campaign {campaign}): no experiment's id "
                          f"starts with {prefix!r}")
    low, _, high = wanted.get("repetitions", "").partition("-")
    try:
        version = int(wanted["cgroup_version"]) if "cgroup_version" in wanted else None
        first = int(low) if low else None
        last = int(high or low) if low else None
    except ValueError:
        raise ConfigError(f"config chunk={chunk!r} (campaign {campaign}): numbers expected, "
                          "as in cgroup_version=1,repetitions=1-2") from None

    def keep(run_id: str, spec: dict[str, Any]) -> bool:
        if version is not None and spec.get("cgroup_version") != version:
            return False
        if prefix is not None and run_id not in of_prefix:
            return False
        return first is None or first <= int(spec["repetition"]) <= (last or first)
    return keep


def build(name_or_path: str) -> Plan:
    """The plan of a campaign file (validated; a bad spec names the file and experiment)."""
    path = campaigns.campaign_path(name_or_path)
    campaign = campaigns.load_campaign(str(path))
    name = campaign["name"]
    made = campaigns.made_specs(campaign, str(path))  # once: the runs and the experiments
    runs = [{"run_id": run_id, "spec": {**spec, "campaign": name}}
            for run_id, spec in campaigns.distinct(made).items()]
    return Plan(name, str(path), key_of(path), campaigns.facts(campaign), runs,
                experiments.experiment_rows(campaign, str(path), made))


def runs(name_or_path: str, hosts: list[dict[str, Any]], claims: str = "") -> list[PlannedRun]:
    """The campaign's runs on `hosts` (only the experiments that test one of `claims`), planned
    now from its file: what the kept plan holds."""
    return build(name_or_path).for_hosts(hosts, claims)


def key_of(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes())
    for code in PLANNING_CODE:
        digest.update(code.read_bytes())
    return digest.hexdigest()[:24]


def path_of(campaign_file: Path, folder: Path = PLAN_DIR) -> Path:
    """A plan is kept under its campaign file's name (the campaign's own, for every shipped
    one)."""
    return folder / f"{campaign_file.stem}.json"


def write(plan: Plan, folder: Path = PLAN_DIR) -> Path:
    """Atomically: a reader never sees half a plan."""
    target = path_of(Path(plan.source), folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"campaign": plan.campaign, "source": plan.source,
                               "key": plan.key, "facts": plan.facts, "runs": plan.runs,
                               "experiments": plan.experiments}, separators=(",", ":")))
    tmp.rename(target)
    return target


def read(path: Path) -> Plan | None:
    """A kept plan, or None when there is none or it cannot be read (it is made again)."""
    try:
        data = json.loads(path.read_text())
        return Plan(data["campaign"], data["source"], data["key"], data["facts"],
                    data["runs"], data["experiments"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def current(name_or_path: str, folder: Path = PLAN_DIR, keep: bool = True) -> Plan:
    """The campaign's plan: the kept one while its key matches, else made (once in a process,
    `planned`) and kept, unless `keep` is false."""
    path = campaigns.campaign_path(name_or_path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such campaign file")
    key = key_of(path)
    if not keep:
        return planned(str(path), key, str(folder))
    kept = read(path_of(path, folder))
    if kept is not None and kept.key == key:
        return kept
    plan = planned(str(path), key, str(folder))  # made once in a process, kept or not
    write(plan, folder)
    return plan


@functools.cache
def planned(path: str, key: str, folder: str) -> Plan:
    """The plan of the campaign file `path`, which with the planning code hashes to `key`: the
    kept one when its key matches, else made; once in a process. The pipeline asks each
    campaign's facts a dozen times while it starts: reading or making them each time was
    0.4-0.8 s of every analysis."""
    kept = read(path_of(Path(path), Path(folder)))
    return kept if kept is not None and kept.key == key else build(path)


# -- what a campaign asks, from its plan ------------------------------------------------------

def facts_of(name_or_path: str, folder: Path = PLAN_DIR) -> dict[str, Any]:
    """The plan's facts; none for a campaign known only by the run folders it left. A plan not
    kept yet (in `folder`) is made, not kept."""
    if not campaigns.campaign_path(name_or_path).is_file():
        return {}
    return current(name_or_path, folder, keep=False).facts


def headline_claims(name_or_path: str) -> str | set[str]:
    """The claims whose headline verdict the campaign may give: "all", or a set (empty for a
    campaign that offers none, or one known only by its run folders)."""
    found = facts_of(name_or_path).get("headline", [])
    return "all" if found == "all" else set(found)


def validates(name_or_path: str) -> list[str]:
    """The campaigns whose testbeds the campaign's validation pairs measure (its file's
    `validates`; none for a campaign known only by its run folders)."""
    return [str(c) for c in facts_of(name_or_path).get("validates", [])]


def tests_claims(name_or_path: str) -> bool:
    """Whether some experiment of the campaign names a claim."""
    return bool(current(name_or_path, keep=False).facts["tests_claims"])


def tools(name_or_path: str) -> set[str]:
    """The workload tools the campaign's tenants run."""
    return set(facts_of(name_or_path).get("tools", ()))


def devices(name_or_path: str) -> set[str]:
    """The device profiles the campaign's experiments name (None: the host's own, one)."""
    return {str(d) for d in facts_of(name_or_path).get("devices", ())}


def bfq_settings(name_or_path: str) -> set[str]:
    """The campaign's distinct BFQ settings, one string each ("" for the host's own)."""
    return set(facts_of(name_or_path).get("bfq_settings", ()))


def io_controls(name_or_path: str) -> set[str]:
    """The I/O controls the campaign's experiments name ("" for the host's own)."""
    return set(facts_of(name_or_path).get("io_controls", ()))


def cgroup_versions(name_or_path: str) -> set[int]:
    """The cgroup versions the campaign's experiments ask (0 for the host's own)."""
    return {int(v) for v in facts_of(name_or_path).get("cgroup_versions", ())}
