"""The Dockerfile for school IT, linted: no Docker engine runs here, so
its instructions are parsed and checked for what school IT needs (CPU torch from the pin,
a non-root user, a health check on /api/health, port 8000, `ffn-lab --host 0.0.0.0`)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined, comments out."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        pending = f"{pending} {line}" if pending else line
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        name, _, args = pending.partition(" ")
        out.append((name.upper(), args.strip()))
        pending = ""
    return out


def problems(text: str, torch_pin: str) -> list[str]:
    """What the Dockerfile misses; empty when it has everything."""
    found = instructions(text)
    names = [n for n, _ in found]
    args = {n: [a for m, a in found if m == n] for n in set(names)}
    out = []
    if not any(a.startswith("python:3.11-slim") for a in args.get("FROM", [])):
        out.append("FROM python:3.11-slim")
    runs = " ".join(args.get("RUN", []))
    if torch_pin not in runs:
        out.append(f"RUN pip install {torch_pin}")
    if "--extra-index-url" not in runs or "$TORCH_INDEX_URL" not in runs:
        out.append("torch from an --extra-index-url given as the build ARG TORCH_INDEX_URL")
    if not any(a.split("=")[0] == "TORCH_INDEX_URL" for a in args.get("ARG", [])):
        out.append("ARG TORCH_INDEX_URL")
    if re.search(r"https?://(?!127\.0\.0\.1)", text):
        out.append("no host named (the index URL is a build argument)")
    users = args.get("USER", [])
    if not users or users[-1] in ("root", "0"):
        out.append("USER: a non-root user")
    if "useradd" not in runs:
        out.append("the user is created (useradd)")
    checks = args.get("HEALTHCHECK", [])
    if not checks or "/api/health" not in checks[-1]:
        out.append("HEALTHCHECK on /api/health")
    if "8000" not in args.get("EXPOSE", [""])[-1].split():
        out.append("EXPOSE 8000")
    cmd = args.get("CMD", [])
    try:
        argv = json.loads(cmd[-1]) if cmd else []
    except json.JSONDecodeError:
        argv = []
    if argv[:3] != ["ffn-lab", "--host", "0.0.0.0"]:
        out.append('CMD ["ffn-lab", "--host", "0.0.0.0", ...]')
    for folder in ("app", "static", "templates"):
        if not any(a.split()[0] == folder for a in args.get("COPY", [])):
            out.append(f"COPY {folder}")
    return out


def torch_pin() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return next(d for d in project["project"]["dependencies"] if d.startswith("torch=="))


def test_dockerfile_has_what_school_it_needs() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert problems(text, torch_pin()) == []


def test_the_lint_catches_a_root_image_without_health_check() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    broken = "\n".join(
        line
        for line in text.splitlines()
        if not line.startswith(("USER", "HEALTHCHECK", '    CMD ["python"'))
    )
    broken = broken.replace("torch==2.13.0", "torch")
    found = problems(broken, torch_pin())
    assert "USER: a non-root user" in found
    assert "HEALTHCHECK on /api/health" in found
    assert any(p.startswith("RUN pip install torch==") for p in found)


def test_dockerignore_keeps_the_image_small() -> None:
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    for name in (".git", ".venv", "node_modules"):
        assert name in ignored
