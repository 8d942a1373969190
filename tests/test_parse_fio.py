"""fio JSON parser on real fio 3.33 outputs (json, json+, normal+json, several jobs)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from fixtures.checks import FIXTURES, assert_names_file, truncated_copy

from journalbench.formats import ParseError, percentile_of_counts
from journalbench.formats.fio import FioResult, extract_object, parse_fio, summarise, whole_object

FIO = FIXTURES / "fio"
SEQWRITE = FIO / "seqwrite-fsync5-jsonplus.json"
TWO_JOBS = FIO / "two-jobs-normal-json.out"
FDATASYNC = FIO / "fdatasync20-note-json.out"
TRACED = FIO / "traced-fsync5-jsonplus.json"
NOFSYNC = FIO / "traced-nofsync-jsonplus.json"


def raw_job(path: Path, index: int = 0) -> dict:
    """The job straight from the file, read without the parser, to check the parser against."""
    text = path.read_text()
    start = text.index("\n{") + 1 if not text.startswith("{") else 0
    return json.JSONDecoder().raw_decode(text, start)[0]["jobs"][index]


@pytest.mark.parametrize("path", sorted(FIO.iterdir()), ids=lambda p: p.name)
def test_every_fixture_parses_and_matches_its_own_json(path: Path) -> None:
    result = parse_fio(path)
    assert result.version == "fio-3.33"
    for index, job in enumerate(result.jobs):
        raw = raw_job(path, index)
        assert job.name == raw["jobname"]
        assert job.write.io_bytes == raw["write"]["io_bytes"]
        assert job.read.bw_bytes == raw["read"]["bw_bytes"]
        assert job.runtime_ms == raw["job_runtime"]


@pytest.mark.parametrize("path", sorted(FIO.iterdir()), ids=lambda p: p.name)
def test_a_whole_json_file_decodes_as_json_would(path: Path) -> None:
    """A file that is fio's JSON alone is decoded by msgspec (whole_object), others by json's
    scan; both ways give json's own object, and a value json alone reads (NaN) goes its way."""
    text = path.read_text()
    start = 0 if text.startswith("{") else text.index("\n{") + 1
    assert extract_object(text, path) == json.JSONDecoder().raw_decode(text, start)[0]
    assert (whole_object(text) is not None) == text.startswith("{")
    with_nan = text.replace('"latency_target" : 0', '"latency_target" : NaN', 1)
    assert with_nan != text and whole_object(with_nan) is None
    assert extract_object(with_nan, path)["jobs"][0]["latency_target"] != 0


def test_jsonplus_fsync_job() -> None:
    summary = summarise(parse_fio(SEQWRITE))
    assert summary.fsync_count == 25  # 8 MiB / 64 KiB = 128 writes, an fsync every 5
    assert summary.fsync_mean_ns == pytest.approx(126541.52)
    assert (summary.fsync_p50_ns, summary.fsync_p99_ns) == (116224, 292864)
    assert summary.io_bytes == 8 * 1024 * 1024
    assert summary.bs == "64k"


def test_bins_rule_reproduces_fios_own_percentiles() -> None:
    # the rule used to merge bins of several jobs must be fio's: check it on every percentile
    for path in (SEQWRITE, TRACED):
        lat = raw_job(path)["sync"]["lat_ns"]
        bins = [(int(v), c) for v, c in lat["bins"].items()]
        for percent, value in lat["percentile"].items():
            assert percentile_of_counts(bins, float(percent)) == value, (path.name, percent)


def test_text_before_and_after_the_json_two_jobs() -> None:
    result = parse_fio(TWO_JOBS)
    assert [job.name for job in result.jobs] == ["rr", "rw"]
    summary = summarise(result)
    rr, rw = raw_job(TWO_JOBS, 0), raw_job(TWO_JOBS, 1)
    assert summary.bw_bytes == rr["read"]["bw_bytes"] + rw["write"]["bw_bytes"]
    assert summary.iops == pytest.approx(rr["read"]["iops"] + rw["write"]["iops"])
    assert summary.fsync_count == 0 and summary.fsync_mean_ns is None
    assert summarise(result, ["rw"]).bw_bytes == rw["write"]["bw_bytes"]


def test_fdatasync_counted_from_latency_samples() -> None:
    raw = raw_job(FDATASYNC)["sync"]
    assert raw["total_ios"] == 0 and raw["lat_ns"]["N"] == 3  # fio's own quirk
    summary = summarise(parse_fio(FDATASYNC))
    assert summary.fsync_count == 3
    assert summary.fsync_mean_ns == pytest.approx(raw["lat_ns"]["mean"])


def test_no_fsync_gives_none_not_zero_latency() -> None:
    raw = raw_job(NOFSYNC)["sync"]["lat_ns"]
    assert raw["mean"] == 0.0  # what fio prints; a table must not take it for a latency
    summary = summarise(parse_fio(NOFSYNC))
    assert summary.fsync_count == 0
    assert summary.fsync_mean_ns is None and summary.fsync_p99_ns is None
    assert summary.fsync_per_s == 0.0


def test_several_syncing_jobs_merge_their_bins() -> None:
    a, b = parse_fio(SEQWRITE).jobs[0], parse_fio(TRACED).jobs[0]
    summary = summarise(FioResult("two.json", "fio-3.33", [a, b]))
    assert summary.fsync_count == a.sync.count + b.sync.count
    merged = list(a.sync.bins.items()) + list(b.sync.bins.items())
    assert summary.fsync_p99_ns == percentile_of_counts(merged, 99)
    expected_mean = (a.sync.mean_ns * a.sync.count + b.sync.mean_ns * b.sync.count) / (
        a.sync.count + b.sync.count)
    assert summary.fsync_mean_ns == pytest.approx(expected_mean)


def test_several_syncing_jobs_without_bins_refused() -> None:
    job = parse_fio(FDATASYNC).jobs[0]
    with pytest.raises(ParseError) as error:
        summarise(FioResult("plain.json", "fio-3.33", [job, dataclasses.replace(job, name="x")]))
    assert "json+" in assert_names_file(error, Path("plain.json"))


def test_truncated_json_names_file_and_line(tmp_path: Path) -> None:
    path = truncated_copy(SEQWRITE, tmp_path / "fio-a.json")
    with pytest.raises(ParseError) as error:
        parse_fio(path)
    lines = path.read_text().count("\n") + 1
    message = assert_names_file(error, path, lines)
    assert "truncated" in message


@pytest.mark.parametrize("foreign", ["sysbench/oltp_insert-t1-interval1.log",
                                     "fsync/fio-fsync5-pid.txt"])
def test_foreign_file(tmp_path: Path, foreign: str) -> None:
    with pytest.raises(ParseError) as error:
        parse_fio(FIXTURES / foreign)
    assert "no fio JSON" in assert_names_file(error, FIXTURES / foreign)


def test_json_that_is_not_fio(tmp_path: Path) -> None:
    path = tmp_path / "fio-a.json"
    path.write_text('{"fio version": "fio-2.2.10", "jobs": []}\n')
    with pytest.raises(ParseError) as error:
        parse_fio(path)
    assert "fio 3.x" in assert_names_file(error, path)


@pytest.mark.parametrize("content", [b"", b"\n  \n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fio-a.json"
    path.write_bytes(content)
    with pytest.raises(ParseError) as error:
        parse_fio(path)
    assert "empty" in assert_names_file(error, path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as error:
        parse_fio(tmp_path / "fio-a.json")
    assert "not found" in assert_names_file(error, tmp_path / "fio-a.json")


def test_failed_job_refused(tmp_path: Path) -> None:
    data = json.loads(SEQWRITE.read_text())
    data["jobs"][0]["error"] = 28  # ENOSPC, as fio reports a full disk
    path = tmp_path / "fio-a.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ParseError) as error:
        parse_fio(path)
    assert "error 28" in assert_names_file(error, path)


def test_missing_number_refused(tmp_path: Path) -> None:
    data = json.loads(SEQWRITE.read_text())
    del data["jobs"][0]["write"]["bw_bytes"]
    path = tmp_path / "fio-a.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ParseError) as error:
        parse_fio(path)
    assert "write.bw_bytes" in assert_names_file(error, path)
