"""How fast the parsers and `journalbench tidy` go, in rows per second (a script, not a test).

    .venv/bin/python benchmarks/bench_parse.py [--scale 1.0]

Inputs are large but in the real formats: the real fixtures of tests/fixtures replicated
(fio jobs, sysbench interval lines, YCSB status lines, fsync.bt buckets), and io-samples.jsonl
lines in the documented format for a long run with five sources. Everything is written to a
temporary directory and removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fixtures.assemble import MB, make_run, sample_lines, tenant  # noqa: E402

from journalbench.formats.fio import parse_fio, summarise  # noqa: E402
from journalbench.formats.fsync import parse_fsync  # noqa: E402
from journalbench.formats.samples import parse_samples  # noqa: E402
from journalbench.formats.sysbench import parse_sysbench  # noqa: E402
from journalbench.formats.ycsb import parse_ycsb  # noqa: E402
from journalbench.tidy import build as tidy  # noqa: E402, F401  (schemas: import outside the timing)

FIXTURES = REPO / "tests" / "fixtures"


def timed(label: str, rows: int, action: Callable[[], object], repeat: int = 3) -> None:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<44} {rows:>10,} rows {best:8.3f} s {rows / best:>14,.0f} rows/s")


def fio_input(folder: Path, jobs: int) -> Path:
    data = json.loads((FIXTURES / "fio" / "seqwrite-fsync5-jsonplus.json").read_text())
    job = data["jobs"][0]
    data["jobs"] = [{**job, "jobname": f"j{i}"} for i in range(jobs)]
    path = folder / "fio-big.json"
    path.write_text("note: replicated for the benchmark\n" + json.dumps(data, indent=1))
    return path


def replicate_lines(source: Path, target: Path, pattern: Callable[[str], bool],
                    copies: int) -> tuple[Path, int]:
    """The file with its matching lines (e.g. interval lines) repeated copies times, in place."""
    lines = source.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if pattern(line))
    last = max(i for i, line in enumerate(lines) if pattern(line))
    block = lines[first:last + 1]
    target.write_text("".join(lines[:first] + block * copies + lines[last + 1:]))
    return target, len(block) * copies


def fsync_input(folder: Path, copies: int) -> tuple[Path, int]:
    lines = (FIXTURES / "fsync" / "mariadbd-sysbench-pid.txt").read_text().splitlines()
    buckets = [line for line in lines if line.startswith("@bucket_ns")]
    head = [line for line in lines if not line.startswith(("@bucket_ns", "@calls", "end"))]
    calls = 16245 * copies
    out = head + [f"@calls[fdatasync]: {calls}"]
    # each copy a fresh set of bucket keys (shifted by whole seconds), as a trace with a
    # wider spread of latencies would have
    for n in range(copies):
        for line in buckets:
            key, count = line.rsplit(": ", 1)
            low = int(key.split(", ")[1].rstrip("]"))
            out.append(f"@bucket_ns[fdatasync, {low + n * 1_000_000_000}]: {count}")
    out.append("end")
    path = folder / "fsync-big.txt"
    path.write_text("\n".join(out) + "\n")
    return path, len(buckets) * copies


def samples_input(folder: Path, seconds: int) -> tuple[Path, int]:
    lines = sample_lines({"a": [6 * MB] * seconds, "b": [2 * MB] * seconds},
                         {"a": 700, "b": 300},
                         {"a": "/journalbench/h/a", "b": "/journalbench/h/b"},
                         [{"name": "jbd2/loop7p1-8", "tenant": "a", "cgroup": "/journalbench/h/a",
                           "bytes": [MB] * seconds},
                          {"name": "jbd2/loop7p2-8", "tenant": "b", "cgroup": "/",
                           "bytes": [MB // 2] * seconds}])
    path = folder / "io-samples.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, len(lines)


def tidy_input(root: Path, runs: int, seconds: int) -> int:
    high = {"tool": "fio", "preset": "high-fsync"}
    for repetition in range(1, runs + 1):
        make_run(root, "journal-accounted", [tenant("a", 700, high), tenant("b", 300, high)],
                 {"fio-a.json": "fio/traced-fsync5-jsonplus.json",
                  "fio-b.json": "fio/seqwrite-fsync5-jsonplus.json"},
                 sample_lines({"a": [6 * MB] * seconds, "b": [2 * MB] * seconds},
                              {"a": 700, "b": 300}, {"a": "/a", "b": "/b"},
                              [{"name": "jbd2/loop7p1-8", "tenant": "a", "cgroup": "/a",
                                "bytes": [MB] * seconds}]),
                 repetition=repetition, duration_s=seconds)
    return runs * seconds * 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input size factor")
    scale = parser.parse_args().scale
    with tempfile.TemporaryDirectory(prefix="bench-parse-") as scratch:
        folder = Path(scratch)
        jobs = int(2000 * scale)
        path = fio_input(folder, jobs)
        timed("fio JSON (json+, jobs)", jobs, lambda: summarise(parse_fio(path)))

        path, n = replicate_lines(FIXTURES / "sysbench" / "oltp_insert-t2-interval1-traced.log",
                                  folder / "sysbench-big.log", lambda line: line.startswith("[ "),
                                  int(30000 * scale))
        timed("sysbench text (interval lines)", n, lambda: parse_sysbench(path))

        path, n = replicate_lines(FIXTURES / "ycsb" / "load-hdrhistogram-status.log",
                                  folder / "ycsb-big.log", lambda line: line[:2] == "20",
                                  int(20000 * scale))
        timed("YCSB text (status lines)", n, lambda: parse_ycsb(path))

        path, n = fsync_input(folder, int(400 * scale))
        timed("fsync.bt summary (bucket lines)", n,
              lambda: (parse_fsync(path).percentile_ns(99)))

        path, n = samples_input(folder, int(20000 * scale))
        timed("io-samples.jsonl (lines)", n, lambda: parse_samples(path))

        raw, out = folder / "raw", folder / "out"
        runs, seconds = max(1, int(40 * scale)), 600
        n = tidy_input(raw, runs, seconds)
        start = time.perf_counter()
        outcome = tidy.tidy(raw, out)
        cold = time.perf_counter() - start
        assert len(outcome.parsed) == runs and not outcome.skipped
        print(f"{'tidy, cold (' + str(runs) + ' runs x ' + str(seconds) + ' s, samples)':<44} "
              f"{n:>10,} rows {cold:8.3f} s {n / cold:>14,.0f} rows/s")
        timed("tidy, warm (all from cache)", n, lambda: tidy.tidy(raw, out), repeat=2)


if __name__ == "__main__":
    main()
