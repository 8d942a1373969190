"""What the test device costs, measured as the runs use it, and checked against a reference.

- `probe` (every run, ~2 s): 4 KiB direct write + fdatasync on the raw device (the fdatasync's
  own latency and the cycles per second) and 64 KiB direct sequential writes (MB/s).
- `reference` (once per host, profile and model parameters; cached in <state_dir>/calibration/):
  the probe, plus a high-fsync fio writer alone on its own ext4 (fsync latency, fsync/s, MB/s),
  the thesis's own yardstick of a disk (~18 ms per fsync on its HDD), and how busy the
  machine's CPUs were meanwhile (a reference measured on a busy machine is not kept).

A profile may bound its reference's high-fsync latency (`ACCEPT_FSYNC_MS`, e.g. the thesis's
regime for `hdd`) and the drift of a run's probe from its reference (`DRIFT_LIMIT`).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from journalbench.agent import disk, provenance
from journalbench.agent.devices.base import DeviceProfile
from journalbench.agent.system import log, sh
from journalbench.agent.workloads import fio
from journalbench.errors import AgentError

PROBE_S = 1
SEQ_PROBE = "500ms"
DRIFTING = ("write_fsync_per_s", "seq_write_mb_s")  # what a run's probe is compared on
# share of all cores busy while the reference was measured above which it is not kept: the
# reference's own fio and emulator stay well below it on 2 cores, another busy core does not
BUSY_LIMIT = 0.6


def fio_json(*args: str, timeout: float) -> dict[str, Any]:
    return fio_jobs(*args, timeout=timeout)[0]


def fio_jobs(*args: str, timeout: float) -> list[dict[str, Any]]:
    out = sh("fio", *args, "--output-format=json", timeout=timeout)
    return json.loads(out[out.index("{"):])["jobs"]


def seq_probe_job(device: disk.Device) -> list[str]:
    """64 KiB direct sequential writes into the device's second 64 MiB (the fsync probe uses
    the first MiB), until the 64 MiB are written or half a second has passed: a fast disk is
    done in a fraction of a second, a slow one is measured for 0.5 s."""
    return ["--name=seq-probe", "--stonewall", f"--filename={device.path}", "--rw=write",
            "--bs=64k", "--direct=1", "--offset=64m", "--size=64m", f"--runtime={SEQ_PROBE}"]


def probe(device: disk.Device) -> dict[str, Any]:
    """The fsync and sequential-write probes, one after the other in one fio process, the
    fsync probe's region prefilled without fio: a fio start, and each further job of it,
    costs ~0.25 s of fio's own waiting, paid twice per run rather than three times."""
    disk.prefill(device)
    jobs = {job["jobname"]: job for job in fio_jobs(
        *disk.fsync_probe_jobs(device, PROBE_S), *seq_probe_job(device),
        timeout=120 + PROBE_S)}
    fsync = disk.fsync_figures(device, jobs[disk.FSYNC_PROBE], PROBE_S)
    return {"fdatasync_4k_ms": fsync, "write_fsync_per_s": fsync["per_s"],
            "seq_write_mb_s": round(jobs["seq-probe"]["write"]["bw_bytes"] / 1e6, 3)}


def high_fsync_alone(device: disk.Device, mount: Path, profile: DeviceProfile
                     ) -> dict[str, float]:
    """The high-fsync preset alone on an ext4 of its own over the whole device."""
    with profile.unmodelled():
        disk.wipe(device)
        disk.mkfs_ext4(device.path, "jb-calibrate")
        disk.mount_ext4(device.path, mount)
    try:
        seconds = profile.REFERENCE_S
        preset = {"tool": "fio", "preset": "high-fsync", "size_mb": 64}
        with profile.unmodelled():
            sh(*fio.layout_command(str(mount), preset), timeout=600)
        argv = fio.run_command("calibrate", str(mount), preset, seconds)
        job = fio_json(*[a for a in argv[1:] if not a.startswith("--output-format")],
                       timeout=seconds + 120)
    finally:
        sh("umount", str(mount))
        mount.rmdir()
    sync = job["sync"]["lat_ns"]
    if not sync.get("N"):
        raise AgentError(f"{device.path}: the high-fsync calibration recorded no fsync")
    return {"high_fsync_ms": round(sync["mean"] / 1e6, 3),
            "high_fsync_per_s": round(sync["N"] / (job["job_runtime"] / 1000), 3),
            "high_fsync_mb_s": round(job["write"]["bw_bytes"] / 1e6, 3),
            "seconds": seconds}


def reference_path(host: dict[str, Any], profile: DeviceProfile) -> Path:
    key = json.dumps(profile.facts(), sort_keys=True) + json.dumps(host["device"], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return Path(host["state_dir"]) / "calibration" / f"{host['name']}-{profile.NAME}-{digest}.json"


def reference(host: dict[str, Any], profile: DeviceProfile, device: disk.Device,
              mount: Path) -> dict[str, Any]:
    """The cached reference of this host, profile and parameters, measured when missing."""
    path = reference_path(host, profile)
    if path.is_file():
        return json.loads(path.read_text())
    log.info("calibrating device profile %s (once per host and parameters)", profile.NAME)
    before = provenance.load()
    measured = {**probe(device), **high_fsync_alone(device, mount, profile),
                "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    measured["load"] = provenance.load_between(before, provenance.load())
    accept = profile.ACCEPT_FSYNC_MS
    if accept:
        measured["accept_fsync_ms"] = list(accept)
        measured["within_accept"] = accept[0] <= measured["high_fsync_ms"] <= accept[1]
    if accept and not measured["within_accept"] and not profile.ENFORCE_ACCEPT:
        log.warning("device profile %s: a high-fsync writer alone waits %s ms per fsync, "
                    "outside the %s-%s ms of the profile (recorded as within_accept: false)",
                    profile.NAME, measured["high_fsync_ms"], *accept)
    elif accept and not measured["within_accept"]:
        raise AgentError(
            f"device profile {profile.NAME}: a high-fsync writer alone waits "
            f"{measured['high_fsync_ms']} ms per fsync, outside the {accept[0]}-{accept[1]} ms "
            "this profile must give; check its parameters (host file device_profiles)")
    if measured["load"]["busy_share"] > BUSY_LIMIT:
        # a reference taken beside other work would set every later run's drift against a
        # slower device than the one calibrated: this run uses it, the next measures again
        log.warning("device profile %s: reference measured while the machine was %.0f%% busy "
                    "(more than %.0f%%): used for this run only, not kept", profile.NAME,
                    100 * measured["load"]["busy_share"], 100 * BUSY_LIMIT)
        return measured
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(measured, indent=1, sort_keys=True) + "\n")
    tmp.rename(path)
    return measured


def drift(run: dict[str, Any], ref: dict[str, Any]) -> dict[str, float]:
    """Relative difference of the run's probe from the reference, per compared figure."""
    return {key: round(run[key] / ref[key] - 1, 4) for key in DRIFTING if ref.get(key)}


def check(host: dict[str, Any], profile: DeviceProfile, device: disk.Device,
          mount: Path) -> dict[str, Any]:
    """The calibration record of one run: its probe, the reference, and their drift.

    A probe beyond the drift limit is taken once more before the run fails: the sequential
    probe lasts 0.5 s, and one hiccup in it (seen once in ~190 hdd runs: -12% where the others
    lay within +4.5..+6.4%) must not stop a campaign of hours. The record keeps the first
    probe as `retried` when the second was needed, and the run fails if that drifts too."""
    ref = reference(host, profile, device, mount)
    run = probe(device)
    record = {"probe": run, "reference": ref, "drift": drift(run, ref),
              "drift_limit": profile.DRIFT_LIMIT, "reference_file": str(
                  reference_path(host, profile))}
    if not drifted(record):
        return record
    log.warning("device profile %s: probe drifted %s from its reference; probing again",
                profile.NAME, record["drift"])
    run = probe(device)
    record.update(retried={"probe": record["probe"], "drift": record["drift"]}, probe=run,
                  drift=drift(run, ref))
    moved = drifted(record)
    if moved:
        key = moved[0]
        raise AgentError(
            f"device profile {profile.NAME}: {key} is {run[key]}, {record['drift'][key]:+.0%} "
            f"from its reference {ref[key]} ({record['reference_file']}) in two probes in a "
            f"row; more than {profile.DRIFT_LIMIT:.0%}: the device is not the one calibrated")
    return record


def drifted(record: dict[str, Any]) -> list[str]:
    """The compared figures of the record's probe beyond the profile's drift limit."""
    limit = record["drift_limit"]
    return [] if limit is None else [k for k, v in record["drift"].items() if abs(v) > limit]
