"""Shared test set-up: paths, and the rule that root-only tests never silently skip in CI."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from quiet import pytest_runtest_protocol, quiet  # noqa: F401 (a hook and a fixture: quiet.py)

from journalbench.agent.system import process_files
from journalbench.vocabulary import PROFILES

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"


def unshipped_campaign(notebook: str) -> str | None:
    """The campaign notebook `notebook` draws by default (its `otherwise`), if none of its runs
    are in data/raw: a campaign measured in chunks across sessions ships whole."""
    from journalbench.report import notebooks

    wanted = notebooks.declared(notebook).get("otherwise")
    if wanted is None or any((REPO / "data" / "raw" / wanted).glob("*/*/MANIFEST.json")):
        return None
    return wanted


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # `make test` runs the committed notebooks too (nbval, `pytest tests notebooks`): one whose
    # runs are not shipped yet is skipped with that reason (committed without outputs, which
    # test_notebooks_run checks), and runs once they are
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb" and (campaign := unshipped_campaign(path.stem)):
            item.add_marker(pytest.mark.skip(
                reason=f"{path.name} draws campaign {campaign}, whose runs are not shipped yet"))
    if os.geteuid() == 0:
        return
    # In CI (root) these run; a non-root developer sees them skipped, but CI never does.
    if os.environ.get("CI"):
        raise pytest.UsageError("CI must run as root: the root-marked tests cannot be skipped")
    skip = pytest.mark.skip(reason="needs root (loop devices, cgroups, containers)")
    for item in items:
        if "root" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A working directory of the pipeline outside the repo (its data/, results/, .snakemake/
    are the test's own); no Snakemake or job of it is alive after the test. A module may
    define its own (test_locks: a one-rule workflow)."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("Snakefile", "workflow", "notebooks", "profiles"):
        (work / name).symlink_to(REPO / name)
    yield work
    stop_workflow_processes(work)


@dataclass(frozen=True)
class Reproduced:
    """`make reproduce` of the shipped runs in a scratch directory: its folder and what it
    printed."""

    work: Path
    output: str


@pytest.fixture(scope="session")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reproduced]:
    """The whole analysis of the shipped runs, once for the session (it takes a minute): the
    repository's files linked into a fresh working directory (no data/processed, figures or
    results yet, as on a fresh clone; the venv is the repository's), checked to plan no
    experiment, then `make reproduce` (`snakemake --cores 1`, then `snakemake --report`).
    What it printed (test_reproduce_output.py) and what it built (test_report.py) are each
    tested on it; no Snakemake or job of it is alive after the session."""
    work = tmp_path_factory.mktemp("reproduce") / "work"
    work.mkdir()
    for name in ("Makefile", "Snakefile", "workflow", "notebooks", "profiles", "hosts",
                 "requirements.txt", "pyproject.toml", ".venv"):
        (work / name).symlink_to(REPO / name)
    (work / "data").mkdir()
    (work / "data" / "raw").symlink_to(REPO / "data" / "raw")
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(work)}
    try:
        planned = subprocess.run([str(VENV_BIN / "snakemake"), "--cores", "1", "--dry-run"],
                                 cwd=work, capture_output=True, text=True, timeout=600, env=env)
        assert planned.returncode == 0, (planned.stdout + planned.stderr)[-3000:]
        assert "run_experiment" not in planned.stdout + planned.stderr, \
            "the shipped runs do not cover the campaign"
        # -o: the venv is taken as made (a test must not reinstall the repository's venv)
        result = subprocess.run(["make", "-o", ".venv/.journalbench-installed", "reproduce"],
                                cwd=work, capture_output=True, text=True, timeout=3600, env=env)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        yield Reproduced(work, output)
    finally:
        stop_workflow_processes(work)


@pytest.fixture(autouse=True)
def no_figure_left() -> Iterator[None]:
    """A test's matplotlib figures are closed after it (pyplot keeps every open one)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


def system_residue(host_name: str, state_dir: Path) -> list[str]:
    """Everything a run of this host could leave on the machine, looked up independently of
    the agent's own residue check (so a bug there cannot hide a leak)."""
    found = []
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        if backing.read_text().strip().startswith(str(state_dir)):
            found.append(f"loop {backing.parent.parent.name}")
    for line in Path("/proc/self/mounts").read_text().splitlines():
        if line.split()[1].startswith(str(state_dir)):
            found.append(f"mount {line.split()[1]}")
    for hierarchy in Path("/sys/fs/cgroup").iterdir():
        if (hierarchy / "journalbench" / host_name).exists():
            found.append(f"cgroup {hierarchy / 'journalbench' / host_name}")
    for _, comm in process_files("comm"):
        try:
            if comm.read_text().startswith("jbd2/"):
                cgroup = (comm.parent / "cgroup").read_text()
                if f"/journalbench/{host_name}" in cgroup:
                    found.append(f"jbd2 thread {comm.parent.name} still in {host_name}'s cgroup")
            elif comm.read_text().strip() in ("mariadbd", "sysbench", "redis-server"):
                # a tenant's server or client: its command line names only in-tenant paths
                if f"/journalbench/{host_name}/" in (comm.parent / "cgroup").read_text():
                    found.append(f"process {comm.parent.name} ({comm.read_text().strip()}) in "
                                 f"{host_name}'s cgroups")
        except OSError:
            continue
    for _, cmdline in process_files("cmdline"):
        try:  # a VM tenant's QEMU or its command relays name the host's state folder
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(f"{state_dir / host_name}/".encode() in arg
               or arg.endswith(f".{host_name}.bt".encode()) for arg in argv):  # fsync tracers
            found.append(f"process {cmdline.parent.name} ({argv[0].decode(errors='replace')})")
    if (state_dir / host_name).exists():
        found.append(f"state folder {state_dir / host_name} (image, mount points or containers)")
    if Path(f"/sys/kernel/tracing/instances/journalbench-{host_name}").exists():
        found.append("trace instance")
    lane = Path(tempfile.gettempdir()) / f"journalbench-lane-{host_name}.lock"
    if lane.exists():  # the controller's lock of the host (control/dispatch.py)
        found.append(f"lane lock {lane}")
    return found


def start_run(spec: dict[str, Any], host: dict[str, Any], out: Path) -> subprocess.Popen:
    """`journalbench run` of spec (written beside out) on a test host, as a user runs it."""
    spec_file = out.parent / f"{out.name}.json"
    spec_file.write_text(json.dumps(spec))
    return subprocess.Popen(
        [str(VENV_BIN / "journalbench"), "run", str(spec_file), "--host", str(host["file"]),
         "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop_workflow_processes(directory: Path) -> None:
    """Kill every Snakemake, journalbench or papermill process working in directory, and
    check that none is left."""
    from journalbench.control import locks

    for pid, _ in locks.workflow_processes(directory):
        with contextlib.suppress(ProcessLookupError):  # it may end meanwhile
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10  # a killed process needs a moment to exit
    while locks.workflow_processes(directory) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not locks.workflow_processes(directory)


@pytest.fixture(scope="session")
def device_references(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The device references (agent/devices/calibrate.py) the session's test hosts measured:
    a real host measures its device once and keeps the reference in its state dir, and every
    agent_host is the same host (name, device, this machine) in a state dir of its own, so
    each starts with what the others kept instead of measuring again (5-15 s a test). Only
    the device's own reference is shared: what a workload calibrates (MariaDB's threads) is
    measured by each test that needs it."""
    return tmp_path_factory.mktemp("device-references")


def device_reference(name: str, host: str) -> bool:
    """Whether a file of a state dir's calibration/ is a device reference of host `host`
    (calibrate.reference_path: <host>-<profile>-<digest>.json)."""
    profiles = "|".join(re.escape(profile) for profile in PROFILES)
    return re.fullmatch(rf"{re.escape(host)}-({profiles})-[0-9a-f]{{12}}\.json", name) is not None


@pytest.fixture
def agent_host(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest,
               device_references: Path):
    """A throw-away local host (own name, own state dir, small image) that is torn down and
    checked for residue after the test, even when the test fails; its device reference is
    the session's when one was kept (device_references), unless the test is marked
    `own_reference` (it measures the reference itself)."""
    marker = request.node.get_closest_marker("image_gb")
    size_gb = marker.args[0] if marker else 4
    state = tmp_path_factory.mktemp("state")
    name = f"pytest{os.getpid()}"
    if request.node.get_closest_marker("own_reference") is None:
        shutil.copytree(device_references, state / "calibration")
    host_file = state / f"{name}.yaml"
    host_file.write_text(
        f"name: {name}\ntransport: local\nstate_dir: {state}\n"
        f"device: {{kind: image, size_gb: {size_gb}}}\nbfq: {{strict_guarantees: 1}}\n"
    )
    yield {"name": name, "file": host_file, "state_dir": state}
    subprocess.run([str(VENV_BIN / "journalbench"), "teardown", "--host", str(host_file)],
                   capture_output=True, text=True, timeout=120)
    left = system_residue(name, state)
    for kept in (state / "calibration").glob("*.json"):  # for the session's next hosts
        if device_reference(kept.name, name) and not (device_references / kept.name).exists():
            shutil.copy2(kept, device_references / kept.name)
    assert not left, f"test left residue: {left}"
