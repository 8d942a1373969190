"""Driving a host without real runs: the agent bundle, check-host, deploy, the atomic fetch and
the reaping of a cut-off agent. Real runs over SSH are in test_remote_e2e.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path

import pytest
import sshd
from sshd import pids_matching

from journalbench import runfolder
from journalbench.agent import packages
from journalbench.agent.arms.vm import arm as vm
from journalbench.agent.arms.vm import image as guest_image
from journalbench.control import bundle, checkhost, runremote
from journalbench.control.deploy import agent_host_json, deploy, layout_of
from journalbench.control.hosts import load_host
from journalbench.control.transport import LocalTransport, SSHTransport
from journalbench.errors import AgentError, ConfigError

pytest_plugins = ["sshd_fixtures"]  # sshd_local, sshd_netns
# its root tests measure nothing: make test runs them beside the nested host's
pytestmark = pytest.mark.unmeasured

PYTHON = "/usr/bin/python3"  # the system python a bare host has: no venv, no site-packages


def journalbench_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "journalbench.cli", *args], capture_output=True, text=True
    )


def wait_for(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {predicate}")


# ---------------------------------------------------------------------------------------------
# the bundle


def test_bundle_is_deterministic_and_holds_the_agent():
    data = bundle.bundle_bytes()
    assert data == bundle.bundle_bytes()
    names = zipfile.ZipFile(__import__("io").BytesIO(data)).namelist()
    for needed in (
        "__main__.py",
        "journalbench/agent/main.py",
        "journalbench/errors.py",
        "journalbench/runfolder.py",
        "journalbench/agent/commands.py",
        "journalbench/agent/run.py",
        "journalbench/agent/workloads/fsync.bt",
    ):
        assert needed in names
    for absent in ("control/hosts.py", "plan/schemas.py", "control/transport.py",
                   "plan/campaign.py", "judge/stats.py", "cli/main.py"):
        assert f"journalbench/{absent}" not in names
    assert not [n for n in names if "__pycache__" in n]
    # each module's bytecode beside it, and nothing else compiled (a data script stays source)
    modules = {n[:-3] for n in names if n.endswith(".py") and n != "__main__.py"
               and bundle._is_module(bundle.PACKAGE_DIR.parent / n)}
    assert {n[:-4] for n in names if n.endswith(".pyc")} == modules


def test_bundle_is_the_same_bytes_from_any_controller_process():
    """Its name is its hash: two dispatches (other processes, other hash seeds) must build the
    same bundle, or each would upload its own."""
    script = ("import hashlib, sys; from journalbench.control import bundle; "
              "sys.stdout.write(hashlib.sha256(bundle.bundle_bytes()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("0", "1", "4242")}
    assert digests == {hashlib.sha256(bundle.bundle_bytes()).hexdigest()}


def test_the_agent_imports_its_bytecode_and_falls_back_to_source(tmp_path: Path):
    """zipimport takes a module's .pyc (nothing to compile at the agent's start); a python of
    another bytecode version finds a magic number it does not know and compiles the source."""
    pyz = bundle.build_bundle(tmp_path)
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import journalbench.agent.run as r; "
             "print(r.__file__)")
    loaded = subprocess.run([sys.executable, "-c", probe, str(pyz)], check=True,
                            capture_output=True, text=True).stdout.strip()
    assert loaded == f"{pyz}/journalbench/agent/run.pyc"
    stale = tmp_path / "stale.pyz"
    with zipfile.ZipFile(pyz) as source, zipfile.ZipFile(stale, "w") as copy:
        for item in source.infolist():
            data = source.read(item)
            copy.writestr(item, b"\0\0\r\n" + data[4:] if item.filename.endswith(".pyc")
                          else data)
    loaded = subprocess.run([sys.executable, "-c", probe, str(stale)], check=True,
                            capture_output=True, text=True).stdout.strip()
    assert loaded == f"{stale}/journalbench/agent/run.py"


def test_bundle_runs_on_a_bare_python(tmp_path: Path):
    pyz = bundle.build_bundle(tmp_path)
    assert pyz == bundle.build_bundle(tmp_path)  # same sources, same name
    # -I -S: no site-packages, no PYTHONPATH, no current directory: only the stdlib.
    version = subprocess.run(
        [PYTHON, "-I", "-S", str(pyz), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("journalbench ")
    helptext = subprocess.run(
        [PYTHON, "-I", "-S", str(pyz), "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "run" in helptext and "teardown" in helptext
    names = zipfile.ZipFile(pyz).namelist()
    modules = [  # .py files in packages; others (nbdkit plugins, guest scripts) are data
        n[: -len(".py")].replace("/", ".").removesuffix(".__init__")
        for n in names
        if n.startswith("journalbench/") and n.endswith(".py")
        and f"{n.rsplit('/', 1)[0]}/__init__.py" in names
    ]
    probe = (
        "import importlib, importlib.resources, sys\n"
        f"sys.path.insert(0, {str(pyz)!r})\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bt = importlib.resources.files('journalbench.agent.workloads') / 'fsync.bt'\n"
        "assert 'fsync' in bt.read_text()\n"
        "print('ok', len(sys.modules))\n"
    )
    done = subprocess.run([PYTHON, "-I", "-S", "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok")


def test_bundle_holds_what_functions_import_too(tmp_path: Path):
    """An import inside a function (mariadb.py's sysbench parser) runs on the host when the
    function does: every `from journalbench... import name` anywhere in the bundle resolves
    from the zip alone (a run on quick-mysql once failed with No module named
    'journalbench.formats.sysbench')."""
    pyz = bundle.build_bundle(tmp_path)
    with zipfile.ZipFile(pyz) as archive:
        sources = [archive.read(n).decode() for n in archive.namelist() if n.endswith(".py")]
    wanted = sorted({found for text in sources for found in re.findall(
        r"^\s*from (journalbench[\w.]*) import \(?\s*(\w+)", text, flags=re.M)})
    assert ("journalbench.formats.sysbench", "parse_sysbench") in wanted
    probe = (
        "import importlib, sys\n"
        f"sys.path.insert(0, {str(pyz)!r})\n"
        f"for module, name in {wanted!r}:\n"
        "    found = importlib.import_module(module)\n"
        "    if not hasattr(found, name):\n"
        "        importlib.import_module(f'{module}.{name}')\n"
        "print('ok')\n"
    )
    done = subprocess.run([PYTHON, "-I", "-S", "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_bundle_refuses_a_third_party_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "journalbench"
    (package / "agent").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "errors.py").write_text("")
    (package / "cli.py").write_text("import yaml\n")  # the controller's: never bundled
    (package / "agent" / "__init__.py").write_text("")
    (package / "agent" / "main.py").write_text("from journalbench.agent import commands\n")
    (package / "agent" / "commands.py").write_text(
        "import json\nfrom typing import TYPE_CHECKING\nfrom journalbench import errors\n"
        "if TYPE_CHECKING:\n    import paramiko\ndef f():\n    import numpy\n"
    )
    monkeypatch.setattr(bundle, "PACKAGE_DIR", package)
    assert [n for n, _ in bundle.bundle_members()] == [
        "journalbench/__init__.py",
        "journalbench/agent/__init__.py",
        "journalbench/agent/commands.py",
        "journalbench/agent/main.py",
        "journalbench/errors.py",
    ]
    (package / "agent" / "commands.py").write_text("import yaml\n")
    with pytest.raises(AgentError, match=r"agent/commands.py: imports yaml at top level"):
        bundle.bundle_members()


def test_bundle_ships_scripts_outside_packages_as_data(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "journalbench"
    (package / "agent" / "plugins").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent" / "__init__.py").write_text("")
    (package / "agent" / "main.py").write_text("import json\n")
    # Run by another program (here nbdkit), never imported by the agent: no package above it.
    (package / "agent" / "plugins" / "disk_plugin.py").write_text("import nbdkit\n")
    monkeypatch.setattr(bundle, "PACKAGE_DIR", package)
    assert "journalbench/agent/plugins/disk_plugin.py" in [n for n, _ in bundle.bundle_members()]
    (package / "agent" / "plugins" / "__init__.py").write_text("")
    with pytest.raises(AgentError, match=r"disk_plugin.py: imports nbdkit at top level"):
        bundle.bundle_members()


# ---------------------------------------------------------------------------------------------
# check-host: evaluating facts (pure)

FULL = {
    "uid": "0",
    "kernel": "6.1.0-18-amd64",
    "arch": "x86_64",
    "cgroup_fs": "cgroup2fs",
    "cgroup_v2_io": "yes",
    "bfq": "module",
    "kvm": "yes",
    "python": "3.11.2",
    "space_dir": "/var/lib",
    "space_kb": str(50 * 1024 * 1024),
    **{f"tool_{t.command}": f"/usr/bin/{t.command}" for t in packages.tools("x86_64")},
    "boot_id": "b00t", "qemu_version": "QEMU emulator version 7.2.22",
    "guest_recipe": guest_image.recipe(), "guest_files": "yes", "guest_kernel": "6.1.0-56-amd64",
    "guest_boot_kernel": "vmlinux",
    "kvm_probe_key": json.dumps(vm.probe_key("b00t", "6.1.0-18-amd64",
                                             "QEMU emulator version 7.2.22"), sort_keys=True),
    "kvm_probe": "kvm",
}
IMAGE_HOST = {"name": "h", "python": "python3", "device": {"kind": "image", "size_gb": 12}}


def test_evaluate_all_present():
    checks = checkhost.evaluate(IMAGE_HOST, FULL)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    text = checkhost.format_checks("h", checks)
    assert "everything the agent needs is there" in text and "apt-get install" not in text


def test_evaluate_missing_tools_give_the_apt_command():
    # Whichever optional tool the modules declare first (sysbench once its workload lands).
    optional = next(t for t in packages.tools("x86_64") if not t.required)
    facts = {**FULL, "tool_fio": "", "tool_lxc-start": "", f"tool_{optional.command}": "",
             "kvm": ""}
    checks = {c.name: c for c in checkhost.evaluate(IMAGE_HOST, facts)}
    assert checks["fio"].status == "MISSING" and checks["fio"].required
    assert checks[optional.command].status == "missing (optional)"
    assert checks["KVM"].status == "missing (optional)"
    apt = checkhost.apt_command(list(checks.values()))
    assert apt == "apt-get install -y " + " ".join(sorted({"fio", "lxc", optional.package}))
    text = checkhost.format_checks("h", list(checks.values()))
    assert f"to install the missing packages: {apt}" in text


@pytest.mark.parametrize(
    ("facts", "name", "found"),
    [
        ({"cgroup_v2_io": ""}, "cgroup", "no blkio/io controller (cgroup2fs)"),
        ({"bfq": "no"}, "BFQ", "no"),
        ({"python": "3.9.2"}, "python", "3.9.2"),
        ({"python": ""}, "python", "missing"),
        ({"uid": "1000"}, "root", "uid 1000"),
        ({"kernel": "4.9.0"}, "kernel", "4.9.0"),
        ({"space_kb": str(5 * 1024 * 1024)}, "space in /var/lib", "5.0 GiB free"),
        pytest.param(
            {"arch": "aarch64", "tool_qemu-system-aarch64": ""},
            "qemu-system-aarch64",
            "missing",
            marks=pytest.mark.skipif(
                "qemu-system-aarch64" not in [t.command for t in packages.tools("aarch64")],
                reason="the vm arm (QEMU) does not declare its tools yet",
            ),
        ),
    ],
)
def test_evaluate_required_failures(facts, name, found):
    checks = {c.name: c for c in checkhost.evaluate(IMAGE_HOST, {**FULL, **facts})}
    assert not checks[name].ok and checks[name].required
    assert checks[name].found == found


@pytest.mark.parametrize(
    ("facts", "found"),
    [
        ({"guest_recipe": "", "guest_files": ""}, "missing (/var/cache/journalbench/guest)"),
        ({"guest_recipe": "0ld"}, "6.1.0-56-amd64: built by an older recipe"),
        ({"guest_files": "no"}, "6.1.0-56-amd64: kernel or initramfs missing"),
    ],
)
def test_evaluate_a_missing_or_stale_vm_guest_says_make_guest(facts, found):
    checks = {c.name: c for c in checkhost.evaluate(IMAGE_HOST, {**FULL, **facts})}
    guest = checks["VM guest"]
    assert (guest.ok, guest.required, guest.found) == (False, False, found)
    text = checkhost.format_checks("h", list(checks.values()))
    assert "VM guest: make guest" in text
    assert "everything the agent needs is there (optional, missing: VM guest" in text


@pytest.mark.parametrize(
    ("facts", "ok", "found"),
    [
        ({}, True, "works (a probe guest booted)"),
        ({"kvm_probe": "a KVM guest did not boot within 20 s"}, False,
         "/dev/kvm, but a KVM guest did not boot within 20 s: VMs run under TCG"),
        ({"boot_id": "rebooted"}, False, "/dev/kvm, not probed yet"),
        ({"boot_id": "rebooted", "guest_recipe": ""}, False,
         "/dev/kvm, not probed: no VM guest to boot"),
        ({"kvm": ""}, False, "no /dev/kvm: VMs run under TCG"),
    ],
)
def test_evaluate_kvm_is_what_the_probe_of_this_boot_said(facts, ok, found):
    kvm = {c.name: c for c in checkhost.evaluate(IMAGE_HOST, {**FULL, **facts})}["KVM"]
    assert (kvm.ok, kvm.required, kvm.found) == (ok, False, found)


def test_evaluate_disk_device():
    host = {"name": "h", "device": {"kind": "disk", "id": "/dev/disk/by-id/x", "wipe": True}}
    ok = {**FULL, "device_path": "/dev/sdb", "device_block": "yes"}
    assert {c.name: c for c in checkhost.evaluate(host, ok)}["device"].ok
    mounted = {**ok, "device_mounted": "yes"}
    device = {c.name: c for c in checkhost.evaluate(host, mounted)}["device"]
    assert not device.ok and device.found == "/dev/sdb (MOUNTED)"
    assert not {c.name: c for c in checkhost.evaluate(host, FULL)}["device"].ok


def test_layout_and_agent_host_json():
    layout = layout_of({"name": "h", "state_dir": "/srv/jb/"})
    assert layout.pidfile == "/srv/jb/agent/agent.pid"
    assert layout.run_dir("smoke", "vm-0123") == "/srv/jb/runs/smoke/vm-0123"
    with pytest.raises(ConfigError, match="field state_dir"):
        layout_of({"name": "h", "_file": "x.yaml", "state_dir": "srv"})
    sent = json.loads(agent_host_json({"name": "h", "_file": "x", "device": {}}))
    assert sent == {"name": "h", "device": {}}


# ---------------------------------------------------------------------------------------------
# atomic fetch, resume, reaping (Local transport: the same code path as SSH)


def make_run_folder(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text('{"arm": "vm"}\n')
    (folder / "fio-a.json").write_text('{"jobs": []}\n')
    runfolder.write_manifest(folder)


def test_fetch_run_is_atomic(tmp_path: Path):
    t = LocalTransport()
    source = tmp_path / "host" / "run"
    make_run_folder(source)
    dest = tmp_path / "raw" / "c" / "h" / "run"
    assert runremote.fetch_run(t, str(source), dest) == []
    assert runfolder.is_complete(dest)
    # A tampered remote folder never lands, and leaves no temp folder behind.
    (source / "fio-a.json").write_text('{"jobs": [1]}\n')
    other = tmp_path / "raw" / "c" / "h" / "other"
    problems = runremote.fetch_run(t, str(source), other)
    assert problems and "sha256 does not match" in problems[0]
    assert not other.exists()
    assert sorted(p.name for p in other.parent.iterdir()) == ["run"]
    # An incomplete local leftover is replaced by the complete fetch.
    runfolder.write_manifest(source)
    other.mkdir()
    (other / "junk").write_text("half a run")
    assert runremote.fetch_run(t, str(source), other) == []
    assert runfolder.is_complete(other) and not (other / "junk").exists()


def test_complete_dest_is_kept_without_touching_the_host(tmp_path: Path):
    class Untouchable(LocalTransport):
        def _exec(self, *args, **kwargs):
            raise AssertionError("the host must not be contacted")

    dest = tmp_path / "run"
    make_run_folder(dest)
    spec = {"arm": "vm", "duration_s": 2, "repetition": 1, "tenants": []}
    assert runremote.run_remote({"name": "h"}, spec, dest, transport=Untouchable()) == dest


def test_fetch_leftovers_are_removed(tmp_path: Path):
    dest = tmp_path / "run"
    (tmp_path / ".run.fetch-1234abcd").mkdir()
    (tmp_path / ".run.fetch-1234abcd" / "x").write_text("x")
    (tmp_path / ".other.fetch-1").mkdir()
    runremote.remove_fetch_leftovers(dest)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.fetch-1"]


def test_reap_stops_the_recorded_agent_and_waits_for_its_own_cleanup(tmp_path: Path):
    run_script, reap_script = runremote.RUN_SCRIPT, runremote.REAP_SCRIPT
    tok = f"jbtok-{uuid.uuid4().hex[:12]}"
    pidfile = tmp_path / "agent.pid"
    cleaned = tmp_path / "cleaned"
    ready = tmp_path / "cleaned.ready"  # the stand-in's TERM handler is in place
    # A stand-in agent that, like the real one, tears down (here: 1 s) when TERMed.
    agent_code = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        "    time.sleep(1)\n"
        "    open(sys.argv[1], 'w').write('done')\n"
        "    sys.exit(1)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "open(sys.argv[1] + '.ready', 'w').close()\n"
        "time.sleep(300)\n"
    )
    agent = subprocess.Popen(
        [
            "sh",
            "-c",
            run_script,
            "jb-agent",
            str(pidfile),
            PYTHON,
            "-c",
            agent_code,
            str(cleaned),
            tok,
        ],
        start_new_session=True,
    )
    try:
        wait_for(pidfile.exists)
        wait_for(lambda: pids_matching(tok, exclude="jb-agent"))
        # a TERM before its handler would end Python unhandled: on a busy machine its start
        # takes long enough for that
        wait_for(ready.exists)
        t = LocalTransport()
        reap = ["sh", "-c", reap_script, "jb-reap", str(pidfile), "30"]
        started = time.monotonic()
        result = t.run(reap)
        assert "killed" in result.stdout and "reaped" in result.stdout
        assert cleaned.read_text() == "done"  # reap returned only after the agent's clean-up
        assert time.monotonic() - started < 10
        assert not pids_matching(tok)
        assert not pidfile.exists()
        assert t.run(reap).stdout == ""  # nothing recorded: nothing to do
        # A pidfile naming a live process that started at another time (a recycled pid) is
        # dropped, but that process is left alone.
        pidfile.write_text(f"{os.getpid()} {os.getpgid(0)} 1\n")
        result = t.run(reap)
        assert result.stdout.strip() == "reaped" and not pidfile.exists()
    finally:
        if agent.poll() is None:
            os.killpg(agent.pid, 9)
        agent.wait()


def test_run_script_removes_its_pidfile_and_keeps_the_exit_code(tmp_path: Path):
    run_script = runremote.RUN_SCRIPT
    pidfile = tmp_path / "agent.pid"
    result = LocalTransport().run(
        [
            "sh",
            "-c",
            run_script,
            "jb-agent",
            str(pidfile),
            "sh",
            "-c",
            'cat "$0"; exit 5',
            str(pidfile),
        ],
        check=False,
    )
    assert result.returncode == 5
    pid, pgrp, start = result.stdout.split()
    assert pid.isdigit() and pgrp.isdigit() and start.isdigit()
    assert not pidfile.exists()


# ---------------------------------------------------------------------------------------------
# over SSH: check-host, deploy, recover


@pytest.mark.root
def test_check_host_over_ssh(sshd_local, tmp_path: Path):
    host_file = sshd_local.host_file(tmp_path / "state")
    done = journalbench_cli("check-host", str(host_file))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fio" in done.stdout and "everything the agent needs is there" in done.stdout


@pytest.mark.root
def test_check_host_reports_a_host_without_fio(tmp_path: Path):
    path = sshd.no_fio_path(tmp_path)
    server = sshd.start_sshd(tmp_path / "nofio", "jbt-nofio", path_env=path)
    try:
        host_file = server.host_file(tmp_path / "state")
        done = journalbench_cli("check-host", str(host_file))
        assert done.returncode == 1, done.stdout + done.stderr
        rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
        assert "MISSING" in rows["fio"]
        assert "lxc-start" in rows and "MISSING" not in rows["lxc-start"]
        assert "to install the missing packages: apt-get install -y fio" in done.stdout
    finally:
        server.stop()
    assert server.residue() == []


@pytest.mark.root
def test_deploy_uploads_once_and_runs_on_the_host(sshd_local, tmp_path: Path):
    state = tmp_path / "state"
    host = load_host(str(sshd_local.host_file(state)))
    with SSHTransport(host) as t:
        dep = deploy(host, t)
        bundle = Path(dep.bundle)
        assert bundle.parent == state / "agent" and bundle.is_file()
        assert json.loads((state / "agent" / "host.json").read_text())["name"] == host["name"]
        assert "_file" not in json.loads((state / "agent" / "host.json").read_text())
        assert dep.python_version.startswith("3.")
        first = bundle.stat().st_mtime_ns
    # A new connection finds the same bundle there and does not upload it again.
    (state / "agent" / "journalbench-old.pyz").write_text("stale")
    with SSHTransport(host) as t:
        again = deploy(host, t)
        assert again.bundle == dep.bundle and bundle.stat().st_mtime_ns == first
        forced = deploy(host, t, force=True)
        assert bundle.stat().st_mtime_ns != first
        assert t.run(forced.agent("--version")).stdout.startswith("journalbench ")
    assert not (state / "agent" / "journalbench-old.pyz").exists()


@pytest.mark.root
def test_deploy_names_a_missing_python(sshd_local, tmp_path: Path):
    host_file = sshd_local.host_file(tmp_path / "state", python="/nonexistent/python3")
    host = load_host(str(host_file))
    with SSHTransport(host) as t, pytest.raises(AgentError) as caught:
        deploy(host, t)
    assert "/nonexistent/python3 not found" in str(caught.value)
    assert str(host_file) in str(caught.value)


@pytest.mark.root
def test_recover_over_ssh_is_idempotent(sshd_netns, tmp_path: Path):
    host_file = sshd_netns.host_file(tmp_path / "state")
    for _ in range(2):
        done = journalbench_cli("recover", "--host", str(host_file))
        assert done.returncode == 0, done.stderr
        assert "torn down" in done.stdout
