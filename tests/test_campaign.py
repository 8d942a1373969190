"""Campaign matrices: schema errors name file and field, expansion, stable ids, landing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from journalbench import runfolder, window
from journalbench.control import progress
from journalbench.control.dispatch import land
from journalbench.control.hosts import load_hosts
from journalbench.errors import AgentError, ConfigError, DamagedRunFolders
from journalbench.judge.claims import headline
from journalbench.plan import campaign
from journalbench.plan import plan as plans
from journalbench.plan.campaign import PlannedRun
from journalbench.plan.schemas import validate

HOST = "hosts/local.yaml"


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return str(path)


BASE = """name: t
description: test
duration_s: 5
repetitions: 2
experiments:
  - id: pair
    claims: [C8]
    arms: [shared-journal, journal-accounted]
    vary: {n: [no-fsync, high-fsync]}
    tenants:
      - {name: victim, weight: 700, workload: {tool: fio, preset: high-fsync}}
      - {name: neighbour, weight: 300, workload: {tool: fio, preset: "{n}"}}
"""


def test_shipped_campaigns_expand(repo):
    for name in ("smoke", "quick", "thesis"):
        runs = plans.runs(name, load_hosts(str(repo / HOST)))
        assert runs and len({r.run_id for r in runs}) == len(runs)


def test_every_campaign_that_tests_claims_cites_its_power_figure(repo):
    """Its repetitions come from `journalbench power` (or say they are the pilot for it)."""
    for path in sorted((repo / "workflow" / "campaigns").glob("*.yaml")):
        if plans.tests_claims(str(path)):
            assert "`journalbench power" in path.read_text(), f"{path}: no power figure cited"


def test_matrix_expands_repetition_major_with_stable_ids(tmp_path, repo):
    path = write(tmp_path, BASE)
    hosts = load_hosts(str(repo / HOST))
    runs = plans.runs(path, hosts)
    assert len(runs) == 2 * 2 * 2
    assert [r.spec["repetition"] for r in runs] == [1] * 4 + [2] * 4
    assert {t["workload"]["preset"] for r in runs for t in r.spec["tenants"]} == {
        "no-fsync", "high-fsync"}
    again = plans.runs(path, hosts)
    assert [r.run_id for r in runs] == [r.run_id for r in again]
    assert all(r.run_id == runfolder.run_id(r.spec) for r in runs)


def test_identical_specs_of_two_experiments_are_one_run(tmp_path, repo):
    doubled = BASE + BASE.split("experiments:\n")[1].replace("id: pair", "id: again")
    runs = plans.runs(write(tmp_path, doubled), load_hosts(str(repo / HOST)))
    assert len(runs) == 8


def test_a_claim_alone_plans_the_experiments_that_test_it(tmp_path, repo):
    """What re-runs one claim's experiments (`--config claims=C10`): the same run ids."""
    more = BASE + """  - id: low
    claims: [C10]
    arms: [shared-journal]
    tenants:
      - {name: victim, weight: 700, workload: {tool: fio, preset: low-fsync}}
"""
    path, hosts = write(tmp_path, more), load_hosts(str(repo / HOST))
    everything = plans.runs(path, hosts)
    alone = plans.runs(path, hosts, "C10")
    assert len(alone) == 2 and len(everything) == 10
    assert {r.run_id for r in alone} < {r.run_id for r in everything}
    assert len(plans.runs(path, hosts, "C8, C10")) == 10
    with pytest.raises(ConfigError, match="campaign t: no experiment tests C99"):
        plans.runs(path, hosts, "C99")


def test_an_experiment_may_repeat_more_than_the_campaign(tmp_path, repo):
    """As a power analysis asks per claim; still repetition-major."""
    more = BASE + """  - id: alone
    claims: [C8]
    repetitions: 4
    arms: [shared-journal]
    tenants:
      - {name: victim, weight: 700, workload: {tool: fio, preset: high-fsync}}
"""
    runs = plans.runs(write(tmp_path, more), load_hosts(str(repo / HOST)))
    alone = [r.spec["repetition"] for r in runs if len(r.spec["tenants"]) == 1]
    pairs = [r.spec["repetition"] for r in runs if len(r.spec["tenants"]) == 2]
    assert alone == [1, 2, 3, 4] and sorted(pairs) == [1] * 4 + [2] * 4
    assert [r.spec["repetition"] for r in runs] == sorted(r.spec["repetition"] for r in runs)


def test_an_experiment_sets_bfq_from_its_vary_values(tmp_path, repo):
    """Over the campaign's tunables; each setting is its own run (its own id)."""
    text = (BASE.replace("experiments:", "bfq: {slice_idle: 0}\nexperiments:")
            .replace("    vary: {n: [no-fsync, high-fsync]}",
                     "    vary: {n: [no-fsync, high-fsync], sg: [0, 1]}\n"
                     "    bfq: {strict_guarantees: \"{sg}\"}"))
    runs = plans.runs(write(tmp_path, text), load_hosts(str(repo / HOST)))
    assert len(runs) == 2 * 2 * 2 * 2 and len({r.run_id for r in runs}) == len(runs)
    assert {json.dumps(r.spec["bfq"], sort_keys=True) for r in runs} == {
        '{"slice_idle": 0, "strict_guarantees": 0}', '{"slice_idle": 0, "strict_guarantees": 1}'}


def test_naming_the_default_io_control_keeps_the_run_ids(tmp_path, repo):
    """Left out of the spec like an absent one: the runs made before the field existed are
    still the planned ones, whether the campaign or an experiment names it."""
    hosts = load_hosts(str(repo / HOST))
    before = [r.run_id for r in plans.runs(write(tmp_path, BASE), hosts)]
    for text in (BASE.replace("experiments:", "io_control: bfq\nexperiments:"),
                 BASE.replace("    vary:", "    io_control: bfq\n    vary:")):
        runs = plans.runs(write(tmp_path, text), hosts)
        assert [r.run_id for r in runs] == before
        assert not any("io_control" in r.spec for r in runs)


def test_another_io_control_is_in_the_spec() -> None:
    """An experiment's over the campaign's; only a name other than the default is written."""
    assert campaign.run_io_control({"io_control": "other"}, {}) == "other"
    assert campaign.run_io_control({"io_control": "other"}, {"io_control": "bfq"}) is None
    assert campaign.run_io_control({}, {"io_control": "other"}) == "other"
    assert campaign.run_io_control({}, {}) is None


TESTBEDS = ("testbeds:\n  - {cgroup_version: 1, io_control: bfq}\n"
            "  - {cgroup_version: 2, io_control: iocost}\nexperiments:")


def test_testbeds_run_every_experiment_on_each(tmp_path, repo):
    """Each experiment once per testbed, its id suffixed; the v1/bfq copy's specs are the
    experiment's own with cgroup_version 1 (bfq, the default, left out of the spec)."""
    hosts = load_hosts(str(repo / HOST))
    plan = plans.build(write(tmp_path, BASE.replace("experiments:", TESTBEDS)))
    assert sorted({r["experiment"] for r in plan.experiments}) == ["pair-v1-bfq",
                                                                   "pair-v2-iocost"]
    specs = [r["spec"] for r in plan.runs]
    assert len(specs) == 2 * len(plans.runs(write(tmp_path, BASE), hosts))
    assert {(s["cgroup_version"], s.get("io_control")) for s in specs} == {(1, None),
                                                                          (2, "iocost")}
    assert plan.facts["cgroup_versions"] == [1, 2]
    clash = BASE.replace("experiments:", TESTBEDS).replace("    vary:",
                                                           "    io_control: bfq\n    vary:")
    with pytest.raises(ConfigError, match=r"c.yaml: experiment pair: field io_control: not "
                                          r"with `testbeds`"):
        plans.build(write(tmp_path, clash))


def test_a_chunk_keeps_one_cgroup_version_and_a_range_of_repetitions(tmp_path, repo):
    hosts = load_hosts(str(repo / HOST))
    plan = plans.build(write(tmp_path, BASE.replace("experiments:", TESTBEDS)))
    every = plan.for_hosts(hosts)
    chunk = plan.for_hosts(hosts, chunk="cgroup_version=1,repetitions=2-2")
    assert chunk and {(r.spec["cgroup_version"], r.spec["repetition"]) for r in chunk} == {
        (1, 2)}
    assert len(chunk) == len(every) // 4
    assert len(plan.for_hosts(hosts, chunk="repetitions=1")) == len(every) // 2
    for bad in ("cgroup_version", "reps=1", "repetitions=a-b"):
        with pytest.raises(ConfigError, match=f"config chunk={bad!r} \\(campaign t\\)"):
            plan.for_hosts(hosts, chunk=bad)


def test_an_unknown_io_control_names_file_and_field(tmp_path, repo):
    text = BASE.replace("    vary:", "    io_control: cfq\n    vary:")
    with pytest.raises(ConfigError, match=r"c.yaml: field experiments.0.io_control: 'cfq' is "
                                          r"not one of \['bfq', 'iocost'\]"):
        campaign.load_campaign(write(tmp_path, text))
    host = tmp_path / "h.yaml"
    host.write_text("name: h\ntransport: local\ndevice: {kind: image}\nio_control: cfq\n")
    with pytest.raises(ConfigError, match=r"h.yaml: field io_control: 'cfq' is not one of"):
        load_hosts(str(host))
    spec = {"arm": "shared-journal", "duration_s": 5, "repetition": 1, "io_control": "cfq",
            "tenants": [{"name": "a", "weight": 100,
                         "workload": {"tool": "fio", "preset": "no-fsync"}}]}
    with pytest.raises(ConfigError, match=r"spec.json: field io_control: 'cfq' is not one of"):
        validate(spec, "run-spec", "spec.json")
    validate(spec, "run-record", "spec.json")  # a run an agent made with its own control


@pytest.mark.parametrize(("change", "field"), [
    (("repetitions: 2", "repetitions: 0"), "repetitions"),
    (("claims: [C8]", "claims: [c8]"), "experiments.0.claims.0"),  # not a claim id's shape
    (("arms: [shared-journal, journal-accounted]", "arms: [docker]"), "experiments.0.arms.0"),
])
def test_bad_campaign_names_file_and_field(tmp_path, change, field):
    path = write(tmp_path, BASE.replace(*change))
    with pytest.raises(ConfigError, match=rf"c.yaml: field {field}:"):
        campaign.load_campaign(path)


def test_bad_substituted_value_names_the_experiment(tmp_path, repo):
    path = write(tmp_path, BASE.replace("[no-fsync, high-fsync]", "[no-fsync, turbo]"))
    with pytest.raises(ConfigError, match=r"experiment pair.*tenants.1.workload"):
        plans.runs(path, load_hosts(str(repo / HOST)))


def test_duplicate_host_names_are_refused(repo):
    with pytest.raises(ConfigError, match="unique"):
        load_hosts(f"{repo / HOST},{repo / HOST}")


def complete_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "spec.json").write_text(json.dumps({"arm": "shared-journal"}))
    runfolder.write_manifest(path)
    return path


def test_land_renames_a_verified_run_over_an_empty_folder(tmp_path):
    partial = complete_folder(tmp_path / "r.partial")
    final = tmp_path / "r"
    final.mkdir()  # Snakemake makes the output's folder before the job
    land(partial, final)
    assert runfolder.is_complete(final) and not partial.exists()


def test_land_refuses_an_unverified_run_and_never_overwrites(tmp_path):
    partial = complete_folder(tmp_path / "r.partial")
    (partial / "spec.json").write_text("{}")
    with pytest.raises(AgentError, match="did not verify"):
        land(partial, tmp_path / "r")
    assert not (tmp_path / "r").exists()
    good = complete_folder(tmp_path / "g.partial")
    existing = complete_folder(tmp_path / "g")
    with pytest.raises(AgentError, match="refusing to overwrite"):
        land(good, existing)


def test_eta_uses_measured_overheads(tmp_path, repo):
    runs = plans.runs("smoke", load_hosts(str(repo / HOST)))
    folder = tmp_path / "done"
    folder.mkdir()
    (folder / runfolder.HOST).write_text(json.dumps({"timing": {"total_s": 9, "workload_s": 5}}))
    # each run: its warm-up (the default 2 s) + 5 s measured + the 4 s of overhead
    assert progress.eta_seconds(runs[:2], [folder]) == pytest.approx(2 * (2 + 5 + 4))


def test_eta_takes_each_run_class_overhead_from_any_campaign(tmp_path, repo):
    runs = plans.runs("smoke", load_hosts(str(repo / HOST)))
    slow, other = runs[0], next(r for r in runs if progress.run_class(r.spec)
                                != progress.run_class(runs[0].spec))
    length = window.warmup_of(slow.spec) + slow.spec["duration_s"]
    # a run of slow's class that took 60 s beyond its length; one without a spec, 2 s
    for name, spec, total in (("same", slow.spec, length + 60), ("bare", None, 7)):
        folder = tmp_path / name
        folder.mkdir()
        if spec:
            (folder / runfolder.SPEC).write_text(json.dumps(spec))
        (folder / runfolder.HOST).write_text(
            json.dumps({"timing": {"total_s": total, "workload_s": 5}}))
    folders = [tmp_path / "same", tmp_path / "bare"]
    assert progress.eta_seconds([slow], [], folders) == pytest.approx(length + 60)
    # a class no run measured: the mean over all runs
    assert progress.eta_seconds([other], [], folders) == pytest.approx(
        window.warmup_of(other.spec) + other.spec["duration_s"] + 31)
    # the campaign's own runs of the class come first (the code may have changed since)
    assert progress.eta_seconds([slow], [tmp_path / "bare"], folders) == pytest.approx(
        length + 60)
    own = tmp_path / "own"
    own.mkdir()
    (own / runfolder.SPEC).write_text(json.dumps(slow.spec))
    (own / runfolder.HOST).write_text(json.dumps({"timing": {"total_s": length + 4,
                                                             "workload_s": 5}}))
    assert progress.eta_seconds([slow], [own], folders) == pytest.approx(length + 4)


def test_status_plans_a_campaign_on_another_device(tmp_path, repo):
    from journalbench.control import dispatch

    [run] = plans.runs("smoke", load_hosts(str(repo / HOST)))[:1]
    length = window.warmup_of(run.spec) + run.spec["duration_s"]
    # a landed run of the same kind on hdd, of another campaign, took 30 s beyond its length
    folder = tmp_path / "other" / run.host / "x"
    folder.mkdir(parents=True)
    (folder / runfolder.SPEC).write_text(json.dumps({**run.spec, "device": "hdd"}))
    (folder / runfolder.HOST).write_text(json.dumps({"timing": {"total_s": length + 30,
                                                                "workload_s": length}}))
    assert dispatch.planned_line([run], [run], tmp_path, "hdd") == (
        f"planned: 1 runs, {dispatch.hms(length + 30)} on hdd")
    # on its own device nothing of its kind landed: the mean of every landed run
    assert dispatch.planned_line([run], [run], tmp_path, None).startswith("planned: 1 runs, ")


# -- missing, damaged and interrupted run folders ----------------------------------------------

DAMAGE_TAIL = ("restores a shipped run (a run measured here and never shipped: delete the folder "
               "and its campaign measures it again)")


def smoke_runs(repo: Path, host_name: str = "local") -> list:
    hosts = load_hosts(str(repo / HOST))
    return plans.runs("smoke", [{**hosts[0], "name": host_name}])


def test_unlanded_tells_missing_runs_from_damaged_folders(tmp_path, repo):
    """Missing: no folder, or the empty one Snakemake makes for a job's output. Damaged: files
    but no MANIFEST.json (a run lands whole, its manifest last). Landed: a manifest."""
    absent, empty, damaged, landed, *_ = smoke_runs(repo)
    empty.folder(tmp_path).mkdir(parents=True)
    damaged.folder(tmp_path).mkdir(parents=True)
    (damaged.folder(tmp_path) / "io-samples.jsonl").write_text("{}\n")
    complete_folder(landed.folder(tmp_path))
    left, broken = campaign.unlanded([absent, empty, damaged, landed], tmp_path)
    assert left == [absent, empty] and broken == [damaged]
    assert campaign.missing([absent, empty, damaged, landed], tmp_path) == [absent, empty]


def test_a_damaged_folder_stops_reproducing_and_measuring_alike(tmp_path, repo,
                                                                monkeypatch):
    """One line per damaged folder, naming it and how to restore it, then what stopped."""
    monkeypatch.chdir(tmp_path)
    raw = Path("data/raw")
    absent, damaged = smoke_runs(repo)[:2]
    damaged.folder(raw).mkdir(parents=True)
    (damaged.folder(raw) / "run.log").write_text("half a run\n")
    folder = f"data/raw/smoke/local/{damaged.run_id}"
    for measure in (False, True):
        with pytest.raises(DamagedRunFolders) as caught:
            campaign.check_unlanded([], [damaged], raw, measure, "smoke")
        assert str(caught.value).splitlines() == [
            f"damaged run folder {folder}: no MANIFEST.json; `git checkout -- {folder}` "
            + DAMAGE_TAIL,
            "stopped before measuring or analysing anything: 1 damaged run folder"]
    campaign.check_unlanded([absent], [], raw, True, "smoke")  # a campaign measures it


def test_missing_runs_stop_an_invocation_that_does_not_measure(tmp_path, repo, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = smoke_runs(repo)
    with pytest.raises(DamagedRunFolders) as caught:
        campaign.check_unlanded(runs[:1], [], Path("data/raw"), False, "smoke")
    folder = f"data/raw/smoke/local/{runs[0].run_id}"
    assert str(caught.value).splitlines() == [
        f"missing run folder {folder}: `git checkout -- {folder}` restores a shipped run",
        "stopped before measuring or analysing anything: 1 missing run folder; nothing is "
        "measured without --config campaign= (or with measure=false): `snakemake --cores 1 "
        "--config campaign=smoke` measures the missing runs (as root)"]
    many = [PlannedRun("smoke", "local", f"r{i}", {}) for i in range(12)]
    with pytest.raises(DamagedRunFolders) as caught:
        campaign.check_unlanded(many, [], Path("data/raw"), False, "smoke")
    lines = str(caught.value).splitlines()
    assert len(lines) == campaign.SHOWN_MISSING + 2
    assert lines[-2] == ("... and 2 more missing run folders (`git checkout -- data/raw/smoke` "
                         "restores every shipped run of the campaign)")


@pytest.fixture
def dispatched(tmp_path, repo, monkeypatch) -> tuple[list, list, Path]:
    """dispatch() of smoke's first run on a host of its own (its own lane lock), with
    run_remote replaced by a fake that lands a complete folder and records each call."""
    from journalbench.control import dispatch

    monkeypatch.chdir(tmp_path)  # folders named from the working directory, as a user types
    host_file = tmp_path / "host.yaml"
    host_file.write_text(f"name: pytest-dmg-{os.getpid()}\ntransport: local\n"
                         "device: {kind: image}\n")
    calls: list[Path] = []

    def fake_run_remote(host: dict, spec: dict, dest: Path) -> Path:
        calls.append(dest)
        return complete_folder(dest)

    monkeypatch.setattr(dispatch, "run_remote", fake_run_remote)
    runs = plans.runs("smoke", load_hosts(str(host_file)))
    return runs, calls, host_file


def test_dispatch_runs_an_interrupted_measurement_again(dispatched, tmp_path):
    """A .partial left by an interrupted run is removed and the run measured and landed."""
    from journalbench.control import dispatch

    runs, calls, host_file = dispatched
    final = runs[0].folder(tmp_path / "raw")
    partial = final.with_name(final.name + runfolder.PARTIAL)
    partial.mkdir(parents=True)
    (partial / "io-samples.jsonl").write_text("cut short\n")
    dispatch.dispatch("smoke", str(host_file), runs[0].host, runs[0].run_id, tmp_path / "raw",
                      plans_folder=tmp_path / "plans")
    assert calls == [partial]
    assert runfolder.is_complete(final) and not partial.exists()
    assert not (final / "io-samples.jsonl").exists()


@pytest.mark.parametrize("manifest", [False, True])
def test_dispatch_never_measures_over_a_run_folder(dispatched, tmp_path, manifest):
    """A damaged folder (or a landed run) is refused before the experiment starts: no call
    to the agent, no .partial, every file kept."""
    from journalbench.control import dispatch

    runs, calls, host_file = dispatched
    final = runs[0].folder(tmp_path / "raw")
    complete_folder(final)
    if not manifest:
        (final / runfolder.MANIFEST).unlink()
    before = {p.name: p.read_bytes() for p in final.iterdir()}
    words = "refusing to measure over it" if not manifest else "refusing to measure it again"
    with pytest.raises(AgentError, match=words) as caught:
        dispatch.dispatch("smoke", str(host_file), runs[0].host, runs[0].run_id,
                          tmp_path / "raw", plans_folder=tmp_path / "plans")
    if not manifest:  # named as the user types it, from the working directory
        shown = final.relative_to(tmp_path)
        assert str(caught.value) == (f"damaged run folder {shown}: no MANIFEST.json; `git "
                                     f"checkout -- {shown}` {DAMAGE_TAIL}; refusing to "
                                     "measure over it")
    assert calls == [] and not final.with_name(final.name + runfolder.PARTIAL).exists()
    assert {p.name: p.read_bytes() for p in final.iterdir()} == before


NAMED_TESTBEDS = (
    "testbeds:\n  - {cgroup_version: 2, io_control: bfq}\n"
    "  - {cgroup_version: 2, io_control: bfq, name: bfq-time,\n"
    "     bfq: {low_latency: 0, max_budget: 1000000}}\n"
    "  - {cgroup_version: 2, io_control: iocost, name: iocost-interleaved,\n"
    "     iocost_qos: interleaved-model-fixed-vrate-v1}\n"
    "  - {cgroup_version: 2, io_control: iocost}\nexperiments:")


def test_named_testbeds_carry_their_bfq_tunables_and_iocost_procedure(tmp_path, repo):
    """A testbed's name suffixes its experiments' ids; its BFQ tunables and its iocost QoS
    procedure are in its runs' specs, and only there: the default-named testbeds' specs are
    those of a campaign without them (the default procedure left out, as the default
    control)."""
    plan = plans.build(write(tmp_path, BASE.replace("experiments:", NAMED_TESTBEDS)))
    assert sorted({r["experiment"] for r in plan.experiments}) == [
        "pair-v2-bfq", "pair-v2-bfq-time", "pair-v2-iocost", "pair-v2-iocost-interleaved"]
    by_experiment = {r["run_id"]: r["experiment"] for r in plan.experiments}
    beds = {by_experiment[r["run_id"]]: (r["spec"].get("io_control"), r["spec"].get("bfq"),
                                         r["spec"].get("iocost_qos")) for r in plan.runs}
    assert beds == {
        "pair-v2-bfq": (None, None, None),
        "pair-v2-bfq-time": (None, {"low_latency": 0, "max_budget": 1000000}, None),
        "pair-v2-iocost-interleaved": ("iocost", None, "interleaved-model-fixed-vrate-v1"),
        "pair-v2-iocost": ("iocost", None, None)}
    plain = plans.build(write(tmp_path, BASE.replace(
        "experiments:", "testbeds:\n  - {cgroup_version: 2, io_control: bfq}\n"
        "  - {cgroup_version: 2, io_control: iocost}\nexperiments:")))
    assert {r["run_id"] for r in plain.runs} < {r["run_id"] for r in plan.runs}


def test_an_experiment_runs_on_the_testbeds_it_lists(tmp_path, repo):
    text = BASE.replace("experiments:", NAMED_TESTBEDS).replace(
        "    vary:", "    testbeds: [v2-bfq, v2-bfq-time]\n    vary:")
    plan = plans.build(write(tmp_path, text))
    assert sorted({r["experiment"] for r in plan.experiments}) == ["pair-v2-bfq",
                                                                   "pair-v2-bfq-time"]
    with pytest.raises(ConfigError, match=r"c.yaml: experiment pair: field testbeds: v2-cfq is "
                                          r"not one of the campaign's \(v2-bfq, v2-bfq-time, "):
        plans.build(write(tmp_path, text.replace("v2-bfq-time]", "v2-cfq]")))
    with pytest.raises(ConfigError, match=r"c.yaml: experiment pair: field testbeds: the "
                                          r"campaign has no `testbeds`"):
        plans.build(write(tmp_path, BASE.replace("    vary:", "    testbeds: [v2-bfq]\n"
                                                                "    vary:")))


@pytest.mark.parametrize(("change", "message"), [
    # two testbeds of one suffix: which would an experiment's id name?
    (("name: bfq-time,", ""), r"c.yaml: testbeds: v2-bfq more than once: give each testbed"),
    # a tunable both the testbed and the experiment set
    (("    vary:", "    bfq: {max_budget: 0}\n    vary:"),
     r"c.yaml: experiment pair: field bfq: max_budget set by testbed v2-bfq-time too"),
    # a testbed's field named by the experiment
    (("    vary:", "    iocost_qos: interleaved-model-fixed-vrate-v1\n    vary:"),
     r"c.yaml: experiment pair: field iocost_qos: not with `testbeds`"),
    # BFQ tunables on an iocost testbed, an iocost procedure on a BFQ one: the schema
    (("name: iocost-interleaved,", "name: iocost-interleaved, bfq: {low_latency: 0},"),
     r"c.yaml: field testbeds.2.io_control: 'bfq' was expected"),
    (("io_control: iocost, name: iocost-interleaved", "io_control: bfq, name: bfq-qos"),
     r"c.yaml: field testbeds.2.io_control: 'iocost' was expected"),
    (("interleaved-model-fixed-vrate-v1", "latency-v9"), r"c.yaml: field testbeds.2.iocost_qos"),
])
def test_bad_testbeds_are_refused_naming_file_and_field(tmp_path, change, message):
    text = BASE.replace("experiments:", NAMED_TESTBEDS).replace(*change)
    with pytest.raises(ConfigError, match=message):
        plans.build(write(tmp_path, text))


BFQ_NAMES = ("bfq_names:\n  - {name: bfq-time, bfq: {low_latency: 0, max_budget: 1000000}}\n"
             "experiments:")


def test_a_named_bfq_setting_labels_its_testbed_and_keeps_the_run_ids(tmp_path, repo):
    """`bfq_names` names a BFQ setting the experiments set themselves (mysql-point's time
    setting): its family is labelled v1/bfq-time beside v1/bfq, and no run id changes."""
    timed = BASE.replace("    vary:", "    bfq: {low_latency: 0, max_budget: 1000000}\n"
                                        "    vary:")
    before = [r["run_id"] for r in plans.build(write(tmp_path, timed)).runs]
    path = write(tmp_path, timed.replace("experiments:", BFQ_NAMES))
    assert [r["run_id"] for r in plans.build(path).runs] == before
    family = {"campaign": path, "cgroup_version": 1, "io_control": "bfq",
              "device_profile": "hdd", "host": "local"}
    claims = pd.DataFrame([
        {**family, "bfq": "strict_guarantees=1 low_latency=0 max_budget=1000000"},
        {**family, "bfq": "strict_guarantees=1 low_latency=1"}])
    assert [headline.label(row, claims) for row in claims.to_dict("records")] == [
        f"{path} v1/bfq-time", f"{path} v1/bfq"]
    # a setting one condition of a varied experiment sets is named too
    varied = BASE.replace("experiments:", BFQ_NAMES).replace(
        "    vary: {n: [no-fsync, high-fsync]}",
        "    bfq: {low_latency: '{ll}', max_budget: 1000000}\n"
        "    vary: {n: [no-fsync, high-fsync], ll: [0, 1]}")
    assert len(plans.build(write(tmp_path, varied)).runs) == 2 * 2 * 2 * 2


@pytest.mark.parametrize(("text", "message"), [
    # a name for a setting no experiment sets
    (BASE.replace("experiments:", BFQ_NAMES),
     r"c.yaml: field bfq_names: bfq-time: no experiment sets low_latency=0, max_budget=1000000"),
    # beside testbeds, which name their own
    (BASE.replace("experiments:", NAMED_TESTBEDS.replace("experiments:", BFQ_NAMES)),
     r"c.yaml: field bfq_names: not with `testbeds`"),
    # a name that does not say it is BFQ's
    (BASE.replace("experiments:", BFQ_NAMES.replace("bfq-time", "time")),
     r"c.yaml: field bfq_names.0.name"),
])
def test_bad_bfq_names_are_refused_naming_file_and_field(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        plans.build(write(tmp_path, text))


def test_an_iocost_procedure_needs_iocost_and_the_default_is_left_out(tmp_path, repo):
    """Named by the campaign: in the specs of its iocost runs; the default one named keeps
    the run ids; on runs of another control it is refused when planned."""
    iocost = BASE.replace("experiments:", "io_control: iocost\nexperiments:")
    hosts = load_hosts(str(repo / HOST))
    before = [r.run_id for r in plans.runs(write(tmp_path, iocost), hosts)]
    default = iocost.replace("experiments:",
                             "iocost_qos: knee-of-p95-latency-against-load-v1\nexperiments:")
    assert [r.run_id for r in plans.runs(write(tmp_path, default), hosts)] == before
    other = iocost.replace("experiments:",
                           "iocost_qos: interleaved-model-fixed-vrate-v1\nexperiments:")
    runs = plans.runs(write(tmp_path, other), hosts)
    assert {r.spec["iocost_qos"] for r in runs} == {"interleaved-model-fixed-vrate-v1"}
    assert not set(before) & {r.run_id for r in runs}
    with pytest.raises(ConfigError, match=r"c.yaml: experiment pair: field iocost_qos: "
                                          r"interleaved-model-fixed-vrate-v1 is an iocost QoS "
                                          r"procedure; the experiment's runs must name "
                                          r"io_control iocost"):
        plans.build(write(tmp_path, other.replace("io_control: iocost\n", "")))


def test_a_chunk_may_keep_the_experiments_of_one_prefix(tmp_path, repo):
    """weights-nested's validation pairs first: chunk=experiment=validation keeps the runs of
    the experiments whose id starts so, on every testbed, and combines with the other keys."""
    hosts = load_hosts(str(repo / HOST))
    text = BASE.replace("experiments:", NAMED_TESTBEDS) + BASE[BASE.index("  - id: pair"):] \
        .replace("id: pair", "id: validation-pair").replace("claims: [C8]", "claims: []") \
        .replace("weight: 700", "weight: 800")
    plan = plans.build(write(tmp_path, text))
    chosen = plan.for_hosts(hosts, chunk="experiment=validation")
    rows = {r["run_id"]: r["experiment"] for r in plan.experiments}
    assert chosen and {rows[r.run_id].split("-v2-")[0] for r in chosen} == {"validation-pair"}
    assert len(chosen) == len(plan.for_hosts(hosts)) // 2
    first = plan.for_hosts(hosts, chunk="experiment=validation,repetitions=1")
    assert {r.spec["repetition"] for r in first} == {1} and len(first) == len(chosen) // 2
    with pytest.raises(ConfigError, match=r"config chunk='experiment=check' \(campaign t\): "
                                          r"no experiment's id starts with 'check'"):
        plan.for_hosts(hosts, chunk="experiment=check")
    for chunk in ("experiment=validation", "experiment=validation,repetitions=1-2",
                  "cgroup_version=2,repetitions=1,experiment=validation"):  # --config takes it
        validate({"campaign": "t", "hosts": HOST, "chunk": chunk}, "config", "--config")
    with pytest.raises(ConfigError, match=r"--config: field chunk: 'experiment=' does not"):
        validate({"campaign": "t", "hosts": HOST, "chunk": "experiment="}, "config", "--config")



def test_weights_nested_measures_validation_first_then_the_claims_beside_v2_bfq(repo):
    """The shipped campaign: the three validation pairs on all four testbeds (5 x 20 s), the
    claims' conditions on v2/bfq and the candidate whose validation divided at all (v2/bfq-time;
    both iocost procedures divided nothing: reported as measured); every testbed cgroup v2."""
    plan = plans.build("weights-nested")
    hosts = load_hosts(str(repo / "hosts" / "nested.yaml"))
    rows = {r["run_id"]: r["experiment"] for r in plan.experiments}
    validation = plan.for_hosts(hosts, chunk="experiment=validation")
    assert len(validation) == 3 * 4 * 5 and {r.spec["duration_s"] for r in validation} == {20}
    suffixes = {rows[r.run_id].split("-v2-")[1] for r in validation}
    assert suffixes == {"bfq", "bfq-time", "iocost-interleaved", "iocost"}
    claims = [r for r in plan.for_hosts(hosts) if r not in validation]
    assert {rows[r.run_id].split("-v2-")[1] for r in claims} == {"bfq", "bfq-time"}
    assert {r.spec["cgroup_version"] for r in plan.for_hosts(hosts)} == {2}
    assert {r.spec["duration_s"] for r in claims} == {60}
    # repetitions from power on the pilot: 3 for every condition, 5 for C4's
    reps = {}
    for r in claims:
        reps[rows[r.run_id]] = max(reps.get(rows[r.run_id], 0), r.spec["repetition"])
    assert {e.split("-v2-")[0] for e, n in reps.items() if n == 5} == {"io-size-vs-weight"}
    assert set(reps.values()) == {3, 5} and len(claims) == 142
