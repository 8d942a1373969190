"""A model of one hard-disk actuator: what a request costs, in seconds. Pure (no I/O, no clock
of its own), so it is tested on its own and used by the nbdkit plugin (`hdd_plugin.py`).

Requests are served one at a time. A request that does not continue where the previous one
ended pays a seek; every request then waits for its first sector to come round under the head
(the platter turns whatever the disk does, so a contiguous write that arrives late waits almost
a whole turn), then transfers at the media rate. Two write-cache modes:
- `write_cache=False`: every write is on the platter when it is acknowledged; a flush costs only
  the drive's fixed overhead.
- `write_cache=True`: a write is acknowledged at interface speed and kept dirty; a flush (or a
  FUA write) writes every dirty extent in offset order, each paying seek and rotation as above.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ON_TIME = 1e-6  # of a turn (8 ns at 7,200 rpm)


@dataclass(frozen=True)
class Params:
    seek_ms: float = 8.0  # average seek of a 7,200 rpm desktop disk
    rpm: float = 7200.0
    transfer_mb_s: float = 150.0  # media rate
    flush_ms: float = 0.5  # drive overhead of a cache flush command
    track_kib: float = 1024.0  # bytes under the head in one turn (sets the angle of an offset)
    write_cache: bool = False
    interface_mb_s: float = 500.0  # SATA link, for writes into the cache

    @property
    def turn_s(self) -> float:
        return 60.0 / self.rpm


@dataclass
class Disk:
    params: Params
    busy_until: float = 0.0  # when the actuator is free (model time, seconds)
    next_offset: int = -1  # where the previous request ended (-1: head position unknown)
    dirty: dict[int, int] = field(default_factory=dict)  # offset -> length, write cache only

    def angle(self, offset: int) -> float:
        """Where an offset lies on its track, in turns (0 <= angle < 1)."""
        track = self.params.track_kib * 1024
        return (offset % track) / track

    def mechanical(self, start: float, offset: int, length: int) -> float:
        """When a platter access of [offset, offset+length) begun at `start` ends."""
        p = self.params
        t = start
        if offset != self.next_offset:
            t += p.seek_ms / 1000
        head = (t / p.turn_s) % 1.0
        wait = (self.angle(offset) - head) % 1.0
        if wait > 1.0 - ON_TIME:  # arrived just as its sector comes: rounding, not a turn
            wait = 0.0
        t += wait * p.turn_s
        t += length / (p.transfer_mb_s * 1e6)
        self.next_offset = offset + length
        return t

    def read(self, now: float, offset: int, length: int) -> float:
        """Completion time of a read (reads go to the platter; dirty data would be served
        from the cache, which a read-after-write test does not need)."""
        self.busy_until = self.mechanical(max(now, self.busy_until), offset, length)
        return self.busy_until

    def write(self, now: float, offset: int, length: int, fua: bool = False) -> float:
        start = max(now, self.busy_until)
        if not self.params.write_cache:
            self.busy_until = self.mechanical(start, offset, length)
            return self.busy_until
        self.dirty[offset] = max(length, self.dirty.get(offset, 0))
        self.busy_until = start + length / (self.params.interface_mb_s * 1e6)
        return self.flush(self.busy_until) if fua else self.busy_until

    def flush(self, now: float) -> float:
        t = max(now, self.busy_until)
        for offset in sorted(self.dirty):
            t = self.mechanical(t, offset, self.dirty[offset])
        self.dirty.clear()
        self.busy_until = t + self.params.flush_ms / 1000
        return self.busy_until


def params_from(settings: dict[str, str]) -> Params:
    """Params from nbdkit's key=value settings (unknown keys are an error, not ignored)."""
    known = {f: type(getattr(Params(), f)) for f in Params.__dataclass_fields__}
    values: dict[str, object] = {}
    for key, text in settings.items():
        if key not in known:
            raise ValueError(f"hdd model: unknown parameter {key!r}; known: {', '.join(known)}")
        kind = known[key]
        values[key] = text.lower() in ("1", "true", "yes", "on") if kind is bool else kind(text)
    return Params(**values)  # type: ignore[arg-type]
