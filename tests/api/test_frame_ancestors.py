"""Security headers: framing is allowed by default (slides) and configurable in settings."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_page_allows_framing_by_default(client: TestClient) -> None:
    """Default "*": no frame-ancestors at all, so file:// and data: slides may embed too."""
    csp = client.get("/").headers["content-security-policy"]
    assert "frame-ancestors" not in csp
    assert "script-src 'self'" in csp
    assert "x-frame-options" not in client.get("/").headers


def test_framing_is_configurable(settings_env) -> None:  # type: ignore[no-untyped-def]
    settings_env.setenv("FFN_LAB_FRAME_ANCESTORS", "'self' https://slides.example")
    from app.main import create_app

    with TestClient(create_app()) as c:
        csp = c.get("/").headers["content-security-policy"]
    assert csp.endswith("frame-ancestors 'self' https://slides.example")
