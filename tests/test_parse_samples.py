"""io-samples.jsonl parser: the format of data/README.md, line by line.

The lines here are written by the test to exercise each documented field and each way a line
can be wrong; real sampler output from the agent's run folders is parsed in test_tidy.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.checks import assert_names_file

from journalbench.formats import ParseError
from journalbench.formats.samples import parse_samples

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
]


@pytest.mark.parametrize(("rows", "line", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_line_names_file_and_line(tmp_path: Path, rows: list[object], line: int,
                                      words: str) -> None:
    path = write(tmp_path, rows)
    with pytest.raises(ParseError) as error:
        parse_samples(path)
    assert words in assert_names_file(error, path, line)


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
