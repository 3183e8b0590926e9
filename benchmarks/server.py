"""The real server (uvicorn, one worker) on a free loopback port, as a context manager."""

from __future__ import annotations

from types import TracebackType

import psutil

from tests.serverproc import start_server, stop_server


class Server:
    """`python -m uvicorn app.main:create_app --factory` in a subprocess (see
    `tests.serverproc.start_server`), terminated on exit whatever happens in between."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env
        self.base = ""
        self.proc = None

    def __enter__(self) -> Server:
        self.proc, self.base = start_server(self.env)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Terminate the server process."""
        if self.proc is not None and self.proc.poll() is None:
            stop_server(self.proc)

    def rss(self) -> int:
        """Resident set size of the server process in bytes."""
        if self.proc is None:
            raise RuntimeError("server is not running")
        return int(psutil.Process(self.proc.pid).memory_info().rss)
