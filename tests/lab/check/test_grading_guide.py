"""docs/guides/grading.md runs as written: its GitHub Classroom commands, its Gradescope
run_autograder with its checks.toml, and its nbgrader cells.

The guide's blocks are read from the Markdown file; `ffn-lab` is this checkout's CLI
(a small script on PATH running `python -m app.cli`), `/autograder` a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "guides" / "grading.md"
HOMEWORK = ROOT / "tests" / "lab" / "homework"
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


def blocks(language: str) -> list[str]:
    """The guide's fenced code blocks in `language`, in order."""
    pattern = rf"^```{language}\n(.*?)^```$"
    return re.findall(pattern, GUIDE.read_text(), flags=re.MULTILINE | re.DOTALL)


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has `ffn-lab` running this checkout's CLI."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ffn-lab"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m app.cli "$@"\n')
    script.chmod(0o755)
    return dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        PYTHONPATH=str(ROOT),
    )


def run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def classroom_commands() -> dict[str, str]:
    """test-name -> command of each command-grader step in the guide's workflow."""
    (workflow,) = blocks("yaml")
    steps = yaml.safe_load(workflow)["jobs"]["run-autograding-tests"]["steps"]
    return {
        step["with"]["test-name"]: step["with"]["command"]
        for step in steps
        if "autograding-command-grader" in step.get("uses", "")
    }


@pytest.mark.slow
def test_the_github_classroom_commands_give_exit_codes_per_check(
    tmp_path: Path, shell_env: dict[str, str]
) -> None:
    commands = classroom_commands()
    assert set(commands) == {"shapes", "nonlinear", "no_residual_inside", "every check"}
    shutil.copy(HOMEWORK / "paper_no_activation.py", tmp_path / "ffn.py")
    codes = {name: run(cmd, tmp_path, shell_env).returncode for name, cmd in commands.items()}
    assert codes == {"shapes": 0, "nonlinear": 1, "no_residual_inside": 0, "every check": 1}
    shutil.copy(HOMEWORK / "paper_correct.py", tmp_path / "ffn.py")
    done = run(commands["every check"], tmp_path, shell_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "9 of 9 checks pass" not in done.stdout  # the paper class takes no activation name
    assert "8 of 8 checks pass (1 not applicable)" in done.stdout


def test_the_gradescope_autograder_writes_a_valid_results_json(
    tmp_path: Path, shell_env: dict[str, str]
) -> None:
    (toml_text,) = blocks("toml")
    (script,) = blocks("bash")
    autograder = tmp_path / "autograder"
    for folder in ("source", "submission", "results"):
        (autograder / folder).mkdir(parents=True)
    (autograder / "source" / "checks.toml").write_text(toml_text)
    shutil.copy(HOMEWORK / "paper_residual_inside.py", autograder / "submission" / "ffn.py")
    done = run(script.replace("/autograder", str(autograder)), tmp_path, shell_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no_residual_inside" in done.stdout  # the table, for the instructor's log
    results: dict[str, Any] = json.loads((autograder / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    tests = {t["name"]: t for t in results["tests"]}
    assert "raises_on_bad_activation" not in tests  # not applicable: neither scored nor passed
    assert "raises_on_bad_activation" in results["output"]
    assert {n: t["status"] for n, t in tests.items() if t["status"] == "failed"} == {
        "no_residual_inside": "failed",
        "residual_ready": "failed",
    }
    assert tests["no_residual_inside"]["max_score"] == 2.0
    assert tests["no_residual_inside"]["score"] == 0.0
    assert tests["nonlinear"]["score"] == tests["nonlinear"]["max_score"] == 2.0
    assert tests["shared_parameters"]["visibility"] == "after_due_date"
    assert tests["shapes"]["visibility"] == "visible"
    assert "adds its input itself" in tests["no_residual_inside"]["output"]
    assert results["score"] == sum(t["score"] for t in results["tests"]) == 7.0


def test_the_nbgrader_cells_pass_a_correct_class_and_fail_a_broken_one() -> None:
    student, grader, partial = blocks("python")
    namespace: dict[str, Any] = {}
    exec(student, namespace)  # the student's cell
    exec(grader, namespace)
    exec(partial, namespace)
    assert namespace["report"].passed
    broken: dict[str, Any] = {}
    exec((HOMEWORK / "paper_no_activation.py").read_text(), broken)
    with pytest.raises(AssertionError, match="failed: nonlinear"):
        exec(grader, broken)
    with pytest.raises(AssertionError, match="affine map"):
        exec(partial, broken)
