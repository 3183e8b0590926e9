"""Run the checklist on a file in a subprocess with a time limit (the CLI's way).

The student's code never runs in the calling process: `python -m app.lab.checker.worker`
imports torch, then the file, builds the module, runs the checks and writes JSON to a
file. This side imports no torch. The time limit counts from the worker's first line
"importing FILE" (when the student's code starts), not from the start of Python and
torch; start-up has its own, generous bound. On expiry the worker's whole process group
is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import IO, Any

import app
from app.grading.report import CannotCheck, CheckReport

PHASE = "ffn-lab-check phase: "  # the worker's progress lines on stderr
STARTUP_LIMIT = 300.0  # seconds for Python + torch to start before the student's code runs


def worker_command(
    spec: dict[str, Any], out: Path, *, optimize: bool = False
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run the worker on `spec` (JSON) into `out`
    (under `python -O` with `optimize`).

    The environment puts this checkout's `app` first on PYTHONPATH, so the worker runs
    the same checker code as the caller.
    """
    root = str(Path(app.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, *(["-O"] if optimize else []), "-m", "app.lab.checker.worker"]
    return [*command, json.dumps(spec), str(out)], env


class _Stderr:
    """Reads the worker's stderr on a thread: the last lines, and when the student's code
    started (the first phase line)."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: deque[str] = deque(maxlen=50)
        self.phases: list[str] = []
        self.started = threading.Event()
        self._stream = stream
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            line = line.rstrip("\n")
            if line.startswith(PHASE):
                self.phases.append(line[len(PHASE) :])
                self.started.set()
            else:
                self.lines.append(line)
        self.started.set()  # the worker ended (or closed stderr) before any phase

    def finish(self) -> None:
        """Wait for the reader (the worker has ended) and close the pipe."""
        self._thread.join(timeout=10)
        self._stream.close()

    @property
    def phase(self) -> str:
        return self.phases[-1] if self.phases else "starting Python"


def check_file(
    path: Path,
    class_name: str,
    *,
    d_model: int = 512,
    d_ff: int = 2048,
    kwargs: dict[str, Any] | None = None,
    timeout: float = 60.0,
    only: list[str] | tuple[str, ...] | None = None,
) -> CheckReport:
    """Check `class_name` from `path` in a subprocess; the student's code gets `timeout` s.

    Args:
        path, class_name: the file and the class in it.
        d_model, d_ff: the sizes asked for (a second, unusual pair is tried as well).
        kwargs: more constructor arguments.
        timeout: seconds from the moment the worker starts importing the file.
        only: run only these checks (names from `CHECK_NAMES`); all when None.

    Raises:
        CannotCheck: no such file, the import, class or constructor failed in the worker
            (its message), or the worker did not finish in time (the phase it was in).
    """
    path = Path(path)
    if not path.is_file():
        raise CannotCheck(f"no such file: {path}")
    spec = {
        "mode": "check",
        "path": str(path),
        "class_name": class_name,
        "d_model": d_model,
        "d_ff": d_ff,
        "kwargs": kwargs or {},
        "only": list(only) if only else None,
    }
    with tempfile.TemporaryDirectory(prefix="ffn-lab-check-") as tmp:
        out = Path(tmp) / "out.json"
        command, env = worker_command(spec, out)
        proc = subprocess.Popen(  # noqa: S603  (our own worker, fixed arguments)
            command,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
        if proc.stderr is None:  # not with stderr=PIPE; keeps the type checker informed
            raise CannotCheck("the checker process has no error stream")
        stderr = _Stderr(proc.stderr)
        try:
            if not stderr.started.wait(STARTUP_LIMIT):
                _kill(proc)
                stderr.finish()
                raise CannotCheck(
                    f"the checker could not start Python and torch within {STARTUP_LIMIT:g} s"
                )
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            stderr.finish()
            raise CannotCheck(
                f"timed out: {path.name} did not finish within {timeout:g} s "
                f"(it was {stderr.phase}; an endless loop?)"
            ) from None
        stderr.finish()
        if not out.is_file():
            tail = " | ".join(line for line in list(stderr.lines)[-3:] if line)
            raise CannotCheck(
                f"the checker process for {path.name} ended without a result "
                f"(exit code {proc.returncode}): {tail or 'no message'}"
            )
        answer: dict[str, Any] = json.loads(out.read_text())
    if "error_text" in answer:
        raise CannotCheck(str(answer["error_text"]))
    return CheckReport.from_dict(answer)


def _kill(proc: subprocess.Popen[str]) -> None:
    """Kill the worker's process group and reap it."""
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
