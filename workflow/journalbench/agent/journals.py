"""Finding the journal thread (jbd2) of a mounted ext4, on the host or inside a VM guest.

Its own module, light to import: the guest's report imports it, and every module a TCG guest
imports costs it a noticeable share of a second.
"""

from __future__ import annotations

from pathlib import Path

from journalbench.agent.sampler import Jbd2
from journalbench.errors import AgentError


def find_jbd2(volume: str, tenant: str | None) -> Jbd2:
    """The journal thread of the ext4 on `volume` (its name is jbd2/<dev>-<journal inode>)."""
    wanted = f"jbd2/{Path(volume).name}-"[:15]
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            name = comm.read_text().strip()
        except OSError:
            continue
        if name.startswith(wanted):
            return Jbd2(name=name, pid=int(comm.parent.name), tenant=tenant)
    raise AgentError(f"no jbd2 thread for {volume} (is it mounted as ext4 with a journal?)")
