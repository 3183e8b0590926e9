"""Accessibility: axe-core (npm, pinned in package.json) finds no serious or critical
violation in the normal, embed and lesson views, in both languages; every control is
reachable by Tab with a visible focus ring and a label; sliders work from the keyboard."""

from __future__ import annotations

import pytest

from tests.browser.classroom import AXE, wait_answers
from tests.browser.conftest import PageRecorder, layout_stable, show

pytestmark = pytest.mark.browser

VIEWS = [
    pytest.param("/?lang=en", id="normal-en"),
    pytest.param("/?lang=zh-CN&activation=swiglu", id="normal-zh"),
    pytest.param("/?embed=1&lang=en", id="embed-flow"),
    pytest.param("/?embed=1&panel=perturb&hide=seed", id="embed-perturb"),
    pytest.param("/?lesson=1&step=5&lang=en", id="lesson-en"),
    pytest.param("/?lesson=1&step=3&lang=zh-CN&big=1", id="lesson-zh-big"),
    pytest.param("/?embed=1&lesson=1&step=6&lang=zh-CN", id="embed-lesson-attention-zh"),
]


@pytest.fixture
def axe_page(browser, server_url):  # type: ignore[no-untyped-def]
    """A page whose context bypasses CSP, so that axe.min.js can be injected."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` at the repository root")
    context = browser.new_context(
        viewport={"width": 1280, "height": 720}, locale="en-US", bypass_csp=True
    )
    page = context.new_page()
    page.recorder = PageRecorder(server_url)
    page.on("request", lambda r: page.recorder.requests.append(r.url))
    yield page
    context.close()


@pytest.mark.parametrize("query", VIEWS)
def test_axe_finds_no_serious_or_critical_violation(axe_page, server_url, query):  # type: ignore[no-untyped-def]
    page = axe_page
    page.goto(f"{server_url}{query}")
    wait_answers(page)
    layout_stable(page)
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "async () => { const r = await axe.run(document, {resultTypes: ['violations']});"
        " return r.violations.map(v => ({id: v.id, impact: v.impact,"
        " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))})); }"
    )
    bad = [v for v in result if v["impact"] in ("serious", "critical")]
    assert bad == [], bad
    assert page.recorder.foreign() == []


def test_axe_would_report_a_critical_violation(axe_page, server_url):  # type: ignore[no-untyped-def]
    """The check can fail: a button without a name is reported as critical."""
    page = axe_page
    page.goto(f"{server_url}/")
    wait_answers(page)
    page.evaluate("() => document.querySelector('main').append(document.createElement('button'))")
    page.add_script_tag(path=str(AXE))
    impacts = page.evaluate(
        "async () => (await axe.run(document, {runOnly: ['button-name']}))"
        ".violations.map(v => v.impact)"
    )
    assert impacts == ["critical"]


CONTROLS = [
    "preset",
    "d_model",
    "d_ff",
    "tokens",
    "activation",
    "bias",
    "seed",
    "input_seed",
    "mode",
    "panel",
    "lang",
    "position",
    "scale",
    "lesson-start",
    "copy-link",
    "copy-embed",
]


def test_every_control_is_reachable_by_tab_with_visible_focus(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?mode=train")
    wait_answers(page)
    reached: dict[str, str] = {}
    page.locator("body").focus()
    for _ in range(200):  # Plotly's modebar buttons are tab stops too
        page.keyboard.press("Tab")
        info = page.evaluate(
            "() => { const e = document.activeElement; const s = getComputedStyle(e);"
            " return [e.id, s.outlineStyle, s.outlineWidth]; }"
        )
        if info[0]:
            reached[info[0]] = f"{info[1]} {info[2]}"
    for control in [*CONTROLS, "control-dropout"]:
        assert control in reached, f"#{control} is not reachable by Tab"
        assert reached[control].startswith("solid 3px"), (control, reached[control])
    # Every form control has a label a screen reader reads.
    unlabeled = page.evaluate(
        "() => [...document.querySelectorAll('input, select, textarea')]"
        ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))"
        ".map(e => e.id)"
    )
    assert unlabeled == []


def test_sliders_are_driven_by_the_keyboard_and_signs_are_shown(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=8&tokens=6")
    wait_answers(page)
    page.locator("#tokens").focus()
    page.keyboard.press("ArrowRight")
    page.locator('#plot-hidden[data-rows="7"]').wait_for()
    page.locator("#d_model").focus()
    page.keyboard.press("ArrowLeft")
    page.locator('#plot-input[data-cols="8"]').wait_for()
    page.locator("#scale").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#scale-value").inner_text() == "1.1"
    assert "tokens=7" in page.url and "d_model=8" in page.url and "scale=1.1" in page.url
    # Heatmaps print their numbers where they fit their cells (never numbers that run
    # together): 8 features leave the input's cells too narrow, 2 leave room for every one,
    # and every non-zero one carries its sign.
    page.locator('#plot-input[data-value-font="0"]').wait_for(state="attached")
    page.locator("#d_model").focus()
    page.keyboard.press("ArrowLeft")
    page.locator('#plot-input[data-cols="4"]').wait_for()
    page.keyboard.press("ArrowLeft")
    page.locator('#plot-input[data-cols="2"]').wait_for(state="attached")
    show(page, "#plot-input")  # #scale's focus scrolled the flow away: it draws when seen
    page.locator("#plot-input .heatmap-label text").nth(7 * 2 - 1).wait_for(state="attached")
    texts = page.locator("#plot-input .heatmap-label text").all_text_contents()
    numbers = [t for t in texts if t and t != "0"]
    assert len(numbers) == 7 * 2
    assert all(t[0] in "+-−" for t in numbers), numbers[:5]
    page.locator("#export-menu summary").focus()
    page.keyboard.press("Enter")
    assert page.locator("#export-json").is_visible()
    assert page.recorder.foreign() == []
