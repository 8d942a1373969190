"""`journalbench tidy` end to end: run folders -> parquet tables, shares, skips, the cache."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fixtures.assemble import MB, make_run, sample_lines, tenant
from pyarrow import feather

from conftest import REPO
from journalbench.cli import main as cli
from journalbench.errors import ConfigError
from journalbench.plan import experiments
from journalbench.runfolder import write_manifest
from journalbench.tidy import build as tidy
from journalbench.tidy import cache as rowcache
from journalbench.tidy import rows as parse_rows

A, B = "/journalbench/devbox/a", "/journalbench/devbox/b"
HIGH = {"tool": "fio", "preset": "high-fsync"}
NONE = {"tool": "fio", "preset": "no-fsync"}


def shared_journal(root: Path, repetition: int = 1, campaign: str | None = "assembled",
                   manifest: bool = True) -> Path:
    """a (70%) beside b (30%) on one ext4: the shared jbd2 sits in the root cgroup."""
    return make_run(
        root, "shared-journal", [tenant("a", 700, HIGH), tenant("b", 300, NONE)],
        {"fio-a.json": "fio/traced-fsync5-jsonplus.json",
         "fio-b.json": "fio/traced-nofsync-jsonplus.json"},
        sample_lines({"a": [6 * MB, 4 * MB], "b": [2 * MB, 3 * MB]}, {"a": 700, "b": 300},
                     {"a": A, "b": B},
                     [{"name": "jbd2/loop7-8", "tenant": None, "cgroup": "/",
                       "bytes": [1 * MB, 4 * MB]}]),
        repetition=repetition, campaign=campaign, manifest=manifest)


def journal_accounted(root: Path) -> Path:
    """Each tenant's jbd2 in its cgroup; a's is moved in only for the second interval."""
    return make_run(
        root, "journal-accounted", [tenant("a", 700, HIGH), tenant("b", 300, HIGH)],
        {"fio-a.json": "fio/traced-fsync5-jsonplus.json",
         "fio-b.json": "fio/seqwrite-fsync5-jsonplus.json"},
        sample_lines({"a": [6 * MB, 4 * MB], "b": [2 * MB, 3 * MB]}, {"a": 700, "b": 300},
                     {"a": A, "b": B},
                     [{"name": "jbd2/loop7p1-8", "tenant": "a", "cgroup": ["/", A],
                       "bytes": [1 * MB, 1 * MB]},
                      {"name": "jbd2/loop7p2-8", "tenant": "b", "cgroup": B,
                       "bytes": [MB // 2, MB // 2]}]))


def vm_alone(root: Path) -> Path:
    return make_run(
        root, "vm", [tenant("a", 100, {"tool": "fio", "preset": "seqwrite-64k"})],
        {"fio-a.json": "fio/two-jobs-normal-json.out", "guest-a.jsonl": "guest/guest-a.jsonl"},
        sample_lines({"a": [5 * MB, 5 * MB, 5 * MB]}, {"a": 100}, {"a": A}, []))


def databases(root: Path) -> Path:
    """sysbench traced by fsync.bt beside YCSB without a trace, per-container journals."""
    return make_run(
        root, "per-container-journal",
        [tenant("db", 700, {"tool": "sysbench"}), tenant("kv", 300, {"tool": "ycsb"})],
        {"sysbench-db.log": "sysbench/oltp_insert-t2-interval1-traced.log",
         "fsync-db.txt": "fsync/mariadbd-sysbench-pid.txt",
         "ycsb-kv.log": "ycsb/load-hdrhistogram-status.log"},
        sample_lines({"db": [3 * MB, 3 * MB], "kv": [MB, MB]}, {"db": 700, "kv": 300},
                     {"db": A, "kv": B},
                     [{"name": "jbd2/loop7p1-8", "tenant": "db", "cgroup": "/",
                       "bytes": [MB, MB]}]))


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def raw_fio(path: Path) -> dict:
    text = path.read_text()
    return json.JSONDecoder().raw_decode(text, text.index("{"))[0]


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    root = tmp_path / "raw"
    shared_journal(root)
    journal_accounted(root)
    vm_alone(root)
    databases(root)
    return root


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every folder read_run (tidy's reading of a run folder) is called on, in order."""
    calls: list[Path] = []
    real = parse_rows.read_run

    def counting(folder: Path) -> tuple[list, object]:
        calls.append(Path(folder))
        return real(folder)

    monkeypatch.setattr(parse_rows, "read_run", counting)
    return calls


def tables(out: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return tuple(pd.read_parquet(out / f"{name}.parquet")
                 for name in ("runs", "samples", "skipped"))


def test_shares_by_hand(raw: Path, tmp_path: Path) -> None:
    tidy.tidy(raw, tmp_path / "out")
    runs, _, skipped = tables(tmp_path / "out")
    assert skipped.empty
    row = runs.set_index(["arm", "tenant"]).loc

    # shared journal: cgroups a=10 MB, b=5 MB; shared jbd2 5 MB; total 20 MB
    assert row[("shared-journal", "a"), "achieved_share"] == pytest.approx(10 / 15)
    assert row[("shared-journal", "a"), "own_share"] == pytest.approx(10 / 20)
    assert row[("shared-journal", "a"), "jbd2_charged_share"] == pytest.approx(10 / 20)
    assert row[("shared-journal", "b"), "own_share"] == pytest.approx(5 / 20)
    assert row[("shared-journal", "b"), "shared_jbd2_share"] == pytest.approx(5 / 20)
    assert row[("shared-journal", "a"), "target_share"] == pytest.approx(0.7)
    assert row[("shared-journal", "a"), "beside"] == "no-fsync"
    assert row[("shared-journal", "b"), "beside"] == "high-fsync"

    # accounted: a's cgroup 10 MB holds its jbd2 (1 MB) only in second 2 -> own 9, jbd2 2;
    # b's cgroup 5 MB holds its jbd2 (1 MB) throughout -> own 4, jbd2 1; total 9+4+2+1 = 16
    assert row[("journal-accounted", "a"), "achieved_share"] == pytest.approx(10 / 15)
    assert row[("journal-accounted", "a"), "own_bytes"] == 9 * MB
    assert row[("journal-accounted", "a"), "jbd2_bytes"] == 2 * MB
    assert row[("journal-accounted", "a"), "own_share"] == pytest.approx(9 / 16)
    assert row[("journal-accounted", "a"), "jbd2_charged_share"] == pytest.approx(11 / 16)
    assert row[("journal-accounted", "b"), "jbd2_charged_share"] == pytest.approx(5 / 16)
    assert row[("journal-accounted", "b"), "shared_jbd2_share"] == 0

    # one VM alone: everything is its own
    vm = runs[runs.arm == "vm"].iloc[0]
    assert (vm.beside, vm.n_tenants, vm.virt_accel) == ("alone", 1, "kvm")
    assert vm.achieved_share == vm.own_share == vm.jbd2_charged_share == 1
    assert vm.disk_mb_s == pytest.approx(5.0)

    for _, group in runs.groupby("run_id"):
        assert group.achieved_share.sum() == pytest.approx(1)
        parts = group.own_share.sum() + group.jbd2_share.sum() + group.shared_jbd2_share.iloc[0]
        assert parts == pytest.approx(1)


def test_fio_figures_match_fios_json(raw: Path, tmp_path: Path) -> None:
    tidy.tidy(raw, tmp_path / "out")
    runs, _, _ = tables(tmp_path / "out")
    fio_rows = runs[runs.tool == "fio"]
    assert len(fio_rows) == 5
    for _, row in fio_rows.iterrows():
        folder = next(raw.rglob(row.run_id))
        jobs = raw_fio(folder / f"fio-{row.tenant}.json")["jobs"]
        directions = [job[d] for job in jobs for d in ("read", "write", "trim")]
        assert row.throughput_mb_s == pytest.approx(sum(d["bw_bytes"] for d in directions) / 1e6)
        assert row.iops == pytest.approx(sum(d["iops"] for d in directions))
        assert row.fsync_count == sum(job["sync"]["lat_ns"]["N"] for job in jobs)
        assert row.tool_version == "fio-3.33" and row.fsync_source == "fio"
        if row.fsync_count:
            (job,) = jobs
            lat = job["sync"]["lat_ns"]
            assert row.fsync_lat_mean_ms == pytest.approx(lat["mean"] / 1e6)
            assert row.fsync_lat_p50_ms == pytest.approx(lat["percentile"]["50.000000"] / 1e6)
            assert row.fsync_lat_p99_ms == pytest.approx(lat["percentile"]["99.000000"] / 1e6)
            assert row.fsync_per_s == pytest.approx(lat["N"] / (job["job_runtime"] / 1000))
        else:
            # no fsync: latency is not applicable, and must not read as 0 ms
            assert pd.isna(row.fsync_lat_mean_ms) and pd.isna(row.fsync_lat_p99_ms)


def test_database_tenants(raw: Path, tmp_path: Path) -> None:
    tidy.tidy(raw, tmp_path / "out")
    runs, _, _ = tables(tmp_path / "out")
    db = runs[runs.tenant == "db"].iloc[0]
    assert (db.tool, db.workload, db.ops_s, db.failed_ops) == ("sysbench", "sysbench", 5450.03, 0)
    assert db.fsync_source == "bpftrace" and db.fsync_count == 16245
    assert db.fsync_lat_mean_ms == pytest.approx(1028151799 / 16245 / 1e6)
    assert pd.isna(db.throughput_mb_s) and pd.isna(db.preset) and pd.isna(db.bs)
    kv = runs[runs.tenant == "kv"].iloc[0]
    assert kv.ops_s == pytest.approx(996.6777408637873) and kv.tool_runtime_s == 3.01
    # no fsync trace for kv: every fsync column says "not traced", none says 0
    assert pd.isna(kv.fsync_source) and pd.isna(kv.fsync_count) and pd.isna(kv.fsync_per_s)
    # db's jbd2 stays in the root cgroup: it is db's journal, not charged by its cgroup
    assert db.jbd2_bytes == 2 * MB and db.own_bytes == db.cgroup_bytes == 6 * MB
    assert db.jbd2_charged_share == pytest.approx(8 / 10)


def test_bfq_setting_is_a_column(raw: Path, tmp_path: Path) -> None:
    """As each run read BFQ's tunables back (a campaign may vary them)."""
    tidy.tidy(raw, tmp_path / "out")
    runs, _, _ = tables(tmp_path / "out")
    assert set(runs["bfq"]) == {"strict_guarantees=1 slice_idle_us=8000 low_latency=1"}


def test_io_control_is_a_column(raw: Path, tmp_path: Path) -> None:
    """As the run recorded it; a run made before the record was under BFQ."""
    recorded = next(raw.rglob("vm-*"))
    edit_json(recorded / "host.json", lambda h: h.update(io_control={"name": "other"}))
    write_manifest(recorded)
    tidy.tidy(raw, tmp_path / "out")
    runs, _, _ = tables(tmp_path / "out")
    assert dict(zip(runs["arm"], runs["io_control"], strict=True)) == {
        "vm": "other", "shared-journal": "bfq", "journal-accounted": "bfq",
        "per-container-journal": "bfq"}


def test_samples_table(raw: Path, tmp_path: Path) -> None:
    tidy.tidy(raw, tmp_path / "out")
    runs, samples, _ = tables(tmp_path / "out")
    run_id = runs[runs.arm == "journal-accounted"].run_id.iloc[0]
    run = samples[samples.run_id == run_id].set_index(["t", "source"])
    assert len(run) == 2 * 5  # 2 seconds x (2 tenants, 2 jbd2, 1 device)
    # second 1: a's jbd2 still in the root cgroup -> not subtracted; second 2: subtracted
    assert run.loc[(1.0, "a"), "own_bytes"] == 6 * MB
    assert run.loc[(2.0, "a"), "own_bytes"] == 3 * MB
    assert run.loc[(1.0, "jbd2/loop7p1-8"), "tenant"] == "a"
    assert run.loc[(1.0, "jbd2/loop7p1-8"), "cgroup"] == "/"
    # device second 1: a 6 + b 2 + a's jbd2 outside any tenant cgroup 1 = 9 MB
    assert run.loc[(1.0, "a"), "device_share"] == pytest.approx(6 / 9)
    assert run.loc[(1.0, "loop7"), "device_share"] == 1
    assert pd.isna(run.loc[(1.0, "loop7"), "own_bytes"])
    assert run.loc[(2.0, "b"), "mb_s"] == pytest.approx(3.0)
    assert set(samples.kind) == {"tenant", "jbd2", "device", "ops"}
    ops = samples[samples.kind == "ops"]  # YCSB's status lines: the databases run's kv tenant
    assert set(ops.tenant) == {"kv"} and ops.bytes.isna().all()
    assert ops.ops.sum() == 3000 - 52  # between the first status line (52 done) and the last


def test_interrupted_and_unusable_runs_are_listed(raw: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Skipped, one line each, and the other runs tidied: a measurement interrupted in its
    .partial folder (a resumed campaign runs it again) and a run whose file does not parse."""
    interrupted = shared_journal(raw, repetition=2, manifest=False)
    interrupted = interrupted.rename(interrupted.with_name(interrupted.name + ".partial"))
    truncated = shared_journal(raw, repetition=4)
    text = (truncated / "fio-a.json").read_text()
    (truncated / "fio-a.json").write_text(text[: len(text) // 2])
    write_manifest(truncated)  # a complete folder whose fio output is cut: unusable

    assert cli.main(["tidy", str(raw), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    skipped_lines = [line for line in err if " run skipped: " in line]
    assert len(skipped_lines) == 2
    # each named by campaign and run id, its file relative to its folder, no machine path
    named = f"assembled {interrupted.name.removesuffix('.partial')}"
    assert any(f"{named}" in line and "an interrupted measurement" in line
               for line in skipped_lines), skipped_lines
    assert any(re.search(rf"assembled {truncated.name} \(host \S+\): fio-a.json:\d+: "
                         "truncated", line) for line in skipped_lines), skipped_lines
    assert not any(str(raw) in line for line in skipped_lines), skipped_lines
    runs, _, skipped = tables(tmp_path / "out")
    assert runs.run_id.nunique() == 4
    assert sorted(skipped.status) == ["incomplete", "unusable"]
    assert truncated.name not in set(runs.run_id)


def damage_by_flipping_a_byte(folder: Path) -> None:
    data = bytearray((folder / "io-samples.jsonl").read_bytes())
    data[len(data) // 2] ^= 0x01
    (folder / "io-samples.jsonl").write_bytes(data)


@pytest.mark.parametrize(("damage", "why"), [
    (lambda f: (f / "MANIFEST.json").unlink(), "no MANIFEST.json"),
    (damage_by_flipping_a_byte, "io-samples.jsonl: sha256 does not match MANIFEST.json"),
    (lambda f: (f / "spec.json").unlink(), "spec.json: listed in MANIFEST.json but missing"),
    (lambda f: (f / "stray.txt").write_text("x"), "stray.txt: not listed in MANIFEST.json"),
])
def test_a_damaged_run_folder_stops_tidy_naming_it(raw: Path, tmp_path: Path, damage, why: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One line names the folder, why, and how to restore it; the command fails; only
    skipped.parquet is written (status damaged), and the tables of an earlier tidy are gone,
    so nothing downstream reads tables that silently lack the run."""
    out = tmp_path / "out"
    assert cli.main(["tidy", str(raw), "--out", str(out)]) == 0
    folder = shared_journal(raw, repetition=2)
    damage(folder)
    capsys.readouterr()

    assert cli.main(["tidy", str(raw), "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    line = (f"tidy: damaged run folder {folder}: {why}; `git checkout -- {folder}` restores a "
            "shipped run (a run measured here and never shipped: delete the folder and its "
            "campaign measures it again)")
    assert line in err
    assert err[-1] == ("journalbench: error: stopped the analysis: 1 damaged run folder(s), "
                       "each named above with how to restore it (status damaged in "
                       "skipped.parquet)")
    skipped = pd.read_parquet(out / "skipped.parquet")
    assert skipped.to_dict("records") == [
        {"folder": str(folder), "status": "damaged", "reason": line.removeprefix("tidy: ")}]
    assert sorted(p.name for p in out.glob("*.parquet")) == ["skipped.parquet"]


def test_a_damaged_run_of_another_campaign_stops_tidy_too(raw: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """`--also` campaigns are tidied in the same process: each is tidied, and a damaged run
    of any stops the command after all were, every one named."""
    other = tmp_path / "other"
    damaged = shared_journal(other, campaign=None)
    (damaged / "MANIFEST.json").unlink()
    assert cli.main(["tidy", str(raw), "--out", str(tmp_path / "out"), "--also", str(other),
                     str(tmp_path / "other-out"), str(tmp_path / "none.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"tidy: damaged run folder {damaged}: no MANIFEST.json;" in err
    assert (tmp_path / "out" / "runs.parquet").is_file()
    assert not (tmp_path / "other-out" / "runs.parquet").exists()


@pytest.mark.parametrize(("damage", "words"), [
    (lambda f: (f / "io-samples.jsonl").write_text('{"t": 1.0'), "io-samples.jsonl:1:"),
    (lambda f: (f / "host.json").write_text('{"hostname": "x"}'), "virt_accel"),
    (lambda f: (f / "fio-b.json").unlink(), "fio-b.json: file not found"),
    (lambda f: edit_json(f / "host.json", lambda h: h["bfq"].pop("low_latency")),
     "host.json: no 'bfq.low_latency'"),
    (lambda f: edit_json(f / "host.json", lambda h: h.update(io_control={"name": 1})),
     "host.json: 'io_control.name' is 1, not str"),
])
def test_damaged_run_is_unusable(tmp_path: Path, damage, words: str) -> None:
    folder = shared_journal(tmp_path / "raw")
    damage(folder)
    write_manifest(folder)
    outcome = tidy.tidy(tmp_path / "raw", tmp_path / "out")
    (skipped,) = outcome.skipped
    assert skipped["status"] == "unusable" and words in skipped["reason"]
    assert outcome.rows["runs"] == 0


def test_incremental_parses_only_new_runs(raw: Path, tmp_path: Path,
                                          parses: list[Path]) -> None:
    out = tmp_path / "out"
    first = tidy.tidy(raw, out)
    assert len(parses) == len(first.parsed) == 4
    before = pd.read_parquet(out / "runs.parquet")
    written = {t: (out / f"{t}.parquet").read_bytes() for t in ("runs", "samples")}

    again = tidy.tidy(raw, out)
    assert len(parses) == 4 and len(again.cached) == 4 and not again.parsed
    pd.testing.assert_frame_equal(pd.read_parquet(out / "runs.parquet"), before)
    # the same bytes from the cache as from the run folders (no write id of the cache's)
    assert {t: (out / f"{t}.parquet").read_bytes() for t in written} == written

    new = shared_journal(raw, repetition=2)
    third = tidy.tidy(raw, out)
    assert parses[4:] == [new] and third.parsed == [new]
    assert pd.read_parquet(out / "runs.parquet").run_id.nunique() == 5


def test_unusable_run_is_not_parsed_again(tmp_path: Path, parses: list[Path]) -> None:
    folder = shared_journal(tmp_path / "raw")
    (folder / "fio-a.json").write_text("fio: no such file\n")
    write_manifest(folder)
    first = tidy.tidy(tmp_path / "raw", tmp_path / "out")
    second = tidy.tidy(tmp_path / "raw", tmp_path / "out")
    assert len(parses) == 1
    assert first.skipped == second.skipped


def test_changed_or_removed_run_leaves_the_cache(raw: Path, tmp_path: Path,
                                                 parses: list[Path]) -> None:
    out = tmp_path / "out"
    tidy.tidy(raw, out)
    vm = next(p.parent for p in raw.rglob("spec.json") if p.parent.name.startswith("vm-"))
    (vm / "run.log").write_text("rewritten\n")
    write_manifest(vm)  # a new manifest: the run's cached rows no longer apply
    tidy.tidy(raw, out)
    assert parses[4:] == [vm]
    for table in ("runs", "samples"):  # the run's rows once, of its new manifest
        cached = feather.read_table(out / "cache" / f"{table}.arrow").to_pandas()
        mine = cached[cached["cache_folder"].str.endswith(vm.name)]
        assert not mine.empty and set(mine["cache_key"]) == {tidy.cache_key(vm)}
    assert len(set(cached["cache_key"])) == 4

    shutil.rmtree(vm)
    tidy.tidy(raw, out)
    for table in ("runs", "samples"):
        cached = feather.read_table(out / "cache" / f"{table}.arrow").to_pandas()
        assert not cached["cache_folder"].str.endswith(vm.name).any()
    assert "vm" not in set(pd.read_parquet(out / "runs.parquet").arm)


def test_an_unchanged_cache_is_not_written_and_a_damaged_one_is_parsed_over(
        raw: Path, tmp_path: Path, parses: list[Path]) -> None:
    out = tmp_path / "out"
    tidy.tidy(raw, out)
    before = {t: pd.read_parquet(out / f"{t}.parquet") for t in ("runs", "samples")}
    files = sorted((out / "cache").iterdir())
    stamps = [f.stat().st_mtime_ns for f in files]
    assert len(tidy.tidy(raw, out).cached) == 4
    assert [f.stat().st_mtime_ns for f in files] == stamps  # nothing new: not rewritten
    # a write cut short between its files: samples of an older write than runs
    old = feather.read_table(out / "cache" / "samples.arrow")
    feather.write_feather(old.replace_schema_metadata({"write": "older"}),
                          out / "cache" / "samples.arrow", compression="uncompressed")
    third = tidy.tidy(raw, out)
    assert len(third.parsed) == 4 and len(parses) == 8
    (out / "cache" / "runs.arrow").write_text("not an Arrow file\n")
    older = out / "cache" / "devbox" / "vm-0123" / "0123.runs.arrow"  # an older tidy's layout
    older.parent.mkdir(parents=True)
    older.write_bytes(b"rows")
    assert len(tidy.tidy(raw, out).parsed) == 4
    assert sorted(p.name for p in (out / "cache").iterdir()) == [
        "runs.arrow", "samples.arrow", "unusable.json"]
    for table, frame in before.items():
        pd.testing.assert_frame_equal(pd.read_parquet(out / f"{table}.parquet"), frame)


def test_row_columns_must_be_the_schemas() -> None:
    columns = (("a", "string"), ("b", "int64"))
    assert rowcache.to_table([{"a": "x", "b": 1}], columns).num_rows == 1
    with pytest.raises(RuntimeError, match=r"extra \['c'\], missing \['b'\]"):
        rowcache.to_table([{"a": "x", "b": 1}, {"a": "y", "c": 2}], columns)
    with pytest.raises(RuntimeError, match=r"extra \[\], missing \['b'\]"):
        rowcache.to_table([{"a": "x"}], columns)


def test_run_made_by_hand_has_no_campaign(tmp_path: Path) -> None:
    folder = shared_journal(tmp_path / "raw", campaign=None)
    assert "campaign" not in json.loads((folder / "spec.json").read_text())
    tidy.tidy(tmp_path / "raw", tmp_path / "out")
    runs, samples, _ = tables(tmp_path / "out")
    assert len(runs) == 2 and runs.campaign.isna().all() and samples.campaign.isna().all()
    assert set(runs.host) == {"devbox"}


def test_spec_edited_after_the_run_is_unusable(tmp_path: Path) -> None:
    folder = shared_journal(tmp_path / "raw")
    spec = json.loads((folder / "spec.json").read_text())
    spec["tenants"][0]["weight"] = 900
    (folder / "spec.json").write_text(json.dumps(spec))
    write_manifest(folder)
    (skipped,) = tidy.tidy(tmp_path / "raw", tmp_path / "out").skipped
    assert skipped["reason"].startswith("spec.json: run_id ")  # relative to its folder


def test_empty_raw_dir_gives_empty_tables_with_schema(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()
    tidy.tidy(tmp_path / "raw", tmp_path / "out")
    runs, samples, skipped = tables(tmp_path / "out")
    assert runs.empty and list(runs.columns) == [name for name, _ in tidy.RUNS_COLUMNS]
    assert list(samples.columns) == [name for name, _ in tidy.SAMPLES_COLUMNS]


def test_missing_raw_dir_is_a_one_line_error(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tidy", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == 2
    expected = f"journalbench: error: {tmp_path / 'nope'}: no such directory\n"
    assert capsys.readouterr().err == expected


def test_schema_md_documents_every_column() -> None:
    text = (REPO / "data" / "SCHEMA.md").read_text()
    for table, columns in tidy.TABLES.items():
        section = text.split(f"## `{table}.parquet`")[1].split("\n## ")[0]
        documented = re.findall(r"^\| `([a-z0-9_]+)` \| (\w+) \|", section, re.MULTILINE)
        assert documented == list(columns), table


def test_tidy_module_imports_no_heavy_packages() -> None:
    # cli/main.py imports every command module at start-up, also inside the agent bundle
    code = ("import sys, journalbench.tidy.build, journalbench.cli.main; "
            "heavy = {'pandas', 'pyarrow', 'numpy', 'scipy'} & set(sys.modules); "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the agent's own run folders ------------------------------------------------------------

AGENT_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"


def check_agent_runs(raw: Path, out: Path) -> pd.DataFrame:
    """tidy on real run folders: nothing skipped, and every figure traceable to the files."""
    outcome = tidy.tidy(raw, out)
    assert not outcome.skipped, outcome.skipped
    runs, samples, _ = tables(out)
    assert len(runs) and len(samples)
    for _, row in runs.iterrows():
        folder = next(p.parent for p in raw.rglob("spec.json")
                      if json.loads(p.read_text())["run_id"] == row.run_id)
        lines = [json.loads(line) for line in (folder / "io-samples.jsonl").read_text().split("\n")
                 if line]
        mine = [s for s in lines if s["kind"] == "tenant" and s["source"] == row.tenant]
        assert row.cgroup_bytes == sum(s["read_bytes"] + s["write_bytes"] for s in mine)
        assert len(samples[samples.run_id == row.run_id]) == len(lines)
        if row.tool != "fio":
            continue
        jobs = raw_fio(folder / f"fio-{row.tenant}.json")["jobs"]
        directions = [job[d] for job in jobs for d in ("read", "write", "trim")]
        assert row.throughput_mb_s == pytest.approx(sum(d["bw_bytes"] for d in directions) / 1e6)
        assert row.iops == pytest.approx(sum(d["iops"] for d in directions))
        assert row.fsync_count == sum(job["sync"]["lat_ns"]["N"] for job in jobs)
        if len(jobs) == 1 and row.fsync_count:
            lat = jobs[0]["sync"]["lat_ns"]
            assert row.fsync_lat_mean_ms == pytest.approx(lat["mean"] / 1e6)
            assert row.fsync_lat_p50_ms == pytest.approx(lat["percentile"]["50.000000"] / 1e6)
            assert row.fsync_lat_p99_ms == pytest.approx(lat["percentile"]["99.000000"] / 1e6)
        # the cgroup saw the tenant's direct I/O: same order of magnitude as fio's own count
        # (catches sectors-vs-bytes or cumulative-vs-delta mistakes, not timing differences)
        if row.arm != "vm" and row.throughput_mb_s > 1:
            assert 0.5 < row.disk_mb_s / row.throughput_mb_s < 2, row.to_dict()
    return runs


@pytest.mark.skipif(not AGENT_RUNS.is_dir(), reason="no agent run folders in tests/fixtures/runs")
def test_agent_run_folders_match_their_files(tmp_path: Path) -> None:
    check_agent_runs(AGENT_RUNS, tmp_path / "out")


# -- experiments: which runs test which claim ---------------------------------------------------

CAMPAIGN = """\
name: assembled
description: the shared_journal() pair under three experiments
duration_s: 2
repetitions: 1
warmup_s: 0  # as the shared_journal() run had: no warm-up, a pre-written file
experiments:
  - id: pair
    claims: [C8, C9]
    arms: [shared-journal]
    prep: overwrite
    tenants: &pair
      - {name: a, weight: 700, workload: {tool: fio, preset: high-fsync}}
      - {name: b, weight: 300, workload: {tool: fio, preset: no-fsync}}
  - id: same-pair
    claims: [C17]
    arms: [shared-journal]
    prep: overwrite
    tenants: *pair
  - id: varied
    claims: [C1]
    arms: [shared-journal, per-container-journal]
    prep: overwrite
    vary: {other: [no-fsync, low-fsync]}
    tenants:
      - {name: a, weight: 700, workload: {tool: fio, preset: high-fsync}}
      - {name: b, weight: 300, workload: {tool: fio, preset: "{other}"}}
"""


def test_experiments_come_from_the_campaign_file(tmp_path: Path) -> None:
    from journalbench.judge.selection import runs_for

    run = shared_journal(tmp_path / "raw")
    campaign = tmp_path / "assembled.yaml"
    campaign.write_text(CAMPAIGN)
    out = tmp_path / "out"
    assert cli.main(["tidy", str(tmp_path / "raw"), "--out", str(out),
                     "--campaign", str(campaign)]) == 0
    runs = pd.read_parquet(out / "runs.parquet")
    plan = pd.read_parquet(out / "experiments.parquet")
    # every planned run is listed, measured or not: 1 + 1 + 2 conditions x 2 arms
    assert len(plan) == 6 and set(plan.campaign) == {"assembled"}
    mine = plan[plan.run_id == run.name].sort_values("experiment")
    # one run, three experiments: identical specs are one run
    assert list(mine.experiment) == ["pair", "same-pair", "varied"]
    assert list(mine.claims) == ["C8 C9", "C17", "C1"]
    assert mine.condition.isna().tolist() == [True, True, False]
    assert mine.condition.iloc[2] == "other=no-fsync"
    assert set(plan[plan.experiment == "varied"].condition) == {"other=no-fsync",
                                                                 "other=low-fsync"}
    assert (plan.repetition == 1).all()
    for claim in ("C8", "C9", "C17", "C1"):
        assert set(runs_for(runs, plan, claim=claim).run_id) == {run.name}
    assert runs_for(runs, plan, claim="C15").empty  # "C1" is not a prefix match
    assert len(runs_for(runs, plan, experiment="varied")) == 2  # two tenants, once each


def test_runs_of_a_campaign_without_a_file_belong_to_no_experiment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared_journal(tmp_path / "raw", campaign="no-such-campaign")
    tidy.tidy(tmp_path / "raw", tmp_path / "out")
    assert "no campaign file " in capsys.readouterr().err
    plan = pd.read_parquet(tmp_path / "out" / "experiments.parquet")
    assert plan.empty and list(plan.columns) == [name for name, _ in experiments.COLUMNS]


def test_a_bad_campaign_file_is_a_one_line_error(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    shared_journal(tmp_path / "raw")
    campaign = tmp_path / "assembled.yaml"
    campaign.write_text(CAMPAIGN.replace("    claims: [C17]\n", ""))
    assert cli.main(["tidy", str(tmp_path / "raw"), "--out", str(tmp_path / "out"),
                     "--campaign", str(campaign)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{campaign}: field experiments.1: 'claims'" in err


def test_a_campaign_file_of_another_campaign_is_refused(tmp_path: Path) -> None:
    campaign = tmp_path / "quick.yaml"
    campaign.write_text(CAMPAIGN)
    with pytest.raises(ConfigError, match=rf"^{campaign}: field name: is 'assembled', but"):
        tidy.plan_of("quick", campaign, tmp_path / "plans")


def test_shipped_runs_get_their_experiment(tmp_path: Path) -> None:
    # the default: workflow/campaigns/<name>.yaml; arms20 is one experiment claiming C17
    tidy.tidy(REPO / "data" / "raw" / "arms20", tmp_path / "out")
    runs, _, skipped = tables(tmp_path / "out")
    plan = pd.read_parquet(tmp_path / "out" / "experiments.parquet")
    assert skipped.empty
    assert set(plan.run_id) == set(runs.run_id) and len(plan) == 15
    assert set(zip(plan.experiment, plan.claims, strict=True)) == {("high-fsync-pair", "C17")}


def test_one_process_tidies_several_campaigns(tmp_path: Path) -> None:
    """`--also RAW OUT CAMPAIGN_FILE` (the pipeline's single tidy job): each campaign's tables
    land in its own folder, from its own runs and campaign file."""
    run = shared_journal(tmp_path / "raw")
    campaign = tmp_path / "assembled.yaml"
    campaign.write_text(CAMPAIGN)
    other = tmp_path / "other.yaml"
    other.write_text(CAMPAIGN.replace("name: assembled", "name: other"))
    assert "name: other" in other.read_text()
    assert cli.main(["tidy", str(tmp_path / "raw"), "--out", str(tmp_path / "a"),
                     "--campaign", str(campaign),
                     "--also", str(tmp_path / "raw"), str(tmp_path / "b"), str(other)]) == 0
    for out, name in ((tmp_path / "a", "assembled"), (tmp_path / "b", "other")):
        assert set(pd.read_parquet(out / "experiments.parquet").campaign) == {name}
        assert run.name in set(pd.read_parquet(out / "runs.parquet").run_id)


def shipped_kinds() -> list[Path]:
    """One shipped run of each arm and mix of tools (fio, MariaDB, Redis; a guest's report, a
    traced fsync): thesis-hdd has them all."""
    chosen: dict[tuple, Path] = {}
    for spec in sorted((REPO / "data" / "raw" / "thesis-hdd" / "local").glob("*/spec.json")):
        data = json.loads(spec.read_text())
        kind = (data["arm"], tuple(sorted(t["workload"]["tool"] for t in data["tenants"])))
        chosen.setdefault(kind, spec.parent)
    return list(chosen.values())


def test_each_file_of_a_run_folder_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """host.json, the samples and every tool's output are opened once however many tenants
    and columns need them (every read goes through Path.open)."""
    folders = shipped_kinds()
    assert len(folders) >= 10  # four arms, fio alone and beside each database
    opened: list[Path] = []
    real = Path.open

    def counting(self: Path, *args, **kwargs):
        opened.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting)
    for folder in folders:
        opened.clear()
        parse_rows.parse_run(folder)
        twice = {p.name for p in opened if opened.count(p) > 1}
        assert not twice, f"{folder.name}: read more than once: {sorted(twice)}"
        assert {p.name for p in opened} >= {"spec.json", "host.json", "io-samples.jsonl"}


def test_writeback_attribution_is_read_from_host_json_or_cgroup_v1() -> None:
    from journalbench.tidy import rows

    path = Path("run/host.json")
    assert rows.writeback_attributed({"writeback_attributed": True, "cgroup_version": 2},
                                     path) == 1
    assert rows.writeback_attributed({"writeback_attributed": False}, path) == 0
    assert rows.writeback_attributed({"cgroup_version": 1}, path) == 0  # before the record
    assert rows.writeback_attributed({"cgroup_version": 2}, path) is None  # unknown
    with pytest.raises(ConfigError, match="run/host.json: 'writeback_attributed' is 'yes'"):
        rows.writeback_attributed({"writeback_attributed": "yes"}, path)


def test_journal_wraps_are_the_journals_bytes_over_its_size() -> None:
    """dumpe2fs's header names the journal's size; a shared journal's bytes count for every
    tenant on it; a VM's guest journals inside its image (none); a size dumpe2fs would not
    print is a one-line error naming host.json's field."""
    host = {"layout": {"tenants": {"a": {"volume": "/dev/vda1"}, "b": {"volume": "/dev/vda2"}}},
            "file_systems": {"/dev/vda1": {"dumpe2fs": {"Total journal size": "64M"}},
                             "/dev/vda2": {"dumpe2fs": {"Journal size": "1024k"}}}}
    path = Path("host.json")
    assert parse_rows.journal_wraps(host, "a", 128 << 20, "shared-journal", path) == 2.0
    assert parse_rows.journal_wraps(host, "b", 512 << 10, "journal-cgroup", path) == 0.5
    assert parse_rows.journal_wraps(host, "a", 128 << 20, "vm", path) is None
    assert parse_rows.journal_wraps({}, "a", 1, "shared-journal", path) is None
    host["file_systems"]["/dev/vda1"]["dumpe2fs"]["Total journal size"] = "lots"
    with pytest.raises(parse_rows.ParseError, match=r"host.json: file_systems./dev/vda1: "
                                                    r"journal size 'lots'"):
        parse_rows.journal_wraps(host, "a", 1, "shared-journal", path)


def commits_beyond_the_cgroup(root: Path, charged: int, journal: int,
                              repetition: int = 1) -> Path:
    """A journal-accounted pair whose neighbour b writes nothing its cgroup is charged for but
    its journal's commits: its cgroup counter counts `charged` bytes a second of the `journal`
    its jbd2 thread queues (thesis-nested's cgroup v1 runs: 12 of each 16 KiB commit); a
    writes 6 MB a second."""
    return make_run(
        root, "journal-accounted", [tenant("a", 700, HIGH), tenant("b", 300, NONE)],
        {"fio-a.json": "fio/traced-fsync5-jsonplus.json",
         "fio-b.json": "fio/traced-nofsync-jsonplus.json"},
        sample_lines({"a": [6 * MB, 6 * MB, 6 * MB], "b": [charged] * 3},
                     {"a": 700, "b": 300}, {"a": A, "b": B},
                     [{"name": "jbd2/loop7p2-8", "tenant": "b", "cgroup": B,
                       "bytes": [journal] * 3}]),
        repetition=repetition)


def test_counters_apart_by_what_sampling_explains_are_noted_not_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """12 KiB of each 16 KiB commit in b's cgroup: 12 KiB short over the run, far within the
    6 MB the device moves in a second: kept, b's own bytes 0, the run noted. A gap of 7 MB a
    second is beyond what one interval explains: unusable, listed, named by its run id."""
    root = tmp_path / "raw"
    noted = commits_beyond_the_cgroup(root, 12288, 16384)
    broken = commits_beyond_the_cgroup(root, 0, 7 * MB, repetition=2)
    assert cli.main(["tidy", str(root), "--out", str(tmp_path / "out")]) == 0
    runs, _, skipped = tables(tmp_path / "out")
    kept = runs[runs["run_id"] == noted.name].set_index("tenant")
    assert kept.loc["b", "own_bytes"] == 0
    assert "exceed the cgroup's own by 12,288 B, within the " in kept.loc["b", "counter_note"]
    assert pd.isna(kept.loc["a", "counter_note"])
    assert skipped["status"].tolist() == ["unusable"]
    reason = skipped["reason"].iloc[0]
    assert reason.startswith("io-samples.jsonl: tenant 'b': jbd2 bytes in its cgroup exceed "
                             "the cgroup's own by "), reason
    assert "more than the " in reason and "busiest 1 s sampling interval" in reason
    err = capsys.readouterr().err
    assert f"unusable run skipped: assembled {broken.name} (host " in err
    assert str(root) not in err


def test_a_skipped_run_is_listed_in_the_ledger(tmp_path: Path) -> None:
    """The ledger names the run tidy left out (by campaign and run id, with why) and the run
    kept with a note: no run dropped in silence."""
    root = tmp_path / "raw"
    shared_journal(root)
    noted = commits_beyond_the_cgroup(root, 12288, 16384)
    broken = commits_beyond_the_cgroup(root, 0, 7 * MB, repetition=2)
    processed = tmp_path / "processed" / "assembled"
    assert cli.main(["tidy", str(root), "--out", str(processed)]) == 0
    assert cli.main(["claims", str(processed), "--results", str(tmp_path / "results")]) == 0
    for ledger in ("claims.md", "assembled/claims.md"):
        text = (tmp_path / "results" / ledger).read_text()
        left = text.split("## Runs left out", 1)[1].split("\n## ", 1)[0]
        assert f"- assembled `{broken.name}`: unusable: io-samples.jsonl: tenant 'b'" in left
        assert f"- assembled `{noted.name}`: tenant 'b': jbd2 bytes" in left
        assert str(tmp_path) not in left
