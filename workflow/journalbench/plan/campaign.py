"""Campaign matrix -> run specs with stable run ids, per host; what is done and what is left.

Runs are planned repetition-major (every condition once, then every condition again); Snakemake
runs the missing ones in its own order, which interleaves conditions and repetitions, so slow
drift of the device over a long campaign spreads over all conditions instead of biasing one.
"""

from __future__ import annotations

import itertools
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from journalbench import runfolder, vocabulary, window
from journalbench.errors import ConfigError, DamagedRunFolders

CAMPAIGN_DIR = Path(__file__).resolve().parents[2] / "campaigns"


@dataclass(frozen=True)
class PlannedRun:
    campaign: str
    host: str  # the folder its run lands in: the host's name, or its pool's
    run_id: str
    spec: dict[str, Any]
    member: str = ""  # on a pool, the member it is dealt to (plan/deal.py)

    def folder(self, raw: Path) -> Path:
        return raw / self.campaign / self.host / self.run_id

    @property
    def lane(self) -> str:
        """The host that runs it: one run at a time on each."""
        return self.member or self.host


def campaign_path(name_or_path: str) -> Path:
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        return Path(name_or_path)
    return CAMPAIGN_DIR / f"{name_or_path}.yaml"


def load_campaign(name_or_path: str) -> dict[str, Any]:
    path = campaign_path(name_or_path)
    from journalbench.plan.schemas import load_validated  # jsonschema: for planning only

    campaign = load_validated(path, "campaign")
    check_bfq_names(campaign, str(path))
    return with_testbeds(campaign, str(path))


@cache
def named_testbeds(name_or_path: str) -> tuple[dict[str, Any], ...]:
    """The campaign file's testbeds that have a `name` (`name: bfq-time`), as written, and its
    `bfq_names` as BFQ testbeds of any cgroup version; none for a campaign known only by its
    run folders."""
    path = campaign_path(name_or_path)
    if not path.is_file():
        return ()
    import yaml

    document = yaml.safe_load(path.read_text()) or {}
    named = [t for t in document.get("testbeds") or [] if isinstance(t, dict) and "name" in t]
    named += [{"io_control": "bfq", **t} for t in document.get("bfq_names") or []
              if isinstance(t, dict) and "name" in t]
    return tuple(named)


def check_bfq_names(campaign: dict[str, Any], source: str) -> None:
    """`bfq_names` name settings the experiments set themselves: not with `testbeds` (which
    name their own), and each name's tunables set, all of them, by some run (run_bfq)."""
    names = campaign.get("bfq_names") or []
    if not names:  # most campaigns: no run's tunables to read
        return
    if campaign.get("testbeds"):
        raise ConfigError(f"{source}: field bfq_names: not with `testbeds`, which name their own")
    settings = [run_bfq(campaign, experiment, values) for experiment in campaign["experiments"]
                for values in conditions(experiment)]
    for named in names:
        if not any(all(str(setting.get(k)) == str(v) for k, v in named["bfq"].items())
                   for setting in settings):
            raise ConfigError(f"{source}: field bfq_names: {named['name']}: no experiment sets "
                              f"{', '.join(f'{k}={v}' for k, v in named['bfq'].items())}")


# what a testbed sets for every experiment run on it (its `bfq` is merged under an
# experiment's own; its `name` only names it)
TESTBED_FIELDS = ("cgroup_version", "io_control", "iocost_qos")


def testbed_suffix(testbed: dict[str, Any]) -> str:
    """"v1-bfq", "v2-bfq-time": what tells an experiment's copy on a campaign testbed from its
    others: the cgroup version and the testbed's name, else its I/O control."""
    return f"v{testbed['cgroup_version']}-{testbed.get('name', testbed['io_control'])}"


def with_testbeds(campaign: dict[str, Any], source: str) -> dict[str, Any]:
    """A campaign with `testbeds` as the campaign it stands for: each experiment once per
    testbed (or per testbed its `testbeds` lists), its id suffixed (testbed_suffix), the
    testbed's fields its own and the testbed's BFQ tunables under its own. An experiment that
    names one of the testbed's fields itself is an error: which would it be? So is a tunable
    both set, and two testbeds of one suffix."""
    testbeds = campaign.get("testbeds")
    if not testbeds:
        for experiment in campaign["experiments"]:
            if "testbeds" in experiment:
                raise ConfigError(f"{source}: experiment {experiment['id']}: field testbeds: "
                                  "the campaign has no `testbeds`")
        return campaign
    suffixes = [testbed_suffix(testbed) for testbed in testbeds]
    twice = sorted({suffix for suffix in suffixes if suffixes.count(suffix) > 1})
    if twice:
        raise ConfigError(f"{source}: testbeds: {', '.join(twice)} more than once: give each "
                          "testbed of one cgroup version and I/O control its own `name`")
    experiments = []
    for experiment in campaign["experiments"]:
        where = f"{source}: experiment {experiment['id']}"
        for field in TESTBED_FIELDS:
            if field in experiment or field in campaign:
                at = where if field in experiment else f"{source}: campaign"
                raise ConfigError(f"{at}: field {field}: not with `testbeds`, which sets it "
                                  "for every experiment")
        wanted = experiment.get("testbeds", suffixes)
        unknown = sorted(set(wanted) - set(suffixes))
        if unknown:
            raise ConfigError(f"{where}: field testbeds: {', '.join(unknown)} is not one of the "
                              f"campaign's ({', '.join(suffixes)})")
        for testbed, suffix in zip(testbeds, suffixes, strict=True):
            if suffix not in wanted:
                continue
            copy = {key: value for key, value in experiment.items() if key != "testbeds"}
            copy.update({key: testbed[key] for key in TESTBED_FIELDS if key in testbed},
                        id=f"{experiment['id']}-{suffix}")
            if "bfq" in testbed:
                both = sorted(set(testbed["bfq"]) & set(experiment.get("bfq", {})))
                if both:
                    raise ConfigError(f"{where}: field bfq: {', '.join(both)} set by testbed "
                                      f"{suffix} too")
                copy["bfq"] = {**testbed["bfq"], **experiment.get("bfq", {})}
            experiments.append(copy)
    rest = {key: value for key, value in campaign.items() if key != "testbeds"}
    return {**rest, "experiments": experiments}


def facts(campaign: dict[str, Any]) -> dict[str, Any]:
    """What a loaded campaign asks of a host and of the analysis: whether some experiment names
    a claim (fileprep names none: it is tidied and shown, but has no ledger), the workload
    tools its tenants run, the device profiles its experiments name (null: the host's own),
    its distinct BFQ settings, the I/O controls and cgroup versions its experiments name (""
    and 0 for the host's own), the claims whose headline verdict it may give ("all" or a
    list) and the campaigns whose testbeds its validation pairs measure (`validates`)."""
    experiments = campaign["experiments"]
    devices = {d for e in experiments for d in e.get("devices", campaign.get("devices", [None]))}
    settings = {" ".join(f"{k}={v}" for k, v in sorted(run_bfq(campaign, e, values).items()))
                for e in experiments for values in conditions(e)}
    return {"tests_claims": any(e.get("claims") for e in experiments),
            "tools": sorted({str(t["workload"]["tool"]) for e in experiments
                             for t in e["tenants"] if "tool" in t.get("workload", {})}),
            "devices": sorted(devices, key=str), "bfq_settings": sorted(settings),
            "io_controls": sorted({str(e.get("io_control", campaign.get("io_control", "")))
                                   for e in experiments}),
            "cgroup_versions": sorted({int(e.get("cgroup_version",
                                                 campaign.get("cgroup_version", 0)))
                                       for e in experiments}),
            "headline": campaign.get("headline", []),
            "validates": list(campaign.get("validates", []))}


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
    """The experiment's tenants with the vary values in, and each workload as its tool plans it
    (Workload.planned: fio settles its file preparation)."""
    from journalbench.agent.registry import WORKLOADS  # every agent module: for planning only

    tenants = substitute(experiment["tenants"], values)
    for tenant in tenants:
        workload = tenant.get("workload")
        if isinstance(workload, dict) and workload.get("tool") in WORKLOADS:
            tenant["workload"] = WORKLOADS[workload["tool"]].planned(workload, experiment)
    return tenants


def run_io_control(campaign: dict[str, Any], experiment: dict[str, Any]) -> str | None:
    """The io_control a run spec of `experiment` names: the experiment's, else the
    campaign's; None for the default, which the spec leaves out (so a campaign naming it keeps
    the run ids of runs made before the field existed)."""
    name = experiment.get("io_control", campaign.get("io_control",
                                                     vocabulary.DEFAULT_IO_CONTROL))
    return None if name == vocabulary.DEFAULT_IO_CONTROL else str(name)


def run_iocost_qos(campaign: dict[str, Any], experiment: dict[str, Any],
                   source: str) -> str | None:
    """The iocost QoS procedure a run spec of `experiment` names: the experiment's, else the
    campaign's; None for the default, which the spec leaves out (so the run ids of iocost runs
    made before the field existed stay). One other than the default needs the experiment's
    runs to name io_control iocost themselves."""
    name = experiment.get("iocost_qos", campaign.get("iocost_qos",
                                                     vocabulary.DEFAULT_IOCOST_QOS))
    if name == vocabulary.DEFAULT_IOCOST_QOS:
        return None
    if run_io_control(campaign, experiment) != vocabulary.IOCOST:
        raise ConfigError(f"{source}: experiment {experiment['id']}: field iocost_qos: "
                          f"{name} is an iocost QoS procedure; the experiment's runs must "
                          "name io_control iocost")
    return str(name)


def repetitions(campaign: dict[str, Any], experiment: dict[str, Any]) -> int:
    return int(experiment.get("repetitions", campaign["repetitions"]))


@dataclass(frozen=True)
class Made:
    """A run spec as one experiment's condition makes it (two experiments may make the same)."""

    experiment: int  # its index in the campaign's experiments
    condition: int  # its index in the experiment's conditions
    values: dict[str, Any]
    spec: dict[str, Any]
    run_id: str


def made_specs(campaign: dict[str, Any], source: str) -> list[Made]:
    """Every run spec of every experiment and condition, repetition-major (every condition
    once, then every condition again), duplicates of two experiments included."""
    from journalbench.plan.schemas import validate

    made = []
    most = max(repetitions(campaign, e) for e in campaign["experiments"])
    for repetition in range(1, most + 1):
        for index, experiment in enumerate(campaign["experiments"]):
            if repetition > repetitions(campaign, experiment):
                continue
            devices = experiment.get("devices", campaign.get("devices", [None]))
            numbered = list(enumerate(conditions(experiment)))
            for device, (condition, values), arm in itertools.product(devices, numbered,
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
                qos = run_iocost_qos(campaign, experiment, source)
                if qos is not None:  # without it, the default (and old run ids)
                    spec["iocost_qos"] = qos
                version = experiment.get("cgroup_version", campaign.get("cgroup_version"))
                if version is not None:  # without it, the host's own (and old run ids)
                    spec["cgroup_version"] = int(version)
                if repetition == 1:  # later repetitions differ in `repetition` alone
                    where = f"{source} (experiment {experiment['id']}, {values or 'no vary'})"
                    validate(spec, "run-spec", where)
                made.append(Made(index, condition, values, spec, runfolder.run_id(spec)))
    return made


def expand(campaign: dict[str, Any], source: str,
           made: list[Made] | None = None) -> list[dict[str, Any]]:
    """Every distinct run spec of the campaign, repetition-major; identical specs of two
    experiments (e.g. the 70/30 no-fsync pair of C3 and C15) are one run. `made`: made_specs,
    if made already."""
    return list(distinct(made_specs(campaign, source) if made is None else made).values())


def distinct(made: list[Made]) -> dict[str, dict[str, Any]]:
    """Run id -> spec of each distinct spec made, in the order first made."""
    specs: dict[str, dict[str, Any]] = {}
    for found in made:
        specs.setdefault(found.run_id, found.spec)
    return specs


def missing(runs: list[PlannedRun], raw: Path) -> list[PlannedRun]:
    """The runs still to measure (unlanded: no MANIFEST.json and nothing in their folder)."""
    return unlanded(runs, raw)[0]


def unlanded(runs: list[PlannedRun],
             raw: Path) -> tuple[list[PlannedRun], list[PlannedRun]]:
    """The runs without a MANIFEST.json in their folder, as (missing, damaged): missing when
    the folder is absent or empty (runs left to measure), damaged when it holds files (a run
    lands whole, its manifest last, so it landed and then lost it). Only a run without a
    manifest costs more than one stat; tidy checks every landed run's checksums."""
    missing_runs: list[PlannedRun] = []
    damaged: list[PlannedRun] = []
    for run in runs:
        if not (run.folder(raw) / runfolder.MANIFEST).is_file():
            (damaged if runfolder.holds_files(run.folder(raw)) else missing_runs).append(run)
    return missing_runs, damaged


SHOWN_MISSING = 10  # missing runs named one by one before the rest are counted


def check_unlanded(missing_runs: list[PlannedRun], damaged: list[PlannedRun], raw: Path,
                   measure: bool, campaign: str) -> None:
    """Refuse, before any job starts, raw data the pipeline must not go on with: a damaged
    run folder, always (reproducing must not measure it again or analyse without it, and a
    campaign must not overwrite it), and a missing run when this invocation does not measure
    (`campaign`: how the user named the campaign, for the command that measures it)."""
    lines = [runfolder.damage_line(r.folder(raw), f"no {runfolder.MANIFEST}") for r in damaged]
    shown = [] if measure else missing_runs
    lines += missing_lines(shown, raw)
    if lines:
        raise DamagedRunFolders("\n".join([*lines, stop_line(len(damaged), len(shown),
                                                               campaign)]))


def missing_lines(runs: list[PlannedRun], raw: Path) -> list[str]:
    """A line per missing run folder, the first SHOWN_MISSING; then how many more."""
    lines = []
    for run in runs[:SHOWN_MISSING]:
        folder = shlex.quote(runfolder.shown_path(run.folder(raw)))
        lines.append(f"missing run folder {folder}: `git checkout -- {folder}` restores a "
                     "shipped run")
    if len(runs) > SHOWN_MISSING:
        folder = shlex.quote(runfolder.shown_path(raw / runs[0].campaign))
        lines.append(f"... and {len(runs) - SHOWN_MISSING} more missing run folders "
                     f"(`git checkout -- {folder}` restores every shipped run of the campaign)")
    return lines


def stop_line(damaged: int, missing_runs: int, campaign: str) -> str:
    """The last line of a refusal: what stopped, that nothing ran, and how to measure."""
    counts = " and ".join(f"{n} {kind} run folder{'s' if n > 1 else ''}"
                          for n, kind in ((damaged, "damaged"), (missing_runs, "missing")) if n)
    line = f"stopped before measuring or analysing anything: {counts}"
    if missing_runs:
        line += ("; nothing is measured without --config campaign= (or with measure=false): "
                 f"`snakemake --cores 1 --config campaign={campaign}` measures the missing "
                 "runs (as root)")
    return line
