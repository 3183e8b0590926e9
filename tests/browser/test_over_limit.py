"""Panels beyond what the server computes (LLaMA-7B preset): one translated notice, no request,
no red refusal box, no empty plot frames; the stack's norm maps on a sequential scale from 0."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
CJK = re.compile(r"[\u4e00-\u9fff]")


def visible_plots(page, section: str) -> int:  # type: ignore[no-untyped-def]
    return int(
        page.evaluate(
            """(sel) => [...document.querySelectorAll(`${sel} .plot`)]
              .filter((el) => el.getClientRects().length > 0).length""",
            section,
        )
    )


@pytest.mark.parametrize(
    ("lang", "stack_number", "cheaper_number"),
    [("en", "541,065,216", "45,088,768"), ("zh-CN", "541,065,216", "45,088,768")],
)
def test_llama_preset_says_why_the_stack_and_low_rank_view_are_not_computed(  # type: ignore[no-untyped-def]
    page, server_url, lang, stack_number, cheaper_number
):
    requested: list[str] = []

    def record(request) -> None:  # type: ignore[no-untyped-def]
        if "/api/stack" in request.url or "/api/cheaper" in request.url:
            requested.append(request.url)

    page.on("request", record)
    page.goto(f"{server_url}/?preset=llama-7b&lang={lang}")
    wait_rendered(page)
    for section, number in (("#cheaper", cheaper_number), ("#stack", stack_number)):
        page.locator(section).scroll_into_view_if_needed()
        page.locator(f"{section}[data-over]").wait_for(state="attached", timeout=TIMEOUT)
        notice = page.locator(f"{section} .panel-notice")
        assert notice.is_visible()
        text = notice.inner_text()
        assert number in text
        if lang == "zh-CN":
            assert CJK.search(text), text
        assert page.locator(f"{section} .view-refused").count() == 0
        assert page.locator(f"{section} .panel-error").inner_text().strip() == ""
        assert visible_plots(page, section) == 0
        assert ": :" not in page.locator(section).inner_text()
        assert "：:" not in page.locator(section).inner_text()
    # The stack keeps the controls that can bring it under the limit.
    assert page.locator("#stack-layers").is_visible()
    assert requested == []  # known to be refused: never sent
    # A smaller preset fits: the notices go and the plots come back.
    page.select_option("#preset", "transformer-base")
    for section in ("#stack", "#cheaper"):
        page.locator(section).scroll_into_view_if_needed()
        page.locator(f"{section}[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)
        assert page.locator(f"{section}[data-over]").count() == 0
        assert page.locator(f"{section} .panel-notice").is_hidden()
    assert visible_plots(page, "#stack") == 3
    assert not page.recorder.errors


def test_stack_norm_maps_are_sequential_from_zero(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=stack&tokens=6&position=2&scale=2&layers=3")
    wait_rendered(page)
    page.locator("#stack[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)
    for plot in ("plot-stack-delta", "plot-stack-ratio"):
        page.wait_for_function(f"() => document.getElementById('{plot}').data?.length > 0")
        trace = page.evaluate(
            f"""() => {{ const t = document.getElementById('{plot}').data[0];
              return {{ zmin: t.zmin, zmid: t.zmid ?? null, first: t.colorscale[0][1] }}; }}"""
        )
        assert trace["zmin"] == 0, plot
        assert trace["zmid"] is None, plot  # not centred on 0 as a diverging scale is
        assert trace["first"] == "#f7fbff", trace  # SEQUENTIAL's 0: near white
    assert not page.recorder.errors
