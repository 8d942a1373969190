"""`make reproduce` prints progress a person reads: a whole build from the shipped runs in a
scratch directory prints under 10 KB (Snakemake's job blocks list a few files of each list
and say how many, as does the report of the files it embeds: control/joblog.py), with
Snakemake's progress lines, and no line of hundreds of file names. Slow: it is the whole
analysis (made once for the session: conftest.reproduced)."""

from __future__ import annotations

import pytest

from conftest import Reproduced

pytestmark = pytest.mark.slow
LIMIT = 10 * 1024  # bytes, stdout and stderr together
LONGEST = 400  # characters of a line


def test_a_whole_reproduce_prints_under_10_kb(reproduced: Reproduced) -> None:
    """The session's `make reproduce` (conftest.reproduced; test_report.py tests what it
    built)."""
    output = reproduced.output
    assert (reproduced.work / "results" / "report" / "index.html").is_file()
    assert "steps (100%) done" in output  # Snakemake's progress is still shown
    assert "files in all)" in output  # the tidy job's inputs, counted instead of listed
    # the report's embedded files: three named, the rest in one line
    assert output.count("Adding ") == 4 and "Adding the report's other files" in output
    longest = max(output.splitlines(), key=len)
    assert len(longest) <= LONGEST, longest[:500]
    assert len(output.encode()) < LIMIT, f"{len(output.encode())} bytes:\n{output[:3000]}"
    assert "Traceback" not in output
