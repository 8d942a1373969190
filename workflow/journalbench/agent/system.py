"""Running commands and touching sysfs on the test host, with every action logged."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from journalbench.errors import AgentError

log = logging.getLogger("journalbench.agent")


def sh(*args: str, check: bool = True, timeout: float = 120, input: str | None = None) -> str:
    """Run a command (never through a shell) and return its stdout."""
    log.debug("$ %s", " ".join(args))
    try:
        done = subprocess.run(
            list(args), capture_output=True, text=True, timeout=timeout, input=input
        )
    except FileNotFoundError:
        raise AgentError(f"command not found: {args[0]} (is its package installed?)") from None
    except subprocess.TimeoutExpired:
        raise AgentError(f"command timed out after {timeout:.0f} s: {' '.join(args)}") from None
    if check and done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise AgentError(
            f"{' '.join(args)} failed ({done.returncode}): {detail[-1] if detail else ''}"
        )
    return done.stdout


def write(path: Path | str, value: str | int) -> None:
    log.debug("write %s <- %s", path, value)
    try:
        Path(path).write_text(f"{value}\n")
    except OSError as error:
        raise AgentError(f"cannot write {value!r} to {path}: {error.strerror}") from None


def read(path: Path | str) -> str:
    return Path(path).read_text().strip()


def mounts() -> list[tuple[str, str, str, str]]:
    """(source, mount point, fs type, options) of every mount, from /proc/self/mounts."""
    rows = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        source, target, fstype, options = line.split()[:4]
        rows.append((source, target.replace("\\040", " "), fstype, options))
    return rows


def tool_version(*args: str) -> str:
    try:
        out = sh(*args, check=False, timeout=20)
    except AgentError:
        return "missing"
    return out.strip().splitlines()[0] if out.strip() else "unknown"


def processes_where(match: Callable[[list[str]], bool]) -> list[int]:
    """Pids of the processes whose command line (its arguments) `match` accepts; a process
    that ends while the list is read is left out."""
    pids = []
    for pid, cmdline in process_files("cmdline"):
        try:
            argv = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if match(argv):
            pids.append(pid)
    return pids


def process_files(name: str) -> Iterator[tuple[int, Path]]:
    """(pid, /proc/<pid>/<name>) for every process listed now; reading the file raises OSError
    for a process that ended meanwhile, which callers skip. Not `Path.glob("[0-9]*/name")`:
    the existence check it makes lets through the ESRCH of a process ending mid-listing."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry), Path("/proc", entry, name)


def processes_naming(folder: Path) -> list[int]:
    """Processes other than this one whose command line names a path below `folder`: what a
    run started there (QEMU guests, relays, YCSB clients), found again after kill -9 of the
    agent."""
    needle = f"{folder}/"
    return [pid for pid in processes_where(lambda argv: any(needle in arg for arg in argv))
            if pid != os.getpid()]


def zombie(pid: int) -> bool:
    """Killed but not yet reaped (or gone): it holds nothing any more."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def kill_wait(pids: list[int], what: str = "processes", timeout: float = 10) -> None:
    """SIGKILL the pids and wait until none is left but as a zombie; `what` names them in the
    error if one outlives the timeout."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while any(not zombie(p) for p in pids):
        if time.monotonic() > deadline:
            raise AgentError(f"{what} {pids} survived SIGKILL for {timeout:.0f} s")
        time.sleep(0.02)
