"""`journalbench adopt-reference`: check a campaign continued on a new machine against the
device reference its landed runs were checked against.

Each run's device probe is compared with a reference cached on the host
(`<state_dir>/calibration/`, agent/devices/calibrate.py). A campaign of hours runs in chunks,
and a later chunk may land on a fresh machine of the same kind whose cache is empty: the
agent would then measure a new reference there, and the drift check of the remaining runs
would compare them with the new machine's device instead of the one the campaign's first runs
saw. Every run records the reference it was checked against (host.json `calibration`), so the
campaign's own reference can be put back on the host before it resumes; a probe that then
drifts beyond the profile's limit fails its run, saying the device is not the one calibrated.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from journalbench import runfolder
from journalbench.control.reach import for_host
from journalbench.errors import ConfigError


def campaign_references(folder: Path) -> dict[str, dict[str, Any]]:
    """The reference of each reference file the complete runs under `folder` were checked
    against; a file whose runs recorded different references is an error."""
    found: dict[str, tuple[dict[str, Any], Path]] = {}
    for run in sorted(p for p in folder.iterdir() if runfolder.is_complete(p)):
        calibration = json.loads((run / runfolder.HOST).read_text()).get("calibration")
        if not calibration:
            continue  # a profile without calibration (none recorded)
        path, ref = calibration["reference_file"], calibration["reference"]
        first = found.setdefault(path, (ref, run))
        if first[0] != ref:
            raise ConfigError(
                f"{run / runfolder.HOST}: calibration.reference differs from the one "
                f"{first[1].name} recorded for {path} (measured_at "
                f"{ref.get('measured_at')} vs {first[0].get('measured_at')})")
    return {path: ref for path, (ref, _) in found.items()}


def encoded(reference: dict[str, Any]) -> bytes:
    """The reference as the agent writes its cache file."""
    return (json.dumps(reference, indent=1, sort_keys=True) + "\n").encode()


def adopt(host: dict[str, Any], references: dict[str, dict[str, Any]]) -> list[str]:
    """Write each reference to its file on the host; one line per file saying what was done."""
    cache = PurePosixPath(host["state_dir"]) / "calibration"
    lines = []
    with for_host(host) as transport:
        for path, ref in sorted(references.items()):
            if PurePosixPath(path).parent != cache:
                raise ConfigError(f"{host['name']}: state_dir is {host['state_dir']}, but the "
                                  f"runs' reference file is {path}: not this host's cache")
            held = transport.run(["cat", "--", path], check=False)
            if held.returncode == 0 and held.stdout:
                if json.loads(held.stdout) != ref:
                    raise ConfigError(
                        f"{host['name']}: {path} holds another reference (measured_at "
                        f"{json.loads(held.stdout).get('measured_at')}); the runs were checked "
                        f"against one measured_at {ref.get('measured_at')}. Remove it first "
                        "if the campaign should go on against the runs' reference")
                lines.append(f"{path}: already the runs' reference ({ref.get('measured_at')})")
                continue
            transport.put_bytes(encoded(ref), path)
            lines.append(f"{path}: adopted the reference measured_at {ref.get('measured_at')}")
    return lines


