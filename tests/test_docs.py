"""The documentation: a short README that opens with the two commands, and a docs site that
builds strictly (no warning, no broken link), offline, with the Python API from docstrings."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# Prose that tells the project's history instead of what the product does.
HISTORY = re.compile(
    r"\b(stop|issue|pass|session|round) #?\d+\b"
    r"|\bthis (stop|session|round|pass)\b"
    r"|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth) pass\b",
    re.IGNORECASE,
)


FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
REPO_PATH = re.compile(
    r"(?<![\w/.])((?:app|static|templates|tests|benchmarks|notebooks|docs)/[\w./<>*-]*[\w*])"
)


def _prose() -> list[Path]:
    pages = sorted((ROOT / "docs").rglob("*.md"))
    return [README, ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md", *pages]


def test_readme_is_short_and_opens_with_the_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; at most 200"
    head = "\n".join(lines[:20])
    fence = re.search(r"```(?:bash|sh)?\n(.*?)```", head, re.DOTALL)
    assert fence, "README.md's first 20 lines hold no code block"
    lines_run = (line.split("#")[0].strip() for line in fence.group(1).splitlines())
    commands = [c for c in lines_run if c]
    assert commands[:2] == ["bash scripts/serve", "bash scripts/test"], commands


@pytest.mark.parametrize(
    "path",
    [README, ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_links_outside_the_site_lead_to_files(path: Path) -> None:
    """mkdocs checks the site's links; these files are read on GitHub or in an editor."""
    text = path.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)", text)
    broken = [t for t in targets if "://" not in t and not (path.parent / t).exists()]
    assert not broken, f"{path.name} links to missing files: {broken}"


@pytest.mark.parametrize("path", _prose(), ids=lambda p: str(p.relative_to(ROOT)))
def test_files_the_prose_names_exist(path: Path) -> None:
    """A path in inline code (`app/model/ffn.py`) names a file or folder of the repository."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))  # maps and examples may plan ahead
    named = {m for span in re.findall(r"`([^`\n]+)`", text) for m in REPO_PATH.findall(span)}
    missing = sorted(p for p in named if "<" not in p and not any(ROOT.glob(p)))
    assert not missing, f"{path.name} names files that do not exist: {missing}"


@pytest.mark.parametrize("path", _prose(), ids=lambda p: str(p.relative_to(ROOT)))
def test_prose_names_features_not_history(path: Path) -> None:
    hits = [m.group(0) for m in HISTORY.finditer(path.read_text(encoding="utf-8"))]
    assert not hits, f"{path.name}: {hits} (name the feature or behaviour instead)"


def test_every_setting_is_documented() -> None:
    from app.config import Settings

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [n for n in Settings.model_fields if f"`FFN_LAB_{n.upper()}`" not in page]
    assert not missing, f"docs/configuration.md lacks {missing}"


@pytest.mark.slow
def test_site_builds_strictly_offline(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert not warnings, "\n".join(warnings)

    # The Python API is generated from the docstrings, every public name of `app.lab` included.
    python_api = (site / "api" / "python.html").read_text(encoding="utf-8")
    for name in ("forward", "perturb", "stack", "cheaper", "from_module", "check", "flow"):
        assert f'id="app.lab.{name}"' in python_api, name
    # The performance page shows the benchmark's latest table.
    latest = (ROOT / "benchmarks" / "results" / "latest.md").read_text(encoding="utf-8")
    rows = [line for line in latest.splitlines() if line.startswith("| ") and "---" not in line]
    metric = rows[1].split(" | ")[0].removeprefix("| ")  # rows[0] is the header
    assert metric.replace(">", "&gt;") in (site / "performance.html").read_text(encoding="utf-8")

    # Nothing is loaded from another host: no fonts, scripts, styles or images from a URL.
    external = re.compile(
        r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//"""
    )
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not external.search(text), f"{page.relative_to(site)} loads from another host"
    for style in site.rglob("*.css"):
        assert "fonts.googleapis" not in style.read_text(encoding="utf-8"), style.name
