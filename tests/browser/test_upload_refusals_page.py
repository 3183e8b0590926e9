"""Upload refusals on the page, in both languages: a layer file holding NaN (a 500 before)
and one whose d_ff is 0 are refused under the file field with the tensor and the limit."""

from __future__ import annotations

import numpy as np
import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser

CASES = [
    ("en", "nan", "numbers must be finite"),
    ("zh-CN", "nan", "数值必须有限"),
    ("en", "empty", "runs d_ff from 1 to"),
    ("zh-CN", "empty", "可运行的 d_ff 为 1 到"),
]


@pytest.mark.parametrize(("lang", "case", "words"), CASES)
def test_an_unusable_layer_file_is_refused_in_the_page_language(  # type: ignore[no-untyped-def]
    page, server_url, tmp_path, lang, case, words
):
    w1 = np.full((4, 8), 0.5, np.float32)
    w2 = np.full((8, 4), 0.5, np.float32)
    if case == "nan":
        w1[1, 2] = np.nan
    else:
        w1, w2 = np.zeros((4, 0), np.float32), np.zeros((0, 4), np.float32)
    path = tmp_path / f"{case}.npz"
    np.savez(path, w1=w1, w2=w2)
    page.goto(f"{server_url}/?source=own&lang={lang}")
    wait_rendered(page)
    page.locator("#own-layer-file").set_input_files(str(path))
    error = page.locator("#own-error", has_text=words)
    error.wait_for(timeout=15_000)
    text = error.inner_text()
    assert ("w1[1, 2]" in text) if case == "nan" else ("16,384" in text or "16384" in text)
