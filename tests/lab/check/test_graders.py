"""What graders read: --format json/gradescope, --only, --weights, the light parent
process and the time limit that starts with the student's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import app.cli
import app.grading.runner
from app.grading.gradescope import Weight, cannot_run_json, load_weights, results_json
from app.grading.report import CheckReport, CheckResult

from .conftest import STUDENTS

ROOT = Path(__file__).resolve().parents[3]
HOMEWORK = ROOT / "tests" / "lab" / "homework"
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())
SMALL = ["--d-model", "16", "--d-ff", "64"]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        app.cli.main(args)
    out, err = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_json_has_status_and_sizes_and_only_runs_the_checks_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = f"{HOMEWORK / 'paper_no_activation.py'}:PositionwiseFeedForward"
    only = ["--only", "no_residual_inside", "--only", "nonlinear"]
    code, out, _ = run_cli(["check", target, *SMALL, *only, "--format", "json"], capsys)
    assert code == 1
    data: dict[str, Any] = json.loads(out)
    assert data["passed"] is False and data["status"] == "failed"
    assert [(c["name"], c["status"]) for c in data["checks"]] == [
        ("nonlinear", "failed"),
        ("no_residual_inside", "passed"),
    ]
    assert all({"name", "passed", "detail", "reason", "skipped"} <= set(c) for c in data["checks"])
    assert data["sizes"] == [{"d_model": 16, "d_ff": 64}, {"d_model": 24, "d_ff": 72}]
    assert "affine map" in data["checks"][0]["detail"]


def test_a_check_that_does_not_apply_is_not_applicable_in_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = f"{STUDENTS / 'course.py'}:PositionwiseFeedForward"
    only = ["--only", "raises_on_bad_activation"]
    code, out, _ = run_cli(["check", target, *SMALL, *only, "--json"], capsys)
    assert code == 0
    (check,) = json.loads(out)["checks"]
    assert check["status"] == "not_applicable" and check["skipped"] is True


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ("[checks.nonlinaer]\nweight = 2\n", "no check 'nonlinaer'"),
        ("[checks.shapes]\nweight = -1\n", "checks.shapes.weight must be a number >= 0"),
        ("[defaults]\nvisibility = 'secret'\n", "defaults.visibility must be one of visible"),
        ("[checks.shapes]\npoints = 2\n", "unknown key 'points'"),
        ("weight = [\n", "cannot read the weights file"),
    ],
)
def test_a_bad_weights_file_exits_2_naming_the_mistake(
    toml: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weights = tmp_path / "checks.toml"
    weights.write_text(toml)
    target = f"{STUDENTS / 'course.py'}:PositionwiseFeedForward"
    args = ["check", target, "--format", "gradescope", "--weights", str(weights)]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and words in err
    results = json.loads(out)
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and words in results["output"]


def test_an_unknown_check_name_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{STUDENTS / 'course.py'}:PositionwiseFeedForward"
    code, _, err = run_cli(["check", target, "--only", "nonlinera"], capsys)
    assert code == 2 and "no check 'nonlinera'; the checks are shapes" in err


def _report(*checks: CheckResult) -> CheckReport:
    return CheckReport("FFN(d_model=16, d_ff=64)", checks, ((16, 64), (24, 72)))


def test_results_json_leaves_out_checks_that_do_not_apply_and_weighs_the_rest(
    tmp_path: Path,
) -> None:
    report = _report(
        CheckResult("shapes", True, "ok"),
        CheckResult("nonlinear", False, "affine"),
        CheckResult("raises_on_bad_activation", True, "not applicable: no name", skipped=True),
    )
    (tmp_path / "checks.toml").write_text("[checks.nonlinear]\nweight = 3\nvisibility = 'hidden'\n")
    weights = load_weights(tmp_path / "checks.toml")
    assert weights.of("shapes") == Weight()
    results = results_json(report, weights)
    jsonschema.validate(results, SCHEMA)
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in results["tests"]] == [
        ("shapes", 1.0, 1.0, "passed"),
        ("nonlinear", 0.0, 3.0, "failed"),
    ]
    assert results["tests"][1]["visibility"] == "hidden"
    assert results["score"] == 1.0
    assert "Not scored (not applicable): raises_on_bad_activation" in results["output"]
    assert results["extra_data"]["not_applicable"] == ["raises_on_bad_activation"]
    jsonschema.validate(cannot_run_json("no such file: ffn.py"), SCHEMA)


def test_the_schema_refuses_what_gradescope_does_not_document() -> None:
    """The schema can fail: a third status, a missing score, an unknown visibility."""
    good = {"score": 1.0, "tests": [{"name": "shapes", "score": 1.0, "status": "passed"}]}
    jsonschema.validate(good, SCHEMA)
    for bad in (
        {"score": 1.0, "tests": [{"name": "x", "status": "not_applicable"}]},
        {"tests": [{"name": "x", "max_score": 1.0}]},
        {"score": 1.0, "visibility": "students"},
        {"score": 1.0, "tests": [{"name": "x", "passed": True}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


def test_parsing_the_check_command_imports_no_torch() -> None:
    """`ffn-lab check --help` answers without torch (the worker imports it, once)."""
    code = (
        "import sys, app.cli\n"
        "try:\n    app.cli.main(['check', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'uvicorn', 'fastapi') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "[]", done.stdout


@pytest.mark.slow
def test_the_time_limit_starts_when_the_students_code_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker whose start-up (Python, torch) is slower than --timeout still finishes.

    The worker is started behind an 8 s pause standing for a slow machine's start-up;
    the student's file (one check, small sizes) then has its own 6 s.
    """
    real = app.grading.runner.worker_command

    def slow_start(spec: dict[str, Any], out: Path, **kw: Any) -> tuple[list[str], dict[str, str]]:
        command, env = real(spec, out, **kw)
        pause = (
            "import runpy, sys, time; time.sleep(8); sys.argv = sys.argv[:1] + sys.argv[1:]; "
            "runpy.run_module('app.lab.checker.worker', run_name='__main__')"
        )
        return [command[0], "-c", pause, *command[-2:]], env

    monkeypatch.setattr(app.grading.runner, "worker_command", slow_start)
    target = f"{STUDENTS / 'course.py'}:PositionwiseFeedForward"
    args = ["check", target, *SMALL, "--only", "shapes", "--timeout", "6", "--json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, out + err
    assert json.loads(out)["checks"][0]["status"] == "passed"
