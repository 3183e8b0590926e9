"""The handout's lesson steps are the page's: app/lab/handout/steps.py against
static/js/lesson/steps.js, read by Node (the same ids, order, settings and catalog keys)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.lab.handout.steps import LESSON_BASE, PICTURES, STEPS

ROOT = Path(__file__).resolve().parents[2]
READ = (
    "import { STEPS, LESSON_BASE } from './static/js/lesson/steps.js';"
    "console.log(JSON.stringify({ steps: STEPS, base: LESSON_BASE }));"
)


@pytest.fixture(scope="module")
def page_lesson() -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    out = subprocess.run(
        [node, "--no-warnings", "--input-type=module", "-e", READ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_the_handout_has_the_pages_steps_in_order(page_lesson: dict) -> None:
    assert [s["id"] for s in page_lesson["steps"]] == [s.id for s in STEPS]
    assert page_lesson["base"] == LESSON_BASE
    for page_step, step in zip(page_lesson["steps"], STEPS, strict=True):
        assert page_step["state"] == step.state, step.id
        assert page_step["title"] == f"lesson.{step.id}.title"
        assert page_step["text"] == f"lesson.{step.id}.text"
        assert step.picture in PICTURES
