"""No clipped or overlapping text in any plot, at projector sizes.

For every preset (and SwiGLU picked from the menu, typed text, larger text), at 1280x720 and
1920x1080, in en and zh-CN, and for the embed view at 640x360 and 1280x720, every text Plotly
draws (titles, axis titles, ticks, colour-bar ticks, legends, annotations) must lie inside its
plot's container and overlap no other text of that plot; no two plots may overlap, no flow
arrow may lie under a plot, no plot may reach past the window's right edge. On phones and
tablets (360x640, 390x844 at device scale 3, 768x1024, touch) the normal page must also not
scroll sideways, show one plot per row, draw no text under 12 px, give every control 44 x 44
px to touch inside the window, and draw each heatmap cell at least a pixel wide. The count per
case is printed (run with -s); zero is the target and the test fails on more.

Screenshots go to test-artifacts/layout/ (docs/layout/ with FFN_LAB_UPDATE_SCREENSHOTS=1).
The page is re-laid out in place between sizes and languages (window resize, language
menu), so the re-layout on those changes is measured too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS, ROOT, settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROBE = (Path(__file__).parent / "layout_probe.js").read_text(encoding="utf-8")
SHOTS = (
    ROOT / "docs" / "layout"
    if os.environ.get("FFN_LAB_UPDATE_SCREENSHOTS") == "1"
    else ARTIFACTS / "layout"
)
SIZES = [(1280, 720), (1920, 1080)]
EMBED_SIZES = [(640, 360), (1280, 720)]
LANGS = ["en", "zh-CN"]
TEXT = "Transformers apply the feedforward network independently at every position"

# case name -> (query string, what to do after the first answer)
CASES: dict[str, tuple[str, str | None]] = {
    "default": ("", None),
    "tiny": ("preset=tiny", None),
    "transformer-base": ("preset=transformer-base", None),
    "bert-base": ("preset=bert-base", None),
    "gpt2-small": ("preset=gpt2-small", None),
    "llama-7b": ("preset=llama-7b", None),
    "swiglu-menu": ("", "swiglu"),
    "typed-text": ("source=text&text=" + TEXT.replace(" ", "+"), None),
    "larger-text": ("big=1", None),
}
EMBED_CASES: dict[str, str] = {
    "embed": "embed=1",
    "embed-swiglu": "embed=1&activation=swiglu",
    "embed-perturb": "embed=1&panel=perturb",
    "embed-llama": "embed=1&preset=llama-7b",
    # the hand-sized layer: its weights row shares the frame with the flow
    "embed-tiny": "embed=1&preset=tiny",
}
# Text the embed shortened or hid to fit ("nothing cut"): a plot title or
# axis title Plotly draws ending in "…" (fit.js shortened it), an HTML text of the frame
# (heading, caption, control, status) wider than its box (CSS ellipsis / overflow), a
# control strip that scrolls sideways, or a control past the frame's right or bottom edge.
CUT = """() => {
  const out = [];
  const seen = (el) => el.offsetParent !== null && el.getClientRects().length > 0;
  for (const el of document.querySelectorAll('.js-plotly-plot .gtitle, .js-plotly-plot .xtitle,'
      + ' .js-plotly-plot .ytitle, .js-plotly-plot .cbtitle')) {
    if (seen(el.closest('.js-plotly-plot')) && el.textContent.trim().endsWith('\u2026')) {
      out.push({ kind: 'shortened', text: el.textContent.trim() });
    }
  }
  const html = 'main > section:not([hidden]) :is(h2, h3, figcaption, label, p, dt, dd),'
    + ' .controls .field, .controls label, .controls .status';
  for (const el of document.querySelectorAll(html)) {
    if (!seen(el) || el.clientWidth <= 1 || el.closest('.js-plotly-plot')) continue;
    if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 2) {
      out.push({ kind: 'clipped', text: el.textContent.trim().slice(0, 60) });
    }
  }
  const strip = document.querySelector('.controls');
  if (strip.scrollWidth > strip.clientWidth + 1) out.push({ kind: 'strip-scrolls', text: '' });
  const w = document.documentElement.clientWidth, h = window.innerHeight;
  for (const el of strip.querySelectorAll('.field')) {
    if (!seen(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > w + 1 || r.bottom > h + 1) {
      out.push({ kind: 'control-outside', text: el.dataset.control });
    }
  }
  return out;
}"""
PANEL_TIMEOUT = 120_000  # ms: the teaching panels at LLaMA-7B on two shared cores


def _settle(page: Any) -> None:
    """Two animation frames: deferred draws (IntersectionObserver) and resizes have run."""
    page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"
    )


ON_DEMAND = {"train"}
"""Panels that compute only when the student asks (Train): measured in their idle state."""


def _visit_sections(page: Any) -> list[str]:
    """Scroll every visible panel into view and wait for it to draw; returns panels that
    neither drew nor said why (an error, 'unavailable', or the over-the-limit notice)."""
    missing = []
    ids = page.evaluate(
        "() => [...document.querySelectorAll('main > section')]"
        ".filter(s => !s.hidden && s.offsetParent !== null)"
        ".map(s => [s.id, s.classList.contains('teaching')])"
    )
    for sid, teaching in ids:
        page.locator(f"#{sid}").scroll_into_view_if_needed()
        if teaching and sid not in ON_DEMAND:
            try:
                page.locator(
                    f"#{sid}[data-rendered], #{sid}[data-error], #{sid}[data-unavailable],"
                    f" #{sid}[data-over]"
                ).wait_for(state="attached", timeout=PANEL_TIMEOUT)
            except Exception:  # reported as a missing panel, not a crash
                missing.append(sid)
        _settle(page)
        # a section taller than the window: every plot in it is seen (a plot draws, and
        # re-draws at a new size, when it scrolls into view), as a reader scrolling sees it
        plots = page.locator(f"#{sid} .js-plotly-plot:visible")
        for i in range(plots.count()):
            plots.nth(i).scroll_into_view_if_needed()
            _settle(page)
    page.evaluate("() => window.scrollTo(0, 0)")
    _settle(page)
    return missing


UNSIZED = (
    "() => [...document.querySelectorAll('.js-plotly-plot')]"
    ".filter(el => el.offsetParent !== null && el._fullLayout)"
    ".filter(el => Math.abs(el._fullLayout.width - el.clientWidth) > 2"
    " || Math.abs(el._fullLayout.height - el.clientHeight) > 2).map(el => el.id)"
)


def _wait_sized(page: Any) -> list[str]:
    """Wait until every visible plot has been laid out at its container's size; returns
    the plots that were not (each a problem of the case)."""
    try:
        page.wait_for_function(f"() => ({UNSIZED})().length === 0", timeout=15_000)
        return []
    except Exception:  # reported as a problem of the case
        return list(page.evaluate(UNSIZED))


def _measure(page: Any, case: str, phone: bool = False) -> tuple[int, dict[str, Any]]:
    unsized = _wait_sized(page)
    found = page.evaluate(PROBE, {"phone": phone})
    problems = found["problems"]
    problems += [{"kind": "not-resized", "plot": plot, "text": ""} for plot in unsized]
    kinds: dict[str, int] = {}
    for p in problems:
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + 1
    print(f"layout {case}: {len(problems)} problems {kinds} in {found['plots']} plots", flush=True)
    for p in problems[:6]:
        print(f"    {p}", flush=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{case}.png"))
    return len(problems), {"plots": found["plots"], "problems": problems}


def _switch_language(page: Any, lang: str) -> None:
    if page.evaluate("() => document.documentElement.lang") == lang:
        return
    page.locator("#lang").select_option(lang)
    page.wait_for_function(f"() => document.documentElement.lang === {json.dumps(lang)}")
    _settle(page)


def _wait_first(page: Any) -> None:
    # the forward answer is in and the views in sight are drawn (the others are requested
    # when scrolled into view; an embed of one panel may draw no flow plot at all)
    page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=PANEL_TIMEOUT)
    settled(page, PANEL_TIMEOUT)


def _report(name: str, results: dict[str, Any]) -> None:
    out = ARTIFACTS / "layout"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(results, indent=1, ensure_ascii=False))


@pytest.mark.timeout(900)  # four sizes x languages of every panel, at LLaMA-7B on 2 cores
@pytest.mark.parametrize("name", list(CASES))
def test_no_clipped_or_overlapping_text(browser, server_url, name):  # type: ignore[no-untyped-def]
    query, activation = CASES[name]
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    results: dict[str, Any] = {}
    try:
        page.goto(f"{server_url}/?lang=en&{query}")
        _wait_first(page)
        if activation:
            seq = page.evaluate("() => document.body.dataset.forwardSeq")
            page.locator("#activation").select_option(activation)
            page.wait_for_function(f"() => document.body.dataset.forwardSeq !== {json.dumps(seq)}")
        if name == "typed-text":
            page.locator("#plot-hidden[data-rows]").wait_for(state="attached")
        # en 1280 -> en 1920 -> zh 1920 -> zh 1280: every change re-lays the page out in place
        order = [(LANGS[0], SIZES[0]), (LANGS[0], SIZES[1])]
        order += [(LANGS[1], SIZES[1]), (LANGS[1], SIZES[0])]
        for lang, (w, h) in order:
            _switch_language(page, lang)
            page.set_viewport_size({"width": w, "height": h})
            missing = _visit_sections(page)
            case = f"{name}_{w}x{h}_{lang}"
            _n, detail = _measure(page, case)
            detail["missing_panels"] = missing
            results[case] = detail
    finally:
        _report(name, results)
        context.close()
    counts = {case: len(r["problems"]) for case, r in results.items()}
    assert errors == []
    assert all(n == 0 for n in counts.values()), counts
    missing = {case: r["missing_panels"] for case, r in results.items() if r["missing_panels"]}
    assert missing == {}, f"panels that neither drew nor said why: {missing}"


@pytest.mark.parametrize("name", list(EMBED_CASES))
def test_embed_has_no_clipped_or_overlapping_text(browser, server_url, name):  # type: ignore[no-untyped-def]
    results: dict[str, Any] = {}
    for lang in LANGS:
        for w, h in EMBED_SIZES:
            context = browser.new_context(viewport={"width": w, "height": h}, locale="en-US")
            page = context.new_page()
            try:
                page.goto(f"{server_url}/?lang={lang}&{EMBED_CASES[name]}")
                _wait_first(page)
                page.locator("main > section:visible .js-plotly-plot .main-svg").first.wait_for()
                _settle(page)
                case = f"{name}_{w}x{h}_{lang}"
                _n, results[case] = _measure(page, case)
                cut = page.evaluate(CUT)
                print(f"cut {case}: {len(cut)} {cut[:6]}", flush=True)
                results[case]["problems"] += cut
            finally:
                context.close()
    _report(name, results)
    counts = {case: len(r["problems"]) for case, r in results.items()}
    assert all(n == 0 for n in counts.values()), counts


# Phones and tablets: (width, height, device scale factor); each a touch screen.
PHONE_SIZES = [(360, 640, 1), (390, 844, 3), (768, 1024, 1)]
PHONE_CASES: dict[str, str] = {
    "default": "",
    "tiny": "preset=tiny",
    "llama-7b": "preset=llama-7b",
    "swiglu": "activation=swiglu",
    "typed-text": "source=text&text=" + TEXT.replace(" ", "+"),
}


def _open_menu_problems(page: Any) -> list[dict[str, Any]]:
    """The export menu opened: its items are touch targets inside the window too."""
    menu = page.locator("#export-menu")
    menu.locator("summary").scroll_into_view_if_needed()
    menu.locator("summary").tap()
    page.wait_for_function("() => document.getElementById('export-menu').open")
    _settle(page)
    found = page.evaluate(PROBE, {"phone": True})
    menu.locator("summary").tap()
    page.wait_for_function("() => !document.getElementById('export-menu').open")
    return [p for p in found["problems"] if p["kind"] in ("target", "scroll")]


@pytest.mark.timeout(900)  # three sizes x two languages of every panel
@pytest.mark.parametrize("name", list(PHONE_CASES))
def test_phone_and_tablet_layout(browser, server_url, name):  # type: ignore[no-untyped-def]
    """The normal page on phones and tablets (touch), en and zh-CN: besides the projector
    sizes' checks, no sideways scrolling, one plot per row, no text under 12 px, every
    control at least 44 x 44 px and inside the window, every heatmap cell at least a pixel,
    the export menu inside the window, and the language switch reachable."""
    results: dict[str, Any] = {}
    errors: list[str] = []
    for w, h, scale in PHONE_SIZES:
        context = browser.new_context(
            viewport={"width": w, "height": h},
            device_scale_factor=scale,
            is_mobile=True,
            has_touch=True,
            locale="en-US",
        )
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(f"{server_url}/?lang=en&{PHONE_CASES[name]}")
            _wait_first(page)
            if name == "typed-text":
                page.locator("#plot-hidden[data-rows]").wait_for(state="attached")
            for lang in LANGS:
                # the language switch is reachable: scrolled to, inside the window, usable
                page.locator("#lang").scroll_into_view_if_needed()
                _switch_language(page, lang)
                missing = _visit_sections(page)
                case = f"phone-{name}_{w}x{h}_{lang}"
                _n, detail = _measure(page, case, phone=True)
                detail["problems"] += _open_menu_problems(page)
                detail["missing_panels"] = missing
                results[case] = detail
        finally:
            context.close()
    _report(f"phone-{name}", results)
    counts = {case: len(r["problems"]) for case, r in results.items()}
    assert errors == []
    assert all(n == 0 for n in counts.values()), counts
    missing = {case: r["missing_panels"] for case, r in results.items() if r["missing_panels"]}
    assert missing == {}, f"panels that neither drew nor said why: {missing}"
