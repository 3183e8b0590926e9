"""Fixtures: the student files under tests/lab/check/students/, loaded the way the checker does."""

from __future__ import annotations

from pathlib import Path

from torch import nn

from app.lab.checker.build import load_class

STUDENTS = Path(__file__).parent / "students"


def student(file: str, name: str) -> type[nn.Module]:
    """Class `name` from tests/lab/check/students/`file`.py (imported by path, like the worker)."""
    return load_class(STUDENTS / f"{file}.py", name)
