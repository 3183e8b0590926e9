"""The page and its assets are served by the app itself: no CDN, no inline script."""

from __future__ import annotations

import json
import re


def test_index_uses_only_local_assets(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert re.search(r'src="/vendor/plotly-[0-9a-f]+\.min\.js"', html)
    assert re.search(r'src="/static/v-[0-9a-f]+/js/main(-[0-9a-f]{12})?\.js"', html)
    # No inline executable script: only the JSON boot block.
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    for attrs, body in scripts:
        assert "src=" in attrs or 'type="application/json"' in attrs, attrs
        if 'type="application/json"' in attrs:
            assert body.strip().startswith("{")


def test_plotly_is_served_by_the_app(client):
    r = client.get("/vendor/plotly.min.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert len(r.content) > 1_000_000


def test_static_and_catalogs(client):
    assert client.get("/static/js/main.js").status_code == 200
    en = client.get("/static/i18n/en/core.json").json()
    zh = client.get("/static/i18n/zh-CN/core.json").json()
    assert set(en) == set(zh)


def test_every_element_id_is_unique(client):
    """Panels from different partials must not reuse an id (a label or a test would hit both)."""
    ids = re.findall(r'\bid="([^"]+)"', client.get("/").text)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert duplicates == []


def test_every_panel_value_names_a_section_of_the_page(client):
    """`panel=` values (URL, panel select, lesson) are the ids of the page's <section>s."""
    html = client.get("/").text
    boot = json.loads(re.search(r'<script[^>]*id="boot"[^>]*>(.*?)</script>', html, re.S)[1])
    sections = set(re.findall(r'<section id="([^"]+)"', html))
    assert boot["panels"] and set(boot["panels"]) <= sections
    assert "attention-vs-ffn" in boot["panels"] and "attention" not in boot["panels"]
