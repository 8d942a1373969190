"""`journalbench unlock`: remove the Snakemake lock that a killed controller left behind.

Snakemake locks its working directory (`.snakemake/locks`) and removes the lock when it exits;
a SIGKILL leaves it, and every later run of the directory then stops on it. The lock is stale
exactly when no Snakemake, and no job of one, still runs in that directory; removing it then is
what `snakemake --unlock` does. The Snakefile calls `clear_stale` on every start, so re-running
the same command resumes; `journalbench unlock` does it by hand and says who blocks it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# A live Snakemake, or a job it started (our rules run journalbench or papermill), whose
# working directory is the workflow's: while one runs, the lock may be in use.
WORKFLOW_WORDS = frozenset({"snakemake", "journalbench", "journalbench.cli", "papermill"})


def clear_stale(workdir: Path) -> bool:
    """Remove the lock of `workdir` if no Snakemake of it is alive; True if one was removed."""
    if workflow_processes(workdir):
        return False  # Snakemake's own lock check decides whether this run may start
    removed = remove_lock(workdir)
    if removed:
        print(f"journalbench: removed the stale Snakemake lock of {workdir} "
              "(no Snakemake runs there)", file=sys.stderr)
    return removed


def remove_lock(workdir: Path) -> bool:
    locks = workdir / ".snakemake" / "locks"
    held = locks.is_dir() and any(locks.iterdir())
    if locks.exists():
        shutil.rmtree(locks)
    return held


def workflow_processes(workdir: Path) -> list[tuple[int, str]]:
    """Snakemake processes and their jobs running in `workdir`, other than this process and its
    ancestors (the shell, make or Snakemake that started it)."""
    workdir = workdir.resolve()
    lineage = own_lineage()
    found = []
    for proc in sorted(Path("/proc").glob("[0-9]*"), key=lambda p: int(p.name)):
        if int(proc.name) in lineage:
            continue
        try:
            if Path(os.readlink(proc / "cwd")) != workdir:
                continue
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue  # exited meanwhile, a zombie, or another user's process
        if is_workflow_command(cmdline):
            found.append((int(proc.name), " ".join(cmdline).strip()))
    return found


def is_workflow_command(cmdline: list[str]) -> bool:
    """True for `snakemake ...`, `python -m snakemake`, and the shell of one of our jobs
    (`bash -c '... -m journalbench.cli dispatch ...'`, `... -m papermill ...`)."""
    words = (word for arg in cmdline for word in arg.split())
    return any(os.path.basename(word) in WORKFLOW_WORDS for word in words)


def own_lineage() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        try:
            pid = parent_pid((Path("/proc") / str(pid) / "stat").read_text())
        except OSError:
            break
    return pids


def parent_pid(stat: str) -> int:
    """The parent's pid from /proc/<pid>/stat; the command name in parentheses may hold
    spaces and parentheses, so the fields are counted after the last ')'."""
    return int(stat.rsplit(")", 1)[1].split()[1])
