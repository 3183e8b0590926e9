"""Static files and plotly.js over HTTP: compressed, cached by versioned URLs, never a stream
held back by gzip."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

from app.api import assets
from app.api.assets import (
    COMPILE_HINT,
    PLOTLY_FULL,
    PLOTLY_PAGE,
    page_script,
    page_sources_digest,
    plotly_bundle,
    plotly_version,
    static_version,
)
from app.api.middleware.compression import PageCompressionMiddleware
from app.main import create_app

ROOT = Path(__file__).resolve().parents[2]

GZIP = {"accept-encoding": "gzip"}


def _links(client: TestClient) -> list[str]:
    html = client.get("/").text
    return re.findall(r"""(?:src|href)=["'](/[^"']+)["']""", html)


def _page_script(client: TestClient) -> str:
    """The src of the page's module script."""
    found = re.search(r'<script type="module" src="([^"]+)"', client.get("/").text)
    assert found
    return found.group(1)


@pytest.fixture
def bundle(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A stand-in for build/js/main.js: `bundle(first_line)` writes it and returns its body;
    the cached answer of `page_script()` is forgotten before and after."""

    def write(first_line: str) -> bytes:
        body = f"{first_line}\nconsole.log('the page');\n".encode()
        path = tmp_path / "main.js"
        path.write_bytes(body)
        monkeypatch.setattr(assets, "PAGE_SCRIPT", path)
        page_script.cache_clear()
        return body

    yield write
    page_script.cache_clear()


def _built_from(digest: str) -> str:
    what = "FFN Lab's page script: static/js/main.js and its imports"
    return f"/* {what} (sources sha256:{digest}) */"


def test_the_page_links_versioned_urls_cached_for_a_year(client: TestClient) -> None:
    links = [u for u in _links(client) if u.startswith(("/static", "/vendor"))]
    assert any(re.search(r"/js/main(-[0-9a-f]{12})?\.js$", u) for u in links)
    assert any(u.startswith("/vendor/plotly-") for u in links)
    for url in links:
        r = client.get(url, headers=GZIP)
        assert r.status_code == 200, url
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable", url
        assert re.match(r"/static/v-[0-9a-f]{12}/|/vendor/plotly-[0-9a-f]{12}\.min\.js$", url)


def test_a_bundle_built_from_these_sources_is_the_page_script(client: TestClient, bundle) -> None:  # type: ignore[no-untyped-def]
    """One file instead of ~60 modules: served under the modules' versioned prefix (its
    import.meta.url finds the catalogs where theirs do), gzipped, cached for a year; no
    modulepreload left in the page."""
    body = bundle(_built_from(page_sources_digest()))
    src = _page_script(client)
    assert re.fullmatch(rf"/static/{static_version()}/js/main-[0-9a-f]{{12}}\.js", src)
    assert "modulepreload" not in client.get("/").text
    r = client.get(src, headers=GZIP)
    assert r.status_code == 200 and r.content == body
    assert r.headers["content-encoding"] == "gzip"
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.headers["content-type"].startswith("text/javascript")
    # another tag or version: not this file
    assert client.get(src.replace("/js/main-", "/js/main-0")).status_code == 404
    assert client.get(src.replace(static_version(), "v-000000000000")).status_code == 404


def test_a_bundle_older_than_the_sources_is_not_served(client: TestClient, bundle, caplog) -> None:  # type: ignore[no-untyped-def]
    """Edited modules and a bundle built before the edit: the page loads the modules, every
    one announced at once (modulepreload), and the log says how to build the bundle again."""
    bundle(_built_from("0" * 64))
    with caplog.at_level("WARNING", logger="app.api.assets"):
        assert _page_script(client).endswith(f"/static/{static_version()}/js/main.js")
    assert "node scripts/build-page-js.mjs" in caplog.text
    html = client.get("/").text
    assert html.count('rel="modulepreload"') == len(assets.module_graph("js/main.js")) > 20


def test_the_modules_setting_serves_the_modules_beside_a_fresh_bundle(settings_env, bundle) -> None:  # type: ignore[no-untyped-def]
    bundle(_built_from(page_sources_digest()))
    settings_env.setenv("FFN_LAB_PAGE_SCRIPT", "modules")
    with TestClient(create_app()) as c:
        assert _page_script(c).endswith("/js/main.js")
        assert "modulepreload" in c.get("/").text


def test_the_build_script_and_the_server_agree_on_the_sources_digest() -> None:
    """scripts/build-page-js.mjs writes the digest that app.api.assets compares (it builds
    the bundle again when the sources changed, else leaves it)."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "esbuild").is_dir():
        pytest.skip("node and the npm packages (scripts/setup --dev) build the bundle")
    subprocess.run([node, "scripts/build-page-js.mjs"], cwd=ROOT, check=True, timeout=120)
    first = (ROOT / "build" / "js" / "main.js").read_text(encoding="utf-8").split("\n", 1)[0]
    assert first == _built_from(page_sources_digest())


def test_modules_imported_by_the_page_resolve_under_the_same_version(client: TestClient) -> None:
    """main.js's relative imports (./charts.js) land under its versioned prefix: cached too."""
    prefix = f"/static/{static_version()}/js"
    main = f"{prefix}/main.js"
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
