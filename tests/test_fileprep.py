"""fio's file preparation (overwrite / fallocate / append) and the warm-up window: the pure
parts (planning, sizing, wrap detection, trimming) and real runs of real fio on a throw-away
host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_agent import run, samples

from conftest import start_run
from journalbench import runfolder, window
from journalbench.agent.arms.vm import image as guest_image
from journalbench.agent.workloads import fio
from journalbench.errors import AgentError, ConfigError
from journalbench.formats.fio import fio_file
from journalbench.formats.samples import Sample
from journalbench.plan import campaign
from journalbench.plan import plan as plans
from journalbench.tidy.rows import measured_span, parse_run

MIB = 1 << 20

# -- planning: what a campaign's specs say -----------------------------------------------------

CAMPAIGN = """\
name: preps
description: file preparations
duration_s: 3
repetitions: 1
experiments:
  - id: pair
    claims: [C8]
    arms: [shared-journal]
    tenants:
      - {name: a, weight: 700, workload: {tool: fio, preset: high-fsync}}
      - {name: b, weight: 300, workload: {tool: fio, preset: seqread-64k}}
"""


def expand(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return campaign.expand(campaign.load_campaign(str(path)), str(path))


def workloads(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [t["workload"] for t in spec["tenants"]]


def test_campaign_defaults_are_the_thesis_regime(tmp_path: Path) -> None:
    [spec] = expand(tmp_path, CAMPAIGN)
    # writes get fio's own fallocate; reads the pre-written file they need (left unsaid)
    assert workloads(spec) == [{"tool": "fio", "preset": "high-fsync", "prep": "fallocate"},
                               {"tool": "fio", "preset": "seqread-64k"}]
    assert spec["warmup_s"] == window.DEFAULT_WARMUP_S == 2


def test_experiment_prep_tenant_prep_and_pinned_legacy_values(tmp_path: Path) -> None:
    text = CAMPAIGN.replace("duration_s: 3\n", "duration_s: 3\nwarmup_s: 0\n").replace(
        "arms: [shared-journal]\n", "arms: [shared-journal]\n    prep: append\n").replace(
        "preset: seqread-64k}", "preset: no-fsync, prep: overwrite}")
    [spec] = expand(tmp_path, text)
    assert workloads(spec) == [{"tool": "fio", "preset": "high-fsync", "prep": "append"},
                               {"tool": "fio", "preset": "no-fsync"}]
    # overwrite and no warm-up are what a spec without the fields means: left out, so a
    # campaign pinned to them keeps the run ids of runs made before the fields existed
    assert "warmup_s" not in spec
    legacy = {"arm": "shared-journal", "duration_s": 3, "repetition": 1,
              "tenants": [{"name": "a", "weight": 700,
                           "workload": {"tool": "fio", "preset": "high-fsync"}}]}
    pinned = expand(tmp_path, CAMPAIGN.replace("repetitions: 1\n", "repetitions: 1\nwarmup_s: 0\n")
                    .replace("arms: [shared-journal]\n",
                             "arms: [shared-journal]\n    prep: overwrite\n")
                    .replace("      - {name: b, weight: 300, workload: {tool: fio, preset: "
                             "seqread-64k}}\n", ""))
    assert runfolder.run_id(pinned[0]) == runfolder.run_id(legacy)


def test_vary_over_prep(tmp_path: Path) -> None:
    text = CAMPAIGN.replace("arms: [shared-journal]\n",
                            "arms: [shared-journal]\n    vary: {prep: [overwrite, append]}\n"
                            ).replace("preset: high-fsync}", 'preset: high-fsync, prep: "{prep}"}')
    specs = expand(tmp_path, text)
    assert [workloads(s)[0].get("prep") for s in specs] == [None, "append"]


@pytest.mark.parametrize(("preset", "prep", "allowed"), [
    ("seqread-64k", "fallocate", "['overwrite']"),
    ("randread-16k", "append", "['overwrite']"),
    ("randwrite-16k", "append", "['overwrite', 'fallocate']"),
])
def test_a_prep_the_preset_cannot_use_is_refused_at_validation(
        tmp_path: Path, preset: str, prep: str, allowed: str) -> None:
    text = CAMPAIGN.replace("preset: high-fsync}", f"preset: {preset}, prep: {prep}}}")
    with pytest.raises(ConfigError, match=rf"experiment pair.*field tenants.0.workload.prep: "
                                          rf"'{prep}' is not one of \{allowed}"):
        expand(tmp_path, text)
    # and the agent refuses it too, for a spec that reaches it without the schema
    with pytest.raises(AgentError, match=f"tenant a: fio preset {preset} cannot use prep {prep}"):
        fio.Fio("a", {"tool": "fio", "preset": preset, "prep": prep}, 3)


# -- the command lines --------------------------------------------------------------------------

def test_warmup_is_fios_ramp_added_to_the_runtime() -> None:
    args = fio.run_command("t", "/mnt", {"tool": "fio", "preset": "high-fsync"}, 10, 2)
    assert "--runtime=10" in args and "--ramp_time=2" in args and "--time_based" in args
    assert not [a for a in fio.run_command("t", "/mnt", {"tool": "fio", "preset": "high-fsync"},
                                           10) if a.startswith("--ramp_time")]


def test_prep_command_lines() -> None:
    append = {"tool": "fio", "preset": "no-fsync", "prep": "append"}
    assert {"--fallocate=none", "--file_append=1", f"--size={64 * MIB}"} <= set(
        fio.run_command("t", "/mnt", append, 5, 2, 64 * MIB))
    create = fio.create_command("/mnt", {"tool": "fio", "preset": "no-fsync",
                                         "prep": "fallocate"}, 64 * MIB)
    assert "--create_only=1" in create and not [a for a in create if "fallocate" in a]
    assert "--fallocate=none" in fio.create_command("/mnt", append, 64 * MIB)


# -- sizing -------------------------------------------------------------------------------------

def test_file_size_from_rate_time_and_margin() -> None:
    size, estimate, bounded = fio.file_size(12, 10.0, 100 << 30, 1, 64 << 10)
    assert estimate == 12 * 10 * 10**6 * fio.SIZE_MARGIN and not bounded
    assert size == estimate // MIB * MIB and size % (64 << 10) == 0


def test_file_size_is_bounded_by_the_free_space_left_for_each_sharing_tenant() -> None:
    free = 1000 * MIB
    size, estimate, bounded = fio.file_size(60, 400.0, free, 2, 64 << 10)
    assert bounded and estimate > free
    assert size == (free - fio.RESERVE_BYTES) // 2 // MIB * MIB



def test_a_buffered_writers_file_is_an_even_share_of_the_free_space() -> None:
    """No calibrated rate bounds a buffered writer (its write-back leaves in large requests):
    a guest on hdd wrote 1 GB in 22 s into a file sized for 7.5 MB/s and wrapped."""
    free = 6000 * MIB
    assert fio.buffered_size(free, 1, 64 << 10) == (free - fio.RESERVE_BYTES) // MIB * MIB
    assert fio.buffered_size(free, 2, 4096) == (free - fio.RESERVE_BYTES) // 2 // MIB * MIB


def test_size_notation() -> None:
    assert [fio.size_bytes(s) for s in ("16k", "64K", "1m", "4096")] == [
        16 << 10, 64 << 10, 1 << 20, 4096]


# -- wrap detection -----------------------------------------------------------------------------

# `filefrag -s -v` of a 64 MiB fallocated file after 8 MiB of sequential direct writes
FILEFRAG = """\
Filesystem type is: ef53
File size of f is 67108864 (16384 blocks of 4096 bytes)
 ext:     logical_offset:        physical_offset: length:   expected: flags:
   0:        0..    2047:   35291650..  35293697:   2048:
   1:     2048..   16383:   35293698..  35308033:  14336:             last,unwritten,eof
f: 1 extent found
"""


def test_filefrag_written_bytes_and_reached_end() -> None:
    block, extents = fio.parse_filefrag(FILEFRAG)
    assert block == 4096 and extents == [(0, 2048, True), (2048, 14336, False)]
    assert fio.written_bytes(block, extents) == 8 * MIB
    assert not fio.reached_end(64 * MIB, block, extents, sequential=True)
    full = [(0, 2048, True), (2048, 14336, True)]
    assert fio.reached_end(64 * MIB, block, full, sequential=True)
    # random writes may hit the last block early: only a file with nothing unwritten is full
    tail = [(0, 14336, False), (14336, 2048, True)]
    assert fio.reached_end(64 * MIB, block, tail, sequential=True)
    assert not fio.reached_end(64 * MIB, block, tail, sequential=False)
    assert fio.reached_end(64 * MIB, block, full, sequential=False)


def test_wrap_problem() -> None:
    assert fio.wrap_problem("a", "fallocate", 100, 90, False, "fio-a.json") is None
    by_fio = fio.wrap_problem("a", "append", 100, 101, False, "fio-a.json")
    assert by_fio is not None and by_fio.startswith("tenant a: append file wrapped: fio wrote")
    by_file = fio.wrap_problem("a", "fallocate", 100, 90, True, "fio-a.json")
    assert by_file is not None and "(see fio-a.json)" in by_file and "\n" not in by_file


# -- the window ---------------------------------------------------------------------------------

def test_whole_samples_tile_the_window() -> None:
    # the sampler ticks every second (a few ms late) from just before the workloads start
    started, warmup, duration = 0.06, 2, 10
    span = window.window(started, warmup, duration)
    ticks = [(k + 0.004 * (k % 3), 1.0) for k in range(1, 14)] + [(13.2, 0.196)]
    kept = [t for t, dt in ticks if window.inside(t, dt, span["start_s"], span["end_s"])]
    assert len(kept) == duration and kept[0] == pytest.approx(3) and kept[-1] < 12.1


def sample(t: float) -> Sample:
    return Sample(t, 1.0, "device", "loop0", 0, 0, 0, 0, None, None, None, None, "/dev/loop0")


def span_of(folder: Path, samples: list) -> tuple[float, float]:
    path = folder / runfolder.HOST
    return measured_span(path, json.loads(path.read_text()), samples)


def test_measured_span_of_old_and_new_runs(tmp_path: Path) -> None:
    (tmp_path / runfolder.HOST).write_text(json.dumps({"timing": {}}))
    assert span_of(tmp_path, [sample(1), sample(5.2)]) == (0.0, 5.2)  # before windows
    (tmp_path / runfolder.HOST).write_text(json.dumps({"window": window.window(0.1, 2, 5)}))
    assert span_of(tmp_path, [sample(1)]) == (2.1, 7.1)


def test_only_a_buffered_fallocate_writer_stops_at_its_files_end() -> None:
    def timed(preset: str, prep: str) -> bool:
        argv = fio.run_command("n", "/d", {"tool": "fio", "preset": preset, "prep": prep}, 20,
                               2, 64 * MIB)
        return "--time_based" in argv
    assert not timed("buffered-no-fsync", "fallocate")
    assert timed("buffered-no-fsync", "append") and timed("no-fsync", "fallocate")
    assert fio.stopped_early(19.7, 20) and not fio.stopped_early(20.0, 20)


# -- real runs ----------------------------------------------------------------------------------

def spec(prep: str, preset: str = "high-fsync", **workload: Any) -> dict[str, Any]:
    return {"arm": "shared-journal", "duration_s": 2, "warmup_s": 1, "repetition": 1,
            "tenants": [{"name": "victim", "weight": 500,
                         "workload": {"tool": "fio", "preset": preset, "prep": prep,
                                      **workload}}]}


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.parametrize("prep", fio.PREPS)
def test_each_prep_runs_without_wrapping_and_reports_jbd2(agent_host, tmp_path, prep):
    planned = spec(prep)
    if prep == fio.ABSENT_PREP:  # as a spec states it
        planned["tenants"][0]["workload"].pop("prep")
    out = run(planned, agent_host, tmp_path / "run")
    [row], rows = parse_run(out)
    assert row["prep"] == prep and row["warmup_s"] == 1
    assert row["shared_jbd2_share"] > 0 and row["fsync_count"] > 0  # the journal is measured
    host = json.loads((out / runfolder.HOST).read_text())
    span = host["window"]
    assert (row["window_start_s"], row["window_end_s"]) == (span["start_s"], span["end_s"])
    assert span["end_s"] - span["start_s"] == pytest.approx(2)
    # the tables hold the window's two whole seconds; the raw log keeps the warm-up too
    assert sorted({r["t"] for r in rows}) == pytest.approx(
        [span["start_s"] + 1, span["start_s"] + 2], abs=0.5)
    assert min(r["t"] for r in samples(out)) < span["start_s"]
    job = json.loads((out / fio_file("victim")).read_text())["jobs"][0]
    assert job["job options"]["ramp_time"] == "1" and job["job options"]["runtime"] == "2"
    report_file = out / fio.file_report("victim")
    if prep == "overwrite":
        assert not report_file.exists()
        return
    report = json.loads(report_file.read_text())
    fio_bytes = job["write"]["io_bytes"]
    assert report["filled"] is False and report["prep"] == prep
    # the file holds the warm-up's writes and the measured ones, and had room to spare
    assert fio_bytes == report["fio_bytes_after_warmup"] > 0
    assert fio_bytes < report["written_bytes"] < report["size_bytes"]


@pytest.mark.root
@pytest.mark.slow
def test_a_run_whose_file_wraps_fails_and_lands_nothing(agent_host, tmp_path):
    out = tmp_path / "run"
    proc = start_run(spec("fallocate", size_mb=16), agent_host, out)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 2, stderr
    last = stderr.strip().splitlines()[-1]
    assert "tenant victim: fallocate file wrapped" in last and "fio-victim.json" in last
    assert not runfolder.is_complete(out) and not (out / runfolder.MANIFEST).exists()


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.image_gb(16)  # 3 s into the page cache can pass 3.7 GB on a machine with free RAM
def test_a_buffered_writer_runs_to_time_without_time_based(agent_host, tmp_path):
    out = run(spec("fallocate", "buffered-no-fsync"), agent_host, tmp_path / "run")
    job = json.loads((out / fio_file("victim")).read_text())["jobs"][0]
    assert "time_based" not in job["job options"] and job["job_runtime"] >= 2000
    report = json.loads((out / fio.file_report("victim")).read_text())
    assert report["filled"] is False and report["written_bytes"] is None
    assert 0 < report["fio_bytes_after_warmup"] < report["size_bytes"]


@pytest.mark.root
@pytest.mark.slow
def test_a_buffered_writer_that_reaches_its_files_end_fails_the_run(agent_host, tmp_path):
    out = tmp_path / "run"
    proc = start_run(spec("fallocate", "buffered-no-fsync", size_mb=16), agent_host, out)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 2, stderr
    last = stderr.strip().splitlines()[-1]
    assert "tenant victim: fallocate file wrapped: its writes reached the end" in last
    assert not runfolder.is_complete(out)


# -- the fsync tracer's seconds -----------------------------------------------------------------

FSYNC = Path(__file__).resolve().parent / "fixtures" / "fsync"


def test_fsync_trace_keeps_the_windows_seconds() -> None:
    from journalbench.formats.fsync import parse_fsync

    trace = parse_fsync(FSYNC / "python-fsync-v2-pid.txt")
    assert trace.count == 12 and sorted(trace.seconds) == [0, 1, 2]
    assert trace.t0_ns is not None
    second = 10**9
    kept = trace.within(trace.t0_ns + second, trace.t0_ns + 3 * second)
    assert sorted(kept.seconds) == [1, 2] and kept.count == 3 + 2 + 2
    assert kept.per_s == pytest.approx(7 / 2)
    assert kept.mean_ns == pytest.approx((983075 + 1816625 + 4060268) / 7)
    assert kept.syscalls["fsync"].min_ns == 318786  # from the kept seconds only
    assert kept.percentile_ns(50) is not None
    # a version 1 summary (no seconds) is kept whole: runs made before the window
    old = parse_fsync(FSYNC / "fio-fsync5-pid.txt")
    assert old.t0_ns is None and old.within(0, 1) is old


def test_fsync_seconds_that_do_not_add_up_are_refused(tmp_path: Path) -> None:
    from journalbench.formats import ParseError
    from journalbench.formats.fsync import parse_fsync

    text = (FSYNC / "python-fsync-v2-pid.txt").read_text()
    lost = tmp_path / "fsync-a.txt"
    lost.write_text(text.replace("@sec_calls[fsync, 2]: 2\n", "@sec_calls[fsync, 2]: 1\n"))
    with pytest.raises(ParseError, match="fsync: the per-second figures do not add up"):
        parse_fsync(lost)


def test_window_in_monotonic_nanoseconds() -> None:
    recorded = window.window(0.25, 2, 10, clock_ns=5 * 10**9)
    assert window.monotonic_ns(recorded) == (7_250_000_000, 17_250_000_000)
    assert window.monotonic_ns(window.window(0.25, 2, 10)) is None


def test_a_shipped_run_from_before_the_window_parses_whole() -> None:
    from conftest import REPO
    from journalbench.formats.samples import parse_samples

    folder = sorted((REPO / "data" / "raw" / "arms20").glob("*/*"))[0]
    rows, sample_rows = parse_run(folder)
    raw = parse_samples(folder / runfolder.SAMPLES)
    assert {r["prep"] for r in rows} == {"overwrite"} and {r["warmup_s"] for r in rows} == {0}
    assert {(r["window_start_s"], r["window_end_s"]) for r in rows} == {(0.0, raw[-1].t)}
    assert len([r for r in sample_rows if r["kind"] != "ops"]) == len(raw)  # nothing trimmed


def test_only_a_campaign_that_names_a_claim_gets_a_ledger() -> None:
    assert plans.tests_claims("quick") and plans.tests_claims("arms20")
    assert not plans.tests_claims("fileprep")


def test_the_shipped_fileprep_table_has_every_condition(tmp_path: Path) -> None:
    """The table the fsync notebook shows, from the shipped fileprep runs: every device,
    neighbour and preparation, its runs counted; on the emulated HDD a high-fsync writer alone
    sits in the thesis's regime (10-25 ms per fsync, 8-20 fsync/s)."""
    from conftest import REPO
    from journalbench.report import views

    table = views.fileprep_table(tmp_path / "quick", REPO / "data" / "raw" / "quick")
    assert table is not None
    assert len(table) == 2 * 2 * 3 and set(table["runs"]) == {3}
    assert set(table["prep"]) == set(fio.PREPS)
    hdd_alone = table[(table["device_profile"] == "hdd") & (table["beside"] == "alone")]
    assert hdd_alone["victim fsync ms"].between(10, 25).all()
    assert hdd_alone["victim fsync/s"].between(8, 20).all()
    assert (table["jbd2 % of bytes"] > 0).all()
    assert views.fileprep_table(tmp_path / "x" / "y", tmp_path / "x" / "y") is None


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(not (guest_image.GUEST_DIR / guest_image.INFO).is_file(),
                    reason="no guest kernel: run `make guest`")
def test_a_vm_tenant_runs_fallocate_with_its_warmup(agent_host, tmp_path):
    """The same Fio module inside a guest: sizing from the guest's own file system, the ramp,
    and the file check after the run."""
    planned = {**spec("fallocate"), "arm": "vm"}
    out = run(planned, agent_host, tmp_path / "run")
    report = json.loads((out / fio.file_report("victim")).read_text())
    job = json.loads((out / fio_file("victim")).read_text())["jobs"][0]
    assert job["job options"]["ramp_time"] == "1" and job["write"]["io_bytes"] > 0
    assert report["filled"] is False
    assert job["write"]["io_bytes"] < report["written_bytes"] < report["size_bytes"]
    [row], _ = parse_run(out)
    assert row["prep"] == "fallocate" and row["warmup_s"] == 1 and row["guest_jbd2_bytes"] > 0
