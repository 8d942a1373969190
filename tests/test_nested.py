"""A real nested host (control/nested/): a QEMU guest this machine boots (TCG here) with cgroup
v2 only, reached over SSH. One machine serves the whole module (the order of the tests matters:
the last one kills a controller mid-run and tears the machine down); every run goes through
run_remote, the route `journalbench dispatch` takes, on the machine's `native` disk, short.

What it shows: the boot, SSH with the pinned host key, the network closed but for the forward
on 127.0.0.1; check-host's cgroup v2 report; a two-tenant high-fsync run on each container arm
under BFQ and under iocost (weights, counters, qos and model read back; jbd2 moved into the
tenants' groups and back in journal-accounted); a buffered writer's bytes charged to its own
cgroup; iocost with the QoS its procedure derives and its statistics sampled every second, and
under the second procedure at its fixed rate; a run asking cgroup v1 booting the guest as v1;
a guest that stops answering booted anew, back as v2; and kill -9 of the controller mid-run,
then recover and teardown, leaving nothing inside the guest or on this machine. Three boots in
all: v2, v1 and v2 again, each serving every test of its version.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import socket
import subprocess
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import VENV_BIN, system_residue
from journalbench import runfolder
from journalbench.agent.arms.vm import image as guest_image
from journalbench.agent.iocontrol import costmodel, interleaved
from journalbench.agent.system import processes_naming
from journalbench.control.checkhost import check_host
from journalbench.control.hosts import load_host
from journalbench.control.nested import image
from journalbench.control.nested.machine import Machine
from journalbench.control.nested.transport import NestedTransport
from journalbench.control.runremote import run_remote
from journalbench.control.transport import SSHSettings, SSHTransport, TransportError
from journalbench.errors import AgentError
from journalbench.formats.fio import fio_file, parse_fio, summarise

pytestmark = [
    pytest.mark.root, pytest.mark.slow,
    pytest.mark.skipif(not (guest_image.GUEST_DIR / guest_image.INFO).is_file(),
                       reason="no guest kernel: run `make guest`"),
]
logger = logging.getLogger(__name__)
JB = str(VENV_BIN / "journalbench")
DURATION_S = 3
BUFFERED_S = 8  # long enough for the flusher to start writing back (2 GiB guest)
CONTAINER_ARMS = ("shared-journal", "per-container-journal", "journal-accounted",
                  "journal-cgroup")
CONTROLS = ("bfq", "iocost")
WEIGHT_FILES = {"bfq": "io.bfq.weight", "iocost": "io.weight"}
# what the guest's teardown must have left: checked inside, independently of the agent
INSIDE_RESIDUE = r"""
state=$1; name=$2
ls -A "$state/$name" 2>/dev/null | sed 's/^/state: /'
for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
  [ -d "$h/journalbench/$name" ] && echo "cgroup $h/journalbench/$name"
done
grep -q Y /sys/module/blk_cgroup/parameters/blkcg_debug_stats && echo "blkcg_debug_stats on"
grep -l "^0::/journalbench" /proc/[0-9]*/cgroup 2>/dev/null | sed 's/^/in a tenant group: /'
grep " $state/$name" /proc/self/mounts | sed 's/^/mount: /'
grep "enable=1" /sys/fs/cgroup/io.cost.qos | sed 's/^/iocost: /'
ls -A /run/jbnested/flags | sed 's/^/set-up flag: /'
for p in /proc/[0-9]*; do
  comm=$(cat $p/comm 2>/dev/null)
  case "$comm" in fio|bpftrace|lxc-start|lxc-attach) echo "process $comm";; esac
done
[ -d "/sys/kernel/tracing/instances/journalbench-$name" ] && echo "trace instance"
exit 0
"""


def spec(arm: str, control: str, a: str, b: str) -> dict[str, Any]:
    workload = {"tool": "fio", "size_mb": 16, "prep": "overwrite"}
    return {"arm": arm, "duration_s": DURATION_S, "repetition": 1, "campaign": "nested-test",
            "device": "native", "io_control": control,
            "tenants": [{"name": "a", "weight": 700, "workload": {**workload, "preset": a}},
                        {"name": "b", "weight": 300, "workload": {**workload, "preset": b}}]}


def written(run: Path, field: str = "write_bytes") -> dict[tuple[str, str], int]:
    """Bytes written (or another field's sum) per (kind, source) over the run's samples."""
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for line in (run / runfolder.SAMPLES).read_text().splitlines():
        row = json.loads(line)
        totals[(row["kind"], row["source"])] += row[field]
    return totals


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory):
    """One nested machine for the module, torn down after it (whatever happened) and checked
    for residue on this machine."""
    state = tmp_path_factory.mktemp("nested")
    name = f"pyn{os.getpid()}"
    path = state / f"{name}.yaml"
    path.write_text(f"name: {name}\ntransport: nested\nstate_dir: {state}\n"
                    "device: {kind: image, size_gb: 4, profile: native}\n"
                    "nested: {memory_mb: 2048, profiles: [native, hdd], "
                    "cgroup_versions: [2, 1]}\n"
                    "bfq: {strict_guarantees: 1}\n")
    host = load_host(str(path))
    yield host
    subprocess.run([JB, "teardown", "--host", str(path)], capture_output=True, text=True,
                   timeout=300)
    left = system_residue(name, state) + Machine(host).residue()
    assert not left, f"the nested host left residue: {left}"


def inside(host: dict[str, Any], *argv: str) -> str:
    with NestedTransport(host, boot=False) as transport:
        return transport.run(list(argv), timeout=120).stdout


def listeners(port: int) -> list[str]:
    """Local addresses listening on `port` on this machine (/proc/net/tcp{,6}, state 0A)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.append(address)
    return found


def test_boot_ssh_and_check_host_report_cgroup_v2(nested: dict[str, Any]) -> None:
    """Two controllers at once (two check-hosts, as two dispatches of a chunk) boot it once."""
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        both = list(pool.map(lambda _: check_host(nested), range(2)))
    checks = {c.name: c for c in both[0]}
    machine = Machine(nested)
    record = machine.state()
    assert record is not None, "check-host did not leave the machine running"
    print(f"boot {record['boot_s']} s under {record['accel']}; two check-hosts at once "
          f"{time.monotonic() - started:.1f} s")
    assert machine.console.read_text().count(image.READY) == 1
    assert [p for p in processes_naming(machine.folder)
            if Path(f"/proc/{p}/comm").read_text().startswith("qemu")] == [record["pid"]]
    assert checks["cgroup"].found.startswith("v2: ") and checks["cgroup"].ok
    assert {"io", "memory"} <= set(checks["cgroup"].found.split(": ")[1].split())
    assert checks["writeback_attributed"].found == "true: memory and io on v2"
    assert checks["iocost"].found == "yes (io.cost.qos)"
    assert checks["device"].ok and checks["BFQ"].ok
    # reused, not booted again, by the next controller
    check_host(nested)
    assert machine.state()["pid"] == record["pid"]
    assert "cgroup_no_v1=all" in inside(nested, "cat", "/proc/cmdline")
    assert inside(nested, "cat", "/proc/self/cgroup").strip() == "0::/"
    # the one way in is the forward on the loopback address; the guest reaches nothing out
    assert listeners(record["port"]) == ["0100007F"]
    probe = ("import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), "
             "timeout=3)")
    with NestedTransport(nested, boot=False) as transport:
        blocked = transport.run(["python3", "-c", probe, "10.0.2.2", str(record["port"])],
                                check=False, timeout=60)
    assert blocked.returncode != 0, "the guest reached this machine through the user network"
    # the host key is the one the guest printed at boot, and no other is trusted
    assert machine.known_hosts.read_text().split()[1:] == record["host_key"].split()
    stranger = SSHSettings(address="127.0.0.1", port=record["port"], key_file=machine.client_key,
                           known_hosts=machine.folder / "empty_known_hosts", connect_attempts=1)
    with pytest.raises(TransportError, match="refusing unknown host"):
        SSHTransport(nested, stranger).run(["true"])
    with socket.create_connection(("127.0.0.1", record["port"]), timeout=5) as sock:
        assert sock.recv(64).startswith(b"SSH-2.0-OpenSSH")


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize("arm", CONTAINER_ARMS)
def test_a_high_fsync_pair_on_each_container_arm_under_each_control(
        nested: dict[str, Any], tmp_path: Path, arm: str, control: str) -> None:
    dest = run_remote(nested, spec(arm, control, "high-fsync", "high-fsync"), tmp_path / "run")
    assert not runfolder.manifest_problems(dest)
    facts = json.loads((dest / runfolder.HOST).read_text())
    assert facts["cgroup_version"] == 2 and facts["writeback_attributed"] is True
    assert {"io", "memory", "cpuset"} <= set(facts["cgroup_v2_controllers"])
    assert facts["nested_host"]["accel"] in ("tcg", "kvm")
    control_facts = facts["io_control"]
    assert (control_facts["name"], control_facts["weight_file"]) == (control,
                                                                     WEIGHT_FILES[control])
    tenants = facts["layout"]["tenants"]
    assert [tenants[t]["weight_read_back"] for t in "ab"] == [700, 300]
    if control == "iocost":
        assert facts["scheduler"] == "none"
        assert control_facts["iocost"]["qos"]["enable"] == "1"
        assert control_facts["iocost"]["model"]["model"] == "linear"
        assert int(control_facts["iocost"]["model"]["wbps"]) > 0
    totals = written(dest)
    assert totals[("tenant", "a")] > 0 and totals[("tenant", "b")] > 0  # io.stat counts them
    # the device-time tracer (v2: by the task's cgroup, jbd2 by its name) names each tenant
    # and each journal that wrote
    times, requests = written(dest, "time_ns"), written(dest, "requests")
    assert times[("tenant", "a")] > 0 and times[("tenant", "b")] > 0
    assert all(requests[key] > 0 for key, value in totals.items()
               if key[0] == "jbd2" and value > 0)
    cpu = facts["cpu_during_run"]
    assert cpu["seconds"] >= DURATION_S - 1 and set(cpu["cpus"]) == {"cpu0", "cpu1"}
    share = totals[("tenant", "a")] / (totals[("tenant", "a")] + totals[("tenant", "b")])
    print(f"{arm} {control}: share of a {share:.3f}, setup {facts['timing']['setup_s']} s, "
          f"vCPUs busy {[c['busy_mean'] for c in cpu['cpus'].values()]}")
    if arm == "journal-accounted":
        journals = facts["layout"]["jbd2"]
        assert sorted(j["cgroup_during_run"] for j in journals) == [
            f"/journalbench/{nested['name']}/a", f"/journalbench/{nested['name']}/b"]
        log = (dest / runfolder.RUN_LOG).read_text()
        assert log.count("back to the root cgroup") == 2
    if arm == "journal-cgroup":  # each journal in its own group, at its tenant's weight
        groups = facts["layout"]["journal_groups"]
        base = f"/journalbench/{nested['name']}"
        assert {t: (g["cgroup"], g["weight_read_back"]) for t, g in groups.items()} == {
            "a": (f"{base}/journal.a", 700), "b": (f"{base}/journal.b", 300)}
        lines = [json.loads(line) for line in (dest / runfolder.SAMPLES).read_text().splitlines()]
        journals = [row for row in lines if row["kind"] == "jbd2"]
        assert {row["cgroup"] for row in journals} == {f"{base}/journal.a", f"{base}/journal.b"}
        if control == "iocost":  # the journal's own group is iocost's: its statistics watched
            # from the group's first I/O on: the kernel prints a group's io.stat line once it has
            # sent the device a request (a journal's first commit can come a few seconds late)
            for source in {row["source"] for row in journals}:
                rows = [row for row in journals if row["source"] == source]
                first = next(i for i, row in enumerate(rows) if "cost_usage_us" in row)
                assert all("cost_usage_us" in row for row in rows[first:]), (source, rows[:2])
            assert sum(row.get("cost_usage_us", 0) for row in journals) > 0


def test_a_buffered_writers_bytes_are_charged_to_its_cgroup(nested: dict[str, Any],
                                                           tmp_path: Path) -> None:
    """Beside a high-fsync victim, a buffered writer with no fsync on a fallocated file (the
    campaigns' prep: fio never wraps round it, so no page of it is written back from fio's own
    context): what the flusher writes back of it, on cgroup v2 with memory and io, is charged
    to its cgroup. What it wrote is what the device wrote beyond the victim and the journals
    (on v1 its cgroup was charged 0-0.27 MB of 1.9-2.2 GB, 72-78% of the device's bytes no
    tenant's); fio's own count also holds what was still dirty at the end."""
    run = spec("per-container-journal", "bfq", "high-fsync", "buffered-no-fsync")
    run["duration_s"] = BUFFERED_S
    run["tenants"][1]["workload"] = {"tool": "fio", "preset": "buffered-no-fsync",
                                     "prep": "fallocate"}
    dest = run_remote(nested, run, tmp_path / "run")
    totals = written(dest)
    journals = sum(v for (kind, _), v in totals.items() if kind == "jbd2")
    device = next(v for (kind, _), v in totals.items() if kind == "device")
    writer = device - totals[("tenant", "a")] - journals
    charged = totals[("tenant", "b")]
    fio_bytes = summarise(parse_fio(dest / fio_file("b"))).io_bytes
    print(f"buffered writer: the device wrote {writer / 1e6:.1f} MB of it, its cgroup was "
          f"charged {charged / 1e6:.1f} MB ({charged / writer:.3f}); fio wrote "
          f"{fio_bytes / 1e6:.1f} MB")
    assert writer > 32 << 20, "the flusher wrote back too little to tell"
    assert charged >= 0.8 * writer


def test_iocost_takes_the_qos_its_procedure_derives_and_the_samples_watch_it(
        nested: dict[str, Any], tmp_path: Path, quiet: None) -> None:
    """Two direct 64 KiB sequential writers at 70/30 on the `hdd` profile under iocost: its
    model and its QoS come from the device alone (the latency-against-load sweep, once per
    machine), the QoS read back is the one the procedure derives from the recorded sweep, and
    every second's samples carry iocost's own statistics: the device's vrate, each tenant's
    usage, wait, debt and delay. The machine below's CPU over the workloads is in outer.json.
    The run's probe of the emulated disk must stay within 10% of its reference: under `make
    test` the tests beside pause meanwhile (tests/quiet.py)."""
    run = spec("shared-journal", "iocost", "seqwrite-64k", "seqwrite-64k")
    run |= {"device": "hdd", "duration_s": 10}
    dest = run_remote(nested, run, tmp_path / "run")
    facts = json.loads((dest / runfolder.HOST).read_text())["io_control"]["iocost"]
    assert facts["procedure"] == costmodel.PROCEDURE
    calibration = {**facts["calibration"], "model": facts["model_measured"]}
    assert [p["load"] for p in calibration["sweep"] if p["rw"] == "randwrite"] == list(
        costmodel.SWEEP)
    assert facts["qos_set"] == costmodel.qos_of(calibration)
    assert {key: float(facts["qos"][key]) for key in facts["qos_set"]} == facts["qos_set"]
    assert facts["qos"]["ctrl"] == "user"
    lines = [json.loads(line) for line in (dest / runfolder.SAMPLES).read_text().splitlines()]
    device = [row for row in lines if row["kind"] == "device"]
    tenants = [row for row in lines if row["kind"] == "tenant"]
    assert all(0 < row["cost_vrate_pct"] <= 100 for row in device), device[:2]
    assert all({"cost_usage_us", "cost_wait_us", "cost_indebt_us", "cost_indelay_us"}
               <= set(row) for row in tenants), tenants[:2]
    assert sum(row["cost_usage_us"] for row in tenants) > 0
    outer = json.loads((dest / runfolder.OUTER).read_text())
    assert outer["qemu_cpu_share"] > 0 and 0 < outer["emulator_cpu_share"] < 2
    assert not runfolder.manifest_problems(dest)  # the manifest covers outer.json too
    totals = written(dest)
    share = totals[("tenant", "a")] / (totals[("tenant", "a")] + totals[("tenant", "b")])
    print(f"iocost on hdd, direct pair 70/30: share of a {share:.3f}, qos {facts['qos']}, "
          f"sweep {calibration['sweep']}, outer {outer}")


def test_iocost_under_the_interleaved_procedure_runs_at_its_fixed_rate(
        nested: dict[str, Any], tmp_path: Path) -> None:
    """A run naming iocost_qos interleaved-model-fixed-vrate-v1: the kernel takes its QoS
    (latency percentiles 0, vrate 100-100%) and its model of two interleaved streams, the run
    records both and the procedure, and the device's vrate is 100% in every second."""
    run = spec("shared-journal", "iocost", "seqwrite-64k", "seqwrite-64k")
    run["iocost_qos"] = interleaved.NAME
    dest = run_remote(nested, run, tmp_path / "run")
    facts = json.loads((dest / runfolder.HOST).read_text())["io_control"]["iocost"]
    assert facts["procedure"] == interleaved.NAME and facts["qos_rule"] == interleaved.QOS_RULE
    assert facts["qos_set"] == interleaved.QOS
    assert {key: float(facts["qos"][key]) for key in facts["qos_set"]} == facts["qos_set"]
    assert {key: int(facts["model"][key]) for key in costmodel.KEYS} == facts["model_measured"]
    assert set(facts["calibration"]["streams"]) == set(costmodel.KEYS)
    lines = [json.loads(line) for line in (dest / runfolder.SAMPLES).read_text().splitlines()]
    vrates = {row["cost_vrate_pct"] for row in lines if row["kind"] == "device"
              and "cost_vrate_pct" in row}
    assert vrates == {100.0}, vrates
    # the vrate an earlier run left (the knee's, above, lowers it) was brought to 100% first
    assert facts["vrate_settle_s"] >= 0 and facts["vrate_before_pct"] <= 100.0, facts
    print(f"interleaved: vrate before {facts['vrate_before_pct']}%, settled in "
          f"{facts['vrate_settle_s']} s")


def test_a_run_that_needs_cgroup_v1_boots_the_guest_as_v1_with_its_hybrid_layout(
        nested: dict[str, Any], tmp_path: Path) -> None:
    """The guest runs as v2; a run asking cgroup v1 boots it anew as v1 (same kernel, disks
    and device path): BFQ's weights in blkio.bfq.weight, a buffered writer's write-back
    charged to no tenant. The next test's fresh boot brings it back as v2 (one boot of each
    version serves the module's tests of that version)."""
    machine = Machine(nested)
    before = machine.state()
    assert before is not None and before["cgroup_version"] == 2
    run = spec("journal-accounted", "bfq", "high-fsync", "high-fsync") | {"cgroup_version": 1}
    dest = run_remote(nested, run, tmp_path / "v1")
    facts = json.loads((dest / runfolder.HOST).read_text())
    after = machine.state()
    assert after is not None and after["cgroup_version"] == 1 and after["pid"] != before["pid"]
    assert facts["cgroup_version"] == 1 and facts["writeback_attributed"] is False
    assert facts["io_control"]["weight_file"] == "blkio.bfq.weight"
    assert facts["nested_host"]["cgroup_version"] == 1
    assert [facts["layout"]["tenants"][t]["weight_read_back"] for t in "ab"] == [700, 300]
    assert "cgroup_no_v1" not in inside(nested, "cat", "/proc/cmdline")
    assert "blkio" in inside(nested, "cat", "/proc/self/cgroup")
    left = inside(nested, "sh", "-c", INSIDE_RESIDUE, "jb", nested["state_dir"], nested["name"])
    assert left.strip() == "", f"residue inside the v1 guest: {left}"


def test_a_guest_that_stops_answering_is_booted_anew(nested: dict[str, Any]) -> None:
    """Its sshd gone while the guest runs (in a campaign the guest's kernel locked up): a
    controller without the right to boot says so, with the console's last line; one that
    uses the machine alone stops it, boots a fresh one and goes on. The guest ran as v1 (the
    test before): the fresh one is the host file's first version, v2, its v1 controllers off."""
    machine = Machine(nested)
    before = machine.state()
    assert before is not None
    # the guest's kernel prints the line (KERN_CRIT reaches the console under `quiet`)
    inside(nested, "sh", "-c", "echo '<2>jb-test: sshd stops now' > /dev/kmsg; "
                               "kill $(cat /run/jbnested/sshd.pid)")
    said_by_console = r"console ends '\[ *[0-9.]+\] jb-test: sshd stops now'"
    with pytest.raises(TransportError, match=said_by_console):
        inside(nested, "true")
    said: list[str] = []
    with NestedTransport(nested) as transport:
        transport.warn = said.append
        assert transport.run(["cat", "/proc/sys/kernel/random/boot_id"]).returncode == 0
        with pytest.raises(AgentError, match="is busy"):  # its lease held while connected
            with machine.locked("use", fcntl.LOCK_EX | fcntl.LOCK_NB):
                pass
    after = machine.state()
    assert after is not None and after["pid"] != before["pid"]
    assert (before["cgroup_version"], after["cgroup_version"]) == (1, 2)
    assert "cgroup_no_v1=all" in inside(nested, "cat", "/proc/cmdline")
    assert len(said) == 1 and "booting a fresh one" in said[0], said
    assert "jb-test: sshd stops now" in said[0]


def test_kill_9_of_the_controller_mid_run_then_teardown_leaves_nothing(
        nested: dict[str, Any], tmp_path: Path) -> None:
    """Last in the module: it stops the machine."""
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec("journal-accounted", "iocost", "high-fsync",
                                         "high-fsync") | {"duration_s": 60}))
    controller = subprocess.Popen(
        [JB, "run-remote", str(spec_file), "--host", nested["_file"], "--out",
         str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    assert controller.stdout is not None
    # the controller's, recover's and teardown's output go to the nested log with their times:
    # a slow run of this test (59 s in one suite, 229 s in the next) says what waited
    for line in controller.stdout:  # until the measured phase has begun
        logger.info("controller: %s", line.rstrip())
        if "workloads start" in line:
            break
    else:
        pytest.fail(f"the run ended before measuring: {controller.wait()}")
    time.sleep(2)
    controller.send_signal(signal.SIGKILL)
    controller.wait()
    logger.info("controller killed")
    machine = Machine(nested)
    assert machine.state() is not None, "the machine died with its controller"
    recover = subprocess.run([JB, "recover", "--host", nested["_file"]], capture_output=True,
                             text=True, timeout=300)
    for line in (recover.stdout + recover.stderr).splitlines():
        logger.info("recover: %s", line)
    assert recover.returncode == 0, recover.stderr
    left = inside(nested, "sh", "-c", INSIDE_RESIDUE, "jb", nested["state_dir"], nested["name"])
    assert left.strip() == "", f"residue inside the guest: {left}"
    done = subprocess.run([JB, "teardown", "--host", nested["_file"]], capture_output=True,
                          text=True, timeout=300)
    for line in (done.stdout + done.stderr).splitlines():
        logger.info("teardown: %s", line)
    assert done.returncode == 0, done.stderr
    assert "nothing left on this machine" in done.stdout
    assert not machine.residue()
    assert not system_residue(nested["name"], Path(nested["state_dir"]))
