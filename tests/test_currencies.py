"""Disk shares in requests and device time: the pure parts (sampler's reading of devtime.bt,
the parser's sums, jbd2's share per condition). The agent's real tracer is run in
test_devtime.py."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from journalbench.agent.sampler import (
    DEVTIME_MAPS,
    DeviceTime,
    io_subsys_index,
    kernel_devnum,
    parse_owner,
    read_devtime_line,
)
from journalbench.formats import ParseError
from journalbench.formats.samples import parse_samples
from journalbench.report import views
from journalbench.tidy import currencies
from journalbench.tidy import rows as rows_of
from journalbench.tidy import samples as tidy_samples
from journalbench.tidy.rows import parse_run

REPO = Path(__file__).resolve().parent.parent
MS = 1_000_000  # ns


# -- the sampler's side ------------------------------------------------------------------------

# lines as bpftrace 0.17 printed them for devtime.bt on this machine (shortened maps): a map
# with nothing in it prints nothing, a tick ends each batch
OUTPUT = [
    '{"type": "printf", "data": "journalbench-devtime 2\\n"}',
    '{"type": "printf", "data": "journalbench-devtime tick\\n"}',
    '{"type": "map", "data": {"@requests": {"0,1": 3, "0,31341": 50, "6801,1": 54}}}',
    '{"type": "map", "data": {"@time_ns": {"0,1": 119398, "0,31341": 10720997, '
    '"6801,1": 21559625}}}',
    '{"type": "map", "data": {"@inflight_ns": {"0,1": 425508, "0,31341": 10736543, '
    '"6801,1": 21587926}}}',
    '{"type": "map", "data": {"@wait_ns": {"0,31341": 5520811, "6801,1": 1280444}}}',
    '{"type": "printf", "data": "journalbench-devtime tick\\n"}',
]


def empty() -> dict[str, dict[str, int]]:
    return {name: {} for name in DEVTIME_MAPS}


def test_devtime_output_is_read_batch_by_batch() -> None:
    batch: dict[str, dict[str, int]] = {}
    maps = empty()
    kinds = [read_devtime_line(line, batch, maps) for line in OUTPUT[:6]]
    assert kinds == ["header", "tick", None, None, None, None]
    assert maps == empty()  # a batch counts once its tick is read
    assert read_devtime_line(OUTPUT[6], batch, maps) == "tick"
    assert maps["@requests"] == {"0,1": 3, "0,31341": 50, "6801,1": 54}
    assert maps["@time_ns"]["6801,1"] == 21559625
    assert maps["@inflight_ns"]["0,31341"] == 10736543
    assert maps["@wait_ns"] == {"0,31341": 5520811, "6801,1": 1280444}
    # each batch replaces the last (totals are cumulative); a map it did not print is empty
    read_devtime_line('{"type": "map", "data": {"@requests": {"0,1": 4}}}', batch, maps)
    read_devtime_line(OUTPUT[6], batch, maps)
    assert maps == {**empty(), "@requests": {"0,1": 4}}


@pytest.mark.parametrize("line", ["Attaching 9 probes...", "", "[1, 2]", '{"type": "map"}',
                                  '{"type": "map", "data": {"@other": {"0,1": 1}}}',
                                  '{"type": "printf", "data": "something else\\n"}'])
def test_devtime_noise_changes_nothing(line: str) -> None:
    batch: dict[str, dict[str, int]] = {}
    maps = empty()
    assert read_devtime_line(line, batch, maps) is None
    assert read_devtime_line(OUTPUT[6], batch, maps) == "tick"
    assert maps == empty()


def test_owner_keys_and_device_numbers() -> None:
    assert parse_owner("6801,1") == (6801, 1)
    assert parse_owner("0,31341") == (0, 31341)
    assert kernel_devnum("7:1") == 7 << 20 | 1
    assert kernel_devnum("259:12") == 259 << 20 | 12


def test_io_subsys_index_is_the_blkio_row_of_proc_cgroups() -> None:
    rows = [line.split()[0] for line in Path("/proc/cgroups").read_text().splitlines()
            if not line.startswith("#")]
    assert rows[io_subsys_index()] == "blkio"


def test_device_time_adds_and_subtracts() -> None:
    a, b = DeviceTime(3, 30, 40), DeviceTime(1, 10, 15)
    assert a + b == DeviceTime(4, 40, 55)
    assert a - b == DeviceTime(2, 20, 25)
    assert DeviceTime() + a == a


# -- the parser's sums -------------------------------------------------------------------------

def line(t: float, kind: str, source: str, requests: int | None, time_ns: int | None,
         **extra: object) -> dict[str, object]:
    row: dict[str, object] = {"t": t, "dt": 1.0, "kind": kind, "source": source,
                              "read_bytes": 0, "write_bytes": 4096, "read_ios": 0,
                              "write_ios": 1, **extra}
    if requests is not None:
        row.update(requests=requests, time_ns=time_ns, inflight_ns=2 * (time_ns or 0))
    return row


def accounted(traced: bool = True) -> list[dict[str, object]]:
    """Two seconds of a journal-accounted pair: a's cgroup (100 requests, 100 ms a second)
    holds its jbd2 thread (20, 30 ms); b's (50, 50 ms) holds its own idle one; the root's
    flusher adds 10 requests and 10 ms on the device."""
    rows = []
    for t in (1.0, 2.0):
        def cut(requests: int, ms: int) -> tuple[int | None, int | None]:
            return (requests, ms * MS) if traced else (None, None)
        rows += [
            line(t, "tenant", "a", *cut(100, 100), cgroup="/jb/h/a", weight=700),
            line(t, "tenant", "b", *cut(50, 50), cgroup="/jb/h/b", weight=300),
            line(t, "jbd2", "jbd2/loop0p1-8", *cut(20, 30), tenant="a", cgroup="/jb/h/a",
                 pid=11),
            line(t, "jbd2", "jbd2/loop0p2-8", *cut(0, 0), tenant="b", cgroup="/jb/h/b",
                 pid=12),
            line(t, "device", "loop0", *cut(160, 160), device="/dev/loop0"),
        ]
    return rows


def samples_of(tmp_path: Path, rows: list[dict[str, object]]) -> list:
    path = tmp_path / "io-samples.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return parse_samples(path)


def sample_columns(samples: list) -> list[dict[str, object]]:
    """The currencies' columns of every line of the samples table (tidy/samples.py)."""
    ids = {"campaign": "c", "host": "h", "run_id": "r", "arm": "journal-accounted"}
    return [{name: row[name] for name in currencies.SAMPLE_COLUMNS}
            for row in tidy_samples.rows(tidy_samples.RunSamples(ids, samples))]


def test_journal_in_the_tenants_cgroup_is_told_apart(tmp_path: Path) -> None:
    columns = currencies.run_columns(tmp_path, samples_of(tmp_path, accounted()), ["a", "b"])
    a, b = columns["a"], columns["b"]
    # requests: own a 2*80, jbd2 a 2*20, own b 2*50 -> total 300
    assert (a["own_requests"], a["jbd2_requests"], b["own_requests"]) == (160, 40, 100)
    assert a["own_requests_share"] == pytest.approx(160 / 300)
    assert a["jbd2_requests_share"] == pytest.approx(40 / 300)
    assert b["jbd2_requests_share"] == 0
    # time: own a 2*70 ms, jbd2 a 2*30 ms, own b 2*50 ms -> total 300 ms
    assert a["own_time_s"] == pytest.approx(0.14) and a["jbd2_time_s"] == pytest.approx(0.06)
    assert a["own_time_share"] == pytest.approx(140 / 300)
    assert a["jbd2_time_share"] == pytest.approx(60 / 300)
    assert a["achieved_time_share"] == pytest.approx(200 / 300)  # its journal is charged to it
    assert a["other_time_share"] == pytest.approx(20 / 320)  # the flusher's 10 ms a second
    for currency in ("requests", "time"):
        parts = sum(columns[t][f"{kind}_{currency}_share"] for t in "ab"
                    for kind in ("own", "jbd2")) + a[f"shared_jbd2_{currency}_share"]
        assert parts == pytest.approx(1)


def test_shared_journal_is_nobodys(tmp_path: Path) -> None:
    rows = [line(1.0, "tenant", "a", 10, 10 * MS, cgroup="/jb/h/a", weight=700),
            line(1.0, "jbd2", "jbd2/loop0-8", 5, 30 * MS, tenant=None, cgroup="/", pid=11),
            line(1.0, "device", "loop0", 15, 40 * MS, device="/dev/loop0")]
    a = currencies.run_columns(tmp_path, samples_of(tmp_path, rows), ["a"])["a"]
    assert a["shared_jbd2_time_share"] == pytest.approx(0.75)
    assert a["own_time_share"] == pytest.approx(0.25)
    assert a["shared_jbd2_requests_share"] == pytest.approx(5 / 15)
    assert a["jbd2_time_share"] == 0 and a["other_time_share"] == 0


def test_scheduler_wait_per_request_of_tenant_and_journal(tmp_path: Path) -> None:
    rows = accounted()
    waits = {"a": 200, "b": 50, "jbd2/loop0p1-8": 120, "jbd2/loop0p2-8": 0, "loop0": 250}
    rows = [{**row, "wait_ns": waits[str(row["source"])] * MS} for row in rows]
    columns = currencies.run_columns(tmp_path, samples_of(tmp_path, rows), ["a", "b"])
    # a's own: 2 * (200 - 120) ms over 160 requests; its journal's 2 * 120 ms over 40
    assert columns["a"]["own_wait_ms"] == pytest.approx(1.0)
    assert columns["a"]["jbd2_wait_ms"] == pytest.approx(6.0)
    assert columns["b"]["own_wait_ms"] == pytest.approx(1.0)
    assert columns["b"]["jbd2_wait_ms"] is None  # its journal issued no request
    assert columns["a"]["shared_jbd2_wait_ms"] is None  # no shared journal
    sample_rows = sample_columns(samples_of(tmp_path, rows))
    assert [row["wait_s"] for row in sample_rows[:5]] == pytest.approx([0.2, 0.05, 0.12, 0,
                                                                        0.25])
    # a run sampled before the wait was: the columns are null, the rest as before
    before = currencies.run_columns(tmp_path, samples_of(tmp_path, accounted()), ["a", "b"])
    assert before["a"]["own_wait_ms"] is None and before["a"]["own_requests"] == 160


def test_a_wait_without_requests_is_refused(tmp_path: Path) -> None:
    rows = accounted(traced=False)
    rows[0] = {**rows[0], "wait_ns": MS}
    with pytest.raises(ParseError, match="'wait_ns' without 'requests'"):
        samples_of(tmp_path, rows)


def test_runs_sampled_before_have_no_requests_or_time(tmp_path: Path) -> None:
    samples = samples_of(tmp_path, accounted(traced=False))
    columns = currencies.run_columns(tmp_path, samples, ["a", "b"])
    assert set(columns["a"]) == {*currencies.RUN_COLUMNS, "counter_note"}
    assert all(value is None for value in columns["a"].values())
    assert all(set(row) == set(currencies.SAMPLE_COLUMNS) and not any(row.values())
               for row in sample_columns(samples))


def test_sample_columns_per_interval(tmp_path: Path) -> None:
    rows = sample_columns(samples_of(tmp_path, accounted()))
    a, b, jbd2, idle, device = rows[:5]
    assert (a["requests"], a["own_requests"]) == (100, 80)
    assert a["own_time_s"] == pytest.approx(0.07)
    assert a["time_share"] == pytest.approx(100 / 160)
    assert jbd2["own_time_s"] is None and jbd2["time_share"] == pytest.approx(30 / 160)
    assert device["time_share"] == 1 and idle["time_s"] == 0


def test_journal_time_beyond_its_cgroups_is_inconsistent(tmp_path: Path) -> None:
    rows = accounted()
    rows[2] = {**rows[2], "time_ns": 500 * MS}  # more than a's cgroup was charged
    with pytest.raises(ParseError, match="tenant 'a'"):
        currencies.run_columns(tmp_path, samples_of(tmp_path, rows), ["a", "b"])


def test_bytes_requests_and_time_sum_to_the_whole_run(tmp_path: Path) -> None:
    """The one pass over the lines gives each currency's sums of the docstring: a's own is
    its cgroup's less the jbd2 thread in it; b's jbd2 sits in b's cgroup but did nothing."""
    found = currencies.summed(samples_of(tmp_path, accounted()), ["a", "b"])
    assert found["bytes"].cgroup == {"a": 8192, "b": 8192}
    assert found["bytes"].own == {"a": 0, "b": 0} and found["bytes"].device == 8192
    assert found["requests"].cgroup == {"a": 200, "b": 100}
    assert found["requests"].own == {"a": 160, "b": 100}
    assert found["requests"].jbd2 == {"a": 40, "b": 0} and found["requests"].shared == 0
    assert found["time"].own == {"a": 140 * MS, "b": 100 * MS}
    assert found["time"].device == 320 * MS and found["wait"].device == 0
    assert found["time"].device_lines == [(160.0 * MS, 1.0), (160.0 * MS, 1.0)]


BAD_SHARES = [
    ("a tenant the spec does not name", lambda rows: [{**rows[0], "source": "c"}, *rows[1:]],
     "samples of tenant 'c', not in spec.json"),
    ("a journal of a tenant the spec does not name",
     lambda rows: [*rows[:2], {**rows[2], "tenant": "c"}, *rows[3:]],
     "jbd2 jbd2/loop0p1-8 journals tenant 'c', not in spec.json"),
    ("no line of a tenant", lambda rows: [r for r in rows if r["source"] != "b"],
     "no samples of tenant 'b'"),
    ("no I/O at all", lambda rows: [{**r, "write_bytes": 0} for r in rows],
     "no tenant or journal I/O in the whole run"),
]


@pytest.mark.parametrize(("cut", "words"), [b[1:] for b in BAD_SHARES],
                         ids=[b[0] for b in BAD_SHARES])
def test_shares_refuse_lines_the_spec_does_not_explain(tmp_path: Path, cut, words) -> None:
    samples = samples_of(tmp_path, cut(accounted()))
    with pytest.raises(ParseError, match=words):
        rows_of.share_columns(tmp_path / "io-samples.jsonl", samples, ["a", "b"])


def test_a_shipped_run_parses_with_the_new_currencies_null() -> None:
    shipped = sorted((REPO / "data" / "raw").rglob("io-samples.jsonl"))
    if not shipped:
        pytest.skip("no shipped runs under data/raw")
    runs, samples = parse_run(shipped[0].parent)
    assert all(row[column] is None for row in runs for column in currencies.RUN_COLUMNS)
    assert all(row[column] is None for row in samples for column in currencies.SAMPLE_COLUMNS)
    assert all(row["own_share"] is not None for row in runs)  # the byte shares as before


# -- jbd2's share per condition ------------------------------------------------------------------

def run_rows(run_id: str, beside: str, arm: str, jbd2: tuple[float, float, float],
             shared: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> list[dict[str, object]]:
    """A pair's two tenant rows: the victim's journal has the shares `jbd2` (bytes, requests,
    time), the neighbour's half as much."""
    rows = []
    for tenant, part in (("victim", 1.0), ("neighbour", 0.5)):
        rows.append({"campaign": "c", "host": "h", "run_id": run_id, "tenant": tenant, "arm": arm,
                     "beside": beside if tenant == "victim" else "high-fsync",
                     "device_profile": "hdd",
                     **{own: part * value for (own, _), value
                        in zip(views.JBD2_SHARE.values(), jbd2, strict=True)},
                     **{column: value for (_, column), value
                        in zip(views.JBD2_SHARE.values(), shared, strict=True)}})
    return rows


def test_jbd2_share_per_condition_in_each_currency() -> None:
    runs = pd.DataFrame(
        run_rows("r1", "no-fsync", "per-container-journal", (0.02, 0.04, 0.10))
        + run_rows("r2", "no-fsync", "per-container-journal", (0.04, 0.06, 0.12))
        + run_rows("r3", "high-fsync", "shared-journal", (0, 0, 0), shared=(0.05, 0.2, 0.3)))
    per_run = views.jbd2_run_shares(runs).set_index("run_id")
    assert per_run.loc["r1", "bytes"] == pytest.approx(0.03)  # both journals
    assert per_run.loc["r1", "time"] == pytest.approx(0.15)
    assert per_run.loc["r3", "requests"] == pytest.approx(0.2)  # the shared one
    shares = views.jbd2_shares(runs)
    assert list(shares.columns) == ["host", "device_profile", "arm", "beside", "currency",
                                    "median", "low", "high", "n"]
    table = shares.set_index(["arm", "beside", "currency"])
    assert table.loc[("per-container-journal", "no-fsync", "time"), "median"] == \
        pytest.approx(0.165)
    assert table.loc[("per-container-journal", "no-fsync", "time"), "n"] == 2
    assert table.loc[("shared-journal", "high-fsync", "bytes"), "median"] == pytest.approx(0.05)


def test_jbd2_share_is_nan_where_a_run_lacks_the_currency() -> None:
    rows = run_rows("old", "no-fsync", "shared-journal", (0.0, 0.0, 0.0), shared=(0.03, 0, 0))
    for row in rows:
        row["jbd2_time_share"] = row["shared_jbd2_time_share"] = float("nan")
    per_run = views.jbd2_run_shares(pd.DataFrame(rows)).iloc[0]
    assert per_run["bytes"] == pytest.approx(0.03) and pd.isna(per_run["time"])
