"""Every folder of app/, static/ and templates/ is listed as a package in pyproject.toml,
so an installed FFN Lab has all its files (and setuptools prints no warnings)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_folder_is_a_listed_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {
        "app.static": ROOT / "static",
        "app.templates": ROOT / "templates",
        "app": ROOT / "app",
    }
    expected = set()
    for package, folder in mapped.items():
        for sub in [folder, *folder.rglob("*")]:
            if not sub.is_dir() or sub.name == "__pycache__":
                continue
            parts = sub.relative_to(folder).parts
            if package == "app" and parts and parts[0] in ("static", "templates"):
                continue
            if any("-" in p for p in parts):  # not importable (e.g. i18n/zh-CN): plain data
                continue
            expected.add(".".join((package, *parts)))
    assert expected - listed == set()
