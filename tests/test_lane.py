"""The controller's lane of a host (control/dispatch.py): one run at a time on a host, however
Snakemake is invoked, and no lock file left in the temporary folder once the runs are done."""

from __future__ import annotations

import os
import threading
import time

from journalbench.control.dispatch import clear_lane, controller_lane, lane_path


def test_the_lane_leaves_no_lock_file() -> None:
    host = f"jbt-lane-{os.getpid()}"
    with controller_lane(host):
        assert lane_path(host).exists()
    assert not lane_path(host).exists()


def test_the_lane_lets_one_run_at_a_time_while_its_file_comes_and_goes() -> None:
    """Eight controllers (threads: flock locks each open of the file apart) come for the lane
    one after the other, sooner than each holds it; each holder removes the file before it
    lets go, so a waiter that opened it before finds it gone or replaced by a newcomer's:
    still never two inside together, and every one gets its turn."""
    host = f"jbt-lane-{os.getpid()}"
    inside: list[int] = []
    overlaps: list[str] = []
    turns: list[int] = []

    def controller(number: int) -> None:
        with controller_lane(host):
            if inside:
                overlaps.append(f"{number} entered while {inside} held the lane")
            inside.append(number)
            time.sleep(0.05)
            inside.remove(number)
            turns.append(number)

    threads = [threading.Thread(target=controller, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
        time.sleep(0.015)
    for thread in threads:
        thread.join(timeout=30)
    assert not overlaps
    assert sorted(turns) == list(range(8))
    assert not lane_path(host).exists()


def test_teardown_clears_the_lane_a_killed_controller_left_but_not_a_held_one() -> None:
    """A controller killed while it held the lane leaves the file (journalbench teardown calls
    clear_lane); a lane a controller holds stays."""
    host = f"jbt-lane-{os.getpid()}"
    lane_path(host).touch()  # what SIGKILL leaves: the file, no lock on it
    assert clear_lane(host) and not lane_path(host).exists()
    assert not clear_lane(host)  # nothing left to clear
    inside, leave = threading.Event(), threading.Event()

    def holder() -> None:
        with controller_lane(host):
            inside.set()
            leave.wait(timeout=30)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert inside.wait(timeout=30)
        assert not clear_lane(host) and lane_path(host).exists()
    finally:
        leave.set()
        thread.join(timeout=30)
    assert not lane_path(host).exists()
