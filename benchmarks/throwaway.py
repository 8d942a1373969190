"""A benchmark's own local test host: its own name, a state folder under /var/lib and a 4 GB
image, torn down afterwards (its residue listed), so a benchmark never touches the hosts of
hosts/ nor leaves anything behind."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journalbench.agent.run import host_lock, residue, teardown
from journalbench.control.hosts import load_host


@dataclass
class Throwaway:
    file: Path  # the host file
    host: dict[str, Any]
    work: Path  # a scratch folder for run folders and specs, removed afterwards
    left: list[str] = field(default_factory=list)  # residue found after the teardown


@contextmanager
def throwaway_host(script: str, extra: str = "") -> Iterator[Throwaway]:
    """`script`: the benchmark's name, in the folders' names and the residue line; `extra`:
    more host-file lines (e.g. `bfq: {strict_guarantees: 1}`)."""
    prefix = script.replace("_", "-")
    state = Path(tempfile.mkdtemp(prefix=f"journalbench-{prefix}-", dir="/var/lib"))
    work = Path(tempfile.mkdtemp(prefix=f"journalbench-{prefix}-out-"))
    name = f"jb{prefix.replace('-', '')}{os.getpid()}"
    host_file = work / f"{name}.yaml"
    host_file.write_text(f"name: {name}\ntransport: local\nstate_dir: {state}\n"
                         f"device: {{kind: image, size_gb: 4}}\n{extra}")
    box = Throwaway(host_file, load_host(str(host_file)), work)
    try:
        yield box
    finally:
        with host_lock(box.host):
            teardown(box.host)
            box.left = residue(box.host)
        if box.left:
            print(f"{script}: residue left: {box.left}", file=sys.stderr)
        shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
