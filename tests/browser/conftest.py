"""Browser fixtures: the real server in a subprocess, Debian's Chromium driven by Playwright.

Chromium is not downloaded (that fails here): it must be /usr/bin/chromium (Debian package
`chromium`). Without it these tests are skipped on a developer's machine and fail in CI
(when the CI variable is set), so CI never passes without running them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

CHROMIUM = os.environ.get("FFN_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    message = f"{CHROMIUM} not found: apt-get install -y chromium"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def start_server(
    env: dict[str, str] | None = None, workers: int = 1
) -> tuple[subprocess.Popen[bytes], str]:
    """Start `uvicorn app.main:create_app` on a free loopback port; returns (process, base URL)."""
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "app.main:create_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not start in 60 s")


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """Base URL of a real server process for the whole session."""
    proc, base = start_server()
    yield base
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium, headless, through Playwright."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class PageRecorder:
    """Every request URL a page made, and the console errors it printed."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.requests: list[str] = []
        self.errors: list[str] = []

    def foreign(self) -> list[str]:
        """Requests that left the page's origin (data: and blob: URLs stay local)."""
        out = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "about"):
                continue
            if f"{parts.scheme}://{parts.netloc}" != self.origin:
                out.append(url)
        return out


@pytest.fixture
def page(browser, server_url):  # type: ignore[no-untyped-def]
    """A fresh 1280x720 page; `page.recorder` holds its requests and console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    pg = context.new_page()
    recorder = PageRecorder(server_url)
    pg.on("request", lambda r: recorder.requests.append(r.url))
    pg.on("console", lambda m: recorder.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: recorder.errors.append(str(e)))
    pg.recorder = recorder
    yield pg
    context.close()


def wait_rendered(pg, forward_seq: int | None = None, timeout: float = 30_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page has drawn its plots (a forward and a perturb answer rendered)."""
    pg.locator(".js-plotly-plot").first.wait_for(timeout=timeout)
    selector = "body[data-forward-seq][data-perturb-seq]"
    if forward_seq is not None:
        selector = f'body[data-forward-seq="{forward_seq}"][data-perturb-seq]'
    pg.locator(selector).wait_for(state="attached", timeout=timeout)
