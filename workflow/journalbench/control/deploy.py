"""Where the agent lives on a test host, and putting it there: `deploy` makes sure the host's
python runs this exact agent bundle and has the host file the agent reads."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from journalbench.control.bundle import build_bundle
from journalbench.control.transport import Transport
from journalbench.errors import AgentError, ConfigError

log = logging.getLogger("journalbench.remote")

MIN_PYTHON = (3, 11)


@dataclass(frozen=True)
class HostLayout:
    state_dir: str

    @property
    def agent_dir(self) -> str:
        return f"{self.state_dir}/agent"

    @property
    def host_json(self) -> str:
        return f"{self.agent_dir}/host.json"

    @property
    def pidfile(self) -> str:
        return f"{self.agent_dir}/agent.pid"

    def run_dir(self, campaign: str, run_id: str) -> str:
        return f"{self.state_dir}/runs/{campaign}/{run_id}"


def layout_of(host: dict[str, Any]) -> HostLayout:
    state_dir = str(host.get("state_dir", "/var/lib/journalbench")).rstrip("/")
    if not state_dir.startswith("/") or "/../" in f"{state_dir}/" or state_dir == "":
        raise ConfigError(f"{source_of(host)}: field state_dir: must be an absolute path")
    return HostLayout(state_dir)


def source_of(host: dict[str, Any]) -> str:
    return host.get("_file", f"host {host.get('name', '?')}")


def agent_host_json(host: dict[str, Any]) -> bytes:
    """What the agent gets as --host: the loaded host file, minus controller-only keys."""
    return (
        json.dumps({k: v for k, v in host.items() if not k.startswith("_")}, indent=1) + "\n"
    ).encode()


@dataclass
class Deployment:
    host: dict[str, Any]
    transport: Transport
    layout: HostLayout
    python: str
    python_version: str
    bundle: str

    def agent(self, *args: str) -> list[str]:
        return [self.python, self.bundle, *args]


# Prints the host python's version (or exits 3 when missing / 4 when too old), then the sha256
# of the bundle at $2 when it is there. One python start: each costs ~0.1 s on every run.
DEPLOY_PROBE = (
    (
        'v=$("$1" -c "import sys; print(\'%d.%d.%d\' % sys.version_info[:3]); '
        'sys.exit(sys.version_info[:2] < (MAJOR, MINOR))" 2>/dev/null); rc=$?; '
        '[ -n "$v" ] || exit 3; echo "python=$v"; [ "$rc" = 0 ] || exit 4; '
        '[ -f "$2" ] && echo "bundle=$(sha256sum "$2" | cut -d" " -f1)"; exit 0'
    )
    .replace("MAJOR", str(MIN_PYTHON[0]))
    .replace("MINOR", str(MIN_PYTHON[1]))
)


def deploy(host: dict[str, Any], transport: Transport, *, force: bool = False) -> Deployment:
    """Make sure the host runs this exact agent bundle, and has the host file it needs."""
    local = build_bundle()
    cached = getattr(transport, "_journalbench_deployment", None)
    if cached is not None and not force and cached.bundle.endswith(local.name):
        transport.put_bytes(agent_host_json(transport.agent_host(host)), cached.layout.host_json)
        return cached
    layout = layout_of(host)
    python = host.get("python", "python3")
    remote = f"{layout.agent_dir}/{local.name}"
    facts = _probe_python(host, transport, python, remote)
    if force or facts.get("bundle") != hashlib.sha256(local.read_bytes()).hexdigest():
        log.info("%s: uploading agent bundle %s", transport.label, local.name)
        transport.put(local, remote, mode=0o755)
        _remove_old_bundles(transport, layout, local.name)
        # Once per upload: the same bytes under the same python ran before.
        version = transport.run([python, remote, "--version"], timeout=60, retry=True)
        log.info("%s: %s ready (%s)", transport.label, version.stdout.strip(), remote)
    transport.put_bytes(agent_host_json(transport.agent_host(host)), layout.host_json)
    deployment = Deployment(host, transport, layout, python, facts.get("python", "?"), remote)
    transport._journalbench_deployment = deployment  # type: ignore[attr-defined]
    return deployment


def _probe_python(
    host: dict[str, Any], transport: Transport, python: str, remote: str
) -> dict[str, str]:
    probe = transport.run(
        ["sh", "-c", DEPLOY_PROBE, "jb-probe", python, remote], check=False, timeout=60, retry=True
    )
    if probe.returncode == 3:
        raise AgentError(
            f"{transport.label}: {python} not found; install python3 (>= 3.11) or "
            f"set python: in {source_of(host)}"
        )
    facts = dict(line.split("=", 1) for line in probe.stdout.split() if "=" in line)
    if probe.returncode == 4:
        raise AgentError(
            f"{transport.label}: {python} is {facts.get('python', '?')}, the agent "
            f"needs >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]}; set python: in {source_of(host)}"
        )
    probe.check()
    return facts


def _remove_old_bundles(transport: Transport, layout: HostLayout, keep: str) -> None:
    # Old bundles are dead weight; only this campaign runs agents on this host.
    transport.run(
        ["find", layout.agent_dir, "-maxdepth", "1", "-name", "journalbench-*.pyz",
         "!", "-name", keep, "-delete"],
        check=False,
        retry=True,
    )
