"""The MySQL claims' guest operating point (agent/workloads/guest_point.py): when a guest keeps
up (formats.guest.keeps_up), a count's figures, the choice of the count, the spec a sweep's
step runs, where the record is kept and the one line a run without it gets; the run spec's
`threads: guest` and tidy's `client_point`. The sweep itself runs QEMU and MariaDB (the
mariadb tests' real runs; `journalbench guest-point` on a host)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journalbench.agent.devices.hdd import Hdd
from journalbench.agent.workloads import guest_point
from journalbench.agent.workloads.mariadb import MariaDB
from journalbench.cli.guestpoint import counts_of, line
from journalbench.errors import AgentError, ConfigError
from journalbench.formats.guest import BUSY_LIMIT, keeps_up
from journalbench.formats.mariadb import GUEST_POINT, IO_SATURATION, SPEC, client_point
from journalbench.plan.schemas import load_validated


@pytest.mark.parametrize(("busy", "saturated", "kept"), [
    (0.32, 0.0, True),  # the lab at 2 threads: 32% busy, never saturated
    (0.5, 0.0, True),  # at the limit: a transaction waits about as long as it is served
    (0.51, 0.0, False),
    (0.2, 0.05, False),  # one saturated second in twenty is one too many
    (float("nan"), 0.0, False),  # not measured: not shown to keep up
    (0.2, float("nan"), False),
])
def test_a_guest_keeps_up_never_saturated_and_at_most_half_busy(busy, saturated, kept):
    assert keeps_up(busy, saturated) is kept
    assert BUSY_LIMIT == 0.5


def test_a_count_s_figures_give_the_vcpu_time_of_a_transaction():
    """2 threads at 77 tps with the guest 32% busy: ~4.2 ms of vCPU against a ~26 ms
    transaction (the issue's lab)."""
    found = guest_point.step(2, 0.32, 0, 20, 77.0, 26.0)
    assert found["vcpu_ms_per_tx"] == pytest.approx(4.156, abs=1e-3)
    assert found["keeps_up"] and found["busy_share"] == 0.32 and found["seconds"] == 20
    busy = guest_point.step(16, 0.92, 4, 20, 180.0, 89.0)
    assert not busy["keeps_up"] and busy["saturated_seconds"] == 4
    assert guest_point.step(1, 0.1, 0, 0, 0.0, 0.0)["vcpu_ms_per_tx"] is None
    assert not guest_point.step(1, 0.1, 0, 0, 0.0, 0.0)["keeps_up"]  # no second measured
    assert line(found) == (" 2 threads: guest 32% busy, saturated 0 of 20 s, 4.156 ms of "
                           "vCPU a transaction, 77.0 tps (26.0 ms each): keeps up")
    assert line(busy).endswith("does not keep up")


def sweep(*kept: bool) -> list[dict]:
    return [{"threads": 2 ** i, "keeps_up": k} for i, k in enumerate(kept)]


@pytest.mark.parametrize(("steps", "chosen"), [
    (sweep(True, True, True, False, False), 4),  # the lab: 2 and 4 keep up, 16 not
    (sweep(True), 1),
    (sweep(False, True), None),  # not even one thread: no point
    (sweep(True, False, True), 1),  # a count above one that failed is chance, not taken
    (list(reversed(sweep(True, True, False))), 2),  # the order given does not matter
])
def test_the_point_is_the_largest_count_below_the_first_guest_that_did_not_keep_up(
        steps, chosen):
    assert guest_point.choose(steps) == chosen


def test_a_step_is_the_vm_arms_mariadb_alone_at_the_count():
    spec = guest_point.spec_of(8, 60, 5, "hdd")
    assert spec["arm"] == "vm" and spec["device"] == "hdd" and spec["duration_s"] == 60
    (tenant,) = spec["tenants"]
    assert tenant["workload"] == {"tool": "mariadb", "threads": 8}
    assert tenant["weight"] == guest_point.WEIGHT


def test_counts_must_rise_within_1_to_64():
    assert counts_of("1,2") == [1, 2]
    assert counts_of(",".join(map(str, guest_point.LADDER))) == list(guest_point.LADDER)
    for bad in ("2,1", "0,1", "1,128", "1,x", "", "1,1"):
        with pytest.raises(ConfigError, match="--threads"):
            counts_of(bad)


def host_of(tmp_path: Path) -> dict:
    return {"name": "h", "state_dir": str(tmp_path), "device": {"kind": "image"}}


def test_a_run_asking_for_the_point_without_one_is_told_the_command(tmp_path):
    profile = Hdd(host_of(tmp_path), tmp_path, {})
    with pytest.raises(AgentError, match="journalbench guest-point --host h --profile hdd"):
        guest_point.read(host_of(tmp_path), profile, 10, 100000)


def test_a_run_asking_for_the_point_reads_it_and_keeps_its_sweep(tmp_path):
    host = host_of(tmp_path)
    profile = Hdd(host, tmp_path, {})
    steps = [guest_point.step(1, 0.2, 0, 60, 40.0, 25.0),
             guest_point.step(2, 0.35, 0, 60, 75.0, 26.6),
             guest_point.step(4, 0.7, 3, 60, 120.0, 33.0)]
    record = guest_point.record_of(steps, profile="hdd", accel="tcg", tables=2,
                                   table_size=2000, step_s=60, warmup_s=5, runs=tmp_path / "r")
    path = guest_point.path_for(host, profile, 2, 2000)
    guest_point.write(path, record)
    assert path.parent == tmp_path / "calibration" and "guest-point" in path.name
    workload = MariaDB("victim", {"tool": "mariadb", "tables": 2, "table_size": 2000,
                                  "threads": guest_point.GUEST}, 60)
    assert workload.threads is None
    kept = workload.calibrate(host, profile, None, tmp_path / "mnt")
    assert workload.threads == 2 and workload.threads_from == f"guest point {path}"
    assert kept[guest_point.RECORD]["sweep"] == steps
    assert kept[guest_point.RECORD]["accel"] == "tcg"
    assert client_point(workload.threads_from) == GUEST_POINT
    # another table set is another point, not measured
    with pytest.raises(AgentError, match="no guest operating point"):
        guest_point.read(host, profile, 10, 100000)
    # a sweep where nothing kept up: no point, said with its first count's figures
    guest_point.write(path, {**record, "threads": None, "sweep": steps[2:]})
    with pytest.raises(AgentError, match="kept up at no thread count"):
        guest_point.read(host, profile, 2, 2000)


@pytest.mark.parametrize(("client", "total", "phase"), [
    (None, 60.0, None),  # a run before the counters recorded the uptime
    ((100.0, 161.5), 60.0, (100.0, 101.5, 161.5)),  # 1.5 s of start-up
    ((100.0, 159.0), 60.0, (100.0, 100.0, 159.0)),  # never before the client's run
])
def test_a_guests_seconds_start_with_sysbenchs_threads(client, total, phase):
    from journalbench.tidy.parse.mariadb import threads_phase

    found = threads_phase(client, total)
    assert found == phase
    if found is not None:
        assert found.working == phase[1:] and found.whole == (phase[0], phase[2])


def test_a_record_of_an_earlier_method_is_read_again_from_its_runs(tmp_path):
    steps = [guest_point.step(1, 0.2, 1, 60, 40.0, 25.0),
             guest_point.step(2, 0.35, 0, 60, 75.0, 26.6)]
    earlier = {**guest_point.record_of(steps, profile="hdd", accel="tcg", tables=2,
                                       table_size=2000, step_s=60, warmup_s=5,
                                       runs=tmp_path / "r"), "method": guest_point.METHOD - 1}
    again = [guest_point.step(1, 0.19, 0, 60, 40.0, 25.0), steps[1]]
    record = guest_point.reread_of(earlier, again, tmp_path / "old.json")
    assert earlier["threads"] is None and record["threads"] == 2
    assert record["sweep"] == again and record["method"] == guest_point.METHOD
    assert record["measured_at"] == earlier["measured_at"] and record["runs"] == earlier["runs"]
    assert record["read_from"] == {"file": str(tmp_path / "old.json"),
                                   "method": guest_point.METHOD - 1, "threads": None}
    assert guest_point.step_folder(record, 2) == tmp_path / "r" / "threads-2"
    with pytest.raises(AgentError, match="read by method .* already"):
        guest_point.reread_of(record, again, tmp_path / "new.json")
    with pytest.raises(AgentError, match="not its sweep's counts"):
        guest_point.reread_of(earlier, again[:1], tmp_path / "old.json")


def test_the_latest_record_of_an_earlier_method_is_found(tmp_path):
    host = host_of(tmp_path)
    profile = Hdd(host, tmp_path, {})
    assert guest_point.earlier_path(host, profile, 2, 2000) is None
    paths = {m: guest_point.path_for(host, profile, 2, 2000, m)
             for m in range(1, guest_point.METHOD + 1)}
    assert len(set(paths.values())) == guest_point.METHOD  # each method its own record
    for method in (1, guest_point.METHOD - 1):
        guest_point.write(paths[method], {"method": method})
    assert guest_point.earlier_path(host, profile, 2, 2000) == paths[guest_point.METHOD - 1]
    with pytest.raises(AgentError, match=" --reread$"):
        guest_point.read(host, profile, 2, 2000)


def test_where_a_count_came_from():
    assert client_point("calibration /state/calibration/x.json") == IO_SATURATION
    assert client_point("guest point /state/calibration/y.json") == GUEST_POINT
    assert client_point("spec") == SPEC


def test_the_run_spec_takes_guest_threads_and_nothing_else(tmp_path):
    def spec(threads: object) -> Path:
        path = tmp_path / f"{threads}.json"
        path.write_text(json.dumps({"arm": "vm", "duration_s": 10, "repetition": 1,
                                    "tenants": [{"name": "victim", "weight": 700, "workload": {
                                        "tool": "mariadb", "threads": threads}}]}))
        return path

    assert load_validated(spec("guest"), "run-spec")["tenants"][0]["workload"]["threads"] == \
        "guest"
    assert load_validated(spec(4), "run-spec")
    for bad in ("io", 0, 65):
        with pytest.raises(ConfigError):
            load_validated(spec(bad), "run-spec")


# -- the campaign at the point ----------------------------------------------------------------

def test_the_mysql_point_campaign_runs_every_mariadb_at_the_point_under_both_settings(repo):
    """mysql-point.yaml validates and expands: every MariaDB tenant asks for the guest point;
    each claim experiment runs under BFQ's defaults and under BFQ charged by time; the time
    setting's validation pairs are weights-hdd's, and weights-hdd validates the defaults'."""
    import yaml

    from journalbench.control.hosts import load_hosts
    from journalbench.plan import plan as plans

    campaigns = repo / "workflow" / "campaigns"
    runs = plans.runs(str(campaigns / "mysql-point.yaml"),
                      load_hosts(str(repo / "hosts/local.yaml")))
    assert len({r.run_id for r in runs}) == len(runs)
    time = {"low_latency": 0, "max_budget": 1000000}
    databases = [t for r in runs for t in r.spec["tenants"]
                 if t["workload"]["tool"] == "mariadb"]
    assert databases and all(t["workload"]["threads"] == guest_point.GUEST for t in databases)
    claim_runs = [r for r in runs if any(t["workload"]["tool"] == "mariadb"
                                         for t in r.spec["tenants"])]
    assert all(r.spec["duration_s"] == 60 and r.spec["device"] == "hdd" for r in claim_runs)
    by_setting = {"default": [r for r in claim_runs if not r.spec.get("bfq")],
                  "time": [r for r in claim_runs if r.spec.get("bfq") == time]}
    # one design under both settings: the same conditions, as often (4-5 repetitions each,
    # sized by `journalbench power` on the 2-repetition pilot)
    def design(found: list) -> list:
        return sorted(json.dumps({**r.spec, "bfq": None}, sort_keys=True)
                      for r in found)

    assert design(by_setting["default"]) == design(by_setting["time"])
    assert len(by_setting["default"]) == len(claim_runs) / 2 == 4 * 5 + 4 * 4 + 2 * 12 * 5
    document = yaml.safe_load((campaigns / "mysql-point.yaml").read_text())
    weights = yaml.safe_load((campaigns / "weights-hdd.yaml").read_text())
    assert "mysql-point" in weights["validates"]
    pairs = [e for e in document["experiments"] if not e["claims"]]
    assert [e["tenants"] for e in pairs] == [e["tenants"] for e in weights["experiments"]]
    assert all(e["bfq"] == time and e["duration_s"] == weights["duration_s"] for e in pairs)
    claims = {c for e in document["experiments"] for c in e["claims"]}
    assert claims == {"C5", "C6", "C7", "C11", "C12", "C13", "C14", "C16", "C19", "C20"}


# -- the notebook's view of the point ---------------------------------------------------------

def test_the_notebook_reads_each_sweep_once_from_the_runs_at_the_point(tmp_path):
    """Runs at the point keep the host's record in host.json; the view takes each record once
    (however many runs kept it) and draws it; runs at another count add nothing, and a
    campaign without any says so by an empty table."""
    import pandas as pd

    from journalbench.report import operating_point

    steps = [guest_point.step(1, 0.2, 0, 60, 40.0, 25.0),
             guest_point.step(2, 0.35, 0, 60, 75.0, 26.6),
             guest_point.step(4, 0.7, 3, 60, 120.0, 33.0)]
    record = guest_point.record_of(steps, profile="hdd", accel="tcg", tables=10,
                                   table_size=100000, step_s=60, warmup_s=5, runs=tmp_path)
    raw = tmp_path / "raw"
    for run, point in (("r1", "guest"), ("r2", "guest"), ("r3", "io-saturation")):
        folder = raw / "local" / run
        folder.mkdir(parents=True)
        calibration = {guest_point.RECORD: record} if point == "guest" else {}
        (folder / "host.json").write_text(json.dumps({"host": "local",
                                                      "calibration": calibration}))
    runs = pd.DataFrame({"host": ["local"] * 4, "run_id": ["r1", "r1", "r2", "r3"],
                         "client_point": ["guest", "guest", "guest", "io-saturation"]})
    folders = operating_point.folders_at_point(raw, runs)
    assert [f.name for f in folders] == ["r1", "r2"]
    sweep = operating_point.sweeps(folders)
    assert list(sweep["threads"]) == [1, 2, 4] and set(sweep["chosen"]) == {2}
    assert list(sweep["keeps_up"]) == [True, True, False]
    assert sweep.equals(operating_point.sweeps(operating_point.folders_at_point(raw)))
    fig = operating_point.figure(sweep, "local, hdd")
    assert [ax.get_ylabel() for ax in fig.axes] == ["transactions/s", "guest's vCPU busy share"]
    assert set(sweep["method"]) == {guest_point.METHOD}
    # the same measurement read again by a later method (runs after the reading keep that
    # record): its rows once, as the latest method read them
    later = {**record, "method": guest_point.METHOD + 1,
             "sweep": [{**step, "busy_share": 0.1} for step in steps]}
    folder = raw / "local" / "r4"
    folder.mkdir()
    (folder / "host.json").write_text(json.dumps({"host": "local",
                                                  "calibration": {guest_point.RECORD: later}}))
    for order in (folders + [folder], [folder] + folders):
        both = operating_point.sweeps(order)
        assert list(both["threads"]) == [1, 2, 4] and set(both["busy_share"]) == {0.1}
        assert set(both["method"]) == {guest_point.METHOD + 1}
    assert operating_point.sweeps(operating_point.folders_at_point(
        raw, runs.drop(columns=["client_point"]))).empty
    assert list(operating_point.sweeps([]).columns) == operating_point.COLUMNS
