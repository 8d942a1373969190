"""The reference a campaign's landed runs were checked against
(journalbench.control.reference), read from their host.json; the command itself runs on a real
host in test_devices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from journalbench import runfolder
from journalbench.control import reference
from journalbench.errors import ConfigError

REF = {"measured_at": "2026-11-22T13:55:07Z", "write_fsync_per_s": 118.4,
       "seq_write_mb_s": 6.95, "high_fsync_ms": 22.3}
FILE = "/var/lib/journalbench/calibration/local-hdd-420f93080b37.json"


def landed(folder: Path, calibration: dict[str, Any] | None, complete: bool = True) -> Path:
    folder.mkdir(parents=True)
    facts = {"host": "local"} if calibration is None else {"calibration": calibration}
    (folder / runfolder.HOST).write_text(json.dumps(facts))
    if complete:
        runfolder.write_manifest(folder)
    return folder


def test_the_runs_one_reference_per_file(tmp_path: Path) -> None:
    landed(tmp_path / "a", {"reference_file": FILE, "reference": REF})
    landed(tmp_path / "b", {"reference_file": FILE, "reference": dict(REF)})
    native = {**REF, "measured_at": "2026-11-22T14:43:54Z"}
    landed(tmp_path / "c", {"reference_file": FILE.replace("hdd", "native"), "reference": native})
    landed(tmp_path / "d", None)  # a run without calibration adds nothing
    # an incomplete run (no manifest) is no landed run, whatever it recorded
    landed(tmp_path / "e.partial", {"reference_file": FILE, "reference": {"measured_at": "x"}},
           complete=False)
    assert reference.campaign_references(tmp_path) == {
        FILE: REF, FILE.replace("hdd", "native"): native}


def test_runs_that_disagree_name_the_file_and_field(tmp_path: Path) -> None:
    landed(tmp_path / "a", {"reference_file": FILE, "reference": REF})
    later = landed(tmp_path / "b", {"reference_file": FILE,
                                    "reference": {**REF, "measured_at": "2026-11-24T13:00:00Z"}})
    with pytest.raises(ConfigError, match="calibration.reference differs") as error:
        reference.campaign_references(tmp_path)
    assert str(error.value).startswith(str(later / runfolder.HOST))
    assert "\n" not in str(error.value)


def test_the_cache_file_is_written_as_the_agent_writes_it() -> None:
    assert reference.encoded(REF) == (json.dumps(REF, indent=1, sort_keys=True) + "\n").encode()
