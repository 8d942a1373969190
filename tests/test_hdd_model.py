"""The HDD actuator model on its own: what each kind of request costs (pure, no I/O)."""

from __future__ import annotations

import pytest

from journalbench.agent.devices.hdd_model import Disk, Params, params_from

P = Params()
TURN = P.turn_s
MB = 1_000_000


def test_a_contiguous_request_arriving_on_time_pays_only_transfer() -> None:
    disk = Disk(P)
    end = disk.write(0.0, 0, 65536)
    # the next sector passes under the head exactly when the previous transfer ends only if
    # the track's bytes per turn match the media rate; the rotational wait is what is left
    follow = disk.write(end, 65536, 65536)
    assert follow - end == pytest.approx(65536 / (P.transfer_mb_s * MB) + (
        (disk.angle(65536) - (end / TURN) % 1) % 1) * TURN)


def test_a_late_contiguous_write_waits_for_its_sector_to_come_round() -> None:
    disk = Disk(Params(track_kib=P.transfer_mb_s * 1e6 * TURN / 1024))  # rate matches a turn
    end = disk.write(0.0, 0, 65536)
    on_time = Disk(disk.params)
    on_time.write(0.0, 0, 65536)
    assert on_time.write(end, 65536, 65536) - end == pytest.approx(
        65536 / (P.transfer_mb_s * MB), abs=1e-6)
    late = disk.write(end + 0.001, 65536, 65536) - (end + 0.001)
    assert late == pytest.approx(TURN - 0.001 + 65536 / (P.transfer_mb_s * MB), abs=1e-6)


def test_a_jump_pays_a_seek() -> None:
    near, far = Disk(P), Disk(P)
    near.write(0.0, 0, 4096)
    far.write(0.0, 0, 4096)
    t_near = near.write(1.0, 4096, 4096)
    t_far = far.write(1.0, 1 << 30, 4096)
    # both wait for rotation; the jump also seeks (rotation is at most a turn)
    assert t_far - 1.0 >= P.seek_ms / 1000
    assert t_near - 1.0 <= TURN + 4096 / (P.transfer_mb_s * MB) + 1e-9


def test_requests_are_served_one_at_a_time() -> None:
    disk = Disk(P)
    first = disk.write(0.0, 0, 1 << 20)
    second = disk.write(0.0, 5 << 30, 4096)  # arrives while the first is on the platter
    assert second >= first + P.seek_ms / 1000


def test_without_write_cache_a_flush_costs_its_overhead_only() -> None:
    disk = Disk(P)
    end = disk.write(0.0, 0, 65536)
    assert disk.flush(end) == pytest.approx(end + P.flush_ms / 1000)


def test_with_write_cache_writes_are_quick_and_the_flush_pays_for_them() -> None:
    cached = Disk(Params(write_cache=True))
    acked = cached.write(0.0, 0, 65536)
    assert acked == pytest.approx(65536 / (P.interface_mb_s * MB))
    cached.write(acked, 1 << 30, 65536)  # far away: the flush must seek there too
    done = cached.flush(acked)
    assert done - acked > P.seek_ms / 1000 + 2 * 65536 / (P.transfer_mb_s * MB)
    assert cached.dirty == {}
    assert cached.flush(done) == pytest.approx(done + P.flush_ms / 1000)  # nothing dirty left


def test_a_fua_write_with_write_cache_is_durable_when_acknowledged() -> None:
    cached = Disk(Params(write_cache=True))
    done = cached.write(0.0, 0, 65536, fua=True)
    assert done > 65536 / (P.transfer_mb_s * MB) and cached.dirty == {}


def test_params_from_nbdkit_settings() -> None:
    params = params_from({"seek_ms": "4", "rpm": "15000", "write_cache": "true"})
    assert params.seek_ms == 4.0 and params.rpm == 15000.0 and params.write_cache is True
    with pytest.raises(ValueError, match="unknown parameter 'seek'"):
        params_from({"seek": "4"})
