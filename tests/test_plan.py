"""A campaign's plan, made once and kept (journalbench/plan/plan.py): what the steps after
planning read instead of expanding the campaign again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journalbench.control.hosts import load_hosts
from journalbench.errors import ConfigError
from journalbench.plan import plan
from journalbench.plan.campaign import campaign_path

CAMPAIGN = """name: t
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
  - id: low
    claims: [C10]
    arms: [shared-journal]
    tenants:
      - {name: victim, weight: 700, workload: {tool: redis}}
"""


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(CAMPAIGN)
    return path


def test_a_plan_is_made_once_and_read_after(campaign_file: Path, tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    made = plan.current(str(campaign_file), plans)
    kept = plans / "t.json"
    assert kept.is_file() and made.campaign == "t" and len(made.runs) == 2 * 4 + 2
    stamp = kept.stat().st_mtime_ns
    again = plan.current(str(campaign_file), plans)
    assert kept.stat().st_mtime_ns == stamp  # read, not made again
    assert again.runs == made.runs and again.experiments == made.experiments
    assert again.facts == {"tests_claims": True, "tools": ["fio", "redis"], "devices": [None],
                           "bfq_settings": [""], "io_controls": [""], "cgroup_versions": [0],
                           "headline": [], "validates": []}


def test_a_changed_campaign_file_is_planned_again(campaign_file: Path, tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    before = plan.current(str(campaign_file), plans)
    campaign_file.write_text(CAMPAIGN.replace("repetitions: 2", "repetitions: 3"))
    after = plan.current(str(campaign_file), plans)
    assert after.key != before.key and len(after.runs) == 3 * 4 + 3
    assert json.loads((plans / "t.json").read_text())["key"] == after.key


def test_a_plan_not_kept_is_made_once_per_process_until_its_file_changes(
        campaign_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the pipeline asks while it starts, before its plan rule keeps the plans: each
    campaign made once (plan.planned), and made again when its file changes."""
    plans, builds = tmp_path / "data" / "plan", []  # no plan kept there yet
    build = plan.build
    monkeypatch.setattr(plan, "build", lambda path: builds.append(path) or build(path))
    first = plan.current(str(campaign_file), plans, keep=False)
    assert plan.current(str(campaign_file), plans, keep=False) is first
    assert plan.facts_of(str(campaign_file), plans)["tools"] == ["fio", "redis"]
    assert len(builds) == 1 and not plans.exists()  # made once, never kept
    campaign_file.write_text(CAMPAIGN.replace("repetitions: 2", "repetitions: 3"))
    changed = plan.current(str(campaign_file), plans, keep=False)
    assert len(builds) == 2 and len(changed.runs) == 3 * 4 + 3
    kept = plan.current(str(campaign_file), plans)  # the plan rule keeps it: written
    assert (plans / "t.json").is_file() and kept.runs == changed.runs


def test_a_plan_kept_by_default_goes_to_the_repository_whatever_the_working_directory(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook runs from notebooks/: the plan it keeps lands in the repository's data/plan
    (ignored by git), never in a data/plan/ of the working directory."""
    monkeypatch.chdir(tmp_path)
    assert plan.PLAN_DIR == repo / "data" / "plan"
    made = plan.current("smoke")
    assert (repo / "data" / "plan" / "smoke.json").is_file() and made.campaign == "smoke"
    assert not (tmp_path / "data").exists()


def test_a_damaged_plan_is_made_again(campaign_file: Path, tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    made = plan.current(str(campaign_file), plans)
    (plans / "t.json").write_text('{"campaign": "t", "runs": [')
    assert plan.current(str(campaign_file), plans).runs == made.runs


def test_a_plan_not_kept_is_not_written(campaign_file: Path, tmp_path: Path) -> None:
    plan.current(str(campaign_file), tmp_path / "plans", keep=False)
    assert not (tmp_path / "plans").exists()


def test_the_plan_holds_what_the_campaign_expands_to(campaign_file: Path, repo: Path) -> None:
    """The same runs, ids and experiments as expanding the file now; each run id is the hash
    of its spec; a claim picks its experiments' runs, in the plan's order."""
    hosts = load_hosts(str(repo / "hosts" / "local.yaml"))
    made = plan.build(str(campaign_file))
    runs = made.for_hosts(hosts)
    assert [r.run_id for r in runs] == [r["run_id"] for r in made.runs]
    assert {row["run_id"] for row in made.experiments} == {r.run_id for r in runs}
    alone = made.run_ids("C10")
    assert len(alone) == 2 and alone == [i for i in made.run_ids() if i in alone]
    with pytest.raises(ConfigError, match="campaign t: no experiment tests C99"):
        made.run_ids("C99")


# the campaigns that ship whole: those whose testbeds may give the README's headlines
# (thesis-*, weights-nested, mysql-point) and weights-hdd, the validation of thesis-hdd's weights
WHOLE = {"thesis-nested", "thesis-v2", "thesis-hdd", "weights-hdd", "weights-nested",
         "mysql-point"}


def test_every_shipped_campaign_plans_to_its_landed_runs(repo: Path, tmp_path: Path) -> None:
    """A plan of a shipped campaign names every run folder its campaign landed, on every host
    it landed on: the run ids (hashes of the specs) of every shipped run are the ones planning
    makes today, whatever planning learnt since (named testbeds, BFQ tunables and iocost QoS
    procedures per testbed: left out of the specs that do not set them). A campaign ships by
    whole experiments (weights-nested's validation went first, its claims' conditions landed
    when measured whole): an experiment's runs on a host are all there or none; the campaigns
    the README's headlines rest on are whole."""
    shipped = sorted(p for p in (repo / "data" / "raw").iterdir()
                     if p.is_dir() and campaign_path(p.name).is_file())
    assert WHOLE <= {
        p.name for p in shipped}
    for folder in shipped:
        made = plan.current(folder.name, tmp_path)
        ids = {r["run_id"] for r in made.runs}
        by_experiment: dict[str, set[str]] = {}
        for row in made.experiments:
            by_experiment.setdefault(row["experiment"], set()).add(row["run_id"])
        for host in (p for p in folder.iterdir() if p.is_dir()):
            landed = {p.name for p in host.iterdir() if p.is_dir()}
            assert landed <= ids, f"{folder.name}/{host.name}: {sorted(landed - ids)[:3]}"
            for experiment, runs in by_experiment.items():
                assert not runs & landed or runs <= landed, (
                    f"{folder.name}/{host.name}: {experiment} landed "
                    f"{len(runs & landed)} of {len(runs)} runs")
            if folder.name in WHOLE:
                assert landed == ids, f"{folder.name}/{host.name}"
