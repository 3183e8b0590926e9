"""Security: headers on every kind of response, CSP, CORS, no disk paths, no leaks, bind."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api.middleware.errors import INTERNAL_ERROR
from app.config import Settings, get_settings
from app.main import create_app

JSON = {"content-type": "application/json"}
SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "referrer-policy")


def _csp(response: Any) -> dict[str, list[str]]:
    header = response.headers["content-security-policy"]
    directives = [d.strip().split() for d in header.split(";") if d.strip()]
    return {d[0]: d[1:] for d in directives}


def _assert_security_headers(response: Any, frame_ancestors: str = "*") -> None:
    for name in SECURITY_HEADERS:
        assert response.headers.get(name), (name, response.status_code)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    csp = _csp(response)
    if frame_ancestors == "*":
        # "*" leaves the directive out: CSP's * would refuse file: and data: slides.
        assert "frame-ancestors" not in csp
    else:
        assert csp["frame-ancestors"] == frame_ancestors.split()


@pytest.fixture
def small_budget_client(settings_env: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """A client whose time budget is too short for a 1024 -> 4096 FFN."""
    settings_env.setenv("FFN_LAB_REQUEST_TIMEOUT_S", "0.001")
    with TestClient(create_app()) as c:
        yield c


def _boom_app(settings: Settings | None = None) -> FastAPI:
    app = create_app(settings)

    @app.get("/api/boom")
    def boom() -> None:
        raise RuntimeError("secret detail in /work/ffn-lab/app/config.py line 12")

    return app


@pytest.mark.parametrize(
    ("method", "url", "body", "status"),
    [
        pytest.param("GET", "/", None, 200, id="page"),
        pytest.param("GET", "/static/css/app.css", None, 200, id="static"),
        pytest.param("GET", "/static/js/main.js", None, 200, id="static-js"),
        pytest.param("GET", "/vendor/plotly.min.js", None, 200, id="plotly"),
        pytest.param("GET", "/api/health", None, 200, id="api-get-json"),
        pytest.param("GET", "/openapi.json", None, 200, id="openapi"),
        pytest.param("POST", "/api/forward", {"num_tokens": 2}, 200, id="api-post-json"),
        pytest.param("GET", "/no/such/page", None, 404, id="404"),
        pytest.param("GET", "/static/nope.css", None, 404, id="static-404"),
        pytest.param("DELETE", "/api/forward", None, 405, id="405"),
        pytest.param("POST", "/api/forward", {"d_model": -1}, 422, id="422"),
        pytest.param("POST", "/api/forward", b"x" * (17 * 1024 * 1024), 413, id="413"),
    ],
)
def test_security_headers_on_every_kind_of_response(
    client: TestClient, method: str, url: str, body: Any, status: int
) -> None:
    if isinstance(body, bytes):
        response = client.request(method, url, content=body, headers=JSON)
    else:
        response = client.request(method, url, json=body)
    assert response.status_code == status
    _assert_security_headers(response)


def test_security_headers_and_clear_message_on_503(small_budget_client: TestClient) -> None:
    response = small_budget_client.post("/api/forward", json={"d_model": 1024, "d_ff": 4096})
    assert response.status_code == 503
    _assert_security_headers(response)
    detail = response.json()["detail"]
    assert "budget of 0.001 s" in detail and "request_timeout_s" not in detail
    assert int(response.headers["retry-after"]) >= 1


def test_internal_error_is_json_without_traceback_or_path() -> None:
    with TestClient(_boom_app(), raise_server_exceptions=False) as c:
        response = c.get("/api/boom")
    assert response.status_code == 500
    assert response.json() == {"detail": INTERNAL_ERROR}
    for leak in ("Traceback", "secret", "/work", "config.py", "RuntimeError", 'File "'):
        assert leak not in response.text
    _assert_security_headers(response)


def test_csp_allows_only_the_origin_itself(client: TestClient) -> None:
    csp = _csp(client.get("/"))
    assert csp["default-src"] == ["'self'"]
    assert csp["script-src"] == ["'self'"]  # no 'unsafe-inline', no 'unsafe-eval', no hosts
    assert csp["connect-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"]
    for name, sources in csp.items():
        if name == "frame-ancestors":
            continue
        for source in sources:
            assert source in ("'self'", "'none'", "'unsafe-inline'", "data:", "blob:"), (
                name,
                source,
            )
        assert "'unsafe-inline'" not in sources or name == "style-src", name


def test_the_page_has_no_inline_script_and_no_external_url(client: TestClient) -> None:
    html = client.get("/").text
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert re.search(r'\bsrc="/', tag) or 'type="application/json"' in tag, tag
    inline = re.findall(r"<script\b(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S)
    for body in inline:  # only JSON data islands, never code
        assert body.strip().startswith(("{", "[")), body[:80]
    assert not re.search(r"""(src|href)=["']https?://""", html)
    assert not re.search(r"<[^>]+\son[a-z]+\s*=", html)  # no inline event handlers


@pytest.mark.parametrize("value", ["'self'", "'none'", "https://lms.school.example 'self'"])
def test_frame_ancestors_comes_from_settings(settings_env: pytest.MonkeyPatch, value: str) -> None:
    settings_env.setenv("FFN_LAB_FRAME_ANCESTORS", value)
    with TestClient(create_app()) as c:
        for url in ("/", "/api/health", "/nope"):
            _assert_security_headers(c.get(url), frame_ancestors=value)


def test_frame_ancestors_default_allows_embedding_in_slides(client: TestClient) -> None:
    assert "frame-ancestors" not in _csp(client.get("/"))
    assert "x-frame-options" not in client.get("/").headers


@pytest.mark.parametrize("value", ["'self'; script-src *", "* \r\nSet-Cookie: a=b", ""])
def test_frame_ancestors_cannot_inject_directives(value: str) -> None:
    with pytest.raises(ValueError, match="frame_ancestors"):
        Settings(frame_ancestors=value)


def test_no_cors_unless_configured(client: TestClient) -> None:
    origin = {"origin": "https://evil.example"}
    simple = client.get("/api/health", headers=origin)
    assert "access-control-allow-origin" not in simple.headers
    preflight = client.options(
        "/api/forward",
        headers={**origin, "access-control-request-method": "POST"},
    )
    assert "access-control-allow-origin" not in preflight.headers
    assert preflight.status_code in (404, 405)


def test_cors_for_configured_origins_only(settings_env: pytest.MonkeyPatch) -> None:
    settings_env.setenv("FFN_LAB_CORS_ORIGINS", '["https://course.school.example"]')
    with TestClient(create_app()) as c:
        allowed = c.get("/api/health", headers={"origin": "https://course.school.example"})
        assert allowed.headers["access-control-allow-origin"] == "https://course.school.example"
        _assert_security_headers(allowed)
        other = c.get("/api/health", headers={"origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        preflight = c.options(
            "/api/forward",
            headers={
                "origin": "https://course.school.example",
                "access-control-request-method": "POST",
            },
        )
        assert preflight.status_code == 200
        assert "POST" in preflight.headers["access-control-allow-methods"]


@pytest.mark.parametrize(
    "url",
    [
        "/static/%2e%2e/app/config.py",
        "/static/%2E%2E/%2E%2E/etc/passwd",
        "/static/..%2fapp%2fconfig.py",
        "/static/..%5capp%5cconfig.py",
        "/static/%2e%2e%2f%2e%2e%2fpyproject.toml",
        "/static//etc/passwd",
        "/static/%252e%252e/app/config.py",
        "/static/css/..%2f..%2f..%2fapp%2fconfig.py",
        "/vendor/..%2fapp%2fconfig.py",
        "/static/%00../app/config.py",
    ],
)
def test_no_path_traversal_out_of_static(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code in (400, 404), (url, response.status_code)
    for secret in ("class Settings", "root:", "[project]"):
        assert secret not in response.text
    assert "/work" not in response.text


def test_docs_pages_that_need_a_cdn_are_off(client: TestClient) -> None:
    assert client.get("/docs").status_code == 404
    assert client.get("/redoc").status_code == 404
    assert client.get("/openapi.json").status_code == 200


def test_default_bind_is_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.cli

    monkeypatch.delenv("FFN_LAB_HOST", raising=False)
    assert Settings().host == "127.0.0.1"
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))
    get_settings.cache_clear()
    try:
        app.cli.main([])
        assert seen["host"] == "127.0.0.1"
        app.cli.main(["--host", "0.0.0.0", "--workers", "2"])
        assert seen["host"] == "0.0.0.0" and seen["workers"] == 2
        monkeypatch.setenv("FFN_LAB_HOST", "0.0.0.0")
        get_settings.cache_clear()
        app.cli.main([])
        assert seen["host"] == "0.0.0.0"
    finally:
        get_settings.cache_clear()
