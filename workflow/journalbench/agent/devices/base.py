"""The interface of a device profile: what stands between the test device the arms use and the
host's real storage. A profile attaches the device (`attach`), says what it is (`facts`), and
removes what it made, found by discovery so teardown works after kill -9 (`leftovers`,
`clean`, called once the test device's loop devices are detached)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from journalbench.agent import disk
from journalbench.agent.requires import Tool


class DeviceProfile:
    NAME: ClassVar[str]
    TOOLS: ClassVar[tuple[Tool, ...]] = ()
    ROTATIONAL: ClassVar[bool | None] = None  # None: leave the kernel's guess
    ACCEPT_FSYNC_MS: ClassVar[tuple[float, float] | None] = None  # reference high-fsync bounds
    # False: a reference outside the bounds is recorded (`within_accept`), not refused: the
    # profile's machinery runs on a machine below this host, whose own path adds to it
    ENFORCE_ACCEPT: ClassVar[bool] = True
    DRIFT_LIMIT: ClassVar[float | None] = None  # max relative drift of a run's probe
    REFERENCE_S: ClassVar[int] = 3  # length of the reference high-fsync writer

    def __init__(self, host: dict[str, Any], root: Path, params: dict[str, Any]) -> None:
        self.host = host
        self.root = root
        self.params = params

    def attach(self) -> disk.Device:
        raise NotImplementedError

    def facts(self) -> dict[str, Any]:
        return {"profile": self.NAME, "params": self.params}

    @contextmanager
    def unmodelled(self) -> Iterator[None]:
        """While set-up (mkfs, data layout) runs: an emulated device may drop its delays."""
        yield

    def cpu_seconds(self) -> float | None:
        """CPU time the profile's own machinery (an emulator) has used; None when it has none."""
        return None

    @classmethod
    def leftovers(cls, root: Path) -> list[str]:
        return []

    @classmethod
    def clean(cls, root: Path) -> None:
        """Stop what attach started; the loop devices on it are already detached."""
