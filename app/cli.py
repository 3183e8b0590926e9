"""`ffn-lab`: start the server (default 127.0.0.1:8000; flags or FFN_LAB_HOST/FFN_LAB_PORT).

`ffn-lab check PATH.py:ClassName ...` runs the FFN checklist on a student's module
instead (see `app.grading.cli`; `ffn-lab check --help`). The server's imports are made
only when the server starts, so the checker's command starts light.
"""

from __future__ import annotations

import argparse
import sys

GRACEFUL_SHUTDOWN_S = 10
"""Seconds uvicorn lets requests finish after SIGTERM before it cuts them."""


def main(argv: list[str] | None = None) -> None:
    """Dispatch `check` to the checker; otherwise parse flags and run uvicorn."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["check"]:
        from app.grading.cli import main as check_main  # no server imports, no torch

        raise SystemExit(check_main(argv[1:]))
    serve(argv)


def serve(argv: list[str]) -> None:
    """Parse the server's flags and run uvicorn with `app.main:create_app`."""
    import uvicorn

    from app.config import get_settings

    settings = get_settings()
    parser = argparse.ArgumentParser(
        prog="ffn-lab",
        description=__doc__,
        epilog="ffn-lab check PATH.py:ClassName --help: the checker's own options",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default=settings.host, help="interface (default %(default)s)")
    parser.add_argument(
        "--port", type=int, default=settings.port, help="port (default %(default)s)"
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--reload", action="store_true", help="restart on code changes")
    args = parser.parse_args(argv)
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        reload=args.reload,
        # header and body read timeouts (app/api/slow_clients.py); idle keep-alive 5 s
        http="app.api.slow_clients:ReadTimeoutProtocol",
        timeout_keep_alive=5,
        # a request still running this long after SIGTERM is cut (training streams end at
        # once: app/services/shutdown.py)
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


if __name__ == "__main__":
    main()
