"""Run the checklist on a file in a subprocess with a time limit (the CLI's way).

The student's code never runs in the calling process: `python -m app.lab.checker.worker`
imports the file, builds the module, runs the checks and writes JSON to a file; this
side waits at most `timeout` seconds, then kills the worker's whole process group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import app
from app.lab.checker.build import CannotCheck
from app.lab.checker.report import CheckReport

PHASE = "ffn-lab-check phase: "  # the worker's progress lines on stderr


def worker_command(
    spec: dict[str, Any], out: Path, *, optimize: bool = False
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run the worker on `spec` (JSON) into `out`.

    The environment puts this checkout's `app` first on PYTHONPATH, so the worker runs
    the same checker code as the caller.
    """
    root = str(Path(app.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, *(["-O"] if optimize else []), "-m", "app.lab.checker.worker"]
    return [*command, json.dumps(spec), str(out)], env


def check_file(
    path: Path,
    class_name: str,
    *,
    d_model: int = 512,
    d_ff: int = 2048,
    kwargs: dict[str, Any] | None = None,
    timeout: float = 60.0,
) -> CheckReport:
    """Check `class_name` from `path` in a subprocess that gets at most `timeout` seconds.

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
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, stderr = proc.communicate()
            raise CannotCheck(
                f"timed out: {path.name} did not finish within {timeout:g} s "
                f"(it was {_last_phase(stderr)}; an endless loop?)"
            ) from None
        if not out.is_file():
            tail = " | ".join(line for line in stderr.strip().splitlines()[-3:] if line)
            raise CannotCheck(
                f"the checker process for {path.name} ended without a result "
                f"(exit code {proc.returncode}): {tail or 'no message'}"
            )
        answer: dict[str, Any] = json.loads(out.read_text())
    if "error_text" in answer:
        raise CannotCheck(str(answer["error_text"]))
    return CheckReport.from_dict(answer)


def _last_phase(stderr: str) -> str:
    phases = [line[len(PHASE) :] for line in stderr.splitlines() if line.startswith(PHASE)]
    return phases[-1] if phases else "starting Python"
