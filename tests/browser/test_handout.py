"""Export > Lesson handout in a real browser: the downloaded file opens with every
non-file request aborted, holds every lesson step with its drawn picture (real numbers:
step 1's heatmaps are /api/forward's for that step's settings), in the page's language,
and Chromium prints it to a PDF of at least one page per few steps."""

from __future__ import annotations

import re
import shutil
import subprocess

import httpx
import numpy as np
import pytest
from playwright.sync_api import expect

from app.lab.figures.parts import catalog
from app.lab.handout.steps import STEPS
from tests.browser.conftest import ARTIFACTS, wait_rendered

pytestmark = pytest.mark.browser
BUILD_MS = 300_000  # the handout trains three small models and a sweep on a shared machine
DESKTOP = {"viewport": {"width": 1280, "height": 720}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 3,
}


def pdf_pages(pdf: bytes) -> int:
    """Pages of a PDF: pdfinfo (poppler-utils) when installed, else the /Type /Page objects."""
    if shutil.which("pdfinfo"):
        out = subprocess.run(["pdfinfo", "-"], input=pdf, capture_output=True, check=True)
        return int(re.search(rb"Pages:\s+(\d+)", out.stdout).group(1))  # type: ignore[union-attr]
    return len(re.findall(rb"/Type\s*/Page\b", pdf))


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_lesson_handout_opens_offline_with_every_step_drawn(  # type: ignore[no-untyped-def]
    page, server_url, browser, tmp_path, lang
):
    page.goto(f"{server_url}/?lang={lang}")
    wait_rendered(page)
    page.locator("#export-menu summary").click()
    with page.expect_download(timeout=BUILD_MS) as info:
        page.locator("#export-handout").click()
    download = info.value
    assert download.suggested_filename == f"ffn-lab_lesson-handout_{lang}.html"
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    assert page.locator("#export-handout").is_enabled()

    offline = browser.new_context(offline=True, viewport={"width": 1280, "height": 720})
    try:
        requests: list[str] = []
        errors: list[str] = []
        viewer = offline.new_page()
        viewer.route("http*://**/*", lambda route: route.abort())
        viewer.on("request", lambda r: requests.append(r.url))
        viewer.on("pageerror", lambda e: errors.append(str(e)))
        viewer.goto(path.as_uri())
        viewer.wait_for_function(
            "n => document.querySelectorAll('.step .js-plotly-plot .main-svg').length >= n",
            arg=len(STEPS),
            timeout=60_000,
        )
        steps = viewer.locator("section.step")
        assert steps.count() == len(STEPS) == 20
        drawn = viewer.evaluate(
            """() => Array.from(document.querySelectorAll('section.step')).map((s) => {
              const plot = s.querySelector('.js-plotly-plot');
              return { step: Number(s.dataset.step), traces: plot ? plot.data.length : 0,
                       title: s.querySelector('h2').textContent,
                       numbers: s.querySelectorAll('.numbers li').length,
                       link: s.querySelector('.link a').href };
            })"""
        )
        assert [d["step"] for d in drawn] == list(range(1, 21))
        assert all(d["traces"] >= 1 and d["numbers"] >= 1 and d["title"] for d in drawn)
        for d in drawn:
            assert d["link"] == f"{server_url}/?lesson=1&step={d['step']}&lang={lang}"
        assert viewer.locator("html").get_attribute("lang") == lang
        assert viewer.locator("#handout-language").get_attribute("data-lang") == lang
        if lang == "zh-CN":
            assert re.search(r"[\u4e00-\u9fff]", drawn[0]["title"])
        # step 1's four heatmaps hold /api/forward's numbers for its settings (as drawn:
        # Plotly's full data, its base64 arrays decoded)
        body = {"d_model": 8, "d_ff": 32, "activation": "relu", "seed": 0, "bias": True,
                "num_tokens": 6, "input_seed": 0}  # fmt: skip
        forward = httpx.post(f"{server_url}/api/forward", json=body, timeout=60).json()
        z = viewer.evaluate(
            """() => document.getElementById('handout-plot-1')._fullData
                 .filter((t) => t.type === 'heatmap')
                 .map((t) => Array.from(t.z, (row) => Array.from(row)))"""
        )
        for drawn_z, key in zip(z, ("input", "pre_activation", "hidden", "output"), strict=True):
            np.testing.assert_allclose(
                np.asarray(drawn_z), np.asarray(forward[key], dtype=np.float32), rtol=1e-6
            )
        assert [u for u in requests if not u.startswith("file:")] == []
        assert errors == []
        assert _unreadable_text(viewer) == []
        pdf = viewer.pdf(format="A4", print_background=True)
        (tmp_path / f"handout_{lang}.pdf").write_bytes(pdf)
        assert pdf.startswith(b"%PDF")
        assert pdf_pages(pdf) >= len(STEPS) // 3
    finally:
        offline.close()
    _phone_view(browser, path)
    assert page.recorder.foreign() == []


def _phone_view(browser, path) -> None:  # type: ignore[no-untyped-def]
    """On a phone held upright the handout never scrolls sideways; each picture keeps a
    readable width (at least 40 rem) and scrolls sideways in its own box, and a note says so."""
    phone = browser.new_context(
        offline=True,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=3,
    )
    try:
        viewer = phone.new_page()
        viewer.goto(path.as_uri())
        viewer.wait_for_function(
            "n => document.querySelectorAll('.step .js-plotly-plot .main-svg').length >= n",
            arg=len(STEPS),
            timeout=60_000,
        )
        got = viewer.evaluate(
            """() => ({
              page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
              pictures: Array.from(document.querySelectorAll('.picture'), (p) => ({
                plot: p.querySelector('.js-plotly-plot').getBoundingClientRect().width,
                box: p.clientWidth, scrolls: p.scrollWidth > p.clientWidth,
              })),
              note: document.querySelector('.swipe').getBoundingClientRect().height,
            })"""
        )
        assert got["page"][0] == got["page"][1] == 390
        assert got["note"] > 0
        for picture in got["pictures"]:
            assert picture["plot"] >= 640 and picture["box"] <= 390 and picture["scrolls"]
        assert _unreadable_text(viewer) == []
    finally:
        phone.close()


UNREADABLE_JS = """() => {
  const bad = [];
  for (const plot of document.querySelectorAll('.plotly-graph-div')) {
    const box = plot.getBoundingClientRect();
    for (const text of plot.querySelectorAll('text')) {
      if (!text.textContent.trim()) continue;
      // the smallest font of its own words (a <sub> or a styled span is a tspan), times
      // any scale Plotly drew it at (a bar's text shrunk to fit the bar)
      const m = text.getScreenCTM();
      const scale = m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1;
      const parts = [text, ...text.querySelectorAll('tspan')].filter((e) =>
        [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim()));
      const size = Math.min(...parts.map((e) => parseFloat(getComputedStyle(e).fontSize))) * scale;
      const r = text.getBoundingClientRect();
      const inside = r.left >= box.left - 0.5 && r.right <= box.right + 0.5
        && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
      if (size < 11.95 || !inside) {
        bad.push({ plot: plot.id, text: text.textContent.slice(0, 80), size, inside,
                   left: r.left - box.left, right: box.right - r.right });
      }
    }
  }
  return bad;
}"""


def _unreadable_text(viewer) -> list[dict]:  # type: ignore[no-untyped-def]
    """Every text of every picture (titles, subtitles, ticks, cell numbers, legends) in
    12 px or more and inside its picture's box: none cut at the figure's edge."""
    return viewer.evaluate(UNREADABLE_JS)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("lang", "device"),
    [
        pytest.param("en", DESKTOP, id="en-1280x720"),
        pytest.param("zh-CN", PHONE, id="zh-CN-phone"),
    ],
)
def test_handout_shows_it_is_building_where_it_was_asked(  # type: ignore[no-untyped-def]
    browser, server_url, lang, device
):
    """While the server builds the handout (its answer held back here), the Export button and
    the handout's item say so, in the page's language, and a status line beside the Export
    button in the first screen says what is happening; then that the file is downloaded."""
    msg = catalog(lang)
    context = browser.new_context(locale=lang, accept_downloads=True, **device)
    try:
        page = context.new_page()
        held: list = []  # type: ignore[type-arg]
        page.route("**/api/handout", lambda route: held.append(route))
        page.goto(f"{server_url}/?lang={lang}")
        wait_rendered(page)
        summary = page.locator("#export-menu summary")
        summary.click()
        button = page.locator("#export-handout")
        note = page.locator("#export-progress")
        with page.expect_request("**/api/handout"):
            button.click()
        expect(button).to_be_disabled()
        expect(button).to_have_attribute("aria-busy", "true")
        expect(button).to_have_text(msg["export.handout_building"])
        expect(page.locator("#export-menu")).to_have_attribute("aria-busy", "true")
        expect(note).to_have_text(msg["export.handout_busy"])
        expect(note).to_have_attribute("role", "status")
        _beside_the_button(page, summary.bounding_box(), note)
        page.screenshot(path=str(ARTIFACTS / f"handout-building_{lang}.png"))

        while not held:  # the route's callback runs when Playwright next reads the page
            page.evaluate("0")
        name = f"ffn-lab_lesson-handout_{lang}.html"
        with page.expect_download() as info:
            held[0].fulfill(
                status=200,
                content_type="text/html; charset=utf-8",
                headers={"content-disposition": f'attachment; filename="{name}"'},
                body="<!doctype html><title>handout</title>",
            )
        assert info.value.suggested_filename == name
        expect(note).to_have_text(msg["export.handout_done"])
        expect(button).to_be_enabled()
        expect(button).not_to_have_attribute("aria-busy", "true")
        expect(button).to_have_text(msg["export.handout"])
        expect(page.locator("#export-menu")).not_to_have_attribute("aria-busy", "true")
        _beside_the_button(page, summary.bounding_box(), note)
    finally:
        context.close()


def _beside_the_button(page, summary, note) -> None:  # type: ignore[no-untyped-def]
    """The status is in the first screen, just under the Export button, in 12 px or more."""
    expect(note).to_be_in_viewport(ratio=1)
    box = note.bounding_box()
    assert box is not None and summary is not None
    assert 0 <= box["y"] - (summary["y"] + summary["height"]) < 24, (box, summary)
    size = page.evaluate(
        "() => parseFloat(getComputedStyle(document.getElementById('export-progress')).fontSize)"
    )
    assert size >= 12
