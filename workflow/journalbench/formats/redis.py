"""What the redis workload read from Redis after its run (`redis-<tenant>.json`, written by
agent/workloads/redis.py): the AOF's size after loading and at the end, the load phase's
seconds, and the client's and server's CPU time over the measured phase (`cpu`; runs made
before it was recorded have none)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journalbench.formats import problem, read_text


# the file of a tenant's output in its run folder
def redis_file(tenant: str) -> str:
    """What the redis workload read from Redis after the run (AOF size, counters)."""
    return f"redis-{tenant}.json"


@dataclass(frozen=True)
class RedisFacts:
    aof_bytes_end: int
    aof_bytes_loaded: int
    load_s: float
    cpu_shares: dict[str, float] | None  # client_cpu_share, server_cpu_share; None: not kept


def parse_facts(path: Path | str) -> RedisFacts:
    """The facts file; ParseError naming the file and field when one is missing or wrong."""
    path = Path(path)
    try:
        facts = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise problem(path, f"not valid JSON ({error.msg})", error.lineno) from None
    if not isinstance(facts, dict):
        raise problem(path, "not a JSON object")
    return RedisFacts(number(facts, "aof_bytes_end", path, int),
                      number(facts, "aof_bytes_loaded", path, int),
                      float(number(facts, "load_s", path, (int, float))),
                      cpu_shares(facts.get("cpu"), path))


def cpu_shares(cpu: Any, path: Path) -> dict[str, float] | None:
    """The client's and the server's CPU, each as a share of one core over the seconds it was
    measured in."""
    if cpu is None:
        return None
    if not isinstance(cpu, dict):
        raise problem(path, "'cpu' is not an object")
    shares = {}
    for part in ("client", "server"):
        used = number(cpu, f"{part}_s", path, (int, float))
        wall = number(cpu, f"{part}_wall_s", path, (int, float))
        if used < 0 or wall <= 0:
            raise problem(path, f"cpu {part}_s {used} over {part}_wall_s {wall}")
        shares[f"{part}_cpu_share"] = used / wall
    return shares


def number(data: dict[str, Any], key: str, path: Path, kinds: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    if key not in data:
        raise problem(path, f"no '{key}'")
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise problem(path, f"'{key}' is {value!r}, not {getattr(kinds, '__name__', kinds)}")
    return value
