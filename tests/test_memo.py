"""Tables made once per process while their files hold the same bytes (journalbench/judge/memo.py):
never stale, never changed by a caller."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from journalbench.judge import memo
from journalbench.report import views


@pytest.fixture(autouse=True)
def nothing_kept() -> None:
    memo.kept.clear()


def write(path: Path, value: float) -> None:
    pd.DataFrame({"run_id": ["r1", "r2"], "x": [value, 2.0]}).to_parquet(path, index=False)


def counting(path: Path, made: list[int]):
    def make() -> list[pd.DataFrame]:
        made.append(1)
        return [pd.read_parquet(path)]
    return make


def test_a_table_is_made_once_and_each_caller_gets_its_own(tmp_path: Path) -> None:
    path, made = tmp_path / "t.parquet", []
    write(path, 1.0)
    first, = memo.tables("t", [path], counting(path, made))
    first["x"] = 0.0  # a caller changing its frame, in place
    first.loc[0, "run_id"] = "changed"
    second, = memo.tables("t", [path], counting(path, made))
    assert len(made) == 1
    pd.testing.assert_frame_equal(second, pd.read_parquet(path))
    assert memo.tables("other", [path], counting(path, made))[0] is not second  # another kind
    assert len(made) == 2


def test_a_rewritten_file_is_read_anew_whatever_its_timestamps(tmp_path: Path) -> None:
    path, made = tmp_path / "t.parquet", []
    write(path, 1.0)
    stamp = path.stat()
    memo.tables("t", [path], counting(path, made))
    write(path, 3.0)  # same size, and the old timestamps put back
    assert path.stat().st_size == stamp.st_size
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    again, = memo.tables("t", [path], counting(path, made))
    assert len(made) == 2 and again["x"].tolist() == [3.0, 2.0]


def test_a_file_rewritten_while_read_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    write(path, 1.0)

    def rewritten() -> list[pd.DataFrame]:
        frame = pd.read_parquet(path)
        write(path, 5.0)
        return [frame]

    assert memo.tables("t", [path], rewritten)[0]["x"].tolist() == [1.0, 2.0]
    assert not memo.kept
    assert memo.tables("t", [path], lambda: [pd.read_parquet(path)])[0]["x"].tolist() == [5.0, 2.0]


def test_only_the_latest_sets_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "KEPT", 2)
    paths = [tmp_path / f"{i}.parquet" for i in range(3)]
    for i, path in enumerate(paths):
        write(path, float(i))
        memo.tables("t", [path], lambda path=path: [pd.read_parquet(path)])
    assert len(memo.kept) == 2
    assert [key[1] for key in memo.kept] == [memo.digest(p) for p in paths[1:]]


def test_views_load_reads_a_campaigns_new_tables(tmp_path: Path) -> None:
    """The notebooks' loader: a campaign's tables rewritten (tidy run again) are what the next
    notebook sees."""
    runs = pd.DataFrame({"campaign": ["c"], "run_id": ["r1"], "throughput_mb_s": [10.0]})
    samples = pd.DataFrame({"run_id": ["r1"], "t": [0], "bytes": [1]})
    experiments = pd.DataFrame({"campaign": ["c"], "run_id": ["r1"], "experiment": ["e"]})
    for name, table in (("runs", runs), ("samples", samples), ("experiments", experiments)):
        table.to_parquet(tmp_path / f"{name}.parquet", index=False)
    loaded = views.load(tmp_path, tmp_path / "raw")
    assert loaded[0]["throughput_mb_s"].tolist() == [10.0]
    runs.assign(throughput_mb_s=20.0).to_parquet(tmp_path / "runs.parquet", index=False)
    assert views.load(tmp_path, tmp_path / "raw")[0]["throughput_mb_s"].tolist() == [20.0]
