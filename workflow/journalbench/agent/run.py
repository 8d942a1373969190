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
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from journalbench import runfolder
from journalbench.agent import arms, cgroups, containers, disk
from journalbench.agent.sampler import (
    Sampler,
    ensure_tracefs,
    remove_trace_instance,
    trace_instance,
)
from journalbench.agent.system import log, read, sh, tool_version
from journalbench.agent.workloads import fio
from journalbench.errors import AgentError


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


def tool_versions() -> dict[str, str]:
    return {
        "fio": tool_version("fio", "--version"),
        "lxc": tool_version("lxc-start", "--version"),
        "python": platform.python_version(),
    }


def host_facts(host: dict[str, Any], backend: cgroups.Backend, device: disk.Device,
               bfq: dict[str, str], fsync: dict[str, float]) -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "host": host["name"],
        "kernel": platform.release(),
        "cgroup_version": backend.version,
        "cgroup_root": str(backend.root),
        "scheduler": "bfq",
        "bfq": bfq,
        "device": {
            "path": device.path, "kind": device.kind, "named": device.named,
            "devnum": device.devnum,
            "size_bytes": int(read(device.sysfs / "size")) * 512,
            "rotational": read(device.sysfs / "queue/rotational"),
            "model": backing_model(device),
        },
        "device_fsync_lat_ms": fsync,
        "tools": tool_versions(),
        "virt_accel": None,
        "cpus": os.cpu_count(),
    }


def backing_model(device: disk.Device) -> str:
    """For a loop device, the model of the disk under its backing file."""
    model = device.sysfs / "device/model"
    if model.exists():
        return read(model)
    source = sh("findmnt", "-n", "-o", "SOURCE", "--target", device.named, check=False).strip()
    return f"loop on {source or 'unknown'}"


def prepare_device(host: dict[str, Any]) -> disk.Device:
    if host["device"]["kind"] == "image":
        return disk.attach_image(host)
    device = disk.guard_disk(host["device"]["id"])
    disk.wipe(device)
    return device


def layout_facts(layout: arms.Layout, backend: cgroups.Backend, host: str) -> dict[str, Any]:
    return {
        "arm": layout.arm,
        "tenants": {
            t.name: {
                "volume": t.volume, "data_dir": str(t.data_dir),
                "cgroup": "/" + cgroups.tenant_cgroup(host, t.name),
                "weight_set": t.weight,
                "weight_read_back": backend.weight(cgroups.tenant_cgroup(host, t.name)),
                "jbd2": t.jbd2.name,
            }
            for t in layout.tenants
        },
        "jbd2": [
            {"name": j.name, "pid": j.pid, "tenant": j.tenant,
             "cgroup_during_run": backend.cgroup_of(j.pid)}
            for j in layout.jbd2_threads
        ],
        "mount_options": disk.MOUNT_OPTIONS,
    }


def move_journals(layout: arms.Layout, backend: cgroups.Backend, host: str) -> None:
    """journal-accounted: charge each jbd2 thread to its tenant's cgroup, and check it."""
    for thread in layout.jbd2_threads:
        target = cgroups.tenant_cgroup(host, thread.tenant)
        backend.move_thread(thread.pid, target)
        where = backend.cgroup_of(thread.pid)
        if where != "/" + target:
            raise AgentError(f"{thread.name} is in {where}, not in /{target}")
        log.info("moved %s (pid %d) into /%s", thread.name, thread.pid, target)


def start_tenants(layout: arms.Layout, backend: cgroups.Backend, host: dict[str, Any],
                  lxcpath: Path) -> None:
    for index, tenant in enumerate(layout.tenants):
        config = containers.config_text(
            host["name"], tenant.name, tenant.data_dir, tenant.weight,
            containers.cpu_for(index), backend, lxcpath / f"{tenant.name}.log")
        containers.start(lxcpath, tenant.name, config)
        rel = cgroups.tenant_cgroup(host["name"], tenant.name)
        # LXC sets the weight on the container's own cgroup; cgroup weights only compete
        # among siblings, and our tenant groups are siblings under journalbench/<host>.
        if backend.weight(rel) != tenant.weight:
            raise AgentError(
                f"{rel}: weight reads {backend.weight(rel)}, spec says {tenant.weight}")


def run_workloads(spec: dict[str, Any], layout: arms.Layout, lxcpath: Path, out: Path,
                  sampler: Sampler) -> None:
    workloads = {t["name"]: t["workload"] for t in spec["tenants"]}
    procs = []
    sampler.start()
    try:
        for tenant in layout.tenants:
            argv = fio.run_command(tenant.name, containers.DATA_MOUNT, workloads[tenant.name],
                                   spec["duration_s"])
            stdout = (out / runfolder.fio_file(tenant.name)).open("wb")
            stderr = (out / f"fio-{tenant.name}.stderr").open("wb")
            procs.append((tenant.name, containers.attach(lxcpath, tenant.name, argv, stdout,
                                                          stderr), stdout, stderr))
        deadline = time.monotonic() + spec["duration_s"] + 120
        for name, proc, stdout, stderr in procs:
            code = proc.wait(timeout=max(1, deadline - time.monotonic()))
            stdout.close()
            stderr.close()
            if code != 0:
                detail = (out / f"fio-{name}.stderr").read_text().strip().splitlines()
                raise AgentError(f"fio in {name} exited {code}: {detail[-1] if detail else ''}")
    finally:
        for _, proc, stdout, stderr in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            stdout.close()
            stderr.close()
        sampler.stop()
    for name, *_ in procs:
        stderr_file = out / f"fio-{name}.stderr"
        if stderr_file.stat().st_size == 0:
            stderr_file.unlink()


def execute(spec: dict[str, Any], host: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run one spec on this host into `out` (which must not exist yet); return host facts."""
    if spec["arm"] == "vm":
        raise AgentError("the vm arm is not implemented yet (container arms only)")
    out.mkdir(parents=True)
    spec = {**spec, "run_id": runfolder.run_id(spec), "host": host["name"]}
    (out / runfolder.SPEC).write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n")
    started = time.monotonic()
    facts: dict[str, Any] = {}
    with host_lock(host), run_log(out / runfolder.RUN_LOG), terminate_as_interrupt():
        log.info("run %s on %s: arm %s, %d tenant(s), %d s", spec["run_id"], host["name"],
                 spec["arm"], len(spec["tenants"]), spec["duration_s"])
        failure: BaseException | None = None
        teardown_s = 0.0
        try:
            facts = setup_and_run(spec, host, out, started)
        except BaseException as error:
            failure = error
            log.error("run failed: %s", error)
            raise
        finally:
            t0 = time.monotonic()
            try:
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


def setup_and_run(spec: dict[str, Any], host: dict[str, Any], out: Path,
                  started: float) -> dict[str, Any]:
    root = disk.state_root(host)
    lxcpath = containers.lxc_path(root)
    if containers.names(lxcpath) or cgroups.host_groups_present(host["name"]):
        raise AgentError(f"host {host['name']} has residue of an earlier run: "
                         f"run `journalbench teardown --host {host['name']}` first")
    backend = cgroups.detect()
    device = prepare_device(host)
    bfq = disk.set_bfq(device, {**host["bfq"], **spec.get("bfq", {})})
    fsync = disk.measure_fsync(device)
    log.info("device %s fsync latency %.3f ms (mean)", device.path, fsync["mean"])
    layout = arms.build(spec["arm"], device, root / "mnt", spec["tenants"])
    workloads = {t["name"]: t["workload"] for t in spec["tenants"]}
    for tenant in layout.tenants:
        sh(*fio.layout_command(tenant.data_dir, workloads[tenant.name]), timeout=600)
    # tracefs stays mounted afterwards, as most distributions mount it at boot: unmounting it
    # would pull it from under another agent of the same machine (tests run several).
    mounted_tracefs = ensure_tracefs()
    start_tenants(layout, backend, host, lxcpath)
    if spec["arm"] == "journal-accounted":
        move_journals(layout, backend, host["name"])
    facts = host_facts(host, backend, device, bfq, fsync)
    facts["tracefs_mounted_by_agent"] = mounted_tracefs
    facts["layout"] = layout_facts(layout, backend, host["name"])
    setup_s = time.monotonic() - started
    sampler = Sampler(
        out / runfolder.SAMPLES, backend, device.name, device.devnum,
        {t.name: cgroups.tenant_cgroup(host["name"], t.name) for t in layout.tenants},
        {t.name: t.weight for t in layout.tenants}, layout.jbd2_threads, host["name"])
    log.info("setup took %.2f s; workloads start", setup_s)
    t0 = time.monotonic()
    run_workloads(spec, layout, lxcpath, out, sampler)
    facts["timing"] = {"setup_s": round(setup_s, 3), "workload_s": round(time.monotonic() - t0, 3)}
    return facts


def restore_journals(host: str) -> None:
    """Move every kernel thread found in our cgroups (the jbd2 threads) back to the root."""
    backend = cgroups.detect()
    top = backend.path(cgroups.host_parent(host))
    if not top.is_dir():
        return
    for tasks in top.rglob("tasks" if backend.version == 1 else "cgroup.procs"):
        for tid in tasks.read_text().split():
            comm = Path(f"/proc/{tid}/comm")
            if comm.exists() and comm.read_text().startswith("jbd2/"):
                backend.move_thread(int(tid), "")
                log.info("moved %s back to the root cgroup", comm.read_text().strip())


def residue(host: dict[str, Any]) -> list[str]:
    """Everything a run of this host could leave behind that is still there."""
    root = disk.state_root(host)
    found = [f"loop device {d} ({f})" for d, f in disk.loops_backed_by(root)]
    found += [f"mount {m}" for m in disk.mounts_under(root)]
    found += [f"container {c}" for c in containers.names(containers.lxc_path(root))]
    found += [f"cgroup {g}" for g in cgroups.host_groups_present(host["name"])]
    if trace_instance(host["name"]).exists():
        found.append(f"trace instance {trace_instance(host['name'])}")
    return found


def teardown(host: dict[str, Any]) -> None:
    """Remove everything a run of this host made, in dependency order; fail if anything stays."""
    root = disk.state_root(host)
    steps = [
        ("trace instance", lambda: remove_trace_instance(host["name"])),
        ("jbd2 threads", lambda: restore_journals(host["name"])),
        ("containers", lambda: containers.destroy_all(containers.lxc_path(root))),
        ("mounts", lambda: disk.unmount_under(root)),
        ("loop devices", lambda: disk.detach_loops(root)),
        ("cgroups", lambda: cgroups.remove_host_groups(host["name"])),
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
