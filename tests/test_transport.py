"""The transports: quoting and host-key helpers (pure), the Local transport, and the SSH
transport against real OpenSSH servers (one on loopback, one in its own network namespace)."""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import paramiko
import pytest
import sshd
from sshd import pids_matching

from journalbench.control.hosts import load_host
from journalbench.control.reach import for_host
from journalbench.control.transport import (
    WRAP_SCRIPT,
    CommandFailed,
    CommandTimeout,
    ConnectionLost,
    LocalTransport,
    SSHSettings,
    SSHTransport,
    TransportError,
    command_line,
    fingerprint,
    known_hosts_line,
    known_hosts_name,
    parse_marker,
)
from journalbench.errors import ConfigError

pytest_plugins = ["sshd_fixtures"]  # sshd_local, sshd_netns
# its root tests measure nothing: make test runs them beside the nested host's
pytestmark = pytest.mark.unmeasured

NASTY = [
    "plain",
    "two words",
    "$(touch /tmp/jb-pwned)",
    "`id`",
    "a;b && c || d | e > f < g",
    "'single' \"double\" \\back",
    "new\nline",
    "*?[glob]~",
    "",
    "-n",
    "ünïcødé",
]


def token() -> str:
    return f"jbtok-{uuid.uuid4().hex[:12]}"


def wait_for(predicate, timeout: float = 10.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")


def started(tok: str) -> None:
    """Wait until the command with tok runs (past the wrapper, whose marker is then sent)."""
    wait_for(lambda: pids_matching(tok, exclude="@jb-pid"))
    time.sleep(0.3)


def ssh_transport(server: sshd.SshServer, tmp_path: Path, **ssh) -> SSHTransport:
    return SSHTransport(load_host(str(server.host_file(tmp_path / "state", ssh=ssh))))


# ---------------------------------------------------------------------------------------------
# pure helpers


def test_command_line_quotes_every_argument():
    line = command_line(NASTY)
    assert shlex.split(line) == ["sh", "-c", WRAP_SCRIPT, "jb", *NASTY]
    assert shlex.split(command_line(["id"], sudo=True))[:3] == ["sudo", "-n", "--"]
    with pytest.raises(ValueError):
        command_line([])


def test_command_line_runs_the_arguments_literally(tmp_path: Path):
    # What a login shell on the host makes of the string: the very same argv, nothing run.
    done = subprocess.run(
        ["bash", "-c", command_line(["printf", "<%s>\\n", *NASTY])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert done.stdout == "".join(f"<{arg}>\n" for arg in NASTY)
    marker = parse_marker(done.stderr.splitlines()[0])
    assert marker is not None and marker[0] > 0
    assert not Path("/tmp/jb-pwned").exists()


def test_parse_marker():
    assert parse_marker("@jb-pid 12 10 345") == (12, 10, 345)
    assert parse_marker("@jb-pid 12 10") is None
    assert parse_marker("hello @jb-pid 1 2 3") is None


def test_known_hosts_helpers_agree_with_openssh(tmp_path: Path):
    pub = sshd.keygen(tmp_path / "k", "c").split()
    blob = base64.b64decode(pub[1])
    listed = subprocess.run(
        ["ssh-keygen", "-lf", str(tmp_path / "k.pub")], capture_output=True, text=True, check=True
    ).stdout.split()
    assert fingerprint(blob) == listed[1]
    assert known_hosts_name("10.0.0.1", 22) == "10.0.0.1"
    assert known_hosts_name("10.0.0.1", 2222) == "[10.0.0.1]:2222"
    kh = tmp_path / "known_hosts"
    kh.write_text(known_hosts_line("[10.0.0.1]:2222", pub[0], blob))
    found = subprocess.run(
        ["ssh-keygen", "-F", "[10.0.0.1]:2222", "-f", str(kh)], capture_output=True, text=True
    )
    assert found.returncode == 0
    keys = paramiko.HostKeys(str(kh))
    assert keys.lookup("[10.0.0.1]:2222")[pub[0]].asbytes() == blob


def test_ssh_settings_resolve_paths_and_defaults(tmp_path: Path):
    host_file = tmp_path / "h.yaml"
    host = {"name": "h", "_file": str(host_file), "ssh": {"address": "10.0.0.1", "key_file": "k"}}
    s = SSHSettings.from_host(host)
    assert (s.port, s.user, s.sudo, s.trust_on_first_use) == (22, "root", False, False)
    assert s.key_file == tmp_path / "k"
    assert s.known_hosts == Path("~/.ssh/known_hosts").expanduser()
    with pytest.raises(ConfigError, match=r"h.yaml: field ssh: give key_file"):
        SSHSettings.from_host({"name": "h", "_file": str(host_file), "ssh": {"address": "x"}})


@pytest.mark.parametrize(
    ("ssh", "message"),
    [
        ({"address": "h", "port": "22x", "key_file": "k"}, r"field ssh\.port"),
        ({"address": "h; rm -rf /", "key_file": "k"}, r"field ssh\.address"),
        ({"address": "h", "key_file": "k", "passwd": "x"}, r"field ssh"),
        ({"address": "h"}, r"field ssh\.key_file: required unless ssh\.use_agent"),
        ({"address": "h", "user": "bob", "key_file": "k"}, r"field ssh\.sudo"),
        ({"port": 22, "key_file": "k"}, r"field ssh.*address"),
    ],
)
def test_bad_ssh_sections_name_file_and_field(tmp_path: Path, ssh, message):
    path = tmp_path / "bad.yaml"
    path.write_text(
        json.dumps({"name": "b", "transport": "ssh", "ssh": ssh, "device": {"kind": "image"}})
    )
    with pytest.raises(ConfigError, match=message) as caught:
        load_host(str(path))
    assert str(caught.value).startswith(f"{path}: ")
    assert "\n" not in str(caught.value)


def test_example_baremetal_host_loads(repo: Path):
    host = load_host(str(repo / "hosts" / "example-baremetal.yaml"))
    assert host["device"] == {
        "kind": "disk",
        "id": "/dev/disk/by-id/nvme-EXAMPLE_SSD_1TB_S5XXNX0R000000",
        "wipe": True,
    }
    assert host["ssh"]["trust_on_first_use"] is False
    assert isinstance(for_host(host), SSHTransport)
    assert isinstance(for_host(load_host("local")), LocalTransport)


def test_example_baremetal_documents_every_field(repo: Path):
    schema = json.loads((repo / "workflow/schemas/host.schema.json").read_text())
    text = (repo / "hosts" / "example-baremetal.yaml").read_text()
    fields = set(schema["properties"]) | set(schema["properties"]["ssh"]["properties"])
    missing = [f for f in fields if f"{f}:" not in text]
    assert missing == []


# ---------------------------------------------------------------------------------------------
# Local transport


def test_local_run_streams_lines_and_reports_exit_codes():
    seen: list[tuple[str, str]] = []
    t = LocalTransport()
    result = t.run(
        ["sh", "-c", 'echo one; echo err >&2; printf "two\\nthree"; exit 3'],
        check=False,
        on_output=lambda stream, line: seen.append((stream, line)),
    )
    assert result.returncode == 3
    assert result.stdout == "one\ntwo\nthree\n"
    assert ("stderr", "err") in seen and ("stdout", "three") in seen
    with pytest.raises(CommandFailed, match=r"local: false exited 1"):
        t.run(["false"])
    assert t.run(["no-such-command-jb"], check=False).returncode == 127


def test_local_timeout_kills_the_whole_process_group():
    tok = token()
    t = LocalTransport()
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match="timed out after 1 s"):
        t.run(["sh", "-c", 'sh -c "sleep 300; :" "$0" & sleep 300; :', tok], timeout=1)
    assert time.monotonic() - started < 15
    wait_for(lambda: not pids_matching(tok), timeout=5)


def test_local_put_get_tree(tmp_path: Path):
    t = LocalTransport()
    data = bytes(range(256)) * 100
    t.put_bytes(data, str(tmp_path / "deep" / "er" / "f.bin"), mode=0o600)
    assert (tmp_path / "deep/er/f.bin").read_bytes() == data
    assert (tmp_path / "deep/er/f.bin").stat().st_mode & 0o777 == 0o600
    assert list((tmp_path / "deep/er").iterdir()) == [tmp_path / "deep/er/f.bin"]
    t.get(str(tmp_path / "deep/er/f.bin"), tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == data
    t.get_tree(str(tmp_path / "deep"), tmp_path / "copy")
    assert (tmp_path / "copy/er/f.bin").read_bytes() == data
    with pytest.raises(CommandFailed):
        t.get(str(tmp_path / "missing"), tmp_path / "never")
    assert not (tmp_path / "never").exists()
    assert not list(tmp_path.glob(".never*"))


# ---------------------------------------------------------------------------------------------
# SSH transport against real sshd


@pytest.mark.root
def test_ssh_run_quotes_streams_and_reports(sshd_local, tmp_path: Path):
    seen: list[tuple[str, str]] = []
    with ssh_transport(sshd_local, tmp_path) as t:
        result = t.run(
            ["printf", "<%s>\\n", *NASTY], on_output=lambda s, line: seen.append((s, line))
        )
        assert result.stdout == "".join(f"<{arg}>\n" for arg in NASTY)
        assert not Path("/tmp/jb-pwned").exists()
        assert ("stdout", "<two words>") in seen
        assert not any(line.startswith("@jb-pid") for _, line in seen)
        failed = t.run(["sh", "-c", "echo why >&2; exit 7"], check=False)
        assert (failed.returncode, failed.stderr.strip().splitlines()[-1]) == (7, "why")
        with pytest.raises(CommandFailed, match=r"exited 7: why"):
            t.run(["sh", "-c", "echo why >&2; exit 7"])
        assert t.run(["no-such-command-jb"], check=False).returncode == 127


@pytest.mark.root
def test_ssh_put_get_tree_binary(sshd_local, tmp_path: Path):
    data = os.urandom(300_000) + bytes(range(256))
    remote = tmp_path / "remote"
    with ssh_transport(sshd_local, tmp_path) as t:
        t.put_bytes(data, f"{remote}/a b/f.bin", mode=0o640)
        assert (remote / "a b/f.bin").read_bytes() == data
        assert (remote / "a b/f.bin").stat().st_mode & 0o777 == 0o640
        (remote / "a b/sub").mkdir()
        (remote / "a b/sub/g.txt").write_text("g\n")
        t.get(f"{remote}/a b/f.bin", tmp_path / "back.bin")
        assert (tmp_path / "back.bin").read_bytes() == data
        t.get_tree(f"{remote}/a b", tmp_path / "copy")
        assert (tmp_path / "copy/f.bin").read_bytes() == data
        assert (tmp_path / "copy/sub/g.txt").read_text() == "g\n"


@pytest.mark.root
def test_ssh_timeout_kills_the_remote_process_group(sshd_local, tmp_path: Path):
    tok = token()
    with ssh_transport(sshd_local, tmp_path) as t:
        started = time.monotonic()
        with pytest.raises(CommandTimeout):
            t.run(["sh", "-c", 'sh -c "sleep 300; :" "$0" & sleep 300; :', tok], timeout=1.5)
        assert time.monotonic() - started < 15
        wait_for(lambda: not pids_matching(tok), timeout=5)
        assert t.run(["echo", "still usable"]).stdout == "still usable\n"


@pytest.mark.root
def test_unknown_host_key_is_refused_and_says_how_to_fix(sshd_local, tmp_path: Path):
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    t = ssh_transport(sshd_local, tmp_path, known_hosts=str(empty))
    with pytest.raises(TransportError) as caught:
        t.run(["true"])
    message = str(caught.value)
    assert "is not in" in message and str(empty) in message
    assert "trust_on_first_use" in message and "ssh-keyscan" in message
    host_fp = fingerprint(base64.b64decode(sshd_local.host_key_line.split()[2]))
    assert host_fp in message
    assert empty.read_text() == ""


@pytest.mark.root
def test_trust_on_first_use_records_the_key_and_warns(sshd_local, tmp_path: Path):
    known = tmp_path / "sub" / "known_hosts"
    t = ssh_transport(sshd_local, tmp_path, known_hosts=str(known), trust_on_first_use=True)
    warnings: list[str] = []
    t.warn = warnings.append
    assert t.run(["echo", "hi"]).stdout == "hi\n"
    assert len(warnings) == 1 and "trusting new host key" in warnings[0]
    recorded = known.read_text().split()
    assert recorded == sshd_local.host_key_line.split()
    t.close()
    # The second time the key is known: no warning, and it must match.
    again = ssh_transport(sshd_local, tmp_path, known_hosts=str(known), trust_on_first_use=True)
    again.warn = warnings.append
    assert again.run(["echo", "hi"]).stdout == "hi\n"
    assert len(warnings) == 1
    again.close()


@pytest.mark.root
@pytest.mark.parametrize("tofu", [False, True])
def test_changed_host_key_is_refused_even_with_tofu(sshd_local, tmp_path: Path, tofu: bool):
    other = sshd.keygen(tmp_path / "other", "impostor").split()
    wrong = tmp_path / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{sshd_local.port} {other[0]} {other[1]}\n")
    before = wrong.read_text()
    t = ssh_transport(sshd_local, tmp_path, known_hosts=str(wrong), trust_on_first_use=tofu)
    started = time.monotonic()
    with pytest.raises(TransportError, match="does not match") as caught:
        t.run(["true"])
    assert "refusing" in str(caught.value) and "ssh-keygen -R" in str(caught.value)
    assert time.monotonic() - started < 5  # not retried: nothing transient about it
    assert wrong.read_text() == before


@pytest.mark.root
def test_missing_key_file_names_the_field(sshd_local, tmp_path: Path):
    host_file = sshd_local.host_file(tmp_path, ssh={"key_file": str(tmp_path / "nokey")})
    t = SSHTransport(load_host(str(host_file)))
    with pytest.raises(ConfigError) as caught:
        t.run(["true"])
    expected = f"{host_file}: field ssh.key_file: {tmp_path / 'nokey'}: no such file"
    assert str(caught.value) == expected


@pytest.mark.root
def test_unauthorized_key_fails_fast_without_retries(sshd_local, tmp_path: Path):
    sshd.keygen(tmp_path / "stranger", "stranger")
    stranger = str(tmp_path / "stranger")
    t = ssh_transport(sshd_local, tmp_path, key_file=stranger, connect_attempts=3)
    started = time.monotonic()
    with pytest.raises(TransportError, match="authentication as root with key .*stranger failed"):
        t.run(["true"])
    assert time.monotonic() - started < 3


@pytest.mark.root
def test_refused_connection_is_retried_then_reported(tmp_path: Path, sshd_local):
    port = sshd.free_port()
    t = ssh_transport(sshd_local, tmp_path, port=port, connect_attempts=2)
    started = time.monotonic()
    with pytest.raises(TransportError, match=r"cannot connect after 2 attempts: ConnectionRefused"):
        t.run(["true"])
    assert 0.9 < time.monotonic() - started < 10  # one back-off pause between the attempts


def _run_in_thread(t: SSHTransport, argv: list[str], **kwargs) -> dict:
    box: dict = {}

    def target() -> None:
        started = time.monotonic()
        try:
            box["result"] = t.run(argv, **kwargs)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error
        box["seconds"] = time.monotonic() - started

    box["thread"] = threading.Thread(target=target, daemon=True)
    box["thread"].start()
    return box


@pytest.mark.root
def test_killed_connection_mid_command_is_reported_and_the_orphan_killed(sshd_local, tmp_path):
    tok = token()
    t = ssh_transport(sshd_local, tmp_path)
    box = _run_in_thread(t, ["sh", "-c", "sleep 300; :", tok], timeout=60)
    started(tok)
    killed_at = time.monotonic()
    assert sshd_local.kill_connections()
    box["thread"].join(timeout=20)
    detected = time.monotonic() - killed_at
    error = box.get("error")
    assert isinstance(error, ConnectionLost), box
    assert detected < 5
    # Without its sshd the command lives on: kill it through a new connection, by its marker.
    assert pids_matching(tok)
    assert error.pid is not None
    assert t.kill(error.pid, grace_s=5)
    wait_for(lambda: not pids_matching(tok), timeout=10)
    t.close()


@pytest.mark.root
def test_idempotent_command_is_retried_after_a_lost_connection(sshd_local, tmp_path):
    tok = token()
    marker = tmp_path / "runs"
    t = ssh_transport(sshd_local, tmp_path)
    script = 'echo x >> "$1"; [ "$(wc -l < "$1")" -ge 2 ] || sleep 300; echo done'
    box = _run_in_thread(t, ["sh", "-c", script, tok, str(marker)], timeout=60, retry=True)
    started(tok)
    sshd_local.kill_connections()
    box["thread"].join(timeout=30)
    assert box.get("result") is not None, box
    assert box["result"].stdout == "done\n"
    assert marker.read_text() == "x\nx\n"
    for pid in pids_matching(tok):  # the first, orphaned attempt
        os.kill(pid, 9)
    t.close()


@pytest.mark.root
def test_netns_host_is_a_separate_host(sshd_netns, tmp_path: Path):
    assert sshd_netns.address.startswith("10.200.")
    with ssh_transport(sshd_netns, tmp_path) as t:
        inside = t.run(["cat", "/proc/self/net/dev"]).stdout
        assert sshd_netns.netns.ns_if in inside
        assert "eth0" not in inside
        # Same mount namespace as the host: the agent's cgroups and mounts are visible.
        assert t.run(["ls", "/sys/fs/cgroup"]).stdout.strip()


@pytest.mark.root
def test_cut_wire_is_noticed_by_keepalive(sshd_netns, tmp_path: Path):
    tok = token()
    t = ssh_transport(sshd_netns, tmp_path, keepalive_s=1, keepalive_count_max=3)
    box = _run_in_thread(t, ["sh", "-c", "sleep 300; :", tok], timeout=120)
    started(tok)
    sshd_netns.netns.link(up=False)
    cut_at = time.monotonic()
    try:
        box["thread"].join(timeout=60)
        detected = time.monotonic() - cut_at
    finally:
        sshd_netns.netns.link(up=True)
    assert isinstance(box.get("error"), ConnectionLost), box
    # keepalive 1 s * 3: the kernel gives up on the unacknowledged keepalive after ~3-5 s
    assert detected < 15, detected
    print(f"cut wire noticed after {detected:.1f} s")
    assert t.kill(box["error"].pid, grace_s=5)
    wait_for(lambda: not pids_matching(tok), timeout=10)
    t.close()


@pytest.mark.root
def test_a_server_that_stops_answering_behind_a_live_link_is_noticed(sshd_local, tmp_path):
    """The server's processes stopped (SIGSTOP), the link up and acknowledged by the kernel,
    as QEMU's user network does for a guest whose kernel locked up: TCP's keepalive sees
    nothing wrong; the probe after each keepalive_s of silence does. Connecting again while it
    stays stopped fails in one line: paramiko's own records of it (a traceback, a record a
    line) are printed nowhere (a controller's stderr, in a process of its own, is read)."""
    tok = token()
    host_file = sshd_local.host_file(tmp_path / "state", ssh={
        "keepalive_s": 1, "keepalive_count_max": 3, "connect_timeout_s": 2})
    t = SSHTransport(load_host(str(host_file)))
    again = ("import sys\nfrom journalbench.control.hosts import load_host\n"
             "from journalbench.control.transport import SSHTransport, TransportError\n"
             "try:\n    SSHTransport(load_host(sys.argv[1])).run(['true'])\n"
             "except TransportError as error:\n    sys.exit(str(error))\n")
    box = _run_in_thread(t, ["sh", "-c", "sleep 300; :", tok], timeout=120)
    started(tok)
    stopped = [sshd_local.proc.pid, *sshd_local.connections()]
    stopped += [kid for pid in stopped[1:] for kid in sshd.children_of(pid)
                if Path(f"/proc/{kid}/comm").read_text().strip() == "sshd"]
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    stopped_at = time.monotonic()
    try:
        box["thread"].join(timeout=60)
        detected = time.monotonic() - stopped_at
        controller = subprocess.run([sys.executable, "-c", again, str(host_file)],
                                    capture_output=True, text=True, timeout=60)
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    error = box.get("error")
    assert isinstance(error, ConnectionLost), box
    assert "no answer for" in str(error)
    # silent 1 s, then probes of up to 1 s each until 3 s without an answer
    assert detected < 10, detected
    print(f"a stopped server noticed after {detected:.1f} s")
    assert controller.returncode == 1
    assert len(controller.stderr.splitlines()) == 1, controller.stderr[-3000:]
    assert "cannot connect after 2 attempts" in controller.stderr
    assert t.kill(error.pid, grace_s=5)
    wait_for(lambda: not pids_matching(tok), timeout=10)
    t.close()
