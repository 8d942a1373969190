"""A campaign on a pool of identical hosts (plan/deal.py, control/pools.py, control/hosts.py):
each run dealt once to one member, deterministically and in balance; a resume deals the same;
a lost member's runs wait, and a re-deal moves only those not landed; pool files that declare
members unlike each other are refused in one line naming the file and the field. Pure: files
in a temporary folder, nothing run on a host."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from journalbench import runfolder
from journalbench.control import dispatch, pools
from journalbench.control.hosts import load_hosts
from journalbench.errors import ConfigError
from journalbench.plan import deal as deals
from journalbench.plan import plan

CAMPAIGN = """name: pooled
description: test
duration_s: 5
repetitions: 5
experiments:
  - id: pair
    claims: [C8]
    arms: [shared-journal, journal-accounted]
    vary: {n: [no-fsync, high-fsync]}
    tenants:
      - {name: victim, weight: 700, workload: {tool: fio, preset: high-fsync}}
      - {name: neighbour, weight: 300, workload: {tool: fio, preset: "{n}"}}
  - id: long
    claims: [C10]
    duration_s: 40
    repetitions: 3
    arms: [shared-journal]
    tenants:
      - {name: victim, weight: 700, workload: {tool: redis}}
"""


def member_file(folder: Path, name: str, **extra: object) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps({"name": name, "transport": "local",
                                "state_dir": f"/var/lib/jb-{name}",
                                "device": {"kind": "image", "size_gb": 2}, **extra}))
    return path


def pool_file(folder: Path, name: str, members: list[str], **extra: object) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps({"name": name, "members": [f"{m}.yaml" for m in members],
                                **extra}))
    return path


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    for name in ("m1", "m2", "m3"):
        member_file(tmp_path, name)
    return pool_file(tmp_path, "lab", ["m1", "m2", "m3"])


@pytest.fixture
def made(tmp_path: Path) -> plan.Plan:
    path = tmp_path / "pooled.yaml"
    path.write_text(CAMPAIGN)
    return plan.build(str(path))


def pairs(made: plan.Plan) -> list[tuple[str, dict]]:
    return [(run["run_id"], run["spec"]) for run in made.runs]


# -- the pool file --------------------------------------------------------------------------

def test_a_pool_file_gives_its_members_each_with_the_pool(lab: Path) -> None:
    hosts = load_hosts(str(lab))
    assert [h["name"] for h in hosts] == ["m1", "m2", "m3"]
    assert {h["pool"] for h in hosts} == {"lab"}
    assert deals.members_of(hosts) == {"lab": ["m1", "m2", "m3"]}


def test_an_inventory_may_list_a_pool_beside_a_host(lab: Path, tmp_path: Path) -> None:
    member_file(tmp_path, "solo")
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("hosts:\n  - lab.yaml\n  - solo.yaml\n")
    hosts = load_hosts(str(inventory))
    assert [(h["name"], h.get("pool")) for h in hosts] == [
        ("m1", "lab"), ("m2", "lab"), ("m3", "lab"), ("solo", None)]


@pytest.mark.parametrize("field, value", [
    ("bfq", {"strict_guarantees": 0}),
    ("io_control", "iocost"),
    ("device", {"kind": "image", "size_gb": 4}),
    ("device_profiles", {"hdd": {"seek_ms": 4.0}}),
])
def test_members_that_declare_different_facts_are_refused_in_one_line(
        tmp_path: Path, field: str, value: object) -> None:
    member_file(tmp_path, "m1")
    member_file(tmp_path, "m2", **{field: value})
    pool = pool_file(tmp_path, "lab", ["m1", "m2"])
    with pytest.raises(ConfigError) as raised:
        load_hosts(str(pool))
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{pool}: field members.1: m2 ")
    assert f"declares {field} " in message


def test_a_disk_id_may_differ_between_members(tmp_path: Path) -> None:
    for name in ("m1", "m2"):
        member_file(tmp_path, name, device={"kind": "disk", "wipe": True,
                                            "id": f"/dev/disk/by-id/ata-{name}"})
    assert len(load_hosts(str(pool_file(tmp_path, "lab", ["m1", "m2"])))) == 2


@pytest.mark.parametrize("document, field", [
    ({"name": "lab", "members": ["m1.yaml"]}, "members"),
    ({"name": "lab", "members": ["m1.yaml", "m1.yaml"]}, "members"),
    ({"name": "lab bad", "members": ["m1.yaml", "m2.yaml"]}, "name"),
    ({"name": "lab", "members": ["m1.yaml", "m2.yaml"], "extra": 1}, "(top level)"),
])
def test_a_bad_pool_file_names_the_file_and_the_field(tmp_path: Path, document: dict,
                                                       field: str) -> None:
    for name in ("m1", "m2"):
        member_file(tmp_path, name)
    path = tmp_path / "lab.yaml"
    path.write_text(json.dumps(document))
    where = rf"^{re.escape(str(path))}: field {re.escape(field)}: "
    with pytest.raises(ConfigError, match=where) as raised:
        load_hosts(str(path))
    assert "\n" not in str(raised.value)


def test_a_member_with_the_pools_name_is_refused(tmp_path: Path) -> None:
    member_file(tmp_path, "lab")
    member_file(tmp_path, "m2")
    path = tmp_path / "pool.yaml"
    path.write_text(json.dumps({"name": "lab", "members": ["lab.yaml", "m2.yaml"]}))
    with pytest.raises(ConfigError, match=rf"^{path}: field members.0: member lab has the "):
        load_hosts(str(path))


def test_a_pool_named_like_a_host_is_refused(lab: Path, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    other = member_file(tmp_path / "other", "lab")
    with pytest.raises(ConfigError, match="lab names both a pool and a host"):
        load_hosts(f"{lab},{other}")


# -- the deal -------------------------------------------------------------------------------

def test_the_deal_is_a_pure_function_of_the_plan_and_the_members(made: plan.Plan) -> None:
    first = deals.deal(pairs(made), ["m1", "m2", "m3"])
    assert first == deals.deal(pairs(made), ["m1", "m2", "m3"])
    assert set(first) == {run_id for run_id, _ in pairs(made)}  # every run once
    assert set(first.values()) == {"m1", "m2", "m3"}


def test_each_condition_is_spread_evenly_and_the_times_balance(made: plan.Plan) -> None:
    dealt = deals.deal(pairs(made), ["m1", "m2", "m3"])
    per_condition: dict[str, Counter] = {}
    for run_id, spec in pairs(made):
        per_condition.setdefault(deals.condition_of(spec), Counter())[dealt[run_id]] += 1
    for counts in per_condition.values():
        shown = [counts.get(m, 0) for m in ("m1", "m2", "m3")]
        assert max(shown) - min(shown) <= 1  # each member a complete block
    loads = deals.loads(pairs(made), dealt)
    longest = max(deals.planned_seconds(spec) for _, spec in pairs(made))
    assert max(loads.values()) - min(loads.values()) <= longest


def test_each_members_runs_cycle_through_the_conditions(made: plan.Plan) -> None:
    dealt = deals.deal(pairs(made), ["m1", "m2"])
    conditions = {deals.condition_of(spec) for _, spec in pairs(made)}
    for member in ("m1", "m2"):
        seen = [deals.condition_of(spec) for run_id, spec in pairs(made)
                if dealt[run_id] == member]
        # before a condition comes again, every condition had its turn on some member:
        # the member's first runs are all different conditions
        head = seen[:len(conditions) // 2]
        assert len(set(head)) == len(head)


def test_a_part_of_the_campaign_or_a_resume_deals_the_same(lab: Path,
                                                           made: plan.Plan) -> None:
    hosts = load_hosts(str(lab))
    whole = {r.run_id: r.member for r in made.for_hosts(hosts)}
    part = made.for_hosts(hosts, claims="C10")
    assert part and all(whole[r.run_id] == r.member for r in part)
    chunk = made.for_hosts(hosts, chunk="repetitions=2")
    assert chunk and all(whole[r.run_id] == r.member for r in chunk)
    again = plan.build(made.source).for_hosts(load_hosts(str(lab)))
    assert {r.run_id: r.member for r in again} == whole


def test_a_pool_runs_the_plan_once_under_its_name_and_replicas_stay(
        lab: Path, made: plan.Plan, tmp_path: Path) -> None:
    member_file(tmp_path, "solo")
    hosts = load_hosts(f"{lab},{tmp_path / 'solo.yaml'}")
    runs = made.for_hosts(hosts)
    pooled = [r for r in runs if r.host == "lab"]
    solo = [r for r in runs if r.host == "solo"]
    assert len(pooled) == len(solo) == len(made.runs)
    assert {r.lane for r in pooled} == {"m1", "m2", "m3"}
    assert all(r.member == "" and r.lane == "solo" for r in solo)
    # a host not pooled plans exactly as before pools existed
    assert [(r.host, r.run_id, r.spec) for r in solo] == [
        ("solo", run["run_id"], run["spec"]) for run in made.runs]
    assert pooled[0].folder(Path("raw")) == Path("raw/pooled/lab") / pooled[0].run_id


# -- a lost member --------------------------------------------------------------------------

def land(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / runfolder.SPEC).write_text("{}")


def test_a_lost_member_moves_only_its_runs_not_landed(lab: Path, made: plan.Plan,
                                                      tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    hosts = load_hosts(str(lab))
    runs = made.for_hosts(hosts)
    theirs = [r for r in runs if r.member == "m2"]
    landed = theirs[:2]
    for run in landed:
        land(run.folder(raw))
    pools.lose(raw, "pooled", "lab", "m2", "ssh: connection refused")
    with pytest.raises(ConfigError, match=r"member m2 of pool lab is lost since .*connection "
                                          r"refused.*pool redeal"):
        pools.refuse_lost(raw, theirs[-1])
    moved, to = pools.redeal(runs, ["m1", "m2", "m3"], raw, "lab", "m2")
    assert moved == len(theirs) - len(landed)
    assert set(to) == {"m1", "m3"}
    after = made.for_hosts(hosts, moved=pools.moved(hosts, "pooled", raw))
    members = {r.run_id: r.member for r in after}
    assert all(members[r.run_id] == "m2" for r in landed)  # landed: where it ran
    assert all(members[r.run_id] in ("m1", "m3") for r in theirs[len(landed):])
    untouched = {r.run_id: r.member for r in runs if r.member != "m2"}
    assert all(members[run_id] == member for run_id, member in untouched.items())
    record = json.loads((raw / "pooled/lab" / pools.POOL).read_text())
    assert set(record["lost"]) == {"m2"} and len(record["moved"]) == moved
    # the same record, read again (a resume), deals the same
    again = made.for_hosts(hosts, moved=pools.moved(hosts, "pooled", raw))
    assert {r.run_id: r.member for r in again} == members


def test_a_redeal_balances_the_survivors_and_refuses_when_none_is_left(
        made: plan.Plan) -> None:
    dealt = deals.deal(pairs(made), ["m1", "m2"])
    new = deals.redeal(pairs(made), dealt, ["m1", "m2"], lost={"m2"}, landed=set())
    assert set(new.values()) == {"m1"}
    assert set(new) == {r for r, m in dealt.items() if m == "m2"}
    with pytest.raises(ValueError, match="every member of the pool is lost"):
        deals.redeal(pairs(made), dealt, ["m1", "m2"], lost={"m1", "m2"}, landed=set())


def test_a_rejoined_member_takes_its_waiting_runs_again(lab: Path, made: plan.Plan,
                                                        tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    run = next(r for r in made.for_hosts(load_hosts(str(lab))) if r.member == "m3")
    pools.lose(raw, "pooled", "lab", "m3", "by hand")
    with pytest.raises(ConfigError):
        pools.refuse_lost(raw, run)
    assert "takes its runs again" in pools.rejoin(raw, "pooled", "lab", "m3")
    pools.refuse_lost(raw, run)


def test_status_shows_each_member_and_the_pool(lab: Path, made: plan.Plan, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the plan is kept in data/plan/ here
    raw = tmp_path / "raw"
    pools.lose(raw, "pooled", "lab", "m3", "unreachable")
    lines = dispatch.status(made.source, str(lab), raw)
    assert any(line.startswith("pool lab member m1: 0/") and "ETA" in line for line in lines)
    assert any(line.startswith("pool lab member m3: ") and "lost since" in line
               for line in lines)
    pool_line = next(line for line in lines if line.startswith("pool lab: "))
    assert f"0/{len(made.runs)} runs done" in pool_line and "2 of 3 members" in pool_line
