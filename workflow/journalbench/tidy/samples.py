"""The samples table (data/SCHEMA.md) of many runs at once. Each run contributes the sampler's
lines of its measured window (formats/samples.py's records, read by tidy/rows.py) and its
tools' operations per second; the derived columns are computed here column by column over
every run together, never line by line:

  bytes, ios      read + write
  own_bytes       a tenant line's bytes minus those of the jbd2 threads that sat in the same
                  cgroup in the same interval (tidy/rows.py's module docstring)
  mb_s            bytes / dt (decimal MB), null for an interval of no length
  device_share    bytes / the device line's bytes of the interval, null when it wrote none
  requests .. wait_s   the currencies of tidy/currencies.py, per line: requests and device time
                  (own ones as own bytes), the line's share of the device line's time, the
                  scheduler wait; null on lines sampled without them
  cost_*          iocost's statistics in the tables' units

A run's rows are its lines in order, then its operations per second (kind `ops`); the runs'
rows follow each other in the order given. Every line's interval has a device line: tidy/rows.py
refuses a run otherwise, naming its file, before its samples come here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from journalbench.formats.samples import Sample

SAMPLES_COLUMNS: tuple[tuple[str, str], ...] = (
    ("campaign", "string"), ("host", "string"), ("run_id", "string"), ("arm", "string"),
    ("t", "float64"), ("dt", "float64"), ("kind", "string"), ("source", "string"),
    ("tenant", "string"), ("cgroup", "string"),
    ("read_bytes", "int64"), ("write_bytes", "int64"), ("bytes", "int64"), ("ios", "int64"),
    ("own_bytes", "int64"), ("mb_s", "float64"), ("device_share", "float64"),
    ("ops", "int64"),
    ("requests", "int64"), ("own_requests", "int64"), ("time_s", "float64"),
    ("own_time_s", "float64"), ("time_share", "float64"), ("wait_s", "float64"),
    ("cost_usage_share", "float64"), ("cost_wait_s", "float64"), ("cost_indebt_s", "float64"),
    ("cost_indelay_s", "float64"), ("cost_vrate_pct", "float64"),
)
IDS = ("campaign", "host", "run_id", "arm")
MB = 1e6  # MB/s columns are decimal megabytes, as fio's "(MB/s)" figures
NS = 1e9
US = 1e6
# iocost's microseconds on a line -> the seconds columns
COST_SECONDS = {"cost_wait_us": "cost_wait_s", "cost_indebt_us": "cost_indebt_s",
                "cost_indelay_us": "cost_indelay_s"}


@dataclass(frozen=True)
class RunSamples:
    """One run's part of the samples table: its ids (campaign, host, run_id, arm), its sampler
    lines of the measured window and its tenants' operations per second, (tenant, t, dt,
    operations) on the tool's own clock."""

    ids: dict[str, Any]
    lines: list[Sample]
    ops: list[tuple[str, float, float, int]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.lines) + len(self.ops)


def table(parts: Sequence[RunSamples]) -> Any:
    """The samples table of the runs `parts`, in their order (exactly SAMPLES_COLUMNS)."""
    import numpy as np
    import pyarrow as pa

    from journalbench.tidy.cache import arrow_schema

    lines = line_columns(parts)
    ops = ops_columns(parts)
    # each run's lines, then its operations: a stable sort by run, lines before operations
    run = np.concatenate([lines.pop("_run"), ops.pop("_run")])
    order = np.argsort(run * 2 + np.repeat([0, 1], [len(run) - len(ops["t"]), len(ops["t"])]),
                       kind="stable")
    schema = arrow_schema(SAMPLES_COLUMNS)
    columns = [pa.concat_arrays([lines[name], ops[name]]).take(order)
               for name, _ in SAMPLES_COLUMNS]
    return pa.Table.from_arrays(columns, schema=schema)


def rows(part: RunSamples) -> list[dict[str, Any]]:
    """One run's samples rows as dicts (what a test reads of one run folder)."""
    return table([part]).to_pylist()


def line_columns(parts: Sequence[RunSamples]) -> dict[str, Any]:
    """The columns of every run's sampler lines (and `_run`, the index of each line's run)."""
    import numpy as np
    import pyarrow as pa

    counts = [len(part.lines) for part in parts]
    run = np.repeat(np.arange(len(parts)), counts)
    found = list(zip(*(line for part in parts for line in part.lines), strict=True))
    values = dict(zip(Sample._fields, found, strict=True)) if found else {
        name: () for name in Sample._fields}

    def numbers(name: str, kind: Any) -> Any:
        return np.array(values[name], dtype=kind)

    def nullable(name: str) -> tuple[Any, Any]:
        """An optional count: its values (0 where null) and where it is null."""
        array = pa.array(values[name], pa.int64())
        return (array.fill_null(0).to_numpy(), array.is_null().to_numpy(zero_copy_only=False))

    t, dt = numbers("t", np.float64), numbers("dt", np.float64)
    kind = np.array(values["kind"], dtype=object)
    tenant_line, jbd2_line, device_line = (kind == "tenant", kind == "jbd2", kind == "device")
    written = numbers("read_bytes", np.int64) + numbers("write_bytes", np.int64)
    requests, no_requests = nullable("requests")
    time_ns, no_time = nullable("time_ns")
    wait_ns, no_wait = nullable("wait_ns")

    # each line's interval (its run and t), and its interval and cgroup (the same, but for
    # slashes), numbered from 0
    interval = numbered(run, t)
    names: dict[str | None, int] = {}
    cgroup = np.array([names.setdefault(None if name is None else name.strip("/"), len(names))
                       for name in values["cgroup"]], dtype=np.int64)
    in_cgroup = numbered(interval, cgroup)

    def summed(value: Any, chosen: Any, key: Any) -> Any:
        """For every line, the sum of `value` over the `chosen` lines of the same `key`."""
        sums = np.zeros(len(key) and key.max() + 1, dtype=value.dtype)
        np.add.at(sums, key[chosen], value[chosen])
        return sums[key]

    device_bytes = summed(written, device_line, interval)
    device_time = summed(time_ns, device_line, interval)  # a line without it counts 0
    # what the jbd2 threads that sat in a tenant line's cgroup in its interval did
    journal_bytes, journal_requests, journal_time = (
        summed(value, jbd2_line, in_cgroup) for value in (written, requests, time_ns))
    timed = ~(no_requests | no_time)

    def column(value: Any, null: Any = None, kind: Any = None) -> Any:
        return pa.array(value, kind or pa.int64(), mask=null)

    source = values["source"]
    out = {"_run": run, **{name: pa.array([part.ids[name] for part in parts], pa.string())
                           .take(pa.array(run)) for name in IDS}}
    out.update(
        t=column(t, kind=pa.float64()), dt=column(dt, kind=pa.float64()),
        kind=pa.array(values["kind"], pa.string()), source=pa.array(source, pa.string()),
        tenant=pa.array([s if k == "tenant" else o for s, k, o
                         in zip(source, values["kind"], values["tenant"], strict=True)],
                        pa.string()),
        cgroup=pa.array(values["cgroup"], pa.string()),
        read_bytes=column(numbers("read_bytes", np.int64)),
        write_bytes=column(numbers("write_bytes", np.int64)),
        bytes=column(written),
        ios=column(numbers("read_ios", np.int64) + numbers("write_ios", np.int64)),
        own_bytes=column(written - journal_bytes, ~tenant_line),
        mb_s=column(quotient(written, dt) / MB, ~(dt > 0), pa.float64()),
        device_share=column(quotient(written, device_bytes), device_bytes == 0, pa.float64()),
        ops=pa.nulls(len(t), pa.int64()),
        requests=column(requests, ~timed),
        own_requests=column(requests - journal_requests, ~(timed & tenant_line)),
        time_s=column(time_ns / NS, ~timed, pa.float64()),
        own_time_s=column((time_ns - journal_time) / NS,
                          ~(timed & tenant_line), pa.float64()),
        time_share=column(quotient(time_ns, device_time), ~timed | (device_time == 0),
                          pa.float64()),
        wait_s=column(wait_ns / NS, ~timed | no_wait, pa.float64()),
    )
    usage, no_usage = nullable("cost_usage_us")
    out["cost_usage_share"] = column(quotient(usage / US, dt), no_usage | ~(dt > 0),
                                     pa.float64())
    for name, seconds in COST_SECONDS.items():
        value, null = nullable(name)
        out[seconds] = column(value / US, null, pa.float64())
    out["cost_vrate_pct"] = pa.array(values["cost_vrate_pct"], pa.float64())
    return out


def numbered(*keys: Any) -> Any:
    """Each line's `keys` (NumPy columns of numbers) as a number from 0, the same for the same
    keys (equal as a dict's keys are: a sort, then a new number where any key changes)."""
    import numpy as np

    if not len(keys[0]):
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(keys[::-1])
    changes = np.zeros(len(order), dtype=bool)
    for key in keys:
        ordered = key[order]
        changes[1:] |= ordered[1:] != ordered[:-1]
    found = np.empty(len(order), dtype=np.int64)
    found[order] = np.cumsum(changes)
    return found


def quotient(top: Any, bottom: Any) -> Any:
    """top / bottom where bottom is not 0 (else 0: the caller masks those lines)."""
    import numpy as np

    return np.divide(top, bottom, out=np.zeros(len(top), dtype=np.float64),
                     where=np.asarray(bottom) != 0)


def ops_columns(parts: Sequence[RunSamples]) -> dict[str, Any]:
    """The rows of every run's operations per second (kind `ops`; every other column null),
    and `_run`."""
    import numpy as np
    import pyarrow as pa

    run = np.repeat(np.arange(len(parts)), [len(part.ops) for part in parts])
    seconds = [second for part in parts for second in part.ops]
    names = [name for name, _, _, _ in seconds]
    out = {name: pa.array([part.ids[name] for part in parts], pa.string()).take(pa.array(run))
           for name in IDS}
    out.update(
        t=pa.array([round(t, 3) for _, t, _, _ in seconds], pa.float64()),
        dt=pa.array([round(dt, 3) for _, _, dt, _ in seconds], pa.float64()),
        kind=pa.array(["ops"] * len(seconds), pa.string()),
        source=pa.array(names, pa.string()), tenant=pa.array(names, pa.string()),
        ops=pa.array([ops for _, _, _, ops in seconds], pa.int64()),
    )
    for name, kind in SAMPLES_COLUMNS:
        if name not in out:
            out[name] = pa.nulls(len(seconds), pa.string() if kind == "string" else
                                 pa.int64() if kind == "int64" else pa.float64())
    return {"_run": run, **out}
