"""The kernel the notebooks runner shares between notebooks (journalbench/report/notebooks.py), with
one client for all of them: papermill's nbclient asks the kernel manager for a client per
notebook, and a new client waits ~0.2 s for the kernel's broadcasts to reach it (ZeroMQ's
subscriptions take effect late) before it runs a cell. nbclient reads only the messages of
the requests it sent, so earlier notebooks' messages left on the shared client do not mix in.
"""

from __future__ import annotations

from typing import Any

from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import KernelManager


class OnceReadyClient(BlockingKernelClient):
    """A client whose channels start, and which waits for the kernel, once."""

    ready = False

    def start_channels(self, *args: Any, **kwargs: Any) -> None:
        if not self.channels_running:
            super().start_channels(*args, **kwargs)

    def wait_for_ready(self, timeout: float | None = None) -> None:
        if not self.ready:
            super().wait_for_ready(timeout)
            self.ready = True


class SharedClientKernel(KernelManager):
    """A kernel manager that hands out one OnceReadyClient."""

    shared: OnceReadyClient | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(client_class=f"{__name__}.OnceReadyClient", **kwargs)

    def client(self, **kwargs: Any) -> OnceReadyClient:
        if self.shared is None:
            self.shared = super().client(**kwargs)
        return self.shared

    def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        if self.shared is not None:
            self.shared.stop_channels()
            self.shared = None
        super().shutdown_kernel(now=now, restart=restart)
