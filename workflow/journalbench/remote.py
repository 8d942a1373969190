"""Drive a test host from the controller: check it, deploy the agent, run a spec, fetch it back.

- `journalbench check-host HOST`: what the agent needs on HOST, a table of what is missing and
  the apt-get command that installs it; non-zero exit when something required is missing.
- `journalbench deploy HOST`: build the agent bundle (a zipapp of the stdlib-only part of this
  package), upload it to <state_dir>/agent/ unless the same bundle is already there, and check
  that the host's python runs it.
- `run_remote(host, spec, dest)` (`journalbench run-remote`): one run on HOST into
  <state_dir>/runs/<campaign>/<run_id>/, fetched back atomically: the local folder appears with
  a valid manifest or not at all. A lost connection or a killed campaign resumes: a complete
  local folder is kept; an agent still running from before is killed, the host is torn down
  (`journalbench teardown` over the transport) and the run is done again.
- `journalbench recover --host HOST`: that clean-up by hand.

The same code drives the embedded local host (LocalTransport), so a spec gives the same run
folder wherever it runs. Top-level imports are stdlib-only: this module is in the agent bundle
(cli.py imports it) and must not pull in paramiko, yaml or jsonschema there.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import logging
import os
import re
import shutil
import sys
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from journalbench import runfolder
from journalbench.errors import AgentError, ConfigError

if TYPE_CHECKING:
    from journalbench.transport import Transport

log = logging.getLogger("journalbench.remote")

PACKAGE_DIR = Path(__file__).resolve().parent
# The bundle holds the whole agent package (its modules are imported lazily by the commands),
# the command line, every command module cli.py lists, and whatever those import at top level.
# hosts.py, schemas.py, transport.py, campaign.py... stay out as long as nothing in the bundle
# imports them at top level; their absence is how the agent knows it gets plain, already
# validated JSON. A third-party import at top level in any bundled module fails the build.
BUNDLE_PACKAGES = ("agent",)
BUNDLE_MAIN = "import sys\n\nfrom journalbench.cli import main\n\nsys.exit(main())\n"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
MIN_PYTHON = (3, 11)
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
AGENT_STOP_GRACE_S = 60  # a TERMed agent tears its run down itself before we look
RUN_OVERHEAD_S = 1800  # set-up (image, mkfs, containers, VMs boot) and teardown of one run

# ---------------------------------------------------------------------------------------------
# the agent bundle


def _module_file(dotted: str) -> Path | None:
    parts = dotted.split(".")
    if parts[0] != "journalbench":
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _top_level_imports(path: Path) -> set[str]:
    """Dotted names a module imports when it is loaded (not inside functions or TYPE_CHECKING)."""
    return _imports_in(ast.parse(path.read_text(), str(path)).body)


def _imports_in(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module != "__future__":
                names.add(node.module)
                names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Try):
            # try: import x / except ImportError: is how optional imports look; the body runs.
            names |= _imports_in(node.body)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            names |= _imports_in(node.body) | _imports_in(node.orelse)
    return names


def _command_modules() -> list[str]:
    """COMMAND_MODULES of cli.py, read without importing it."""
    tree = ast.parse((PACKAGE_DIR / "cli.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMMAND_MODULES" for t in node.targets
        ):
            return [ast.literal_eval(elt) for elt in node.value.elts]
    return []


def bundle_members() -> list[tuple[str, Path]]:
    files: set[Path] = {PACKAGE_DIR / "__init__.py", PACKAGE_DIR / "cli.py"}
    for package in BUNDLE_PACKAGES:
        for path in (PACKAGE_DIR / package).rglob("*"):
            relative = path.relative_to(PACKAGE_DIR)
            if (
                path.is_file()
                and "__pycache__" not in relative.parts
                and not any(part.startswith(".") for part in relative.parts)
                and path.suffix not in (".pyc", ".pyo", ".swp")
                and not path.name.endswith("~")
            ):
                files.add(path)
    queue = [f for m in _command_modules() if (f := _module_file(m)) is not None]
    queue += [f for f in files if f.suffix == ".py"]
    seen: set[Path] = set()
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        files.add(path)
        # Parent packages' __init__ run on import too.
        for parent in path.relative_to(PACKAGE_DIR).parents:
            init = PACKAGE_DIR / parent / "__init__.py"
            if init.is_file() and init not in seen:
                queue.append(init)
        for name in _top_level_imports(path):
            root = name.split(".")[0]
            if root == "journalbench":
                target = _module_file(name)
                if target is not None and target not in seen:
                    queue.append(target)
            elif root not in sys.stdlib_module_names:
                raise AgentError(
                    f"{path}: imports {name} at top level, but the agent bundle must be "
                    "stdlib-only; import it inside the function that needs it"
                )
    return sorted((f"journalbench/{p.relative_to(PACKAGE_DIR).as_posix()}", p) for p in files)


def bundle_bytes() -> bytes:
    """The zipapp, byte for byte the same for the same sources (fixed order, times, modes)."""
    buffer = io.BytesIO()
    buffer.write(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        entries = [("__main__.py", BUNDLE_MAIN.encode())]
        entries += [(name, path.read_bytes()) for name, path in bundle_members()]
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    return buffer.getvalue()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "journalbench"


def build_bundle(out_dir: Path | None = None) -> Path:
    """Write the bundle as journalbench-<sha256 prefix>.pyz (atomically) and return its path."""
    data = bundle_bytes()
    digest = hashlib.sha256(data).hexdigest()
    out_dir = out_dir or cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"journalbench-{digest[:16]}.pyz"
    if not target.is_file() or hashlib.sha256(target.read_bytes()).hexdigest() != digest:
        tmp = out_dir / f".{target.name}.{uuid.uuid4().hex[:8]}"
        tmp.write_bytes(data)
        tmp.chmod(0o755)
        os.replace(tmp, target)
    # Bundles of older sources; an hour's grace for a concurrent build that still uploads one.
    for old in out_dir.glob("journalbench-*.pyz"):
        if old != target and time.time() - old.stat().st_mtime > 3600:
            old.unlink(missing_ok=True)
    return target


# ---------------------------------------------------------------------------------------------
# where things live on the host


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


# ---------------------------------------------------------------------------------------------
# deploy


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
# of the bundle at $2 when it is there.
DEPLOY_PROBE = (
    (
        'v=$("$1" -c "import sys; print(\'%d.%d.%d\' % sys.version_info[:3])" 2>/dev/null) '
        '|| exit 3; echo "python=$v"; '
        '"$1" -c "import sys; sys.exit(sys.version_info[:2] < (MAJOR, MINOR))" || exit 4; '
        '[ -f "$2" ] && echo "bundle=$(sha256sum "$2" | cut -d" " -f1)"; exit 0'
    )
    .replace("MAJOR", str(MIN_PYTHON[0]))
    .replace("MINOR", str(MIN_PYTHON[1]))
)


def deploy(host: dict[str, Any], transport: Transport, *, force: bool = False) -> Deployment:
    """Make sure the host runs this exact agent bundle, and has the host file it needs."""
    local = build_bundle()
    digest = hashlib.sha256(local.read_bytes()).hexdigest()
    cached = getattr(transport, "_journalbench_deployment", None)
    if cached is not None and not force and cached.bundle.endswith(local.name):
        transport.put_bytes(agent_host_json(host), cached.layout.host_json)
        return cached
    layout = layout_of(host)
    python = host.get("python", "python3")
    remote = f"{layout.agent_dir}/{local.name}"
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
    if force or facts.get("bundle") != digest:
        log.info("%s: uploading agent bundle %s", transport.label, local.name)
        transport.put(local, remote, mode=0o755)
        # Old bundles are dead weight; only this campaign runs agents on this host.
        transport.run(
            [
                "find",
                layout.agent_dir,
                "-maxdepth",
                "1",
                "-name",
                "journalbench-*.pyz",
                "!",
                "-name",
                local.name,
                "-delete",
            ],
            check=False,
            retry=True,
        )
    transport.put_bytes(agent_host_json(host), layout.host_json)
    version = transport.run([python, remote, "--version"], timeout=60, retry=True)
    log.info("%s: %s ready (%s)", transport.label, version.stdout.strip(), remote)
    deployment = Deployment(host, transport, layout, python, facts.get("python", "?"), remote)
    transport._journalbench_deployment = deployment  # type: ignore[attr-defined]
    return deployment


# ---------------------------------------------------------------------------------------------
# one run, fetched atomically, with resume


def _agent_scripts() -> tuple[str, str]:
    from journalbench.transport import KILL_FN, STAT_FN

    # Run the agent with its identity (pid, process group, start time) in a pidfile, removed
    # when it ends however it ends; a pidfile left behind means a run was cut off.
    run = STAT_FN + 'p=$1; shift; echo "$$ $(st $$)" > "$p"; "$@"; rc=$?; rm -f "$p"; exit $rc'
    # Kill the agent named in a pidfile (if that very process still runs), then drop the file.
    # Prints "reaped" when there was a pidfile: the host then needs a teardown.
    reap = (
        STAT_FN
        + KILL_FN
        + (
            '[ -f "$1" ] || exit 0; read pid pg start < "$1"; '
            'kg "$pid" "$start" "$2"; rm -f "$1"; echo reaped'
        )
    )
    return run, reap


def reap(dep: Deployment) -> bool:
    """Stop an agent left running by a cut-off run (TERM, then KILL after a grace during
    which it tears its run down itself); True if a cut-off run was registered."""
    _, reap_script = _agent_scripts()
    result = dep.transport.run(
        ["sh", "-c", reap_script, "jb-reap", dep.layout.pidfile, str(AGENT_STOP_GRACE_S)],
        timeout=AGENT_STOP_GRACE_S + 60,
        retry=True,
    )
    if "reaped" in result.stdout:
        log.warning(
            "%s: an interrupted run was still registered (%s); tearing down",
            dep.transport.label,
            result.stdout.strip().replace("\n", ", "),
        )
        return True
    return False


def teardown(dep: Deployment, on_output: Callable[[str, str], None] | None = None) -> None:
    """`journalbench teardown` on the host: idempotent, and it verifies that nothing is left."""
    dep.transport.run(
        dep.agent("teardown", "--host", dep.layout.host_json),
        timeout=600,
        retry=True,
        on_output=on_output,
    )


def reap_and_teardown(dep: Deployment, on_output: Callable[[str, str], None] | None = None) -> bool:
    reaped = reap(dep)
    teardown(dep, on_output)
    return reaped


def fetch_run(transport: Transport, remote_dir: str, dest: Path) -> list[str]:
    """Copy a remote run folder to dest atomically; return why not (empty when it worked).

    The copy lands in a hidden sibling of dest, is checked against its manifest there, and only
    then renamed into place, so dest is always either absent or complete.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.fetch-{uuid.uuid4().hex[:8]}"
    try:
        transport.get_tree(remote_dir, tmp)
        problems = runfolder.manifest_problems(tmp)
        if problems:
            return [p.replace(str(tmp), f"{transport.label}:{remote_dir}") for p in problems]
        if dest.exists():
            if runfolder.is_complete(dest):
                return []  # someone else finished it meanwhile; keep theirs
            shutil.rmtree(dest)
        os.rename(tmp, dest)
        _fsync_dir(dest.parent)
        return []
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_fetch_leftovers(dest: Path) -> None:
    """Temp folders of a fetch that was killed half-way (never renamed into place)."""
    if dest.parent.is_dir():
        for stale in dest.parent.glob(f".{dest.name}.fetch-*"):
            shutil.rmtree(stale, ignore_errors=True)


def run_remote(
    host: dict[str, Any],
    spec: dict[str, Any],
    dest: Path | str,
    *,
    transport: Transport | None = None,
    attempts: int = 3,
    timeout_s: float | None = None,
    on_output: Callable[[str, str], None] | None = None,
    keep_remote: bool = False,
) -> Path:
    """Run spec on host and leave its complete run folder at dest (or raise, leaving none).

    A complete dest is kept as it is (resume). A remote folder of the same run that completed
    while we were away is fetched instead of run again. A lost connection is retried up to
    `attempts` times: reconnect, stop the cut-off agent, tear down, run again.
    """
    from journalbench.transport import CommandTimeout, ConnectionLost, TransportError, for_host

    dest = Path(dest)
    if runfolder.is_complete(dest):
        log.info("%s: complete, kept", dest)
        return dest
    _validate_spec(spec)
    rid = runfolder.run_id(spec)
    campaign = str(spec.get("campaign", "adhoc"))
    if not SAFE_NAME.match(campaign):
        raise ConfigError(f"spec: field campaign: {campaign!r} is not a safe folder name")
    remove_fetch_leftovers(dest)
    own = transport is None
    transport = transport or for_host(host)
    timeout = timeout_s if timeout_s is not None else spec["duration_s"] + RUN_OVERHEAD_S
    run_script, _ = _agent_scripts()
    try:
        for attempt in range(1, attempts + 1):
            try:
                dep = deploy(host, transport)
                remote_dir = dep.layout.run_dir(campaign, rid)
                remote_spec = f"{remote_dir}.spec.json"
                reaped = reap(dep)
                if _remote_exists(transport, remote_dir):
                    # A run that finished while the controller was gone is as good as a new one.
                    if not fetch_run(transport, remote_dir, dest):
                        log.info("%s: fetched run %s completed earlier", transport.label, rid)
                        if reaped:
                            teardown(dep, on_output)
                        _remove_remote(transport, remote_dir, remote_spec, keep_remote)
                        return dest
                # Every run starts on a clean host, whatever an earlier, cut-off or crashed run
                # left (the agent refuses to start on residue); this costs one agent start.
                teardown(dep, on_output)
                transport.run(["rm", "-rf", "--", remote_dir], retry=True)
                transport.put_bytes((runfolder.canonical_json(spec) + "\n").encode(), remote_spec)
                agent_run = dep.agent(
                    "run", remote_spec, "--host", dep.layout.host_json, "--out", remote_dir
                )
                try:
                    result = transport.run(
                        ["sh", "-c", run_script, "jb-agent", dep.layout.pidfile, *agent_run],
                        timeout=timeout,
                        on_output=on_output,
                        check=False,
                    )
                except CommandTimeout:
                    # The transport TERMed the agent (KILL after a grace); whatever its own
                    # clean-up did not finish, teardown does, before we give up on the run.
                    _teardown_quietly(dep, on_output)
                    raise
                if result.returncode != 0:
                    lines = (result.stderr.strip() or result.stdout.strip()).splitlines()
                    _teardown_quietly(dep, on_output)
                    raise AgentError(
                        f"{transport.label}: run {rid} failed (exit {result.returncode}): "
                        f"{lines[-1] if lines else 'no output'}"
                    )
                problems = fetch_run(transport, remote_dir, dest)
                if problems:
                    raise AgentError(
                        f"{transport.label}: run {rid} fetched incomplete: {problems[0]}"
                    )
                _remove_remote(transport, remote_dir, remote_spec, keep_remote)
                return dest
            except ConnectionLost as error:
                if attempt == attempts:
                    raise TransportError(
                        f"{error}; gave up on run {rid} after {attempts} attempts"
                    ) from None
                log.warning(
                    "%s (attempt %d/%d): reconnecting, tearing down, running %s again",
                    error,
                    attempt,
                    attempts,
                    rid,
                )
                transport.close()
                time.sleep(min(2**attempt, 10))
        raise AssertionError("unreachable")
    finally:
        if own:
            transport.close()


def _teardown_quietly(dep: Deployment, on_output: Callable[[str, str], None] | None) -> None:
    """Teardown after a failed run: its own failure must not hide the run's error."""
    from journalbench.transport import TransportError

    try:
        reap_and_teardown(dep, on_output)
    except TransportError as error:
        log.warning("%s: teardown after the failed run: %s", dep.transport.label, error)


def _validate_spec(spec: dict[str, Any]) -> None:
    try:
        from journalbench.schemas import validate
    except ImportError:  # inside the bundle; the controller validated already
        return
    validate(spec, "run-spec", "spec")


def _remote_exists(transport: Transport, path: str) -> bool:
    return transport.run(["test", "-d", path], check=False, retry=True).returncode == 0


def _remove_remote(transport: Transport, remote_dir: str, remote_spec: str, keep: bool) -> None:
    if not keep:
        transport.run(["rm", "-rf", "--", remote_dir, remote_spec], retry=True)


# ---------------------------------------------------------------------------------------------
# check-host


@dataclass
class Check:
    name: str
    required: bool
    ok: bool
    found: str
    need: str
    package: str | None = None
    fix: str | None = None

    @property
    def status(self) -> str:
        if self.ok:
            return "ok"
        return "MISSING" if self.required else "missing (optional)"


# Facts about the host as key=value lines. Values from the host file arrive as $1.. only.
PROBE_SCRIPT = r"""
state=$1; py=$2; dev=$3
echo "uid=$(id -u)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "cgroup_fs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null)"
awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ {f=1} END {exit !f}' /proc/mounts \
  && echo cgroup_v1_blkio=yes
for f in /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/unified/cgroup.controllers; do
  [ -f "$f" ] && grep -qw io "$f" && echo cgroup_v2_io=yes
done
bfq=no
grep -qw bfq /sys/block/*/queue/scheduler 2>/dev/null && bfq=active
[ "$bfq" = no ] && [ -d /sys/module/bfq ] && bfq=loaded
[ "$bfq" = no ] && modprobe -n bfq 2>/dev/null && bfq=module
echo "bfq=$bfq"
[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && echo kvm=yes
echo "python=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)"
for tool in fio lxc-start lxc-attach losetup sfdisk partx wipefs findmnt mkfs.ext4 mount tar \
    sha256sum "qemu-system-$(uname -m)" bpftrace sysbench mariadbd redis-server java; do
  echo "tool_$tool=$(command -v "$tool" 2>/dev/null)"
done
d=$state; while [ ! -d "$d" ]; do d=$(dirname "$d"); done
echo "space_dir=$d"
echo "space_kb=$(df -Pk "$d" | awk 'NR == 2 {print $4}')"
if [ -n "$dev" ]; then
  echo "device_path=$(readlink -f "$dev" 2>/dev/null)"
  [ -b "$dev" ] && echo device_block=yes
  [ -b "$dev" ] && echo "device_bytes=$(blockdev --getsize64 "$dev" 2>/dev/null)"
  grep -q "^$(readlink -f "$dev") " /proc/mounts && echo device_mounted=yes
fi
exit 0
"""

# (tool, package, required, what for)
TOOLS = (
    ("fio", "fio", True, "fio workloads"),
    ("lxc-start", "lxc", True, "container arms"),
    ("lxc-attach", "lxc", True, "container arms"),
    ("losetup", "mount", True, "image device"),
    ("sfdisk", "fdisk", True, "partitions"),
    ("partx", "util-linux", True, "partitions"),
    ("wipefs", "util-linux", True, "device wipe"),
    ("findmnt", "util-linux", True, "device guard"),
    ("mkfs.ext4", "e2fsprogs", True, "ext4 volumes"),
    ("mount", "mount", True, "volumes"),
    ("tar", "tar", True, "fetching run folders"),
    ("sha256sum", "coreutils", True, "deploy"),
    ("qemu-system-{arch}", "qemu-system-{qarch}", True, "vm arm"),
    ("bpftrace", "bpftrace", False, "fsync latency of database workloads"),
    ("sysbench", "sysbench", False, "MySQL/MariaDB workloads"),
    ("mariadbd", "mariadb-server", False, "MySQL/MariaDB workloads"),
    ("redis-server", "redis-server", False, "Redis workloads"),
    ("java", "default-jre-headless", False, "YCSB (Redis workloads)"),
)
QEMU_PACKAGE_ARCH = {"x86_64": "x86", "aarch64": "arm", "ppc64le": "ppc", "s390x": "s390x"}


def probe_host(host: dict[str, Any], transport: Transport) -> dict[str, str]:
    device = host.get("device", {})
    result = transport.run(
        [
            "sh",
            "-c",
            PROBE_SCRIPT,
            "jb-check",
            layout_of(host).state_dir,
            host.get("python", "python3"),
            device.get("id", "") if device.get("kind") == "disk" else "",
        ],
        timeout=120,
        retry=True,
    )
    facts: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            facts[key.strip()] = value.strip()
    return facts


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def evaluate(host: dict[str, Any], facts: dict[str, str]) -> list[Check]:
    """Turn probe facts into checks (pure: tested without a host)."""
    checks: list[Check] = []
    arch = facts.get("arch", "x86_64")
    checks.append(
        Check(
            "root",
            True,
            facts.get("uid") == "0",
            f"uid {facts.get('uid', '?')}",
            "root (or ssh.sudo)",
            fix="log in as root or set ssh.sudo: true",
        )
    )
    kernel = facts.get("kernel", "")
    checks.append(
        Check(
            "kernel",
            True,
            _version_tuple(kernel) >= (4, 12),
            kernel or "?",
            ">= 4.12 (BFQ)",
            fix="upgrade the kernel",
        )
    )
    v1 = facts.get("cgroup_v1_blkio") == "yes"
    v2 = facts.get("cgroup_v2_io") == "yes"
    found = ", ".join(x for x, ok in (("v1 blkio", v1), ("v2 io", v2)) if ok) or (
        f"no blkio/io controller ({facts.get('cgroup_fs', '?')})"
    )
    checks.append(
        Check(
            "cgroup",
            True,
            v1 or v2,
            found,
            "v1 blkio or v2 io controller",
            fix="mount the blkio (v1) or enable the io controller (v2)",
        )
    )
    bfq = facts.get("bfq", "no")
    checks.append(
        Check(
            "BFQ",
            True,
            bfq != "no",
            bfq,
            "bfq I/O scheduler",
            fix="modprobe bfq (kernel with CONFIG_IOSCHED_BFQ)",
        )
    )
    python = facts.get("python", "")
    py_ok = bool(python) and _version_tuple(python)[:2] >= MIN_PYTHON
    checks.append(
        Check(
            "python",
            True,
            py_ok,
            python or "missing",
            f"{host.get('python', 'python3')} >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]}",
            package="python3" if not python else None,
            fix=None if not python else "install Python >= 3.11, set python:",
        )
    )
    for tool, package, required, purpose in TOOLS:
        tool = tool.format(arch=arch)
        package = package.format(qarch=QEMU_PACKAGE_ARCH.get(arch, arch))
        path = facts.get(f"tool_{tool}", "")
        checks.append(Check(tool, required, bool(path), path or "missing", purpose, package))
    kvm = facts.get("kvm") == "yes"
    checks.append(
        Check(
            "KVM",
            False,
            kvm,
            "/dev/kvm" if kvm else "no (VMs fall back to TCG)",
            "fast vm arm",
            fix="enable virtualization / load kvm module",
        )
    )
    device = host.get("device", {})
    space_kb = int(facts.get("space_kb") or 0)
    if device.get("kind") == "image":
        need_kb = int(device.get("size_gb", 12)) * 1024 * 1024 + 1024 * 1024
        need = f">= {need_kb // (1024 * 1024)} GiB (image {device.get('size_gb', 12)} GiB + 1)"
    else:
        need_kb = 1024 * 1024
        need = ">= 1 GiB"
        dev_ok = facts.get("device_block") == "yes" and facts.get("device_mounted") != "yes"
        found = facts.get("device_path") or "missing"
        if facts.get("device_mounted") == "yes":
            found += " (MOUNTED)"
        checks.append(
            Check(
                "device",
                True,
                dev_ok,
                found,
                f"{device.get('id')}: block device, not mounted",
                fix="fix device.id in the host file",
            )
        )
    checks.append(
        Check(
            f"space in {facts.get('space_dir', '?')}",
            True,
            space_kb >= need_kb,
            f"{space_kb / (1024 * 1024):.1f} GiB free",
            need,
            fix="free space or move state_dir",
        )
    )
    return checks


def apt_command(checks: list[Check]) -> str | None:
    packages = sorted({c.package for c in checks if not c.ok and c.package})
    if not packages:
        return None
    return "apt-get install -y " + " ".join(packages)


def format_checks(label: str, checks: list[Check]) -> str:
    rows = [("check", "status", "found", "needed for")]
    rows += [(c.name, c.status, c.found, c.need) for c in checks]
    widths = [min(max(len(r[i]) for r in rows), 48) for i in range(3)]
    lines = [f"host {label}"]
    for row in rows:
        lines.append(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[3]
        )
    missing = [c for c in checks if not c.ok]
    if not missing:
        lines.append("everything the agent needs is there")
    apt = apt_command(checks)
    if apt:
        lines.append(f"to install the missing packages: {apt}")
    for c in missing:
        if c.fix and not c.package:
            lines.append(f"{c.name}: {c.fix}")
    return "\n".join(lines)


def check_host(host: dict[str, Any], transport: Transport | None = None) -> list[Check]:
    from journalbench.transport import for_host

    own = transport is None
    transport = transport or for_host(host)
    try:
        return evaluate(host, probe_host(host, transport))
    finally:
        if own:
            transport.close()


# ---------------------------------------------------------------------------------------------
# command line


def register(subparsers: argparse._SubParsersAction) -> None:
    check = subparsers.add_parser(
        "check-host",
        help="check that a test host has what the agent needs",
        description="Probe HOST (over its transport) for kernel, cgroup version, BFQ, LXC, fio, "
        "QEMU/KVM, python and free space; print what is missing and the apt-get "
        "command that installs it. Exit 1 when something required is missing.",
    )
    check.add_argument("host", help="host name in hosts/ or host file path")
    check.set_defaults(func=cmd_check_host)

    dep = subparsers.add_parser(
        "deploy",
        help="upload the agent bundle to a test host",
        description="Build the agent bundle (zipapp, stdlib only), upload it to "
        "<state_dir>/agent/ on HOST unless already there, and check it runs.",
    )
    dep.add_argument("host", help="host name in hosts/ or host file path")
    dep.add_argument("--force", action="store_true", help="upload even if already there")
    dep.set_defaults(func=cmd_deploy)

    run = subparsers.add_parser(
        "run-remote",
        help="run a spec on a host over its transport and fetch the run folder",
        description="Run SPEC on HOST (SSH or local) and fetch the run folder to OUT "
        "atomically. A complete OUT is kept; an interrupted run is torn down on "
        "the host and run again.",
    )
    run.add_argument("spec", help="run spec (YAML or JSON)")
    run.add_argument("--host", required=True, help="host name in hosts/ or host file path")
    run.add_argument("--out", required=True, type=Path, help="local run folder")
    run.add_argument("--attempts", type=int, default=3, help="tries after a lost connection")
    run.add_argument("--quiet", action="store_true", help="do not echo the agent's output")
    run.set_defaults(func=cmd_run_remote)

    rec = subparsers.add_parser(
        "recover",
        help="stop a cut-off run on a host and tear it down (over its transport)",
        description="Kill an agent left running by an interrupted run on HOST, then run "
        "`journalbench teardown` there.",
    )
    rec.add_argument("--host", required=True, help="host name in hosts/ or host file path")
    rec.set_defaults(func=cmd_recover)


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="journalbench: %(message)s")
    logging.getLogger("paramiko").setLevel(logging.WARNING)  # every connect is not news


def _load(name: str) -> dict[str, Any]:
    from journalbench.hosts import load_host

    return load_host(name)


def _echo(prefix: str) -> Callable[[str, str], None]:
    def echo(_stream: str, line: str) -> None:
        print(f"[{prefix}] {line}", file=sys.stderr, flush=True)

    return echo


def cmd_check_host(args: argparse.Namespace) -> int:
    host = _load(args.host)
    checks = check_host(host)
    print(format_checks(host["name"], checks))
    return 1 if any(c.required and not c.ok for c in checks) else 0


def cmd_deploy(args: argparse.Namespace) -> int:
    from journalbench.transport import for_host

    _logging()
    host = _load(args.host)
    with for_host(host) as transport:
        dep = deploy(host, transport, force=args.force)
    print(f"{host['name']}: agent bundle {dep.bundle} (python {dep.python_version})")
    return 0


def cmd_run_remote(args: argparse.Namespace) -> int:
    from journalbench.schemas import load_validated

    _logging()
    host = _load(args.host)
    spec = load_validated(Path(args.spec), "run-spec")
    dest = run_remote(
        host,
        spec,
        args.out,
        attempts=args.attempts,
        on_output=None if args.quiet else _echo(host["name"]),
    )
    print(f"run folder complete: {dest}")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from journalbench.transport import for_host

    host = _load(args.host)
    with for_host(host) as transport:
        dep = deploy(host, transport)
        reap_and_teardown(dep, _echo(host["name"]))
    print(f"{host['name']}: torn down")
    return 0
