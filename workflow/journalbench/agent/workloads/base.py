"""The interface every workload (one tool, or a server and its client) implements.

The agent's run calls, per tenant: `prepare` once the tenant runs (lay out data, start a server,
load tables: not measured), then `start` for the measured phase (the client, or the tool itself)
with its probes, `wait` on what `start` returned, `finish` (read counters the run folder keeps),
and `stop` always, also after a failure (stop servers; idempotent). Commands run inside the
tenant through the arm, so the same workload runs in a container or a guest.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from journalbench.agent.arms.base import TenantShell
from journalbench.agent.requires import Tool
from journalbench.errors import AgentError


@dataclass
class Process:
    """One measured process, with the run-folder files its output goes to."""

    what: str  # e.g. "fio in victim"
    popen: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    handles: list[IO[bytes]] = field(default_factory=list)

    def close(self) -> None:
        for handle in self.handles:
            handle.close()

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()
        self.close()

    def check(self, code: int) -> None:
        if code != 0:
            detail = self.stderr.read_text(errors="replace").strip().splitlines()
            raise AgentError(f"{self.what} exited {code}: {detail[-1] if detail else ''}")

    def drop_empty_stderr(self) -> None:
        if self.stderr.exists() and self.stderr.stat().st_size == 0:
            self.stderr.unlink()


def spawn_into(shell: TenantShell, argv: list[str], what: str, stdout: Path,
               stderr: Path) -> Process:
    """Start argv in the tenant with its output in two run-folder files."""
    out, err = stdout.open("wb"), stderr.open("wb")
    try:
        popen = shell.spawn(argv, out, err)
    except BaseException:
        out.close()
        err.close()
        raise
    return Process(what, popen, stdout, stderr, [out, err])


class Workload:
    TOOL: ClassVar[str]
    TOOLS: ClassVar[tuple[Tool, ...]] = ()
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    # Set by the run after construction (agent/run.py): seconds of warm-up that precede the
    # measured `duration_s` and that a workload's own figures must leave out (fio: ramp_time),
    # and the run's device calibration record (host.json's `calibration`).
    warmup_s: int = 0
    calibration: dict[str, Any] | None = None

    def __init__(self, tenant: str, settings: dict[str, Any], duration_s: int) -> None:
        self.tenant = tenant
        self.settings = settings
        self.duration_s = duration_s

    @classmethod
    def planned(cls, workload: dict[str, Any], experiment: dict[str, Any]) -> dict[str, Any]:
        """A campaign's workload as its run spec holds it, given its experiment: defaults the
        campaign leaves open are settled when planning, so the run id says what ran. As the
        campaign gives it unless a tool says otherwise."""
        return workload

    def versions(self) -> dict[str, str]:
        """Tool versions for host.json's `tools`."""
        return {}

    def calibrate(self, host: dict[str, Any], profile: Any, device: Any,
                  mount: Path) -> dict[str, Any]:
        """Once the device is attached and calibrated, before the arm prepares it: measure
        (or read from the host's cache) what this workload needs of the device, e.g. a client
        count. Returns what host.json's `calibration` gains (may use `mount` and the device)."""
        return {}

    def guest_tunnels(self) -> list[str]:
        """Names of the byte tunnels a host-side client of this workload needs into a guest
        tenant (agent/arms/vm/tunnel.py); the vm arm opens them before its guests boot."""
        return []

    def prepare(self, shell: TenantShell) -> None:
        """Before measuring: data, servers, load phase."""

    def prepares_apart(self) -> bool:
        """True when `prepare` only lays out files that nothing measures, whatever the other
        tenants prepare meanwhile: the tenants then prepare at the same time
        (Arm.prepare_workloads), not one after the other."""
        return False

    def start(self, shell: TenantShell, out: Path) -> list[Process]:
        """The measured phase: start and return the processes the run waits for."""
        raise NotImplementedError

    def finish(self, shell: TenantShell, out: Path) -> None:
        """After the measured phase ended well: counters and summaries into the run folder."""

    def stop(self, shell: TenantShell) -> None:
        """Always, also after a failure: stop what `prepare` started."""

    def outputs(self) -> list[str]:
        """Run-folder files this workload leaves (the parsers read them by these names)."""
        return []

    def probes(self) -> list[Any]:
        """Tracers to run beside the measured phase (see agent/probes.py)."""
        return []

    # -- clean-up by discovery (also after kill -9 of the agent), as for arms --------------------

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        """What runs of this workload left on the host outside its tenants (e.g. a client)."""
        return []

    @classmethod
    def clean(cls, host: dict[str, Any], root: Path) -> None:
        """Remove it, found without the run's state."""
