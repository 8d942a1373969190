"""Campaign matrix -> run specs with stable run ids, per host; what is done and what is left.

Runs are planned repetition-major (every condition once, then every condition again); Snakemake
runs the missing ones in its own order, which interleaves conditions and repetitions, so slow
drift of the device over a long campaign spreads over all conditions instead of biasing one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench import runfolder, vocabulary, window
from journalbench.agent.workloads import fio
from journalbench.errors import ConfigError
from journalbench.plan.schemas import load_validated, validate

CAMPAIGN_DIR = Path(__file__).resolve().parents[2] / "campaigns"


@dataclass(frozen=True)
class PlannedRun:
    campaign: str
    host: str
    run_id: str
    spec: dict[str, Any]

    def folder(self, raw: Path) -> Path:
        return raw / self.campaign / self.host / self.run_id


def campaign_path(name_or_path: str) -> Path:
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        return Path(name_or_path)
    return CAMPAIGN_DIR / f"{name_or_path}.yaml"


def load_campaign(name_or_path: str) -> dict[str, Any]:
    return load_validated(campaign_path(name_or_path), "campaign")


def tests_claims(name_or_path: str) -> bool:
    """Whether some experiment of the campaign names a claim (fileprep, say, names none: it
    is tidied and shown, but has no ledger)."""
    return any(e.get("claims") for e in load_campaign(name_or_path)["experiments"])


def devices(name_or_path: str) -> set[str]:
    """The device profiles the campaign's experiments name (none named: the host's own, one)."""
    if not campaign_path(name_or_path).is_file():
        return set()
    campaign = load_campaign(name_or_path)
    return {str(d) for e in campaign["experiments"]
            for d in e.get("devices", campaign.get("devices", [None]))}


def tools(name_or_path: str) -> set[str]:
    """The workload tools the campaign's tenants run (fio, mariadb, redis); none when its file
    is not there (a campaign known only by the run folders it left)."""
    if not campaign_path(name_or_path).is_file():
        return set()
    experiments = load_campaign(name_or_path)["experiments"]
    return {str(tenant["workload"]["tool"]) for experiment in experiments
            for tenant in experiment["tenants"] if "tool" in tenant.get("workload", {})}


def bfq_settings(name_or_path: str) -> set[str]:
    """The BFQ tunables the campaign's runs set, one string per distinct setting ("" for the
    host's own); none when its file is not there."""
    if not campaign_path(name_or_path).is_file():
        return set()
    campaign = load_campaign(name_or_path)
    return {" ".join(f"{k}={v}" for k, v in sorted(run_bfq(campaign, experiment, values).items()))
            for experiment in campaign["experiments"] for values in conditions(experiment)}


def run_bfq(campaign: dict[str, Any], experiment: dict[str, Any],
            values: dict[str, Any]) -> dict[str, Any]:
    """The BFQ tunables a run of `experiment` under `values` sets: the campaign's, then its own."""
    return {**campaign.get("bfq", {}), **substitute(experiment.get("bfq", {}), values)}


def substitute(value: Any, values: dict[str, Any]) -> Any:
    """Replace "{name}" in strings (a whole-string "{name}" keeps the value's type)."""
    if isinstance(value, str):
        for name, replacement in values.items():
            if value == f"{{{name}}}":
                return replacement
            value = value.replace(f"{{{name}}}", str(replacement))
        return value
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    return value


def conditions(experiment: dict[str, Any]) -> list[dict[str, Any]]:
    vary = experiment.get("vary", {})
    names = sorted(vary)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(vary[n] for n in names))]


def planned_tenants(experiment: dict[str, Any], values: dict[str, Any]) -> list[dict[str, Any]]:
    """The experiment's tenants with the vary values in, and each fio workload's file
    preparation resolved (journalbench.agent.workloads.fio.planned)."""
    tenants = substitute(experiment["tenants"], values)
    for tenant in tenants:
        workload = tenant.get("workload")
        if isinstance(workload, dict) and workload.get("tool") == "fio":
            tenant["workload"] = fio.planned(workload, experiment.get("prep"))
    return tenants


def run_io_control(campaign: dict[str, Any], experiment: dict[str, Any]) -> str | None:
    """The io_control a run spec of `experiment` names: the experiment's, else the
    campaign's; None for the default, which the spec leaves out (so a campaign naming it keeps
    the run ids of runs made before the field existed)."""
    name = experiment.get("io_control", campaign.get("io_control",
                                                     vocabulary.DEFAULT_IO_CONTROL))
    return None if name == vocabulary.DEFAULT_IO_CONTROL else str(name)


def repetitions(campaign: dict[str, Any], experiment: dict[str, Any]) -> int:
    return int(experiment.get("repetitions", campaign["repetitions"]))


def expand(campaign: dict[str, Any], source: str) -> list[dict[str, Any]]:
    """Every distinct run spec of the campaign, repetition-major; identical specs of two
    experiments (e.g. the 70/30 no-fsync pair of C3 and C15) are one run."""
    specs: dict[str, dict[str, Any]] = {}
    most = max(repetitions(campaign, e) for e in campaign["experiments"])
    for repetition in range(1, most + 1):
        for experiment in campaign["experiments"]:
            if repetition > repetitions(campaign, experiment):
                continue
            devices = experiment.get("devices", campaign.get("devices", [None]))
            for device, values, arm in itertools.product(devices, conditions(experiment),
                                                         experiment["arms"]):
                spec = {
                    "arm": arm,
                    "duration_s": experiment.get("duration_s", campaign["duration_s"]),
                    "repetition": repetition,
                    "tenants": planned_tenants(experiment, values),
                }
                warmup = experiment.get("warmup_s", campaign.get("warmup_s",
                                                                  window.DEFAULT_WARMUP_S))
                if warmup != window.ABSENT_WARMUP_S:  # absent: none (and old run ids)
                    spec["warmup_s"] = warmup
                bfq = run_bfq(campaign, experiment, values)
                if bfq:
                    spec["bfq"] = bfq
                if device is not None:  # without it, the host's own profile (and old run ids)
                    spec["device"] = device
                io_control = run_io_control(campaign, experiment)
                if io_control is not None:  # without it, the host's or the default
                    spec["io_control"] = io_control
                if repetition == 1:  # later repetitions differ in `repetition` alone
                    where = f"{source} (experiment {experiment['id']}, {values or 'no vary'})"
                    validate(spec, "run-spec", where)
                specs.setdefault(runfolder.run_id(spec), spec)
    return list(specs.values())


def only_claims(campaign: dict[str, Any], claims: str) -> dict[str, Any]:
    """The campaign cut to the experiments that test one of `claims` ("C8,C9"): what re-runs
    a claim's experiments alone. Runs keep their ids (a run id hashes the spec only)."""
    wanted = {c.strip() for c in claims.split(",") if c.strip()}
    if not wanted:
        return campaign
    kept = [e for e in campaign["experiments"] if wanted & set(e["claims"])]
    if not kept:
        raise ConfigError(f"campaign {campaign['name']}: no experiment tests "
                          f"{', '.join(sorted(wanted))}")
    return {**campaign, "experiments": kept}


def plan(campaign_name: str, hosts: list[dict[str, Any]], claims: str = "") -> list[PlannedRun]:
    """Each host runs the whole matrix (hosts are replicas, compared per host); `claims`: only
    the experiments that test one of them."""
    campaign = only_claims(load_campaign(campaign_name), claims)
    specs = expand(campaign, str(campaign_path(campaign_name)))
    return [
        PlannedRun(campaign["name"], host["name"], runfolder.run_id(spec),
                   {**spec, "campaign": campaign["name"]})
        for host in hosts
        for spec in specs
    ]


def missing(runs: list[PlannedRun], raw: Path) -> list[PlannedRun]:
    return [r for r in runs if not runfolder.is_complete(r.folder(raw))]
