"""io-samples.jsonl parser: the format of data/README.md, line by line.

The lines here are written by the test to exercise each documented field and each way a line
can be wrong; real sampler output from the agent's run folders is parsed in test_tidy.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.checks import assert_names_file

from journalbench.formats import ParseError, read_text
from journalbench.formats.samples import by_line, parse_samples, typed

COUNTS = {"read_bytes": 0, "write_bytes": 65536, "read_ios": 0, "write_ios": 1}
TENANT = {"t": 1.001, "dt": 1.001, "kind": "tenant", "source": "a", **COUNTS,
          "cgroup": "/journalbench/local/a", "weight": 700}
JBD2 = {"t": 1.001, "dt": 1.001, "kind": "jbd2", "source": "jbd2/loop0p1-8", **COUNTS,
        "tenant": None, "cgroup": "/", "pid": 812}
DEVICE = {"t": 1.001, "dt": 1.001, "kind": "device", "source": "loop0", **COUNTS,
          "device": "/dev/loop0"}


def write(tmp_path: Path, rows: list[object], tail: str = "\n") -> Path:
    path = tmp_path / "io-samples.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + tail)
    return path


def test_every_kind(tmp_path: Path) -> None:
    rows = [TENANT, {**JBD2, "tenant": "a", "cgroup": "/journalbench/local/a"}, DEVICE]
    tenant, jbd2, device = parse_samples(write(tmp_path, rows))
    assert (tenant.kind, tenant.source, tenant.weight, tenant.cgroup) == (
        "tenant", "a", 700, "/journalbench/local/a")
    assert tenant.bytes == 65536 and tenant.tenant is None and tenant.pid is None
    assert (jbd2.tenant, jbd2.pid, jbd2.cgroup, jbd2.weight) == (
        "a", 812, "/journalbench/local/a", None)
    assert (device.device, device.cgroup, device.weight) == ("/dev/loop0", None, None)


def test_shared_journal_has_null_tenant(tmp_path: Path) -> None:
    (jbd2,) = parse_samples(write(tmp_path, [JBD2]))
    assert jbd2.tenant is None and jbd2.cgroup == "/"


def test_no_trailing_newline_is_fine(tmp_path: Path) -> None:
    assert len(parse_samples(write(tmp_path, [TENANT, DEVICE], tail=""))) == 2


BAD = [
    ("truncated last line", [TENANT, json.dumps(DEVICE)[:30]], 2, "not a JSON object"),
    ("blank line", [TENANT, "", DEVICE], 2, "not a JSON object"),
    ("a list", [TENANT, [1, 2]], 2, "not a JSON object"),
    ("no t", [{k: v for k, v in TENANT.items() if k != "t"}], 1, "'t'"),
    ("unknown kind", [TENANT, {**DEVICE, "kind": "disk"}], 2, "'kind'"),
    ("negative delta", [TENANT, TENANT, {**TENANT, "write_bytes": -4096}], 3, "'write_bytes'"),
    ("float count", [{**TENANT, "read_ios": 1.5}], 1, "'read_ios'"),
    ("bool count", [{**TENANT, "read_ios": True}], 1, "'read_ios'"),
    ("tenant without weight", [{k: v for k, v in TENANT.items() if k != "weight"}], 1,
     "weight"),
    ("tenant zero weight", [{**TENANT, "weight": 0}], 1, "weight"),
    ("jbd2 without tenant", [{k: v for k, v in JBD2.items() if k != "tenant"}], 1, "'tenant'"),
    ("jbd2 without pid", [DEVICE, {k: v for k, v in JBD2.items() if k != "pid"}], 2, "'pid'"),
    ("device without device", [{k: v for k, v in DEVICE.items() if k != "device"}], 1,
     "'device'"),
    ("empty source", [{**TENANT, "source": ""}], 1, "'source'"),
    ("requests without the other times", [{**TENANT, "requests": 3}], 1, "'inflight_ns' missing"),
    ("a time as null", [{**TENANT, "requests": None, "time_ns": 5, "inflight_ns": 5}], 1,
     "'requests'"),
    ("a wait without the times", [{**DEVICE, "wait_ns": 5}], 1, "'wait_ns' without"),
    ("a vrate on a tenant line", [{**TENANT, "cost_vrate_pct": 50.0}], 1, "cost_vrate_pct"),
    ("a NaN", [TENANT, json.dumps(TENANT).replace("1.001", "NaN", 1)], 2, "'t'"),
]


@pytest.mark.parametrize(("rows", "line", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_line_names_file_and_line(tmp_path: Path, rows: list[object], line: int,
                                      words: str) -> None:
    path = write(tmp_path, rows)
    with pytest.raises(ParseError) as error:
        parse_samples(path)
    assert words in assert_names_file(error, path, line)


@pytest.mark.parametrize(("rows", "line", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_the_typed_decoding_refuses_every_bad_line(tmp_path: Path, rows: list[object], line: int,
                                                   words: str) -> None:
    """A file the typed decoding takes is not read line by line: it must refuse what
    check_line refuses, or a bad line would pass unnamed."""
    assert typed(read_text(write(tmp_path, rows))) is None


TIMED = {"requests": 4, "time_ns": 2_000_000, "inflight_ns": 3_000_000, "wait_ns": 500_000}
COSTS = {"cost_usage_us": 10, "cost_wait_us": 0, "cost_indebt_us": 0, "cost_indelay_us": 7}
GOOD = [
    ("every kind", [TENANT, JBD2, DEVICE]),
    ("device time and iocost", [{**TENANT, **TIMED, **COSTS}, {**JBD2, **TIMED, **COSTS},
                                {**DEVICE, **TIMED, **COSTS, "cost_vrate_pct": 93.5}]),
    ("integer seconds and vrate", [{**TENANT, "t": 2, "dt": 1},
                                   {**DEVICE, "t": 2, "dt": 1, "cost_vrate_pct": 100}]),
    ("times without a wait", [{**TENANT, **{k: v for k, v in TIMED.items() if k != "wait_ns"}}]),
    ("spaces around a line", ["  " + json.dumps(TENANT) + " ", DEVICE]),
]
# lines check_line takes that the structs refuse: read line by line, to the same samples
TAKEN_LINE_BY_LINE = [
    ("an unknown field", [{**TENANT, "note": "x"}]),
    ("another kind's field", [{**TENANT, "tenant": "a", "pid": 3}, {**DEVICE, "cgroup": "/"}]),
    ("a weight on a jbd2 line", [{**JBD2, "weight": 100}]),
    ("an infinite time (JSON's Infinity: json takes it)", [{**TENANT, "t": float("inf")}]),
]


@pytest.mark.parametrize("rows", [g[1] for g in GOOD], ids=[g[0] for g in GOOD])
def test_the_typed_decoding_gives_what_check_line_gives(tmp_path: Path,
                                                        rows: list[object]) -> None:
    path = write(tmp_path, rows)
    found = typed(read_text(path))
    assert found is not None
    assert_same(found, by_line(path))


@pytest.mark.parametrize("rows", [g[1] for g in TAKEN_LINE_BY_LINE],
                         ids=[g[0] for g in TAKEN_LINE_BY_LINE])
def test_lines_the_structs_refuse_are_read_line_by_line(tmp_path: Path,
                                                        rows: list[object]) -> None:
    path = write(tmp_path, rows)
    assert typed(read_text(path)) is None
    assert_same(parse_samples(path), by_line(path))
    assert len(parse_samples(path)) == len(rows)


def assert_same(found: list, expected: list) -> None:
    """The same samples, each field of the same type (an int where the line had one)."""
    assert found == expected
    assert [[type(v) for v in s] for s in found] == [[type(v) for v in s] for s in expected]


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "io-samples.jsonl"
    path.write_text("")
    with pytest.raises(ParseError) as error:
        parse_samples(path)
    assert "empty" in assert_names_file(error, path)


def test_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "io-samples.jsonl"
    path.write_text("fio-3.33\nStarting 2 processes\n")
    with pytest.raises(ParseError) as error:
        parse_samples(path)
    assert "not a JSON object" in assert_names_file(error, path, 1)


AGENT_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"
AGENT_SAMPLES = sorted(AGENT_RUNS.rglob("io-samples.jsonl")) if AGENT_RUNS.is_dir() else []


@pytest.mark.skipif(not AGENT_SAMPLES, reason="no agent run folders in tests/fixtures/runs")
@pytest.mark.parametrize("path", AGENT_SAMPLES, ids=lambda p: p.parent.name)
def test_agent_sampler_output(path: Path) -> None:
    lines = path.read_text().splitlines()
    samples = parse_samples(path)
    assert len(samples) == len(lines)
    assert typed(read_text(path)) is not None  # the sampler's lines decode typed
    assert_same(samples, by_line(path))
    spec = json.loads((path.parent / "spec.json").read_text())
    tenants = {t["name"]: t["weight"] for t in spec["tenants"]}
    assert {s.source: s.weight for s in samples if s.kind == "tenant"} == tenants
    assert {s.kind for s in samples} >= {"tenant", "device"}
    # one line per source per interval, all lines of an interval stamped with the same t
    per_interval: dict[float, int] = {}
    for sample in samples:
        per_interval[sample.t] = per_interval.get(sample.t, 0) + 1
    assert len(set(per_interval.values())) == 1
    if spec["arm"] == "vm":
        assert not any(s.kind == "jbd2" for s in samples)  # guest journals are inside the VM
    elif spec["arm"] == "shared-journal":
        assert all(s.tenant is None for s in samples if s.kind == "jbd2")
    else:
        assert {s.tenant for s in samples if s.kind == "jbd2"} == set(tenants)
