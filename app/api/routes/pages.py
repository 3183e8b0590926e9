"""HTML pages and the Plotly bundle, served by the app itself (no CDN, works offline)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from app.analysis import param_counts
from app.api.assets import (
    IMMUTABLE,
    REVALIDATE,
    module_graph,
    page_script,
    plotly_bundle,
    static_version,
)
from app.config import get_settings
from app.model.activations import ACTIVATIONS
from app.model.ffn import FFNConfig
from app.model.presets import PRESETS
from app.paths import STATIC_DIR, TEMPLATES_DIR

router = APIRouter(tags=["pages"], include_in_schema=False)
page_script_router = APIRouter(tags=["pages"], include_in_schema=False)
"""The page's bundled script: its URL lies under the versioned static prefix, so this router
is included before the static files are mounted (app/main.py)."""
templates = Jinja2Templates(directory=TEMPLATES_DIR)

PANELS: tuple[str, ...] = (
    "source",
    "flow",
    "neuron",
    "sparsity",
    "perturb",
    "contrast",
    "readout",
    "names",
    "attention",
    "block",
    "variants",
    "cheaper",
    "budget",
    "dropout",
    "misconceptions",
    "stack",
    "train",
)
"""The page's panels in order: each is templates/partials/_<name>.html."""

PANEL_SECTIONS: dict[str, str] = {"attention": "attention-vs-ffn"}
"""Partials whose <section id> is not their name. The page's `panel=` values (URL, panel
select, lesson steps) are section ids, so that the chosen panel is the one opened."""


@lru_cache
def boot_data() -> dict[str, Any]:
    """Data handed to the page's scripts as JSON: activations, presets and limits."""
    settings = get_settings()
    return {
        "activations": [
            {
                "name": s.name,
                "label": s.label,
                "gated": s.gated,
                "formula": s.formula,
                "exact_zeros": s.exact_zeros,
            }
            for s in ACTIVATIONS.values()
        ],
        "presets": [
            {
                "id": p.id,
                "name": p.name,
                "d_model": p.d_model,
                "d_ff": p.d_ff,
                "activation": p.activation,
                "bias": p.bias,
                "source": p.source,
                "num_tokens": p.num_tokens,
                "weights": p.weights,
                "tokens": p.tokens,
                "params": param_counts(FFNConfig(p.d_model, p.d_ff, p.activation, p.bias))["total"],
            }
            for p in PRESETS
        ],
        "limits": {
            "max_tokens": settings.max_tokens,
            "max_d_model": settings.max_d_model,
            "max_d_ff": settings.max_d_ff,
            "max_params": settings.max_params,
            "max_svd_values": settings.max_svd_values,
            "max_abs_value": settings.max_abs_value,
            "max_text_chars": settings.max_text_chars,
        },
        "sparsity_threshold": settings.sparsity_threshold,
        "panels": [PANEL_SECTIONS.get(name, name) for name in PANELS],
        "i18n": i18n_catalogs(),
    }


def i18n_catalogs() -> dict[str, list[str]]:
    """Language -> the catalog files (static/i18n/<lang>/<part>.json) the page loads."""
    root = STATIC_DIR / "i18n"
    return {
        lang.name: sorted(f.stem for f in lang.glob("*.json"))
        for lang in sorted(root.iterdir())
        if lang.is_dir()
    }


@router.get("/", response_class=HTMLResponse)
def get_index(request: Request) -> HTMLResponse:
    """The main page."""
    return templates.TemplateResponse(
        request, "index.html", {"boot": boot_data(), "panels": PANELS}
    )


def plotly_src() -> str:
    """The page's plotly.js URL: it names the bundle's content hash (cached for a year)."""
    return f"/vendor/plotly-{plotly_bundle().tag}.min.js"


def page_script_src() -> str:
    """The page's bundled script's URL, under the modules' versioned prefix (its
    `import.meta.url` resolves the catalogs as theirs do); "" when the page loads the ES
    modules (`page_script` setting "modules", or no bundle as new as static/js)."""
    bundle = page_script() if get_settings().page_script == "bundle" else None
    return f"/static/{static_version()}/js/main-{bundle.tag}.js" if bundle else ""


templates.env.globals["plotly_src"] = plotly_src
templates.env.globals["page_script_src"] = page_script_src
templates.env.globals["module_graph"] = module_graph


def _plotly_response(request: Request, cache_control: str) -> Response:
    """plotly.js (the page's build in build/plotly, else the Python package's full bundle:
    app.api.assets), gzipped when the browser accepts it; 304 for a matching ETag."""
    bundle = plotly_bundle()
    etag = f'"{bundle.tag}"'
    headers = {
        "cache-control": cache_control,
        "etag": etag,
        "vary": "accept-encoding",
        "x-plotly-bundle": f"{bundle.kind} {bundle.version}",
    }
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return _script(request, bundle.body, bundle.gzipped, headers)


def _script(request: Request, body: bytes, gzipped: bytes, headers: dict[str, str]) -> Response:
    """A script made once in both forms: gzipped when the browser accepts it, else plain."""
    if "gzip" in request.headers.get("accept-encoding", ""):
        body = gzipped
        headers = {**headers, "content-encoding": "gzip"}
    return Response(body, media_type="text/javascript", headers=headers)


@router.get("/vendor/plotly.min.js")
def get_plotly_js(request: Request) -> Response:
    """plotly.js at a fixed URL (revalidated with its ETag): see `plotly_src` for the page's."""
    return _plotly_response(request, REVALIDATE)


@router.get("/vendor/plotly-{tag}.min.js")
def get_plotly_js_tagged(request: Request, tag: str) -> Response:
    """plotly.js under the URL that names its content hash: cached for a year. Another tag
    (a page from before a new bundle) gets today's bundle, revalidated."""
    return _plotly_response(request, IMMUTABLE if tag == plotly_bundle().tag else REVALIDATE)


@page_script_router.get("/static/{version}/js/main-{tag}.js")
def get_page_script(request: Request, version: str, tag: str) -> Response:
    """The page's bundled script (app.api.assets.page_script), gzipped when the browser
    accepts it, cached for a year: its URL names the static files' version and its content
    hash. 404 for another version or tag, or when the page loads the modules."""
    bundle = page_script()
    if bundle is None or version != static_version() or tag != bundle.tag:
        return Response(status_code=404)
    headers = {"cache-control": IMMUTABLE, "vary": "accept-encoding"}
    return _script(request, bundle.body, bundle.gzipped, headers)
