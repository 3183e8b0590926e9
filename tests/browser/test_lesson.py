"""The guided lesson runs start to end by keyboard, in both languages, with the step in the URL."""

from __future__ import annotations

import re

import pytest

from tests.browser.classroom import DOCS, catalog, fill, wait_answers

pytestmark = pytest.mark.browser
STEP_IDS = [
    "what",
    "shapes",
    "up",
    "activation",
    "position",
    "shared",
    "dropout",
    "residual",
    "gelu",
    "swiglu",
]


def _step_in_url(page, n: int) -> None:  # type: ignore[no-untyped-def]
    """The step is in the URL (step 1 is the default, so it is left out)."""
    assert re.search(r"[?&]lesson=1(&|$)", page.url)
    assert re.search(rf"[?&]step={n}(&|$)", page.url) or (n == 1 and "step=" not in page.url)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_lesson_runs_start_to_end_by_keyboard(page, server_url, lang):  # type: ignore[no-untyped-def]
    messages = catalog(lang)
    page.goto(f"{server_url}/?lang={lang}")
    wait_answers(page)
    start = page.locator("#lesson-start")
    assert start.inner_text() == messages["lesson.start"]
    start.focus()
    page.keyboard.press("Enter")
    card = page.locator("#lesson")
    card.wait_for()
    total = len(STEP_IDS)
    for n, step_id in enumerate(STEP_IDS, start=1):
        page.locator(f'#lesson[data-step="{step_id}"]').wait_for(timeout=10_000)
        assert page.locator("#lesson-counter").inner_text() == fill(
            messages["lesson.counter"], n=n, total=total
        )
        assert page.locator("#lesson-title").inner_text() == messages[f"lesson.{step_id}.title"]
        assert page.locator("#lesson-text").inner_text() == messages[f"lesson.{step_id}.text"]
        _step_in_url(page, n)
        assert page.locator(".lesson-highlight").count() >= 1
        wait_answers(page)
        if step_id == "shapes":
            assert page.locator("#preset").input_value() == "tiny"
            page.locator('#plot-hidden[data-cols="4"]').wait_for()
        if step_id == "up":
            page.locator('#plot-hidden[data-cols="2048"]').wait_for(timeout=15_000)
            assert page.locator("#d_model-value").inner_text() == "512"
        if step_id == "position":
            page.locator("#perturb-max-other[data-value='0']").wait_for()
            assert page.locator("#position").input_value() == "2"
            if lang == "en":  # the README's picture of the lesson
                page.wait_for_timeout(400)
                DOCS.mkdir(exist_ok=True)
                page.screenshot(path=str(DOCS / "screenshot-lesson.png"))
        if step_id == "dropout":
            assert page.locator("#mode").input_value() == "train"
        if step_id == "swiglu":
            page.locator("#stage-up").wait_for()  # the gated flow has a fifth stage
            # `f` makes the text larger for the back row, and again back.
            page.keyboard.press("f")
            page.locator("body.big").wait_for(state="attached")
            assert "big=1" in page.url
            page.keyboard.press("f")
            page.locator("body:not(.big)").wait_for(state="attached")
        if n < total:
            page.keyboard.press("ArrowRight")
    # ← goes back one step; Esc leaves the lesson and drops it from the URL.
    page.keyboard.press("ArrowLeft")
    page.locator('#lesson[data-step="gelu"]').wait_for()
    assert "step=9" in page.url
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")
    assert "lesson" not in page.url and "step=" not in page.url
    assert page.locator(".lesson-highlight").count() == 0
    assert page.locator("html").get_attribute("lang") == lang
    assert page.recorder.foreign() == []
    assert page.recorder.errors == []


def test_lesson_link_opens_on_its_step(page, server_url):  # type: ignore[no-untyped-def]
    """A link to step 5 shows step 5's settings; explicit URL values win over the step's."""
    page.goto(f"{server_url}/?lesson=1&step=5&scale=3")
    page.locator('#lesson[data-step="position"]').wait_for()
    wait_answers(page)
    assert page.locator("#position").input_value() == "2"
    assert page.locator("#scale-value").inner_text() == "3"
    assert page.locator("#perturb.lesson-highlight").count() == 1
    # Sliders keep their arrow keys while focused: the lesson does not step.
    page.locator("#tokens").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#tokens-value").inner_text() == "7"
    assert page.locator('#lesson[data-step="position"]').count() == 1
    assert page.recorder.errors == []
