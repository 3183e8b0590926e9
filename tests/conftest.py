"""Shared fixtures: an HTTP client on the real app (lifespan runs), settings overrides."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.config import get_settings
from app.main import create_app


@pytest.fixture
def client() -> Iterator[TestClient]:
    """A TestClient on a fresh app; `with` runs the lifespan (the weight cache)."""
    with TestClient(create_app()) as c:
        yield c


@pytest.fixture
def settings_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Set FFN_LAB_* variables with `settings_env.setenv(...)`; the settings are re-read."""
    get_settings.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium, headless, through Playwright: one for the whole session, shared by
    every folder (Playwright's sync API cannot start a second driver while one runs)."""
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, _require_chromium

    _require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
