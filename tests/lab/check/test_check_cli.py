"""`ffn-lab check` end to end: exit codes 0/1/2, --json, the time limit, missing file/class.

The student's file always runs in the checker's subprocess; these tests call the CLI (in
this process, or as `python -m app.cli`) and read what it prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import app.cli
from app.lab.checker import CHECK_NAMES

from .conftest import STUDENTS

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--d-model", "16", "--d-ff", "64"]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`ffn-lab <args>` through app.cli.main: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as stopped:
        app.cli.main(args)
    out, err = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 1), out, err


def run_console(args: list[str]) -> subprocess.CompletedProcess[str]:
    """`python -m app.cli <args>` in a fresh process (the console script's entry)."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
        timeout=280,
        check=False,
    )


def test_a_correct_ffn_exits_0_with_one_table_line_per_check() -> None:
    target = f"{STUDENTS / 'course.py'}:PositionWiseFeedForwardNetwork"
    done = run_console(["check", target, *SMALL, "--kwargs", '{"dropout": 0.2}'])
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "ffn-lab check: PositionWiseFeedForwardNetwork(d_model=16, d_ff=64, dropout=0.2)"
    )
    assert [line.split()[:2] for line in lines[2:11]] == [[n, "pass"] for n in CHECK_NAMES]
    assert "dropout p=0.2 acts" in done.stdout
    assert lines[-1] == "9 of 9 checks pass at d_model=16, d_ff=64 and d_model=24, d_ff=72"


def test_json_for_autograders_and_exit_1_on_a_failing_check() -> None:
    done = run_console(["check", f"{STUDENTS / 'broken.py'}:SoftmaxMixing", *SMALL, "--json"])
    assert done.returncode == 1, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["passed"] is False
    assert [c["name"] for c in data["checks"]] == list(CHECK_NAMES)
    verdicts = {c["name"]: c["passed"] for c in data["checks"]}
    assert {n for n, ok in verdicts.items() if not ok} == {"position_wise", "no_token_mixing"}
    assert all(isinstance(c["detail"], str) and c["detail"] for c in data["checks"])
    assert "error" not in data


def test_the_students_file_runs_in_another_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = tmp_path / "pid.txt"
    source = (STUDENTS / "course.py").read_text()
    path = tmp_path / "ffn.py"
    path.write_text(f"import os\nopen({str(seen)!r}, 'w').write(str(os.getpid()))\n{source}")
    code, _, _ = run_cli(["check", f"{path}:PositionwiseFeedForward", *SMALL], capsys)
    assert code == 0
    assert int(seen.read_text()) != os.getpid()


def test_a_failing_check_prints_FAIL_in_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{STUDENTS / 'broken.py'}:DropoutInEval"
    code, out, _ = run_cli(["check", target, *SMALL], capsys)
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("eval_deterministic"))
    assert row.split()[1] == "FAIL" and "differ by up to" in row


@pytest.mark.parametrize(
    ("source", "target", "words"),
    [
        pytest.param(None, "missing.py:FFN", "no such file: ", id="missing-file"),
        pytest.param("x = 1\n", "{}:FFN", "has no class 'FFN'", id="missing-class"),
        pytest.param("def broken(:\n", "{}:FFN", "raised SyntaxError", id="syntax-error"),
        pytest.param(
            "from torch import nn\n\nclass FFN(nn.Module):\n"
            "    def __init__(self, d_model, d_ff):\n"
            "        super().__init__()\n        raise RuntimeError('no GPU here')\n",
            "{}:FFN",
            "FFN(d_model=16, d_ff=64) raised RuntimeError: no GPU here",
            id="constructor-error",
        ),
        pytest.param("x = 1\n", "{}", "expected PATH.py:ClassName", id="no-class-name"),
    ],
)
def test_exit_2_names_why_it_cannot_run(
    source: str | None,
    target: str,
    words: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "student.py"
    if source is not None:
        path.write_text(source)
    target = target.format(path) if source is not None else str(tmp_path / target)
    code, out, err = run_cli(["check", target, *SMALL], capsys)
    assert code == 2
    assert words in err and out == ""
    code, out, _ = run_cli(["check", target, *SMALL, "--json"], capsys)
    assert code == 2
    data = json.loads(out)
    assert data["passed"] is False and data["checks"] == [] and words in data["error"]


@pytest.mark.slow
def test_an_endless_loop_is_stopped_by_the_time_limit(tmp_path: Path) -> None:
    path = tmp_path / "endless.py"
    path.write_text("while True:\n    pass\n")
    done = run_console(["check", f"{path}:FFN", "--timeout", "5", "--json"])
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error.startswith("timed out: endless.py did not finish within 5 s"), error


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [("[1, 2]", "must be a JSON object"), ("{dropout: 0.1}", "not valid JSON")],
)
def test_bad_kwargs_exit_2(kwargs: str, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{STUDENTS / 'course.py'}:PositionwiseFeedForward"
    code, _, err = run_cli(["check", target, "--kwargs", kwargs], capsys)
    assert code == 2 and words in err


def test_the_server_flags_still_work(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from app.config import get_settings

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))
    get_settings.cache_clear()
    try:
        app.cli.main(["--port", "8080"])
        assert seen["port"] == 8080 and seen["factory"] is True
        app.cli.main([])
        assert seen["port"] == get_settings().port
    finally:
        get_settings.cache_clear()


def test_check_help_lists_the_checks(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["check", "--help"], capsys)
    assert code == 0
    assert all(name in out for name in CHECK_NAMES) and "--d-model" in out
