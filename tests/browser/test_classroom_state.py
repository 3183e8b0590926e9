"""URL state, the notice for refused values, embed mode at 16:9 sizes, the iframe snippet."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser.classroom import DOCS, OVER_LIMIT, OVER_LIMIT_PARAMS, catalog, fill, wait_answers
from tests.browser.conftest import layout_stable, settled, wait_rendered

pytestmark = pytest.mark.browser


def _view(page):  # type: ignore[no-untyped-def]
    """What a student sees: control values and the computed readouts."""
    ids = [
        "d_model-value",
        "d_ff-value",
        "tokens-value",
        "position-value",
        "scale-value",
        "readout-params",
        "readout-flops",
        "perturb-max-other",
        "sparsity-summary",
    ]
    view = {i: page.locator(f"#{i}").inner_text() for i in ids}
    for sel in ["#preset", "#activation", "#mode", "#panel", "#lang"]:
        view[sel] = page.locator(sel).input_value()
    view["hidden-cols"] = page.locator("#plot-hidden").get_attribute("data-cols")
    view["lang"] = page.locator("html").get_attribute("lang")
    return view


def test_copied_link_reproduces_the_exact_view(page, server_url, browser):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN")
    wait_rendered(page)
    page.locator("#d_ff").focus()
    page.keyboard.press("ArrowRight")
    page.locator("#activation").select_option("gelu")
    page.locator("#position").focus()
    page.keyboard.press("End")
    page.locator("#mode").select_option("train")
    page.locator("#seed").fill("7")
    page.locator("#seed").press("Enter")
    page.locator("#panel").select_option("sparsity")
    page.locator('#plot-hidden[data-cols="128"]').wait_for()
    # the debounced changes have all reached the URL, and their last request is answered
    page.wait_for_function(
        """(want) => { const q = new URLSearchParams(location.search);
          return Object.entries(want).every(([k, v]) => q.get(k) === v); }""",
        arg={"d_ff": "128", "activation": "gelu", "position": "5", "mode": "train",
             "seed": "7", "panel": "sparsity"},
    )  # fmt: skip
    settled(page)
    page.locator('#status[data-kind="ready"]').wait_for()
    page.locator("#copy-link").click()
    link = page.locator("#share-text").input_value()
    assert link == page.url
    query = parse_qs(urlsplit(link).query)
    assert query["d_ff"] == ["128"] and query["activation"] == ["gelu"]
    assert query["position"] == ["5"] and query["mode"] == ["train"] and query["seed"] == ["7"]
    assert query["panel"] == ["sparsity"] and query["lang"] == ["zh-CN"]
    before = _view(page)

    other = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    try:
        second = other.new_page()
        second.goto(link)
        wait_rendered(second)
        second.locator('#plot-hidden[data-cols="128"]').wait_for()
        layout_stable(second)
        assert _view(second) == before
        assert before["lang"] == "zh-CN"
        assert second.url == link
        out1 = page.locator("#plot-output").evaluate("el => JSON.stringify(el.data[0].z)")
        out2 = second.locator("#plot-output").evaluate("el => JSON.stringify(el.data[0].z)")
        assert out1 == out2
    finally:
        other.close()
    assert page.recorder.foreign() == []
    assert page.recorder.errors == []


def test_invalid_values_fall_back_with_a_visible_notice(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=abc&activation=nope&tokens=999&hide=seed,bogus&colour=red")
    wait_rendered(page)
    notice = page.locator("#notice")
    assert notice.is_visible()
    text = page.locator("#notice-text").inner_text()
    for bad in ["d_model=abc", "activation=nope", "tokens=999", "hide=seed,bogus", "colour=red"]:
        assert bad in text
    assert text.startswith(catalog("en")["notice.invalid"].split("{")[0])
    # Defaults were used, the valid part of hide= was kept, and the URL was cleaned.
    assert page.locator("#plot-hidden").get_attribute("data-cols") == "64"
    assert page.locator("#d_model-value").inner_text() == "16"
    assert page.locator("[data-control='seed']").is_hidden()
    assert "d_model" not in page.url and "hide=seed" in page.url
    page.locator("#notice-close").click()
    assert notice.is_hidden()
    assert page.recorder.errors == []


def test_server_refusal_is_shown_from_the_catalog(page, server_url):  # type: ignore[no-untyped-def]
    """A URL the server refuses (too many parameters) shows a catalog sentence + the detail."""
    for lang in ("en", "zh-CN"):
        page.goto(f"{server_url}/?{OVER_LIMIT}&lang={lang}")
        status = page.locator('#status[data-kind="error"]')
        status.wait_for()
        text = status.inner_text()
        messages = catalog(lang)
        assert text.startswith(messages["errors.refused"])
        sentence = messages["errors.type.value_error"]  # a sentence of its own: capitalised
        assert sentence[0].upper() + sentence[1:] in text
        # The detail in the page's language, without the server's setting names.
        assert "max_params" not in text and "setting" not in text
        assert fill(messages["errors.detail.params"], **OVER_LIMIT_PARAMS) in text
        # and at the plots, where the eye is
        assert page.locator("#flow .view-refused").inner_text() == text


EMBED_SIZES = [(640, 360), (960, 540), (1280, 720), (1920, 1080)]


@pytest.mark.parametrize(("width", "height"), EMBED_SIZES, ids=lambda v: str(v))
def test_embed_fits_16_9_without_scrolling(browser, server_url, width, height):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-US")
    try:
        page = context.new_page()
        for panel in ["", "sparsity", "perturb", "readout"]:
            page.goto(f"{server_url}/?embed=1&panel={panel}&activation=swiglu&hide=seed,input_seed")
            wait_answers(page)
            layout_stable(page)
            size = page.evaluate(
                "() => [document.scrollingElement.scrollHeight, innerHeight,"
                " document.scrollingElement.scrollWidth, innerWidth]"
            )
            assert size[0] <= size[1], (panel, size)
            assert size[2] <= size[3], (panel, size)
            assert page.locator(".toolbar").is_hidden() and page.locator(".formula").is_hidden()
            assert page.locator("[data-control='seed']").is_hidden()
            assert page.locator("[data-control='d_ff']").is_visible()
            shown = page.locator("main > section:visible")
            assert shown.count() == 1
            assert shown.first.get_attribute("id") == (panel or "flow")
            for plot in shown.first.locator(".js-plotly-plot").all():
                box = plot.bounding_box()
                assert box and box["height"] > 60 and box["y"] + box["height"] <= height + 1
        # A lesson inside a slide: the card joins the page and it still fits.
        page.goto(f"{server_url}/?embed=1&lesson=1&step=5")
        page.locator('#lesson[data-step="position"]').wait_for()
        wait_answers(page)
        layout_stable(page)
        size = page.evaluate("() => [document.scrollingElement.scrollHeight, innerHeight]")
        assert size[0] <= size[1], ("lesson", size)
        assert page.locator("#lesson-next").is_visible()
        if (width, height) == (1280, 720):
            page.goto(f"{server_url}/?embed=1&panel=perturb&position=2&scale=2")
            wait_answers(page)
            layout_stable(page)
            DOCS.mkdir(exist_ok=True)
            page.screenshot(path=str(DOCS / "screenshot-embed.png"))
    finally:
        context.close()


def test_embed_snippet_works_inside_an_iframe(page, server_url, browser):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_ff=128&panel=perturb&position=1")
    wait_rendered(page)
    page.locator("#copy-embed").click()
    snippet = page.locator("#share-text").input_value()
    assert snippet.startswith("<iframe ") and "embed=1" in snippet and "d_ff=128" in snippet
    src = re.search(r'src="([^"]+)"', snippet)
    assert src and src.group(1).startswith(server_url)

    # A slide: a page of another origin (a data: URL) that holds only the snippet.
    host = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        slide = host.new_page()
        errors: list[str] = []
        slide.on("pageerror", lambda e: errors.append(str(e)))
        slide.set_content(f"<!doctype html><title>slide</title><body>{snippet}</body>")
        frame = slide.frame_locator("iframe")
        frame.locator("#plot-delta .main-svg").first.wait_for(timeout=30_000)
        frame.locator("body.embed[data-perturb-seq]").wait_for(state="attached")
        assert frame.locator("#perturb").is_visible()
        assert frame.locator("#flow").is_hidden()
        assert frame.locator("#position").input_value() == "1"
        assert errors == []
    finally:
        host.close()


def test_language_follows_the_browser_then_switches(browser, server_url):  # type: ignore[no-untyped-def]
    """First visit picks zh-CN from the browser's language; the select switches every string."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6&position=2&scale=2")
        wait_answers(page)
        zh, en = catalog("zh-CN"), catalog("en")
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        assert page.locator("#lesson-start").inner_text() == zh["lesson.start"]
        title = page.locator("#plot-hidden").evaluate("el => el.layout.title.text")
        assert title == zh["flow.hidden"]
        layout_stable(page)
        DOCS.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS / "screenshot-zh.png"))
        page.locator("#lang").select_option("en")
        page.locator("html[lang='en']").wait_for(state="attached")
        assert "lang=en" in page.url
        assert page.locator("#copy-link").inner_text() == en["share.copy_link"]
        title = page.locator("#plot-hidden").evaluate("el => el.layout.title.text")
        assert title == en["flow.hidden"]
        layout_stable(page)
        page.screenshot(path=str(DOCS / "screenshot-normal.png"))
    finally:
        context.close()
