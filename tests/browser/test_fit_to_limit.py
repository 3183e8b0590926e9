"""Picking SwiGLU at a width only ReLU fits: d_ff is lowered and the page says so.

At d_model 4096, d_ff 16384 (ReLU: 134M parameters, within the 150M limit; SwiGLU's three
matrices: 201M), picking SwiGLU lowers d_ff to the widest step that fits (11008), a note
under d_ff says why, and the gated layer is computed: no refusal, no flow left dimmed on the
ReLU picture. A link that asks for the refused combination still gets the refusal, in
sentences (not "...this input. this combination...").
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser


def test_swiglu_from_the_menu_lowers_d_ff_to_fit_and_says_so(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&d_model=4096&d_ff=16384&tokens=2")
    wait_rendered(page)
    seq = int(page.evaluate("() => document.body.dataset.forwardSeq"))
    page.select_option("#activation", "swiglu")
    wait_rendered(page, forward_seq=seq + 1, timeout=120_000)
    note = page.locator("#d_ff-fitted")
    assert note.is_visible()
    text = note.inner_text()
    assert "d_ff lowered from 16384 to 11008" in text and "150,000,000" in text, text
    assert page.locator("#d_ff-value").inner_text() == "11008"
    assert "d_ff=11008" in page.url and "activation=swiglu" in page.url
    assert page.locator("#plot-up").is_visible()  # the gated flow was computed and drawn
    assert page.evaluate("() => document.body.dataset.refused") is None
    # another width: the note has said its piece
    page.locator("#d_ff").focus()
    page.keyboard.press("ArrowLeft")
    wait_rendered(page, forward_seq=seq + 2, timeout=120_000)
    assert not note.is_visible()
    assert page.recorder.errors == []


def test_a_link_to_the_refused_combination_reads_as_sentences(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&d_model=4096&d_ff=16384&activation=swiglu")
    page.locator("body[data-refused]").wait_for(state="attached", timeout=60_000)
    status = page.locator("#status").inner_text()
    assert status.startswith("The server refused this input. This combination is not"), status
    box = page.locator("#flow .view-refused").inner_text()
    assert "201,363,456 parameters" in box
