"""Every refusal the page's controls can cause reads in the page's language.

In zh-CN the page sends what a student can do from its controls: a shape over the parameter
limit, a typed text over the character limit or giving too many tokens, and a weights file
that is not an FFN layer or not readable. The server keeps its English text for API users
and adds the refusal's `code` and `params`; the page must show the catalog's Chinese
sentence with the server's values, and no English of the server's message.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from tests.browser.classroom import OVER_LIMIT, OVER_LIMIT_PARAMS, catalog, fill
from tests.browser.conftest import wait_rendered
from tests.i18n.test_catalogs import stray_spaces

pytestmark = pytest.mark.browser
CJK = re.compile(r"[\u4e00-\u9fff]")
# words of the server's English messages that must not reach a Chinese page
ENGLISH = re.compile(r"\b(limit|needs|characters|tokens \(with|not a readable|found|expected)\b")
TIMEOUT = 30_000


def _say(zh: dict[str, str], code: str, **params: Any) -> str:
    return fill(zh[f"errors.code.{code}"], **params)


def _page_errors(page: Any) -> list[str]:
    """Console errors other than the browser's own line for each refused (422) request."""
    return [e for e in page.recorder.errors if "status of 422" not in e]


def _chinese(text: str) -> None:
    assert CJK.search(text), text
    assert not ENGLISH.search(text), text
    assert stray_spaces(text) == [], text


def test_parameter_limit_refusal_is_chinese(page, server_url):  # type: ignore[no-untyped-def]
    zh = catalog("zh-CN")
    page.goto(f"{server_url}/?lang=zh-CN&{OVER_LIMIT}")
    page.locator('#status[data-kind="error"]').wait_for(timeout=TIMEOUT)
    text = page.locator("#flow .view-refused").inner_text()
    _chinese(text)
    assert _say(zh, "too_many_params", **OVER_LIMIT_PARAMS) in text


def test_typed_text_refusals_are_chinese(page, server_url):  # type: ignore[no-untyped-def]
    zh = catalog("zh-CN")
    page.goto(f"{server_url}/?lang=zh-CN&source=text")
    wait_rendered(page, timeout=60_000)
    limit = page.evaluate(
        "() => JSON.parse(document.getElementById('boot').textContent).limits.max_text_chars"
    )
    error = page.locator("#text-error")
    # over the character limit
    page.locator("#text-input").fill("a " * (limit // 2 + 10))
    error.filter(has_text=CJK).wait_for(timeout=TIMEOUT)
    text = error.inner_text()
    _chinese(text)
    assert _say(zh, "text_too_long", count=2 * (limit // 2 + 10), limit=limit) in text
    # within the characters, too many tokens (one per Chinese character)
    page.locator("#text-input").fill("猫" * 100)
    error.filter(has_text="[CLS]").wait_for(timeout=TIMEOUT)
    text = error.inner_text()
    _chinese(text)
    assert _say(zh, "text_tokens", count=102, limit=64) in text
    assert _page_errors(page) == []


def test_weights_file_refusals_are_chinese(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    zh = catalog("zh-CN")
    other = tmp_path / "other.npz"
    np.savez(other, encoder=np.zeros((2, 2), np.float32))
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip file at all")
    page.goto(f"{server_url}/?lang=zh-CN&source=own")
    wait_rendered(page)
    error = page.locator("#own-error")
    page.locator("#own-layer-file").set_input_files(str(other))
    error.filter(has_text="encoder").wait_for(timeout=TIMEOUT)
    text = error.inner_text()
    _chinese(re.sub(r"FFN Lab's .*", "", text))  # the expected tensor names are API names
    assert zh["errors.code.file_no_layer"].split("{")[0] in text
    page.locator("#own-layer-file").set_input_files(str(broken))
    error.filter(has_text="broken.npz").wait_for(timeout=TIMEOUT)
    text = error.inner_text()
    _chinese(text)
    assert _say(zh, "file_unreadable", name="broken.npz", kind="npz") in text
    assert _page_errors(page) == []
