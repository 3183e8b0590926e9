"""Uploaded layer files in a real browser: a whole 384 -> 1536 layer uploaded as a file (more
numbers than JSON bodies may carry) drives the flow; a file with no FFN names is refused."""

from __future__ import annotations

import numpy as np
import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser


def test_upload_a_layer_file(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    d_model, d_ff = 384, 1536  # 1.18 M weights: over max_submitted_weights for JSON
    path = tmp_path / "layer.npz"
    np.savez(
        path,
        w1=(rng.standard_normal((d_model, d_ff)) * 0.05).astype(np.float32),
        b1=np.zeros(d_ff, np.float32),
        w2=(rng.standard_normal((d_ff, d_model)) * 0.05).astype(np.float32),
        b2=np.zeros(d_model, np.float32),
    )
    bad = tmp_path / "other.npz"
    np.savez(bad, encoder=np.zeros((2, 2), np.float32))
    page.goto(f"{server_url}/?source=own")
    wait_rendered(page)
    page.locator("#own-layer-file").set_input_files(str(bad))
    page.locator("#own-error", has_text="no FFN layer found").wait_for(timeout=15_000)
    page.locator("#own-layer-file").set_input_files(str(path))
    page.locator('#own-layer-status[data-d-ff="1536"]').wait_for(timeout=30_000)
    page.locator('#plot-hidden[data-cols="1536"]').wait_for(timeout=30_000)
    page.locator('#plot-input[data-cols="384"]').wait_for(timeout=30_000)
    assert page.locator("#d_ff").is_disabled()
