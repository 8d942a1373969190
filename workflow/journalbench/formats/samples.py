"""The sampler's io-samples.jsonl (format: data/README.md) -> one record per line.

Every line is checked against the documented format, so a truncated last line, a cumulative
counter where a delta belongs or a missing field stops the run with the file and line named.
Requests and device time (`requests`, `time_ns`, `inflight_ns`) came later: a line has all
three or none (runs sampled before them), and then they are None. The scheduler wait
(`wait_ns`) came later still: it needs the other three, and is None in runs sampled before it.
iocost's statistics (`cost_*`) are on the lines of runs under iocost sampled since 2026-11-27,
None elsewhere.

Where msgspec is installed (tidy's environment; the agent side runs on a bare python), each line
is decoded against the format written as three typed line structs, in C: a third of the time of
decoding and checking each line in Python. A file whose lines do not all decode so, because a
line is wrong or holds what the structs do not take (a field of another kind, an unknown field),
is read line by line with check_line, which names the line and what is wrong with it or, for a
line the structs were stricter about, gives the same samples.
"""

from __future__ import annotations

import operator
from functools import cache, reduce
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from journalbench.formats import json_lines, read_text

KINDS = ("tenant", "jbd2", "device")
COUNTS = ("read_bytes", "write_bytes", "read_ios", "write_ios")
TIMES = ("requests", "time_ns", "inflight_ns")  # devtime.bt's; absent in older runs
WAIT = "wait_ns"  # devtime.bt's too, since its version 2
# iocost's own statistics (runs under iocost since 2026-11-27): microseconds of the interval on
# tenant lines and, on the device line, the root group's, with the vrate (percent of the model)
COSTS = ("cost_usage_us", "cost_wait_us", "cost_indebt_us", "cost_indelay_us")
VRATE = "cost_vrate_pct"
OPTIONAL = (*TIMES, WAIT, *COSTS, VRATE)  # the Sample's fields after `device`, in order


# a named tuple, immutable: a frozen dataclass took a fifth of the time of parsing every
# run's samples to make (it sets each field through object.__setattr__)
class Sample(NamedTuple):
    t: float
    dt: float
    kind: str
    source: str
    read_bytes: int
    write_bytes: int
    read_ios: int
    write_ios: int
    cgroup: str | None  # tenant: its cgroup; jbd2: where the thread sat; device: None
    weight: int | None  # tenant only
    tenant: str | None  # jbd2: whose volume it journals (None: a shared journal)
    pid: int | None  # jbd2 only
    device: str | None  # device only
    requests: int | None = None  # None: sampled before requests and device time were
    time_ns: int | None = None
    inflight_ns: int | None = None
    wait_ns: int | None = None  # None: sampled before the scheduler wait was
    cost_usage_us: int | None = None  # None: no iocost statistics on the line
    cost_wait_us: int | None = None
    cost_indebt_us: int | None = None
    cost_indelay_us: int | None = None
    cost_vrate_pct: float | None = None  # device lines under iocost

    @property
    def bytes(self) -> int:
        return self.read_bytes + self.write_bytes


# A decoded JSON value is exactly an int, float, str, bool, None, list or dict, never a subclass:
# `type(...) is int` leaves bools out as isinstance would need two calls to (a line's dozen
# checks, over every line of every run, are a tenth of tidy's time).
def is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def is_seconds(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and value >= 0


def check_line(row: Any) -> str | None:
    """What is wrong with one decoded line, or None."""
    if not isinstance(row, dict):
        return "not a JSON object"
    for key in ("t", "dt"):
        if not is_seconds(row.get(key)):
            return f"'{key}' missing or not a non-negative number"
    kind = row.get("kind")
    if kind not in KINDS:
        return f"'kind' is {kind!r}, not one of {', '.join(KINDS)}"
    if not isinstance(row.get("source"), str) or not row["source"]:
        return "'source' missing or not a string"
    for key in COUNTS:
        if not is_count(row.get(key)):
            return f"'{key}' missing or not a non-negative integer"
    times = [key for key in TIMES if key in row]
    if times and len(times) < len(TIMES):
        return f"'{sorted(set(TIMES) - set(times))[0]}' missing beside '{times[0]}'"
    if WAIT in row and not times:
        return f"'{WAIT}' without '{TIMES[0]}'"
    for key in [*times, *([WAIT] if WAIT in row else [])]:
        if not is_count(row[key]):
            return f"'{key}' not a non-negative integer"
    for key in COSTS:
        if key in row and not is_count(row[key]):
            return f"'{key}' not a non-negative integer"
    if VRATE in row and (kind != "device" or not is_seconds(row[VRATE])):
        return f"'{VRATE}' on a {kind} line or not a non-negative number"
    if kind == "tenant":
        if not isinstance(row.get("cgroup"), str):
            return "tenant line without 'cgroup'"
        if not is_count(row.get("weight")) or row["weight"] == 0:
            return "tenant line without a positive integer 'weight'"
    elif kind == "jbd2":
        if "tenant" not in row or not (row["tenant"] is None or isinstance(row["tenant"], str)):
            return "jbd2 line without 'tenant' (a name, or null for a shared journal)"
        if not isinstance(row.get("cgroup"), str):
            return "jbd2 line without 'cgroup'"
        if not is_count(row.get("pid")):
            return "jbd2 line without an integer 'pid'"
    elif not isinstance(row.get("device"), str):
        return "device line without 'device'"
    return None


# where `requests` (the first of TIMES) and `wait_ns` sit in a Sample
REQUESTS, WAIT_AT = (Sample._fields.index(name) for name in (TIMES[0], WAIT))


@cache
def line_decoder() -> tuple[Any, Any, dict[type, str]] | None:
    """(msgspec, its decoder of one line, each line struct's kind), or None where msgspec is
    not installed (the agent side runs on a bare python; tidy's environment has it).

    The format as msgspec structs, a line's kind its tag: each kind's fields in the Sample's
    order (its `kind` left out), the fields check_line ignores on that kind typed `None` (so
    that the sample has None there whatever the line says, as by_line makes it), a line with a
    field the structs do not name refused. Integers are never bools, counts never floats; an
    optional field present as null is refused, as check_line refuses it."""
    try:
        import msgspec
    except ImportError:
        return None
    count = Annotated[int, msgspec.Meta(ge=0)]
    seconds = Annotated[float, msgspec.Meta(ge=0)]  # an integer too, made a float as float() is
    number = Annotated[int, msgspec.Meta(ge=0)] | Annotated[float, msgspec.Meta(ge=0)]  # as is
    every = {"t": seconds, "dt": seconds, "source": Annotated[str, msgspec.Meta(min_length=1)],
             **dict.fromkeys(COUNTS, count)}
    own: dict[str, dict[str, Any]] = {  # a type alone: required; (type, None): optional
        "tenant": {"cgroup": str, "weight": Annotated[int, msgspec.Meta(ge=1)]},
        "jbd2": {"cgroup": str, "tenant": str | None, "pid": count},
        "device": {"device": str, "cost_vrate_pct": (number, None)},
    }
    structs = {}
    for kind in KINDS:
        fields: list[Any] = []
        for name in Sample._fields[:2] + Sample._fields[3:]:
            given = own[kind].get(name)
            if name in every:
                fields.append((name, every[name]))
            elif isinstance(given, tuple):
                fields.append((name, *given))
            elif given is not None:
                fields.append((name, given))
            elif name in (*TIMES, WAIT, *COSTS):
                fields.append((name, count, None))
            else:  # another kind's field: null or absent
                fields.append((name, None, None))
        structs[msgspec.defstruct(f"{kind.title()}Line", fields, tag=kind, tag_field="kind",
                                  forbid_unknown_fields=True, kw_only=True, gc=False)] = kind
    return msgspec, msgspec.json.Decoder(reduce(operator.or_, structs)), structs


def typed(text: str) -> list[Sample] | None:
    """The samples of a file's text as the structs take it, each line decoded alone (a line
    holds one JSON value, as json.loads has it); None if a line does not decode so, or has some
    but not all of the device-time fields, or a wait without them."""
    found = line_decoder()
    if found is None:
        return None
    msgspec, decoder, kind_of = found
    decode, astuple = decoder.decode, msgspec.structs.astuple
    new = tuple.__new__  # a Sample from its fields in order: a quarter of the keywords' time
    try:
        samples = [new(Sample, (fields[0], fields[1], kind_of[type(line)], *fields[2:]))
                   for line in map(decode, text.splitlines()) for fields in (astuple(line),)]
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    at, wait = REQUESTS, WAIT_AT
    if any((sample[at] is None) != (sample[at + 1] is None)
           or (sample[at] is None) != (sample[at + 2] is None)
           or (sample[at] is None and sample[wait] is not None) for sample in samples):
        return None
    return samples


def parse_samples(path: Path | str) -> list[Sample]:
    """Every line of io-samples.jsonl; ParseError naming the file and line of the first bad one."""
    found = typed(read_text(Path(path)))
    return by_line(path) if found is None else found


def by_line(path: Path | str) -> list[Sample]:
    """parse_samples line by line, each line checked by check_line."""
    samples = []
    new = tuple.__new__
    for row in json_lines(Path(path), check_line):
        kind, get = row["kind"], row.get
        jbd2, device = kind == "jbd2", kind == "device"
        samples.append(new(Sample, (
            float(row["t"]), float(row["dt"]), kind, row["source"],
            row["read_bytes"], row["write_bytes"], row["read_ios"], row["write_ios"],
            None if device else get("cgroup"),  # cgroup
            row["weight"] if kind == "tenant" else None,  # weight
            row["tenant"] if jbd2 else None, row["pid"] if jbd2 else None,  # tenant, pid
            row["device"] if device else None,  # device
            *[get(key) for key in OPTIONAL],
        )))
    return samples
