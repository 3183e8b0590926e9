"""The page's static files and plotly.js, served so that a class on one Wi-Fi downloads little.

- Every file under `static/` is also served under `/static/v-<hash>/...`, where `<hash>` is a
  digest of the whole folder's content (`static_version()`): those URLs never change their
  content, so they are cached for a year (`immutable`). The templates link that prefix
  (`url_for('static', ...)`), and the ES modules' relative imports (`./charts.js`) and
  catalogs (`new URL('../i18n/...', import.meta.url)`) resolve under the same prefix: one
  changed file gives the whole tree a new prefix. The plain `/static/...` URLs stay, answered
  with `no-cache` (the browser revalidates with the ETag and gets a bodiless 304).
- plotly.js: the page's own build of it (`scripts/build-plotly.mjs`, run by `scripts/setup`
  after `npm ci`: plotly.js's core and the trace types the page draws, bar, heatmap,
  histogram and the core's scatter; 1.2 MB, 0.41 MB gzipped) when it is there, else the
  full bundle inside the Python `plotly` package (4.8 MB). Both are the same plotly.js
  version (`plotly_version()` reads the banner). It is gzipped once per
  process and served from memory, under a URL that names its content hash. The served file
  starts with V8's explicit compile hint (`COMPILE_HINT`): the whole bundle runs as the page
  opens, so Chromium compiles its functions while the file streams in, on a background
  thread, instead of one by one on the main thread as they are first called.
- The page's script: `static/js/main.js` and the modules it imports, bundled into one file
  by `scripts/build-page-js.mjs` (run by `scripts/setup`), when that file was built from the
  `static/js` of now (`page_script()`); else the modules themselves, each linked as a
  `modulepreload`. It is served under the modules' own versioned prefix, so that its
  `import.meta.url` finds the catalogs where the modules find them.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import plotly
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from app.paths import STATIC_DIR

log = logging.getLogger(__name__)

IMMUTABLE = "public, max-age=31536000, immutable"
"""Cache-Control of a URL whose content never changes (it names its content's hash)."""
REVALIDATE = "no-cache"
"""Cache-Control of a URL whose content may change: kept, but revalidated (ETag -> 304)."""

PLOTLY_FULL = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
"""The full plotly.js bundle shipped inside the Python `plotly` package."""
PLOTLY_PAGE = STATIC_DIR.parent / "build" / "plotly" / "plotly.min.js"
"""The page's plotly.js, built from the npm package pinned in package-lock.json by
`scripts/build-plotly.mjs` (run by `scripts/setup`)."""
PAGE_SCRIPT = STATIC_DIR.parent / "build" / "js" / "main.js"
"""The page's script bundled into one file by `scripts/build-page-js.mjs` (run by
`scripts/setup`); its first line names the digest of the sources it was built from."""


_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^;"']*?(?:\bfrom\s*)?["'](\.{1,2}/[^"']+\.js)["']""", re.M
)
"""A static `import ... from "./x.js"` (or `export ... from`, or a bare `import "./x.js"`)."""


@lru_cache
def module_graph(entry: str) -> tuple[str, ...]:
    """Every ES module that `entry` (a path under `static/`, e.g. "js/main.js") imports
    statically, directly or not, as paths under `static/` in the order first met (depth
    first); the entry itself excluded. JSON modules and dynamic `import()` are left out.

    The page links them as `<link rel="modulepreload">`: the browser fetches the whole tree
    at once instead of one level of imports after another (each level waits for the one
    before it to be parsed, and parsing waits for plotly.js to finish running).

    Raises:
        FileNotFoundError: `entry` or a module it imports is not under `static/`.
    """
    seen: dict[str, None] = {}

    def visit(path: str) -> None:
        source = (STATIC_DIR / path).read_text(encoding="utf-8")
        folder = Path(path).parent
        for spec in _IMPORT.findall(source):
            target = (folder / spec).as_posix()
            parts: list[str] = []
            for part in target.split("/"):
                if part == "..":
                    parts.pop()
                elif part not in ("", "."):
                    parts.append(part)
            name = "/".join(parts)
            if name not in seen and name != entry:
                seen[name] = None
                visit(name)

    visit(entry)
    return tuple(seen)


@lru_cache
def static_version() -> str:
    """`v-` and the first 12 hex digits of a SHA-256 over every file under `static/` (its
    relative path and bytes, in sorted order): the URL prefix of the immutable copies."""
    digest = hashlib.sha256()
    for path in sorted(p for p in STATIC_DIR.rglob("*") if p.is_file()):
        digest.update(path.relative_to(STATIC_DIR).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return "v-" + digest.hexdigest()[:12]


class CachedStaticFiles(StaticFiles):
    """StaticFiles that adds one Cache-Control header to every file it answers (200 or 304)."""

    def __init__(self, *, directory: Path, cache_control: str) -> None:
        super().__init__(directory=directory)
        self.cache_control = cache_control

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            response.headers["cache-control"] = self.cache_control
        return response


def plotly_version(path: Path) -> str:
    """The plotly.js version in a bundle's banner (`plotly.js ... v4.1.1`), or "unknown"."""
    with path.open("rb") as f:
        head = f.read(400).decode("utf-8", "replace")
    found = re.search(r"plotly\.js[^\n]*?v(\d+\.\d+\.\d+)", head)
    return found.group(1) if found else "unknown"


@dataclass(frozen=True)
class Bundle:
    """plotly.js as served: the file, its kind ("page", the page's build of the core and its
    trace types, or "full"), version, bytes, their gzip (level 9, made once) and the content
    hash that names its URL."""

    path: Path
    kind: str
    version: str
    body: bytes
    gzipped: bytes
    tag: str


COMPILE_HINT = b"//# allFunctionsCalledOnLoad\n"
"""V8's explicit compile hint (Chrome 136 and later; other browsers read a comment): compile
every function of this file eagerly, off the main thread. On a phone (390x844, Chromium's CPU
slowdown 4x) the first flow was drawn 0.44 s sooner, medians of 8 alternating loads:
2.55 s against 2.99 s (`python -m benchmarks.ab_page --first-flow --before <checkout>`).
Chromium's slowdown applies to the page's main thread; a phone's background compile runs on
its other cores."""


@lru_cache
def plotly_bundle() -> Bundle:
    """The page's build when it is there and of the same plotly.js version as the Python
    package's bundle (the one `plotly.io` inlines in snapshots), else the full one; served
    with `COMPILE_HINT` before it."""
    full_version = plotly_version(PLOTLY_FULL)
    path, kind = PLOTLY_FULL, "full"
    if PLOTLY_PAGE.is_file() and plotly_version(PLOTLY_PAGE) == full_version:
        path, kind = PLOTLY_PAGE, "page"
    body = COMPILE_HINT + path.read_bytes()
    tag = hashlib.sha256(body).hexdigest()[:12]
    return Bundle(path, kind, full_version, body, gzip.compress(body, 9, mtime=0), tag)


def page_sources_digest() -> str:
    """SHA-256 (hex) over every `.js` file under `static/js`: its path relative to that
    folder (with "/"), a NUL and its bytes, in sorted order, as `scripts/build-page-js.mjs`
    computes it."""
    root = STATIC_DIR / "js"
    digest = hashlib.sha256()
    for name in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.js")):
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update((root / name).read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class PageScript:
    """The page's script bundled into one file: its bytes, their gzip (level 9, made once)
    and the content hash that names its URL."""

    body: bytes
    gzipped: bytes
    tag: str


_BUILT_FROM = re.compile(rb"sources sha256:([0-9a-f]{64})")


@lru_cache
def page_script() -> PageScript | None:
    """`PAGE_SCRIPT` when it is there and was built from the `static/js` of now, else None
    (the page then loads the ES modules themselves). A bundle older than its sources is
    logged once per process, with the command that builds it again."""
    if not PAGE_SCRIPT.is_file():
        return None
    body = PAGE_SCRIPT.read_bytes()
    found = _BUILT_FROM.search(body[:300])
    if found is None or found.group(1).decode() != page_sources_digest():
        log.warning(
            "%s was built from other sources than static/js: the page loads the modules "
            "instead (node scripts/build-page-js.mjs builds it again)",
            PAGE_SCRIPT,
        )
        return None
    tag = hashlib.sha256(body).hexdigest()[:12]
    return PageScript(body, gzip.compress(body, 9, mtime=0), tag)
