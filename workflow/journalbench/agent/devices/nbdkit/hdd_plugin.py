"""nbdkit Python plugin: a sparse backing file served at the speed of one HDD actuator
(`hdd_model.Disk`). Run as `nbdkit python hdd_plugin.py file=IMAGE [fast_flag=PATH] [model
parameters]`. While the file PATH exists, requests are served without the model's delays: the
agent sets it while it makes file systems and lays out data files (not measured), so set-up
does not take minutes; the head position is still tracked.

Requests are serialised (one actuator); each sleeps until the model says it completes, then is
done on the backing file. An exception here becomes EIO in the file system above, so only
configuration errors raise.
"""

import os
import sys
import time

import nbdkit  # provided by nbdkit's python plugin at load time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdd_model import Disk, params_from  # noqa: E402

API_VERSION = 2
settings = {}
state = {}


def thread_model():
    return nbdkit.THREAD_MODEL_SERIALIZE_ALL_REQUESTS


def config(key, value):
    settings[key] = value


def config_complete():
    if "file" not in settings:
        raise RuntimeError("hdd plugin: file=IMAGE is required")
    state["params"] = params_from({k: v for k, v in settings.items()
                                   if k not in ("file", "fast_flag")})


def open(readonly):  # noqa: A001 (nbdkit's name)
    # nbdkit forks after config_complete: open files and clocks here, not before
    if "fd" not in state:
        state["fd"] = os.open(settings["file"], os.O_RDWR)
        state["disk"] = Disk(state["params"])
        state["t0"] = time.monotonic()
    return 1


def now():
    return time.monotonic() - state["t0"]


def wait_until(done):
    if "fast_flag" in settings and os.path.exists(settings["fast_flag"]):
        state["disk"].busy_until = min(state["disk"].busy_until, now())
        return
    delay = done - now()
    if delay > 0:
        time.sleep(delay)


def get_size(h):
    return os.fstat(state["fd"]).st_size


def can_write(h):
    return True


def can_flush(h):
    return True


def can_fua(h):
    return nbdkit.FUA_NATIVE


def can_multi_conn(h):
    return False


def pread(h, buf, offset, flags):
    wait_until(state["disk"].read(now(), offset, len(buf)))
    data = os.pread(state["fd"], len(buf), offset)
    buf[: len(data)] = data
    if len(data) < len(buf):
        buf[len(data):] = bytes(len(buf) - len(data))


def pwrite(h, buf, offset, flags):
    fua = bool(flags & nbdkit.FLAG_FUA)
    wait_until(state["disk"].write(now(), offset, len(buf), fua))
    os.pwrite(state["fd"], buf, offset)


def flush(h, flags):
    wait_until(state["disk"].flush(now()))
    state["flushes"] = state.get("flushes", 0) + 1
