"""Static files and plotly.js over HTTP: compressed, cached by versioned URLs, never a stream
held back by gzip."""

from __future__ import annotations

import gzip
import re

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

from app.api.assets import (
    COMPILE_HINT,
    PLOTLY_FULL,
    PLOTLY_PAGE,
    plotly_bundle,
    plotly_version,
)
from app.api.middleware.compression import PageCompressionMiddleware

GZIP = {"accept-encoding": "gzip"}


def _links(client: TestClient) -> list[str]:
    html = client.get("/").text
    return re.findall(r"""(?:src|href)=["'](/[^"']+)["']""", html)


def test_the_page_links_versioned_urls_cached_for_a_year(client: TestClient) -> None:
    links = [u for u in _links(client) if u.startswith(("/static", "/vendor"))]
    assert any(u.endswith("/js/main.js") for u in links)
    assert any(u.startswith("/vendor/plotly-") for u in links)
    for url in links:
        r = client.get(url, headers=GZIP)
        assert r.status_code == 200, url
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable", url
        assert re.match(r"/static/v-[0-9a-f]{12}/|/vendor/plotly-[0-9a-f]{12}\.min\.js$", url)


def test_modules_imported_by_the_page_resolve_under_the_same_version(client: TestClient) -> None:
    """main.js's relative imports (./charts.js) land under its versioned prefix: cached too."""
    main = next(u for u in _links(client) if u.endswith("/js/main.js"))
    prefix = main.rsplit("/", 1)[0]
    imports = re.findall(r"""from\s+["']\./([^"']+)["']""", client.get(main).text)
    assert imports
    for name in imports:
        r = client.get(f"{prefix}/{name}")
        assert r.status_code == 200, name
        assert "immutable" in r.headers["cache-control"]


def test_plain_static_urls_are_revalidated_with_their_etag(client: TestClient) -> None:
    r = client.get("/static/js/main.js")
    assert r.headers["cache-control"] == "no-cache"
    again = client.get("/static/js/main.js", headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


def test_page_and_modules_are_gzipped(client: TestClient) -> None:
    for url in ("/", "/static/js/main.js", "/static/css/app.css", "/static/i18n/en/core.json"):
        r = client.get(url, headers=GZIP)
        assert r.headers.get("content-encoding") == "gzip", url
        assert "accept-encoding" in r.headers.get("vary", "").lower(), url


def test_api_answers_are_sent_as_computed(client: TestClient) -> None:
    r = client.post("/api/forward", json={"num_tokens": 2}, headers=GZIP)
    assert r.status_code == 200
    assert "content-encoding" not in r.headers


def test_training_stream_is_not_compressed(client: TestClient) -> None:
    body = {"steps": 2, "log_every": 1}
    with client.stream("POST", "/api/train", json=body, headers=GZIP) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/x-ndjson")
        assert "content-encoding" not in r.headers


@pytest.mark.parametrize("media_type", ["text/event-stream", "application/x-ndjson"])
def test_streams_are_never_compressed_on_any_path(media_type: str) -> None:
    async def lines():  # type: ignore[no-untyped-def]
        for i in range(200):
            yield f"data: line {i} {'x' * 40}\n\n"

    async def stream(request):  # type: ignore[no-untyped-def]
        return StreamingResponse(lines(), media_type=media_type)

    app = PageCompressionMiddleware(Starlette(routes=[Route("/events", stream)]))
    with TestClient(app) as c, c.stream("GET", "/events", headers=GZIP) as r:
        assert "content-encoding" not in r.headers
        assert b"line 0" in next(r.iter_raw())


def test_plotly_bundle_is_the_pages_build_of_the_python_packages_version(
    client: TestClient,
) -> None:
    """scripts/setup builds the page's plotly.js after npm ci (scripts/build-plotly.mjs):
    the core and the page's trace types, served gzipped."""
    if not PLOTLY_PAGE.is_file():
        pytest.skip("scripts/setup has not built build/plotly/plotly.min.js (no npm)")
    assert plotly_version(PLOTLY_PAGE) == plotly_version(PLOTLY_FULL) != "unknown"
    assert b"plotly.js (core, bar, heatmap, histogram - minified)" in PLOTLY_PAGE.read_bytes()[:200]
    bundle = plotly_bundle()
    assert bundle.kind == "page"
    r = client.get(f"/vendor/plotly-{bundle.tag}.min.js", headers=GZIP)
    assert r.headers["content-encoding"] == "gzip"
    assert int(r.headers["content-length"]) < 450_000
    # httpx decodes the gzip; the file as built, after V8's compile hint
    assert r.content == COMPILE_HINT + PLOTLY_PAGE.read_bytes()
    assert gzip.decompress(bundle.gzipped) == bundle.body
    again = client.get("/vendor/plotly.min.js", headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304
