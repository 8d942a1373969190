"""One run on this host: set up the arm, start the workloads, sample, collect, tear down.

Teardown always runs (error, Ctrl-C, SIGTERM) and then checks that nothing is left; the
manifest is written last, and only when the run and its teardown both succeeded.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import platform
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from journalbench import runfolder, window
from journalbench.agent import cgroups, cleanup, disk, provenance
from journalbench.agent.arms.base import Arm, Context
from journalbench.agent.cpuload import CpuSampler
from journalbench.agent.devices import calibrate, provided
from journalbench.agent.registry import (
    ARMS,
    IO_CONTROLS,
    PROFILES,
    WORKLOADS,
    arm_class,
    io_control_choice,
    io_control_class,
    io_control_on,
    profile_for,
    workload_for,
)
from journalbench.agent.sampler import (
    DeviceTimeTracer,
    Sampler,
    ensure_tracefs,
    remove_trace_instance,
    remove_tracers_under,
    trace_instance,
    tracers_under,
)
from journalbench.agent.system import log, read, sh
from journalbench.agent.workloads.base import Process, Workload
from journalbench.errors import AgentError
from journalbench.runfolder import WORKLOADS_DONE, WORKLOADS_START


class Interrupted(BaseException):
    """SIGTERM: unwinds like Ctrl-C so teardown runs."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def host_lock(host: dict[str, Any]) -> Iterator[None]:
    """Only one run or teardown of a host at a time: a second one would tear down the first
    one's devices. The kernel drops the lock when its holder dies, even by SIGKILL."""
    state = Path(host["state_dir"])
    state.mkdir(parents=True, exist_ok=True)
    path = state / f"{host['name']}.lock"
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AgentError(f"host {host['name']} is busy: another run or teardown holds "
                             f"{path}") from None
        yield


@contextmanager
def run_log(path: Path) -> Iterator[None]:
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        log.removeHandler(handler)
        handler.close()


def recorded_host(host: dict[str, Any]) -> str:
    """The host a run records (spec.json and host.json `host`, the tidy tables' and the
    ledger's): its pool's name for a pool's member, which host.json records as `member`; the
    member's own name still names its cgroups, state and lock."""
    return str(host.get("pool") or host["name"])


def host_facts(host: dict[str, Any], backend: cgroups.Backend, io_fields: dict[str, Any],
               device: disk.Device, fsync: dict[str, float],
               tools: dict[str, str]) -> dict[str, Any]:
    """host.json's set-up facts; `io_fields`: the I/O control's (IoControl.record)."""
    return {
        "hostname": socket.gethostname(),
        "host": recorded_host(host),
        **({"member": host["name"]} if host.get("pool") else {}),
        "kernel": platform.release(),
        "cgroup_version": backend.version,
        "cgroup_root": str(backend.root),
        "cgroup_v2_controllers": cgroups.v2_controllers(),
        "nested_host": host.get("nested", {}).get("facts"),
        **io_fields,
        "device": {
            "path": device.path, "kind": device.kind, "named": device.named,
            "devnum": device.devnum,
            "size_bytes": int(read(device.sysfs / "size")) * 512,
            "rotational": read(device.sysfs / "queue/rotational"),
            "model": backing_model(device),
        },
        "device_fsync_lat_ms": fsync,
        "tools": {**tools, **provenance.tool_versions()},
        "virt_accel": None,
        "cpus": os.cpu_count(),
        "machine": provenance.machine(),
        "storage": provenance.storage(device.named, device.name),
        "agent_source_sha256": provenance.agent_source_hash(),
    }


def tool_versions(arm: Arm, workloads: dict[str, Workload]) -> dict[str, str]:
    versions = arm.versions()
    for workload in {type(w): w for w in workloads.values()}.values():
        versions.update(workload.versions())
    return versions


def backing_model(device: disk.Device) -> str:
    """The disk's model; for a loop device, that of the disk under its backing file; for a
    virtio disk (a nested host's), what it is."""
    model = device.sysfs / "device/model"
    if model.exists():
        return read(model)
    if device.sysfs.name.startswith("vd"):
        return "virtio-blk disk"
    source = sh("findmnt", "-n", "-o", "SOURCE", "--target", device.named, check=False).strip()
    return f"loop on {source or 'unknown'}"


def measure(workloads: dict[str, Workload], arm: Arm, out: Path, sampler: Sampler,
            duration_s: int) -> float:
    """The measured phase (`duration_s` includes any warm-up): every tenant's workload starts
    together under the sampler, which starts after the probes have attached so that its clock
    (io-samples.jsonl's `t`) starts with the workloads. Returns when the last workload had
    started, on that clock: the measurement window is reckoned from there."""
    procs: list[Process] = []
    probes = [probe for w in workloads.values() for probe in w.probes()]
    started = 0.0
    try:
        for probe in probes:
            probe.start()
        sampler.start()
        try:
            for name, workload in workloads.items():
                procs += workload.start(arm.shell(name), out)
            started = time.monotonic() - sampler.start_time
            deadline = time.monotonic() + duration_s + 120
            for proc in procs:
                try:
                    code = proc.popen.wait(timeout=max(1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    raise AgentError(f"{proc.what} still running {duration_s + 120} s after "
                                     "the start") from None
                proc.close()
                proc.check(code)
        finally:
            for proc in procs:
                proc.kill()
            sampler.stop()
    finally:
        for probe in probes:
            probe.stop()
    for proc in procs:
        proc.drop_empty_stderr()
    return started


def execute(spec: dict[str, Any], host: dict[str, Any], out: Path,
            teardown_first: bool = False, source: str = "run spec") -> dict[str, Any]:
    """Run one spec (read from `source`) on this host into `out` (which must not exist yet);
    return host facts. `teardown_first`: remove what an earlier run left before setting up
    (the controller's route asks for it: one agent start per run instead of two)."""
    cls = arm_class(spec["arm"])  # an unknown arm or I/O control fails before anything is made
    control_cls = io_control_class(spec, host, source)
    backend = cgroups.detect()
    wanted = spec.get("cgroup_version")
    if wanted is not None and int(wanted) != backend.version:
        raise AgentError(f"{source}: the run needs cgroup v{wanted}; this host's disk weights "
                         f"are cgroup v{backend.version}'s (a nested host boots as either: "
                         "its host file's nested.cgroup_versions)")
    out.mkdir(parents=True)
    spec = {**spec, "run_id": runfolder.run_id(spec), "host": recorded_host(host)}
    (out / runfolder.SPEC).write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n")
    started = time.monotonic()
    facts: dict[str, Any] = {}
    with host_lock(host), run_log(out / runfolder.RUN_LOG), terminate_as_interrupt():
        log.info("run %s on %s: arm %s, %d tenant(s), %d s", spec["run_id"], host["name"],
                 spec["arm"], len(spec["tenants"]), spec["duration_s"])
        failure: BaseException | None = None
        teardown_s = 0.0
        control = io_control_on(control_cls, backend)
        arm = cls(Context(host, disk.state_root(host), control, out))
        try:
            if teardown_first:
                teardown(host)
            facts = setup_and_run(spec, host, out, started, arm)
        except BaseException as error:
            failure = error
            log.error("run failed: %s", error)
            raise
        finally:
            t0 = time.monotonic()
            try:
                arm.stop()
                teardown(host)
            except BaseException as error:
                log.error("teardown failed: %s", error)
                if failure is None:
                    raise
            teardown_s = time.monotonic() - t0
        facts["timing"]["teardown_s"] = round(teardown_s, 3)
        facts["timing"]["total_s"] = round(time.monotonic() - started, 3)
        log.info("timing: %s", facts["timing"])
    (out / runfolder.HOST).write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    runfolder.write_manifest(out)
    return facts


def setup_and_run(spec: dict[str, Any], host: dict[str, Any], out: Path, started: float,
                  arm: Arm) -> dict[str, Any]:
    root = arm.context.root
    left = (leftovers(root) + cgroups.host_groups_present(host["name"])
            + control_leftovers(host))
    if left:
        raise AgentError(f"host {host['name']} has residue of an earlier run ({left[0]}): "
                         f"run `journalbench teardown --host {host['name']}` first")
    control = arm.context.io_control
    profile = profile_for(host, spec, root)
    device = profile.attach()
    wanted = control.tunables(host, spec)
    control.calibrate(host, profile, device, root, wanted)
    tunables = control.prepare(device, wanted)
    io_fields = control.record(tunables, io_control_choice(spec, host)[1])
    calibration = calibrate.check(host, profile, device, root / "mnt" / "calibrate")
    fsync = calibration["probe"]["fdatasync_4k_ms"]
    log.info("device %s fsync latency %.3f ms (mean), %s write+fdatasync/s", device.path,
             fsync["mean"], fsync["per_s"])
    workloads = {t["name"]: workload_for(t["name"], t["workload"], spec["duration_s"])
                 for t in spec["tenants"]}
    warmup_s = window.warmup_of(spec)
    for workload in workloads.values():
        workload.warmup_s, workload.calibration = warmup_s, calibration
    for workload in workloads.values():  # e.g. a database's client count, cached per host
        calibration.update(workload.calibrate(host, profile, device, root / "mnt" / "calibrate"))
    # tracefs stays mounted afterwards, as most distributions mount it at boot: unmounting it
    # would pull it from under another agent of the same machine (tests run several).
    mounted_tracefs = ensure_tracefs()
    # bpftrace takes a second or so to compile and attach (11-17 s in a TCG guest, a nested
    # host): it does so while the arm sets up, after the device's probe (in a TCG guest its
    # compiling beside the probe cost the probe 12-26% of its rates, even at nice 19; the
    # arm's set-up, on the other hand, is as much CPU, so both share it at one priority)
    devtime = DeviceTimeTracer(root, device.devnum, control.backend.version)
    try:
        root.mkdir(parents=True, exist_ok=True)  # a dedicated disk's run has made nothing yet
        devtime.launch()
        with profile.unmodelled():
            arm.plan_tunnels({name: w.guest_tunnels() for name, w in workloads.items()})
            arm.prepare(device, spec["tenants"])
            arm.start()
            arm.prepare_workloads(workloads)
        arm.after_start()
        facts = host_facts(host, control.backend, io_fields, device, fsync,
                           tool_versions(arm, workloads))
        facts["tracefs_mounted_by_agent"] = mounted_tracefs
        facts["writeback_attributed"] = cgroups.writeback_attributed(
            control.backend, [cgroups.tenant_cgroup(host["name"], t.name) for t in arm.tenants])
        facts["layout"] = arm.facts()
        facts["virt_accel"] = arm.virt_accel()
        facts["file_systems"] = {volume: provenance.file_system(volume)
                                 for volume in dict.fromkeys(t.volume for t in arm.tenants)}
        facts["device_profile"] = profile.facts()
        facts["calibration"] = calibration
        devtime.wait_ready()  # attaching is set-up: it ran beside the arm's, what is left
        setup_s = time.monotonic() - started
        sampler = Sampler(
            out / runfolder.SAMPLES, control, device.name, device.devnum,
            {t.name: cgroups.tenant_cgroup(host["name"], t.name) for t in arm.tenants},
            {t.name: t.weight for t in arm.tenants}, arm.jbd2_threads, host["name"], devtime,
            journal_groups=arm.journal_cgroups())
        log.info("setup took %.2f s; %s", setup_s, WORKLOADS_START)
        t0, cpu0, load0 = time.monotonic(), profile.cpu_seconds(), provenance.load()
        cpus = CpuSampler()
        cpus.start()
        try:
            started_s = measure(workloads, arm, out, sampler, warmup_s + spec["duration_s"])
        finally:
            facts["cpu_during_run"] = cpus.stop()
        workload_s = time.monotonic() - t0
        log.info("%s after %.2f s", WORKLOADS_DONE, workload_s)
        # a busy or stolen CPU during the measured phase is part of what the numbers mean
        facts["load_during_run"] = provenance.load_between(load0, provenance.load())
        facts["timing"] = {"setup_s": round(setup_s, 3), "workload_s": round(workload_s, 3)}
        facts["window"] = window.window(started_s, warmup_s, spec["duration_s"],
                                        round(sampler.start_time * 1e9))
        cpu1 = profile.cpu_seconds()
        if cpu0 is not None and cpu1 is not None:
            # the emulator must not be what limits the tenants: a share of one core
            facts["device_profile"]["emulator_cpu_share"] = round((cpu1 - cpu0) / workload_s, 4)
        for name, workload in workloads.items():
            workload.finish(arm.shell(name), out)
        arm.before_stop()
        facts["layout"].update(arm.results())
    finally:
        devtime.stop()  # already stopped by the sampler, unless set-up failed first
        stop_workloads(arm, workloads)
    return facts


def stop_workloads(arm: Arm, workloads: dict[str, Workload]) -> None:
    """Servers stop inside their tenants; the tenants themselves stop in teardown."""
    for name, workload in workloads.items():
        try:
            workload.stop(arm.shell(name))
        except Exception as error:  # teardown stops the tenant anyway; keep the run's error
            log.error("stopping the workload of %s failed: %s", name, error)


def leftovers(root: Path) -> list[str]:
    """What the workloads' host-side clients, the arms' tenants (containers, guests) and the
    device profiles (an emulator's daemons and FUSE mount) left, found by discovery."""
    return cleanup.leftovers([*WORKLOADS.values(), *ARMS.values(), *PROFILES.values()],
                             root)


def control_leftovers(host: dict[str, Any]) -> list[str]:
    """What the I/O controls set on devices that outlive a run, and the set-up flags of a
    device the machine below provides (a nested host's)."""
    found = [item for cls in cleanup.distinct(IO_CONTROLS.values())
             for item in cls.leftovers(host)]
    return found + [f"set-up flag {flag}" for flag in provided.leftover_flags(host)]


def residue(host: dict[str, Any]) -> list[str]:
    """Everything a run of this host could leave behind that is still there."""
    root = disk.state_root(host)
    found = [f"loop device {d} ({f})" for d, f in disk.loops_backed_by(root)]
    found += [f"mount {m}" for m in disk.mounts_under(root)]
    found += leftovers(root)
    found += control_leftovers(host)
    found += [f"cgroup {g}" for g in cgroups.host_groups_present(host["name"])]
    if trace_instance(host["name"]).exists():
        found.append(f"trace instance {trace_instance(host['name'])}")
    found += [f"bpftrace {pid} (a tracer of this state root)" for pid in tracers_under(root)]
    return found


def teardown(host: dict[str, Any]) -> None:
    """Remove everything a run of this host made, in dependency order; fail if anything stays."""
    root = disk.state_root(host)
    steps = [
        ("trace instance", lambda: remove_trace_instance(host["name"])),
        ("tracers", lambda: remove_tracers_under(root)),
        # clients on the host (a YCSB JVM) first: they talk to servers inside the tenants
        *[(f"{cls.TOOL} clients", lambda cls=cls: cls.clean(host, root))
          for cls in cleanup.distinct(WORKLOADS.values())],
        *[(f"{cls.NAME} tenants", lambda cls=cls: cls.clean(host, root))
          for cls in cleanup.distinct(ARMS.values())],
        ("file systems", lambda: disk.unmount_under(root / "mnt")),
        ("loop devices", lambda: disk.detach_loops(root)),
        # the device below the loop devices (an emulator's FUSE file) goes once they are gone
        *[(f"{cls.NAME} device", lambda cls=cls: cls.clean(root))
          for cls in cleanup.distinct(PROFILES.values())],
        ("other mounts", lambda: disk.unmount_under(root)),
        ("cgroups", lambda: cgroups.remove_host_groups(host["name"])),
        *[(f"{cls.NAME} settings", lambda cls=cls: cls.clean(host))
          for cls in cleanup.distinct(IO_CONTROLS.values())],
        ("set-up flags", lambda: provided.clean(host)),
    ]
    errors = []
    for what, step in steps:
        try:
            step()
        except Exception as error:  # keep going: later steps may still free resources
            errors.append(f"{what}: {error}")
            log.error("teardown of %s failed: %s", what, error)
    image = root / "disk.img"
    if image.exists() and not disk.loops_backed_by(root):
        image.unlink()
    if not disk.mounts_under(root):
        # Empty once unmounted; never rmtree a tree that may still be mounted.
        for directory in [*sorted((root / "mnt").glob("*")), root / "mnt", root]:
            try:
                directory.rmdir()
            except OSError:
                pass  # not there, or holds something that is not ours to delete
    left = residue(host)
    if errors or left:
        raise AgentError(f"teardown of host {host['name']} incomplete: {'; '.join(errors + left)}")
    log.info("teardown complete: nothing left")
