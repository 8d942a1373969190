"""The VM guest's own report (guest-<tenant>.jsonl), on real reports of the agent's guests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journalbench.formats import ParseError
from journalbench.formats.guest import SATURATED, parse_guest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "guest"


def lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]


def test_real_report_sums_and_means() -> None:
    rows = lines("guest-victim.jsonl")
    report = parse_guest(FIXTURES / "guest-victim.jsonl", "victim")
    assert report.seconds == len(rows)
    assert report.vcpu_busy_mean == pytest.approx(sum(r["vcpu_busy"] for r in rows) / len(rows))
    assert report.jbd2_bytes == sum(r["jbd2_write_bytes"] for r in rows) > 0
    assert report.disk_bytes > report.jbd2_bytes
    assert not report.cpu_bound


def test_an_interval_without_a_tick_counts_bytes_not_busy() -> None:
    """A real report of a TCG guest whose sampling stalled 3.4 s, then caught up with
    intervals of 14 and 3 ms in which no tick elapsed (vcpu_busy null)."""
    rows = lines("guest-neighbour-stalled.jsonl")
    ticked = [r["vcpu_busy"] for r in rows if r["vcpu_busy"] is not None]
    assert 0 < len(ticked) < len(rows)
    report = parse_guest(FIXTURES / "guest-neighbour-stalled.jsonl", "neighbour")
    assert report.seconds == len(rows)
    assert report.vcpu_busy_mean == pytest.approx(sum(ticked) / len(ticked))
    assert report.disk_bytes == sum(r["disk_read_bytes"] + r["disk_write_bytes"] for r in rows)


def every_second_busy(tmp_path: Path, busy: float | None) -> Path:
    """guest-a.jsonl with every second's vcpu_busy set to `busy`."""
    rows = [{**row, "vcpu_busy": busy} for row in lines("guest-a.jsonl")]
    path = tmp_path / "guest-a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_report_without_any_tick_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="no interval with a vCPU tick"):
        parse_guest(every_second_busy(tmp_path, None), "a")


def test_a_saturated_vcpu_marks_the_tenant_cpu_bound(tmp_path: Path) -> None:
    report = parse_guest(every_second_busy(tmp_path, SATURATED), "a")
    assert report.saturated_share == 1 and report.cpu_bound


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.update(vcpu_busy=1.5), "'vcpu_busy' not a fraction"),
    (lambda r: r.pop("vcpu_busy"), "'vcpu_busy' missing"),
    (lambda r: r.pop("jbd2_write_bytes"), "'jbd2_write_bytes' missing"),
    (lambda r: r.update(tenant="b"), "'tenant' is 'b', not 'a'"),
])
def test_bad_lines_name_file_and_line(tmp_path: Path, edit, message: str) -> None:
    rows = lines("guest-a.jsonl")
    edit(rows[1])
    path = tmp_path / "guest-a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ParseError, match=f"{path}:2: {message}"):
        parse_guest(path, "a")


def test_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "guest-a.jsonl"
    path.write_text((FIXTURES / "guest-a.jsonl").read_text()[:-20])
    with pytest.raises(ParseError, match="not a JSON object"):
        parse_guest(path, "a")


def test_only_seconds_inside_the_measured_window_count() -> None:
    rows = lines("guest-victim.jsonl")
    # the report started 0.5 s before the workloads, which started at 2.0 s on the sampler's
    # clock, so a report second ending at t ends at t + 1.5 there; the window is 2 s long
    start = rows[1]["t"] + 1.5 - 0.1
    report = parse_guest(FIXTURES / "guest-victim.jsonl", "victim", (start, start + 2), 1.5)
    kept = [r for r in rows if start <= r["t"] + 1.5 - r["dt"] / 2 <= start + 2]
    assert report.seconds == len(kept) == 2
    assert report.jbd2_bytes == sum(r["jbd2_write_bytes"] for r in kept)


def test_a_window_the_report_misses_is_an_error() -> None:
    with pytest.raises(ParseError, match="no second inside the measured window"):
        parse_guest(FIXTURES / "guest-victim.jsonl", "victim", (100.0, 110.0), 0.0)


def with_uptime(tmp_path: Path, start: float) -> tuple[Path, list[dict]]:
    """The real report with the guest's /proc/uptime on each line (recorded since
    2026-11-29), its first reading at `start`."""
    rows = lines("guest-victim.jsonl")
    for row in rows:
        row["uptime"] = round(start + row["t"], 2)
    path = tmp_path / "guest-victim.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path, rows


def test_a_mariadb_clients_run_bounds_the_seconds_on_the_guests_uptime(tmp_path: Path) -> None:
    """A MariaDB client's run (its counters' uptime lines) picks the report's seconds on the
    guest's own clock, whatever the measured window says: its counters' snapshots lie outside
    it."""
    path, rows = with_uptime(tmp_path, 100.0)
    phase = (rows[1]["uptime"] - 0.2, rows[3]["uptime"] + 0.1)
    kept = [r for r in rows if phase[0] <= r["uptime"] - r["dt"] / 2 <= phase[1]]
    report = parse_guest(path, "victim", (0.0, 1e9), 0.0, client_phase=phase)
    assert report.seconds == len(kept) == 2  # the seconds ending at rows 2 and 3
    assert report.vcpu_busy_mean == pytest.approx(sum(r["vcpu_busy"] for r in kept) / 2)
    with pytest.raises(ParseError, match=r"no second inside the client's run"):
        parse_guest(path, "victim", client_phase=(1.0, 2.0))
    # a report without uptime (made before it was recorded) keeps the measured window
    old = parse_guest(FIXTURES / "guest-victim.jsonl", "victim", client_phase=phase)
    assert old.seconds == len(rows)


def test_an_uptime_that_is_not_a_number_is_named(tmp_path: Path) -> None:
    path, rows = with_uptime(tmp_path, 5.0)
    rows[2]["uptime"] = "soon"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(ParseError, match=r"guest-victim.jsonl:3: 'uptime' not a non-negative"):
        parse_guest(path, "victim")
