"""The lesson's keys work wherever the focus is: a slider or a menu with
the focus does not swallow ←/→, PageUp/PageDown (a clicker), f or Esc, and a step change
releases the focus; without the lesson the sliders keep their arrow keys. Larger text keeps
the highlighted view in view above the lesson card. Esc pressed while a step's answer is
still being drawn gives the page back with its own settings on the controls."""

from __future__ import annotations

import pytest

from tests.browser.classroom import wait_answers

pytestmark = pytest.mark.browser
TIMEOUT = 30_000


def _step(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator("body").get_attribute("data-lesson-step") or ""


def _wait_step(page, n: int) -> None:  # type: ignore[no-untyped-def]
    page.locator(f"body[data-lesson-step='{n}']").wait_for(state="attached", timeout=TIMEOUT)


def test_lesson_keys_work_with_a_slider_or_menu_focused(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lesson=1&step=2")
    wait_answers(page)
    # A slider has the focus: → steps the lesson and the slider does not move.
    page.locator("#d_ff").focus()
    page.keyboard.press("ArrowRight")
    _wait_step(page, 3)
    page.locator("#d_ff-value:text-is('2048')").wait_for()  # the step's d_ff, not one notch on
    assert page.evaluate("() => document.activeElement === document.body")  # focus released
    page.locator("#seed").focus()  # a text field keeps its arrows ...
    page.keyboard.press("ArrowRight")
    assert _step(page) == "3"
    page.keyboard.press("PageDown")  # ... but a clicker's PageDown steps
    _wait_step(page, 4)
    # A menu has the focus: PageUp / ← step back, its value stays.
    page.locator("#activation").focus()
    activation = page.locator("#activation").input_value()
    page.keyboard.press("PageUp")
    _wait_step(page, 3)
    page.locator("#activation").focus()
    page.keyboard.press("ArrowLeft")
    _wait_step(page, 2)
    assert page.locator("#activation").input_value() == activation
    # f from a slider: larger text; Esc from a menu: leaves the lesson.
    page.locator("#tokens").focus()
    page.keyboard.press("f")
    page.locator("body.big").wait_for(state="attached")
    page.locator("#mode").focus()
    page.keyboard.press("Escape")
    page.locator("#lesson").wait_for(state="hidden")
    # the address bar is written once the restored settings' answer is drawn (main.js)
    page.wait_for_function("() => !location.search.includes('lesson')", timeout=TIMEOUT)
    # Without the lesson the slider keeps its arrow keys.
    page.goto(f"{server_url}/?tokens=3")
    wait_answers(page)
    tokens = int(page.locator("#tokens").input_value())
    page.locator("#tokens").focus()
    page.keyboard.press("ArrowRight")
    assert int(page.locator("#tokens").input_value()) == tokens + 1
    assert page.recorder.errors == []


@pytest.mark.parametrize(
    ("step", "first"), [(5, "#perturb"), (9, "#dropout"), (13, "#variants-table")]
)
def test_larger_text_keeps_the_highlighted_view_above_the_card(page, server_url, step, first):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lesson=1&step={step}")
    wait_answers(page)
    page.keyboard.press("f")
    page.locator("body[data-lesson-big='true']").wait_for(state="attached", timeout=TIMEOUT)
    wait_answers(page)
    assert page.locator(f"{first}.lesson-highlight").count() == 1
    box = page.locator(first).bounding_box()
    card = page.locator("#lesson").bounding_box()
    assert box and card
    assert 0 <= box["y"] < card["y"], (box, card)  # its top in view, above the card
    page.keyboard.press("f")
    page.locator("body[data-lesson-big='false']").wait_for(state="attached", timeout=TIMEOUT)
    box = page.locator(first).bounding_box()
    assert box and 0 <= box["y"] < card["y"]


def _asks_d_model(request, d_model: int) -> bool:  # type: ignore[no-untyped-def]
    return bool((request.post_data_json or {}).get("d_model") == d_model)


def test_leaving_while_the_first_step_is_drawn_shows_the_page_settings(page, server_url):  # type: ignore[no-untyped-def]
    # Escape pressed while the first step's answer (d_model 8) is being drawn, the page's own
    # answer (d_model 32) held back: the older answer must not put its shape on the controls.
    page.goto(f"{server_url}/?d_model=32&d_ff=128")
    wait_answers(page)
    held = []

    def hold_page_answer(route):  # type: ignore[no-untyped-def]
        if _asks_d_model(route.request, 32):
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/forward", hold_page_answer)
    page.evaluate(
        """() => {
          const gd = document.getElementById("plot-input");
          const leave = () => {
            if (gd.data?.[0]?.z?.[0]?.length !== 8) return;
            gd.removeListener("plotly_afterplot", leave);
            document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
          };
          gd.on("plotly_afterplot", leave);
        }"""
    )
    drawn = page.evaluate("() => document.body.dataset.forwardSeq")
    with page.expect_request(lambda r: "/api/forward" in r.url and _asks_d_model(r, 32)):
        page.locator("#lesson-start").click()
    page.locator("#lesson").wait_for(state="hidden")
    page.wait_for_function("(seq) => document.body.dataset.forwardSeq !== seq", arg=drawn)
    assert page.locator("#d_model-value").inner_text() == "32"
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_url(lambda url: "d_model=32" in url and "lesson" not in url, timeout=15_000)
    wait_answers(page)
    assert page.locator("#d_model-value").inner_text() == "32"
    assert page.evaluate("() => document.getElementById('plot-input').data[0].z[0].length") == 32
    assert page.recorder.errors == []
