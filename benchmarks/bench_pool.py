"""What a pool of two hosts saves over one (issue 42; a script, not a test; needs root, sshd,
nbdkit's Python plugin and nbdfuse).

    .venv/bin/python benchmarks/bench_pool.py [--repetitions 4] [--duration 5] [--order one,pool]

The same short campaign (C8's pair on the emulated `hdd`: a high-fsync victim at 700 beside a
no- or high-fsync neighbour at 300, shared-journal and per-container-journal, --repetitions
each, --duration s) is measured twice in one invocation, by the pipeline as a user runs it
(`snakemake --cores 2 --config campaign=... hosts=...`): on one host, and on a pool of two
(a pool file naming two members, each run dealt to one, the members in parallel). Every host
is a real OpenSSH server in a network namespace of its own reached over a veth pair on this
machine (tests/sshd.py, as the test suite makes them), with its own state folder and so its
own emulated disk (nbdkit is ~3% of a core: the runs wait on the model, not on the CPU). Each
host's first run also measures its device reference, the pool's members theirs in parallel.

Printed: each side's wall time (the Snakemake invocation, tidy of its few runs included) and
its measuring span (the first run's start to the last run's end, from the runs' run.log), the
runs each pool member made, and the ratio pool / one host of both (target: <= 0.6). Everything
is removed afterwards (the campaign's folders under data/, the hosts' state, the servers and
namespaces), and the script checks nothing is left.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from sshd import NetNS, SshServer, start_sshd, stop_all  # noqa: E402

from conftest import VENV_BIN, system_residue  # noqa: E402
from journalbench import runfolder  # noqa: E402

CAMPAIGN = f"benchpool-{os.getpid()}"
STAMP = "%Y-%m-%d %H:%M:%S,%f"
TARGET = 0.6


def campaign_text(name: str, repetitions: int, duration: int) -> str:
    return (f"name: {name}\ndescription: bench_pool, one host against a pool of two\n"
            f"duration_s: {duration}\nrepetitions: {repetitions}\nexperiments:\n"
            "  - id: pair\n    claims: [C8]\n    arms: [shared-journal, per-container-journal]\n"
            "    vary: {n: [no-fsync, high-fsync]}\n    tenants:\n"
            "      - {name: victim, weight: 700, workload: {tool: fio, preset: high-fsync,"
            " size_mb: 16, prep: overwrite}}\n"
            "      - {name: neighbour, weight: 300, workload: {tool: fio, preset: \"{n}\","
            " size_mb: 16, prep: overwrite}}\n")


def host_file(server: SshServer, name: str, state: Path) -> Path:
    return server.host_file(state, name=name,
                            device={"kind": "image", "size_gb": 2, "profile": "hdd"},
                            bfq={"strict_guarantees": 1})


def snakemake(campaign: Path, hosts: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.monotonic()
    done = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--cores", "2", "--keep-going",
         f"data/processed/{campaign.stem}/runs.parquet",
         "--config", f"campaign={campaign}", f"hosts={hosts}"],
        cwd=REPO, capture_output=True, text=True, timeout=6 * 3600)
    return time.monotonic() - started, done


def span_s(folders: list[Path]) -> float:
    """The first run's start to the last run's end (their run.log's first and last line)."""
    starts, ends = [], []
    for folder in folders:
        lines = [line for line in (folder / runfolder.RUN_LOG).read_text().splitlines()
                 if line[:4].isdigit()]
        starts.append(datetime.datetime.strptime(lines[0][:23], STAMP))
        ends.append(datetime.datetime.strptime(lines[-1][:23], STAMP))
    return (max(ends) - min(starts)).total_seconds()


def landed(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*") if p.is_dir() and runfolder.is_complete(p))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=4)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--order", default="one,pool",
                        help="which side runs first (one,pool or pool,one)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_pool: needs root (sshd, loop devices, cgroups)", file=sys.stderr)
        return 2
    work = Path(f"/var/lib/journalbench-benchpool-{os.getpid()}")
    work.mkdir()
    # a campaign per side (the same matrix, so the same run ids): each side's pipeline tidies
    # its own runs alone
    campaigns = {side: f"{CAMPAIGN}-{side}" for side in ("one", "pool")}
    made = [REPO / d / name for name in campaigns.values()
            for d in ("data/raw", "data/processed", "logs/runs", "logs/tidy")]
    made += [REPO / "data/plan" / f"{name}.json" for name in campaigns.values()]
    namespaces: list[NetNS] = []
    servers: list[SshServer] = []
    names = {"one": f"bp1-{os.getpid()}", "m1": f"bpm1-{os.getpid()}",
             "m2": f"bpm2-{os.getpid()}"}
    pool_name = f"bpp-{os.getpid()}"
    results: dict[str, tuple[float, float, list[Path]]] = {}
    failed = False
    files: dict[str, Path] = {}
    try:
        for key, name in names.items():
            ns = NetNS.create()
            namespaces.append(ns)
            server = start_sshd(work / f"sshd-{key}", name, netns=ns)
            servers.append(server)
            files[key] = host_file(server, name, work / f"state-{key}")
        pool = work / f"{pool_name}.yaml"
        pool.write_text(json.dumps({"name": pool_name,
                                    "members": [str(files["m1"]), str(files["m2"])]}))
        sides = {"one": (files["one"], names["one"]), "pool": (pool, pool_name)}
        for side in args.order.split(","):
            hosts, folder = sides[side]
            campaign = work / f"{campaigns[side]}.yaml"
            campaign.write_text(campaign_text(campaigns[side], args.repetitions, args.duration))
            wall, done = snakemake(campaign, hosts)
            runs = landed(REPO / "data/raw" / campaigns[side] / folder)
            if done.returncode != 0:
                failed = True
                print(f"{side}: snakemake failed (exit {done.returncode}):\n"
                      f"{done.stdout[-2000:]}{done.stderr[-3000:]}", file=sys.stderr)
            results[side] = (wall, span_s(runs) if runs else float("nan"), runs)
            print(f"{side:>4}: {len(runs)} runs, wall {wall:.1f} s, measuring span "
                  f"{results[side][1]:.1f} s", flush=True)
        members = Counter(json.loads((run / runfolder.HOST).read_text()).get("member")
                          for run in results["pool"][2])
        print("pool members' runs: " + ", ".join(f"{m} {n}" for m, n in sorted(members.items())))
        (one_wall, one_span, _), (pool_wall, pool_span, _) = results["one"], results["pool"]
        ratio = pool_wall / one_wall
        print(f"wall time pool / one host: {ratio:.3f} (measuring span: "
              f"{pool_span / one_span:.3f}); target <= {TARGET}: "
              f"{'met' if ratio <= TARGET else 'NOT met'}")
        failed = failed or ratio > TARGET
    finally:
        for file in files.values():  # every host is this machine: its teardown is local
            subprocess.run([str(VENV_BIN / "journalbench"), "teardown", "--host", str(file)],
                           capture_output=True, text=True, timeout=300, check=False)
        left = stop_all(servers, namespaces)
        for key, name in names.items():
            left += system_residue(name, work / f"state-{key}")
        for path in made:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        left += [str(p) for p in made if p.exists()]
        shutil.rmtree(work, ignore_errors=True)
        if left:
            print(f"bench_pool: residue left: {left}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
