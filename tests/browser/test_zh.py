"""Chinese on screen: the status line, every tooltip (title attributes and
the plots' hover labels) in Chinese, no stray space at full-width punctuation anywhere in
the drawn page, and "bit for bit" not readable as "position-wise"."""

from __future__ import annotations

import re

import pytest

from tests.browser.classroom import catalog
from tests.browser.conftest import ARTIFACTS, show, wait_rendered
from tests.i18n.test_catalogs import stray_spaces

pytestmark = pytest.mark.browser
CJK = re.compile(r"[\u4e00-\u9fff]")
SHAPE = re.compile(r"[a-z_]+ \[[\d ×,]+\]")

# Everything a student reads: text, tooltips, the plots' hover templates and SVG text.
READ_JS = """() => {
  const hovers = [];
  for (const el of document.querySelectorAll('.js-plotly-plot')) {
    for (const trace of el.data || []) if (trace.hovertemplate) hovers.push(trace.hovertemplate);
  }
  return {
    text: document.body.innerText,
    titles: [...document.querySelectorAll('[title]')].map((e) => e.title).filter(Boolean),
    hovers,
    svg: [...document.querySelectorAll('.js-plotly-plot text')].map((t) => t.textContent),
    status: document.getElementById('status').textContent,
  };
}"""


def test_every_string_on_screen_is_chinese_and_well_spaced(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN&position=2")
    wait_rendered(page)
    for section in page.evaluate(
        "() => [...document.querySelectorAll('main > section')].filter((s) => !s.hidden)"
        ".map((s) => s.id)"
    ):
        show(page, f"#{section}")
    seen = page.evaluate(READ_JS)
    zh, en = catalog("zh-CN"), catalog("en")
    assert CJK.search(seen["status"]), seen["status"]
    assert "  " not in seen["status"]
    for title in seen["titles"]:
        if SHAPE.fullmatch(title):  # a tensor's API name and shape, the same in both languages
            continue
        assert CJK.search(title), title
    english_axes = {v for k, v in en.items() if k.startswith("axis.")}
    for hover in seen["hovers"]:
        words = re.sub(r"%\{[^}]*\}|<[^>]*>", " ", hover)
        assert not [a for a in english_axes if a in words], hover
    drawn = "\n".join([seen["text"], *seen["svg"], *seen["titles"]])
    assert stray_spaces(drawn) == []
    # The perturbation's sentence: 比特 (bits), never 逐位 next to 逐位置 (position-wise).
    changed = page.locator("#perturb-changed").inner_text()
    assert zh["perturb.exact"] in changed and "逐位" not in changed
    assert page.recorder.errors == []


def test_a_refusal_reads_in_chinese_without_a_stray_space(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN&d_model=4096&d_ff=16384&activation=swiglu&bias=0")
    page.locator('#status[data-kind="error"]').wait_for()
    text = page.locator("#status").inner_text()
    assert stray_spaces(text) == []
    assert "needs" not in text and "limit" not in text  # the detail is translated too
    assert page.locator("#flow .view-refused").inner_text() == text
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "refused-zh.png"))


@pytest.mark.parametrize("tag", ["zh", "zh-cn", "zh-Hans"])
def test_a_link_naming_chinese_as_people_write_it_opens_in_chinese(page, server_url, tag):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang={tag}")
    wait_rendered(page)
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.locator("#lang").input_value() == "zh-CN"
    assert page.locator("#notice").is_hidden()  # not refused as an unknown value
    assert CJK.search(page.locator("#status").text_content() or "")
    page.wait_for_url(lambda url: "lang=zh-CN" in url)  # the address names it as the page does
    assert page.recorder.errors == []


def test_the_view_menu_names_each_view_by_its_current_heading(page, server_url):  # type: ignore[no-untyped-def]
    # the flow's heading says "gated" under SwiGLU; after a language switch the menu still
    # follows it when the activation changes
    page.goto(f"{server_url}/?lang=en&activation=swiglu")
    wait_rendered(page)
    page.locator("#lang").select_option("zh-CN")
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    page.locator("#activation").select_option("relu")
    page.wait_for_function(
        """() => {
          const heading = document.querySelector('#flow h2').textContent;
          const option = document.querySelector('#panel option[value="flow"]').textContent;
          return option === heading && !heading.includes('门控');
        }"""
    )
    names = page.evaluate(
        """() => [...document.querySelectorAll('#panel option')].filter((o) => o.value)
          .map((o) => [o.textContent, document.querySelector(`#${o.value} h2`).textContent])"""
    )
    assert all(option == heading for option, heading in names), names
    assert page.recorder.errors == []
