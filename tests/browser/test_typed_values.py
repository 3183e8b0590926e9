"""A seed typed into the page that cannot be used is refused where it was typed.

A trial typed -1, 3.5, 1e20 and "abc" into the seed fields: the field snapped back to its
old value without a word. Now the field is marked aria-invalid, a message under it says
what is allowed and which seed stays in use, no request is sent for the bad value, and a
good value clears the message and is used.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import show, wait_rendered

pytestmark = pytest.mark.browser


def _type(page: Any, selector: str, text: str) -> None:
    field = page.locator(selector)
    field.fill(text)
    field.press("Enter")  # a number field commits (its change event) on Enter


@pytest.mark.parametrize("bad", ["-1", "3.5", "1e20", "99999999999999999999", ""])
def test_a_bad_weight_seed_is_refused_under_the_field(page, server_url, bad):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&seed=7")
    wait_rendered(page)
    seq = page.evaluate("() => document.body.dataset.forwardSeq")
    requests = len(page.recorder.requests)
    _type(page, "#seed", bad)
    message = page.locator("#seed-typed-error")
    message.wait_for()
    text = message.inner_text()
    assert "0 to 2147483647" in text and "stays 7" in text, text
    assert page.locator("#seed").get_attribute("aria-invalid") == "true"
    assert page.locator("#seed").input_value() == "7"  # the seed in use, put back
    assert page.locator("#seed").get_attribute("aria-describedby") == "seed-typed-error"
    # the message is under its field, inside the controls, where the eye is
    field = page.locator('.field[data-control="seed"]').bounding_box()
    box = message.bounding_box()
    assert field and box and field["y"] <= box["y"] <= field["y"] + field["height"]
    assert page.evaluate("() => document.body.dataset.forwardSeq") == seq
    assert not [u for u in page.recorder.requests[requests:] if "/api/" in u]
    # a good value clears the message and is used
    _type(page, "#seed", "3")
    wait_rendered(page, forward_seq=int(seq) + 1)
    assert page.locator("#seed-typed-error").count() == 0
    assert page.locator("#seed").get_attribute("aria-invalid") is None
    assert "seed=3" in page.url
    assert page.recorder.errors == []


def test_a_bad_input_seed_is_refused_in_chinese(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN")
    wait_rendered(page)
    _type(page, "#input_seed", "-5")
    text = page.locator("#input_seed-typed-error").inner_text()
    assert "“-5” 不是有效的种子" in text and "种子仍为 0" in text, text


def test_a_bad_dropout_seed_is_refused_under_the_panels_controls(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&panel=dropout&mode=train")
    wait_rendered(page)
    show(page, "#dropout")
    _type(page, "#dropout-seed", "-1")
    text = page.locator("#dropout-seed-typed-error").inner_text()
    assert "0 to 2147483646" in text and "stays 0" in text, text
    assert page.locator("#dropout-seed").input_value() == "0"
    assert page.locator("#dropout-seed").get_attribute("aria-invalid") == "true"
