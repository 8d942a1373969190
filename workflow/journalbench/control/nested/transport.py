"""Reaching a nested host: SSH, as any host, to the port this machine forwards to the guest's
sshd, with the key pair made for the boot and the host key the guest printed at boot (pinned:
an unknown or changed key is refused, never trusted on first use).

The first controller that connects boots the machine (Machine.ensure, under a lock), and every
later one (the next `journalbench dispatch` of the chunk, `check-host`, `recover`) finds it by
its record and reuses it while it runs. Each holds a shared lease on it while connected, so
that teardown never stops a machine under a run.

The agent in the guest gets the host file turned into the guest's own view
(`agent_host`): its test disks by their stable names, one per device profile the machine
booted with, the set-up flags of the emulated ones, and the machine's facts for host.json.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO, Any

from journalbench import runfolder
from journalbench.control.nested import image, outer
from journalbench.control.nested.machine import LOOPBACK, Machine
from journalbench.control.transport import (
    ConnectionLost,
    OutputCallback,
    SSHSettings,
    SSHTransport,
    TransportError,
)
from journalbench.errors import AgentError

CONNECT_TIMEOUT_S = 30.0  # a TCG guest beside a busy run answers slowly
# what the controller keeps to itself: how to boot, not what the agent runs
OUTER_ONLY = ("nested", "transport")
FACT_KEYS = ("accel", "accel_why", "vcpus", "memory_mb", "profiles", "cgroup_version", "boot_s",
             "booted_at",
             "kernel", "kernel_package", "initramfs_recipe", "qemu", "outer_kernel",
             "outer_hostname")


def disk_id(profile: str) -> str:
    """The stable name the guest's init gives the profile's disk (its virtio serial)."""
    return f"/dev/disk/by-id/virtio-jb-{profile}"


def agent_host(host: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """The host document the agent in the guest reads: the host file's settings, the test
    device a dedicated disk (the host's own profile's), and `nested`: every profile's disk and
    the machine's facts."""
    inner = {k: v for k, v in host.items() if not k.startswith("_") and k not in OUTER_ONLY}
    profile = host["device"].get("profile", record["profiles"][0])
    inner["transport"] = "nested"
    inner["device"] = {"kind": "disk", "id": disk_id(profile), "wipe": True,
                       "profile": profile}
    disks = {name: {"id": disk_id(name),
                    "fast_flag": f"{image.FLAGS}/{name}" if facts["emulated"] else None}
             for name, facts in record["disks"].items()}
    facts = {key: record.get(key) for key in FACT_KEYS}
    facts["disks"] = {name: {k: v for k, v in facts_.items() if k != "drive"}
                      for name, facts_ in record["disks"].items()}
    inner["nested"] = {"disks": disks, "facts": facts}
    return inner


class NestedTransport(SSHTransport):
    def __init__(self, host: dict[str, Any], boot: bool = True, lease: bool = True) -> None:
        """`boot`: boot the machine when it does not run (False: fail instead); `lease`: hold
        the shared lease while connected (False for teardown, which holds it exclusively)."""
        self.machine = Machine(host)
        settings = SSHSettings(
            address=LOOPBACK, port=22, user="root", key_file=self.machine.client_key,
            known_hosts=self.machine.known_hosts, trust_on_first_use=False,
            connect_timeout_s=CONNECT_TIMEOUT_S, source=host.get("_file", host["name"]))
        super().__init__(host, settings)
        self.boot, self.leases = boot, lease
        self.wanted: int | None = None  # the cgroup version the next run needs (prepare_for)
        self.readings: dict[str, outer.Reading] = {}  # this machine's, at the workloads' ends
        self.record: dict[str, Any] | None = None
        self.lease: IO[str] | None = None
        self.label = f"{host['name']} (nested machine on this machine)"

    def prepare_for(self, spec: dict[str, Any]) -> None:
        """The cgroup version the run needs: a machine running as another boots anew as it."""
        wanted = spec.get("cgroup_version")
        self.wanted = None if wanted is None else int(wanted)
        if self.wanted is not None and self.record is not None and self.mismatched():
            super().close()  # connect switches the machine, then connects to the new boot

    def watch(self, on_output: OutputCallback | None) -> OutputCallback | None:
        """Reads this machine's CPU (QEMU's, the emulator's, all cores') when the agent's log
        says the workloads start and when they are done, then passes the line on."""
        self.readings = {}

        def seen(stream: str, line: str) -> None:
            for mark in (runfolder.WORKLOADS_START, runfolder.WORKLOADS_DONE):
                if mark in line and self.record is not None:
                    self.readings[mark] = outer.read_now(self.machine.folder,
                                                         int(self.record["pid"]))
            if on_output is not None:
                on_output(stream, line)
        return seen

    def after_run(self, dest: Path) -> None:
        """outer.json: this machine's CPU over the run's workload phase (both ends read)."""
        start = self.readings.get(runfolder.WORKLOADS_START)
        end = self.readings.get(runfolder.WORKLOADS_DONE)
        if start is None or end is None:
            self.warn(f"{dest.name}: the agent's log gave no workload phase; no {runfolder.OUTER}")
            return
        outer.add_to_run(dest, outer.record(start, end))

    def mismatched(self) -> bool:
        assert self.record is not None
        return (self.wanted is not None
                and int(self.record.get("cgroup_version", 2)) != self.wanted)

    def connect(self) -> None:
        if self._client is not None and self._client.get_transport() is not None:
            if self._client.get_transport().is_active():
                return
        if self.lease is None and self.leases:
            self.lease = self.machine.lease()
        before = self.record
        deployed = "_journalbench_deployment" in self.__dict__
        self.record = self.machine.ensure(self.wanted) if self.boot else self.running()
        if self.boot and self.leases and self.mismatched():
            self.switch()
        if before is not None and before["pid"] != self.record["pid"]:
            # booted again meanwhile: a fresh guest has no agent bundle yet
            self.__dict__.pop("_journalbench_deployment", None)
        self.settings.port = int(self.record["port"])
        try:
            super().connect()
        except TransportError as error:
            if not (self.boot and self.leases):
                raise self.unreachable(error) from None
            self.boot_anew(error)
            super().connect()
        if deployed and "_journalbench_deployment" not in self.__dict__:
            # a command of a deployment made on the guest before (its agent bundle, its
            # pidfile) would run on a fresh guest that has none of it: the caller's attempt
            # starts again from the deployment (run_remote retries a lost connection)
            raise ConnectionLost(f"{self.label}: the guest was booted anew while a run "
                                 "used it: its agent bundle is gone, deploying again")

    def unreachable(self, error: TransportError) -> TransportError:
        """`error`, with the last line the guest printed on its console: a kernel that locked
        up says so there (`watchdog: BUG: soft lockup - CPU#0 stuck for 26s!`)."""
        lines = self.machine.console_text().splitlines()
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        return TransportError(f"{error}; the guest's console ends {last!r} "
                              f"({self.machine.console})")

    def boot_anew(self, error: TransportError) -> None:
        """The guest runs but does not answer (in a campaign its kernel locked up under TCG and
        never came back): nothing can run there again, so a controller that uses it alone stops
        it and boots a fresh one, and the run that was cut off runs again (run_remote). With
        other controllers on it, it is theirs too: say so and stop."""
        assert self.lease is not None  # connect took it (self.leases)
        why = self.unreachable(error)
        try:  # shared -> exclusive: does anyone else hold the machine?
            fcntl.flock(self.lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(self.lease, fcntl.LOCK_SH)  # a failed conversion dropped our hold
            raise TransportError(f"{why}; other controllers use it, so it is not restarted "
                                 f"(journalbench teardown --host {self.settings.source} stops it)"
                                 ) from None
        try:
            self.warn(f"{why}: stopping the guest and booting a fresh one")
            self.machine.stop()
            self.record = self.machine.ensure(self.wanted)
        finally:
            fcntl.flock(self.lease, fcntl.LOCK_SH)
        self.__dict__.pop("_journalbench_deployment", None)  # a fresh guest has no bundle
        self.settings.port = int(self.record["port"])

    def switch(self) -> None:
        """Boot the machine anew as the cgroup version the run needs (it runs as the other):
        after a run's I/O in a v1 blkio group the kernel keeps that hierarchy, so a guest
        cannot change version in place. Only a controller that uses the machine alone may."""
        assert self.lease is not None and self.record is not None and self.wanted is not None
        running = int(self.record.get("cgroup_version", 2))
        try:  # shared -> exclusive: does anyone else hold the machine?
            fcntl.flock(self.lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(self.lease, fcntl.LOCK_SH)  # a failed conversion dropped our hold
            raise TransportError(
                f"host {self.machine.name}: the run needs cgroup v{self.wanted} and the guest "
                f"runs as v{running}; other controllers use it, so it is not booted anew") from None
        try:
            self.warn(f"host {self.machine.name}: booting the guest anew as cgroup "
                      f"v{self.wanted} (it ran as v{running})")
            self.machine.stop()
            self.record = self.machine.ensure(self.wanted)
        finally:
            fcntl.flock(self.lease, fcntl.LOCK_SH)
        self.__dict__.pop("_journalbench_deployment", None)  # a fresh guest has no bundle

    def running(self) -> dict[str, Any]:
        record = self.machine.state()
        if record is None:
            raise AgentError(f"host {self.machine.name}: its nested machine does not run")
        return record

    def close(self) -> None:
        super().close()
        if self.lease is not None:
            self.lease.close()
            self.lease = None

    def agent_host(self, host: dict[str, Any]) -> dict[str, Any]:
        self.connect()
        assert self.record is not None
        return agent_host(host, self.record)

