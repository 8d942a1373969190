"""Pure functions of the agent: counters, trace lines, fio command lines, run ids."""

from __future__ import annotations

import pytest

from journalbench import runfolder
from journalbench.agent.iocounters import IoCounters, parse_v1_stat, parse_v2_stat
from journalbench.agent.journals import TRACE_LINE
from journalbench.agent.workloads import fio

V1 = """7:0 Read 4096
7:0 Write 1048576
7:0 Sync 1048576
7:0 Async 4096
7:0 Total 1052672
8:0 Write 99
Total 1052672
"""


def test_v1_stat_picks_the_device():
    assert parse_v1_stat(V1, "7:0") == {"Read": 4096, "Write": 1048576}
    assert parse_v1_stat(V1, "8:0") == {"Read": 0, "Write": 99}
    assert parse_v1_stat(V1, "9:0") == {"Read": 0, "Write": 0}


def test_v2_stat_picks_the_device():
    text = ("8:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n"
            "7:0 rbytes=5 wbytes=6 rios=7 wios=8")
    assert parse_v2_stat(text, "7:0") == IoCounters(5, 6, 7, 8)
    assert parse_v2_stat(text, "1:0") == IoCounters()


def test_counters_subtract():
    assert IoCounters(10, 20, 3, 4) - IoCounters(1, 2, 3, 4) == IoCounters(9, 18, 0, 0)


@pytest.mark.parametrize(
    ("line", "rwbs", "sectors", "comm"),
    [
        ("  jbd2/loop0p1-8-8159  [001] ..... 1234.567890: block_bio_queue: 7,0 WS 2048 + 8 "
         "[jbd2/loop0p1-8]", "WS", "8", "jbd2/loop0p1-8"),
        ("jbd2/sda1-8-77 [000] d..1. 9.1: block_bio_queue: 8,0 FWFS 0 + 0 [jbd2/sda1-8]",
         "FWFS", "0", "jbd2/sda1-8"),
    ],
)
def test_trace_line(line, rwbs, sectors, comm):
    match = TRACE_LINE.search(line)
    assert (match["rwbs"], match["sectors"], match["comm"]) == (rwbs, sectors, comm)


def test_fsync_presets_follow_the_thesis():
    def fsync_of(preset: str) -> list[str]:
        args = fio.run_command("t", "/mnt", {"tool": "fio", "preset": preset}, 30)
        return [a for a in args if a.startswith("--fsync")]

    assert fsync_of("no-fsync") == []
    assert fsync_of("low-fsync") == ["--fsync=20"]
    assert fsync_of("high-fsync") == ["--fsync=5"]


def test_block_size_override_for_c4():
    args = fio.run_command("t", "/mnt", {"tool": "fio", "preset": "no-fsync", "bs": "16k"}, 30)
    assert "--bs=16k" in args and "--direct=1" in args and "--runtime=30" in args


def test_run_id_is_stable_and_depends_on_repetition():
    spec = {"arm": "shared-journal", "duration_s": 30, "repetition": 1, "tenants": []}
    assert runfolder.run_id(spec) == runfolder.run_id(dict(spec, campaign="x", host="y"))
    assert runfolder.run_id(spec) != runfolder.run_id(dict(spec, repetition=2))
    assert runfolder.run_id(spec).startswith("shared-journal-")


def test_manifest_detects_tampering(tmp_path):
    (tmp_path / "a.txt").write_text("1")
    runfolder.write_manifest(tmp_path)
    assert runfolder.is_complete(tmp_path)
    (tmp_path / "a.txt").write_text("2")
    assert "sha256 does not match" in runfolder.manifest_problems(tmp_path)[0]
    (tmp_path / "b.txt").write_text("new")
    assert any("not listed" in p for p in runfolder.manifest_problems(tmp_path))


def test_manifest_covers_files_in_subfolders(tmp_path):
    (tmp_path / "guest").mkdir()
    (tmp_path / "guest" / "fio.json").write_text("{}")
    (tmp_path / "a.txt").write_text("1")
    runfolder.write_manifest(tmp_path)
    assert sorted(runfolder.files_below(tmp_path)) == ["MANIFEST.json", "a.txt", "guest/fio.json"]
    assert runfolder.is_complete(tmp_path)
    (tmp_path / "guest" / "extra.log").write_text("x")
    assert runfolder.manifest_problems(tmp_path) == [
        f"{tmp_path / 'guest' / 'extra.log'}: not listed in MANIFEST.json"]
    (tmp_path / "guest" / "extra.log").unlink()
    (tmp_path / "guest" / "fio.json").unlink()
    assert "listed in MANIFEST.json but missing" in runfolder.manifest_problems(tmp_path)[0]
