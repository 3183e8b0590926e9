"""The process is shutting down: a flag set by SIGTERM or SIGINT, for work that runs long.

uvicorn stops on SIGTERM by closing its listeners and waiting for every open connection to
end; a training stream would keep its connection open until the run finished (tens of
seconds). `install()` (called at the app's start-up, after uvicorn installed its handlers)
chains a handler that sets `SHUTTING_DOWN` and then calls uvicorn's, so a training stream
can end at once with a final line saying why (`app.api.routes.train`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

SHUTTING_DOWN = threading.Event()
"""Set when the process was asked to stop; never cleared in a process's life."""
SIGNALS = (signal.SIGTERM, signal.SIGINT)


class ShuttingDown(Exception):
    """Raised inside long work (a training step) when the process is stopping."""


def check() -> None:
    """Raise `ShuttingDown` once the process was asked to stop (cheap: an Event read)."""
    if SHUTTING_DOWN.is_set():
        raise ShuttingDown


def install() -> Callable[[], None]:
    """Chain a SIGTERM/SIGINT handler that sets `SHUTTING_DOWN` before the current one runs;
    returns a function that restores the previous handlers. A no-op outside the main
    thread (signal handlers can only be set there)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        SHUTTING_DOWN.set()
        before = previous.get(signum)
        if callable(before):
            before(signum, frame)
        elif before == signal.SIG_DFL:  # no server handler: stop as the default would
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    for sig in SIGNALS:
        previous[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, before in previous.items():
            if signal.getsignal(sig) is handler:
                signal.signal(sig, before)

    return restore
