"""quiet.py's protocol between two real pytest processes, as `make test` runs them: one beside
(BESIDE set), its tests each lasting a while until the quiet one has run, and one whose test
takes `quiet` while a test beside is running. No test beside runs while the quiet one does (it
waits for the one running, and the next waits for it); the locks are this test's own
(FOLDER), not the suite's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import quiet

TESTS = Path(__file__).resolve().parent
BESIDE_TESTS = 60  # more than run while the quiet test waits and runs: they stop with it
HOLD_S = 0.5

PROBE = """
import json, time
from pathlib import Path

STOP = Path({stop!r})
STARTED = STOP.with_name("started")

def record(name, started):
    with open({log!r}, "a") as log:
        log.write(json.dumps([name, started, time.time()]) + "\\n")

{tests}
"""
BESIDE_TEST = """
def test_beside_{n}():
    started = time.time()
    STARTED.touch()
    if not STOP.exists():
        time.sleep({hold})
    record("beside-{n}", started)
"""
QUIET_TEST = """
def test_quiet(quiet):
    started = time.time()
    time.sleep(3 * {hold})
    record("quiet", started)
    STOP.touch()
"""


def pytest_process(folder: Path, test_file: Path, beside: bool) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(TESTS), quiet.FOLDER: str(folder / "locks")}
    env.pop(quiet.BESIDE, None)
    if beside:
        env[quiet.BESIDE] = "1"
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "quiet", "-p", "no:cacheprovider",
         "-c", os.devnull, "--rootdir", str(folder), str(test_file)],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_quiet_test_waits_for_the_test_beside_and_the_tests_beside_wait_for_it(
        tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    beside_file, quiet_file = tmp_path / "test_beside.py", tmp_path / "test_alone.py"
    stop = tmp_path / "stop"
    beside_file.write_text(PROBE.format(log=str(log), stop=str(stop), tests="".join(
        BESIDE_TEST.format(n=n, hold=HOLD_S) for n in range(BESIDE_TESTS))))
    quiet_file.write_text(PROBE.format(log=str(log), stop=str(stop),
                                       tests=QUIET_TEST.format(hold=HOLD_S)))
    beside = pytest_process(tmp_path, beside_file, beside=True)
    alone = None
    try:
        deadline = time.monotonic() + 60
        # the quiet test asks for the machine while the tests beside run
        while not (tmp_path / "started").exists():
            assert beside.poll() is None and time.monotonic() < deadline, beside.stdout.read()
            time.sleep(0.05)
        time.sleep(0.3)
        alone = pytest_process(tmp_path, quiet_file, beside=False)
        out_alone, _ = alone.communicate(timeout=60)
        out_beside, _ = beside.communicate(timeout=60)
    finally:
        for process in (beside, alone):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert alone.returncode == 0, out_alone
    assert beside.returncode == 0, out_beside
    spans = {name: (start, end) for name, start, end in map(json.loads, log.read_text()
                                                             .splitlines())}
    assert set(spans) == {"quiet", *(f"beside-{n}" for n in range(BESIDE_TESTS))}
    start, end = spans["quiet"]
    beside_spans = [spans[f"beside-{n}"] for n in range(BESIDE_TESTS)]
    # no test beside ran while the quiet one did, and tests beside ran before and after it
    assert all(b_end <= start or b_start >= end for b_start, b_end in beside_spans), spans
    assert beside_spans[0][1] <= start and beside_spans[-1][0] >= end, spans
