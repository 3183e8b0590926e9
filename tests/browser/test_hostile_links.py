"""Hostile links are parsed or refused at once (static/js/state.js, parse.js): a fragment
whose shapes declare 10^8 rows of nothing, or a shape with a zero, is refused with the
page's notice, and the page stays responsive (a slider change right after is drawn)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser

LINKS = [
    ("#w=w1:100000000x0,w2:0x0.", "w"),
    ("#w=w1:0x100000000,w2:100000000x0.AAAAAA", "w"),
    ("#x=100000000x0.", "x"),
    ("#w=" + ",".join(["w1:99999999x0"] * 1000) + ".", "w"),
]


@pytest.mark.parametrize(
    ("fragment", "name"), LINKS, ids=["w-zero-cols", "w-zero-rows", "x", "many"]
)
def test_a_hostile_fragment_is_refused_and_the_page_responds(page, server_url, fragment, name):  # type: ignore[no-untyped-def]
    assert len(fragment) <= 16_000
    page.goto(f"{server_url}/?preset=tiny{fragment}")
    wait_rendered(page)
    page.locator(f'#notice[data-invalid*="{name}"]').wait_for(state="attached")
    cols = page.locator("#plot-hidden").get_attribute("data-cols")
    page.locator("#d_ff").focus()
    page.keyboard.press("ArrowRight")  # the next d_ff: drawn only if the page is responsive
    page.wait_for_function(
        "(c) => document.querySelector('#plot-hidden').dataset.cols !== c", arg=cols
    )


def test_an_npy_with_a_zero_in_its_shape_is_refused(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 0), }"
    header += " " * (63 - len(header)) + "\n"
    path = tmp_path / "zero.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    page.goto(f"{server_url}/?preset=tiny&source=own")
    wait_rendered(page)
    page.locator("#own-file").set_input_files(str(path))
    page.locator("#own-error:not(:empty)").wait_for()
