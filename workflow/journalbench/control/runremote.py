"""One run on a host over its transport, fetched back atomically, with resume.

`run_remote(host, spec, dest)` runs a spec on any host, SSH or this machine (LocalTransport),
through the same steps: deploy the agent bundle, stop an agent a cut-off run left behind, tear
the host down, run, fetch the run folder into `dest` so that it appears with a valid manifest
or not at all. A lost connection or a killed campaign resumes: a complete local folder is kept;
a remote run that finished meanwhile is fetched; otherwise the run is done again.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench import runfolder
from journalbench.control.deploy import Deployment, deploy
from journalbench.control.reach import for_host
from journalbench.control.transport import (
    KILL_FN,
    STAT_FN,
    CommandTimeout,
    ConnectionLost,
    LocalTransport,
    Transport,
    TransportError,
)
from journalbench.errors import AgentError, ConfigError
from journalbench.plan.schemas import validate

log = logging.getLogger("journalbench.remote")

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
AGENT_STOP_GRACE_S = 60  # a TERMed agent tears its run down itself before we look
RUN_OVERHEAD_S = 1800  # set-up (image, mkfs, containers, VMs boot) and teardown of one run

# Run the agent with its identity (pid, process group, start time) in a pidfile, removed when it
# ends however it ends; a pidfile left behind means a run was cut off.
RUN_SCRIPT = STAT_FN + 'p=$1; shift; echo "$$ $(st $$)" > "$p"; "$@"; rc=$?; rm -f "$p"; exit $rc'
# Kill the agent named in a pidfile (if that very process still runs), then drop the file.
# Prints "reaped" when there was a pidfile: the host then needs a teardown.
REAP_SCRIPT = (
    STAT_FN
    + KILL_FN
    + (
        '[ -f "$1" ] || exit 0; read pid pg start < "$1"; '
        'kg "$pid" "$start" "$2"; rm -f "$1"; echo reaped'
    )
)


def reap(dep: Deployment) -> bool:
    """Stop an agent left running by a cut-off run (TERM, then KILL after a grace during
    which it tears its run down itself); True if a cut-off run was registered."""
    result = dep.transport.run(
        ["sh", "-c", REAP_SCRIPT, "jb-reap", dep.layout.pidfile, str(AGENT_STOP_GRACE_S)],
        timeout=AGENT_STOP_GRACE_S + 60,
        retry=True,
    )
    if "reaped" in result.stdout:
        log.warning(
            "%s: an interrupted run was still registered (%s); tearing down",
            dep.transport.label,
            result.stdout.strip().replace("\n", ", "),
        )
        return True
    return False


def teardown(dep: Deployment, on_output: Callable[[str, str], None] | None = None) -> None:
    """`journalbench teardown` on the host: idempotent, and it verifies that nothing is left."""
    dep.transport.run(
        dep.agent("teardown", "--host", dep.layout.host_json),
        timeout=600,
        retry=True,
        on_output=on_output,
    )


def reap_and_teardown(dep: Deployment, on_output: Callable[[str, str], None] | None = None) -> bool:
    reaped = reap(dep)
    teardown(dep, on_output)
    return reaped


def fetch_run(transport: Transport, remote_dir: str, dest: Path) -> list[str]:
    """Copy a remote run folder to dest atomically; return why not (empty when it worked).

    The copy lands in a hidden sibling of dest, is checked against its manifest there, and only
    then renamed into place, so dest is always either absent or complete.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.fetch-{uuid.uuid4().hex[:8]}"
    try:
        transport.get_tree(remote_dir, tmp)
        problems = runfolder.manifest_problems(tmp)
        if problems:
            return [p.replace(str(tmp), f"{transport.label}:{remote_dir}") for p in problems]
        if dest.exists():
            if runfolder.is_complete(dest):
                return []  # someone else finished it meanwhile; keep theirs
            shutil.rmtree(dest)
        os.rename(tmp, dest)
        _fsync_dir(dest.parent)
        return []
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_fetch_leftovers(dest: Path) -> None:
    """Temp folders of a fetch that was killed half-way (never renamed into place)."""
    if dest.parent.is_dir():
        for stale in dest.parent.glob(f".{dest.name}.fetch-*"):
            shutil.rmtree(stale, ignore_errors=True)


@dataclass(frozen=True)
class Job:
    """One run as run_remote carries it through its attempts."""

    spec: dict[str, Any]
    dest: Path
    run_id: str
    campaign: str
    timeout_s: float
    on_output: Callable[[str, str], None] | None
    keep_remote: bool


def run_remote(
    host: dict[str, Any],
    spec: dict[str, Any],
    dest: Path | str,
    *,
    transport: Transport | None = None,
    attempts: int = 3,
    timeout_s: float | None = None,
    on_output: Callable[[str, str], None] | None = None,
    keep_remote: bool = False,
) -> Path:
    """Run spec on host and leave its complete run folder at dest (or raise, leaving none).

    A complete dest is kept as it is (resume). A remote folder of the same run that completed
    while we were away is fetched instead of run again. A lost connection is retried up to
    `attempts` times: reconnect, stop the cut-off agent, tear down, run again.
    """
    dest = Path(dest)
    if runfolder.is_complete(dest):
        log.info("%s: complete, kept", dest)
        return dest
    job = _job(spec, dest, timeout_s, on_output, keep_remote)
    own = transport is None
    transport = transport or for_host(host)
    if isinstance(transport, LocalTransport) and os.geteuid() != 0:
        raise AgentError(
            f"run {job.run_id} must run on host {host.get('name', '?')} (this machine) and "
            "needs root: rerun as root"
        )
    remove_fetch_leftovers(dest)
    transport.prepare_for(spec)
    try:
        for attempt in range(1, attempts + 1):
            try:
                return _attempt(host, transport, job)
            except ConnectionLost as error:
                if attempt == attempts:
                    raise TransportError(
                        f"{error}; gave up on run {job.run_id} after {attempts} attempts"
                    ) from None
                log.warning(
                    "%s (attempt %d/%d): reconnecting, tearing down, running %s again",
                    error,
                    attempt,
                    attempts,
                    job.run_id,
                )
                transport.close()
                time.sleep(min(2**attempt, 10))
        raise AssertionError("unreachable")
    finally:
        if own:
            transport.close()


def _job(
    spec: dict[str, Any],
    dest: Path,
    timeout_s: float | None,
    on_output: Callable[[str, str], None] | None,
    keep_remote: bool,
) -> Job:
    validate(spec, "run-spec", "spec")
    campaign = str(spec.get("campaign", "adhoc"))
    if not SAFE_NAME.match(campaign):
        raise ConfigError(f"spec: field campaign: {campaign!r} is not a safe folder name")
    timeout = timeout_s if timeout_s is not None else spec["duration_s"] + RUN_OVERHEAD_S
    return Job(spec, dest, runfolder.run_id(spec), campaign, timeout, on_output, keep_remote)


def _attempt(host: dict[str, Any], transport: Transport, job: Job) -> Path:
    dep = deploy(host, transport)
    remote_dir = dep.layout.run_dir(job.campaign, job.run_id)
    reaped = reap(dep)
    # A run that finished while the controller was gone is as good as a new one.
    if _remote_exists(transport, remote_dir) and not fetch_run(transport, remote_dir, job.dest):
        log.info("%s: fetched run %s completed earlier", transport.label, job.run_id)
        if reaped:
            teardown(dep, job.on_output)
        _remove_remote(transport, remote_dir, job.keep_remote)
        return job.dest
    # Every run starts on a clean host, whatever an earlier, cut-off or crashed run left (the
    # agent refuses to start on residue): the agent's run tears down first, in its own start.
    transport.run(["rm", "-rf", "--", remote_dir], retry=True)
    _run_agent(dep, job, remote_dir)
    problems = fetch_run(transport, remote_dir, job.dest)
    if problems:
        raise AgentError(
            f"{transport.label}: run {job.run_id} fetched incomplete: {problems[0]}"
        )
    transport.after_run(job.dest)
    _remove_remote(transport, remote_dir, job.keep_remote)
    return job.dest


def _run_agent(dep: Deployment, job: Job, remote_dir: str) -> None:
    """The agent's `run`, under the pidfile; a failed or timed-out run is torn down first."""
    remote_spec = _spec_path(remote_dir)
    spec_json = (runfolder.canonical_json(job.spec) + "\n").encode()
    dep.transport.put_bytes(spec_json, remote_spec)
    agent_run = dep.agent("run", remote_spec, "--host", dep.layout.host_json, "--out", remote_dir,
                          "--teardown-first")
    try:
        result = dep.transport.run(
            ["sh", "-c", RUN_SCRIPT, "jb-agent", dep.layout.pidfile, *agent_run],
            timeout=job.timeout_s,
            on_output=dep.transport.watch(job.on_output),
            check=False,
        )
    except CommandTimeout:
        # The transport TERMed the agent (KILL after a grace); whatever its own clean-up did
        # not finish, teardown does, before we give up on the run.
        _teardown_quietly(dep, job.on_output)
        raise
    if result.returncode != 0:
        lines = (result.stderr.strip() or result.stdout.strip()).splitlines()
        _teardown_quietly(dep, job.on_output)
        raise AgentError(
            f"{dep.transport.label}: run {job.run_id} failed (exit {result.returncode}): "
            f"{lines[-1] if lines else 'no output'}"
        )


def _spec_path(remote_dir: str) -> str:
    return f"{remote_dir}.spec.json"


def _teardown_quietly(dep: Deployment, on_output: Callable[[str, str], None] | None) -> None:
    """Teardown after a failed run: its own failure must not hide the run's error."""
    try:
        reap_and_teardown(dep, on_output)
    except TransportError as error:
        log.warning("%s: teardown after the failed run: %s", dep.transport.label, error)


def _remote_exists(transport: Transport, path: str) -> bool:
    return transport.run(["test", "-d", path], check=False, retry=True).returncode == 0


def _remove_remote(transport: Transport, remote_dir: str, keep: bool) -> None:
    if not keep:
        transport.run(["rm", "-rf", "--", remote_dir, _spec_path(remote_dir)], retry=True)
