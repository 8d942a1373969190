"""The shipped run folders are data: every file in data/raw is committed as 100644 (never
executable), and a run lands so, whatever mode its tools created their outputs with."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

from conftest import REPO
from journalbench.control import dispatch
from journalbench.runfolder import write_manifest


def test_every_raw_file_is_committed_as_plain_data() -> None:
    listed = subprocess.run(["git", "ls-files", "-s", "data/raw"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.splitlines()
    assert listed, "no run folder committed"
    modes = [line.split(None, 1)[0] for line in listed]
    wrong = [line.split("\t", 1)[1] for line, mode in zip(listed, modes, strict=True)
             if mode != "100644"]
    assert not wrong, f"{len(wrong)} raw files not 100644, e.g. {wrong[:3]}"


def test_a_run_lands_with_plain_modes(tmp_path: Path) -> None:
    partial = tmp_path / "vm-0123456789ab.partial"
    partial.mkdir()
    (partial / "spec.json").write_text("{}")
    (partial / "fio-a.json").write_text("{}")
    (partial / "fio-a.json").chmod(0o755)  # as fio left it
    write_manifest(partial)
    final = tmp_path / "vm-0123456789ab"
    dispatch.land(partial, final)
    for path in final.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path.name
