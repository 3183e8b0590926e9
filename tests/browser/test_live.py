"""Compute what is seen and stale/refused states where the eye is, in a real browser
at 1280x720 with the page as it opens."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import settled, show, wait_rendered

pytestmark = pytest.mark.browser

# section id -> the endpoints it requests (static/js/panels/*.js, main.js)
ENDPOINTS = {
    "perturb": {"/api/perturb"},
    "attention-vs-ffn": {"/api/attention-vs-ffn"},
    "block": {"/api/block"},
    "variants": {"/api/variants"},
    "budget": {"/api/budget", "/api/conv1d-check"},
    "dropout": {"/api/dropout"},
    "misconceptions": {"/api/misconceptions"},
}
SEEN = """(margin) => [...document.querySelectorAll('main > section')].filter((s) => {
  const r = s.getBoundingClientRect();
  return !s.hidden && r.height > 0 && r.bottom > -margin && r.top < innerHeight + margin;
}).map((s) => s.id)"""
NEAR_PX = 200  # static/js/live.js


def api_posts(page):  # type: ignore[no-untyped-def]
    posts: list[str] = []
    page.on(
        "request",
        lambda r: posts.append(urlsplit(r.url).path) if r.method == "POST" else None,
    )
    return posts


def step_tokens(page, key: str = "ArrowRight") -> None:  # type: ignore[no-untyped-def]
    seq = page.locator("body").get_attribute("data-forward-seq")
    page.locator("#tokens").focus()
    page.keyboard.press(key)
    page.locator(f'body:not([data-forward-seq="{seq}"])').wait_for(state="attached")
    settled(page)


def test_a_step_requests_only_the_views_in_sight(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/")
    wait_rendered(page)
    posts = api_posts(page)
    step_tokens(page)
    seen = page.evaluate(SEEN, NEAR_PX)
    expected = {"/api/forward"} | {e for s in seen for e in ENDPOINTS.get(s, set())}
    print(f"requests per Tokens step at 1280x720, page as it opens: {len(posts)} {posts}")
    assert sorted(posts) == sorted(expected)  # each once, nothing out of sight
    assert len(posts) < 9
    assert "/api/dropout" not in posts
    # Out-of-sight views say they are behind; scrolled into view, they fetch the current data.
    assert page.locator("#dropout").get_attribute("data-stale") == "1"
    tokens = int(page.locator("#tokens").input_value())
    show(page, "#dropout")
    assert "/api/dropout" in posts
    page.locator(f"#plot-dropout-kept[data-rows='{tokens}']").wait_for(state="attached")
    assert page.locator("#dropout").get_attribute("data-stale") is None
    show(page, "#perturb")
    page.locator(f"#plot-delta[data-rows='{tokens}']").wait_for(state="attached")
    assert page.locator("#delta-norms li").count() == tokens
    assert page.recorder.errors == []


def test_superseded_requests_are_aborted_and_never_drawn(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?tokens=6")
    wait_rendered(page)
    page.evaluate(
        """() => { window.ffnSignals = []; const f = window.fetch;
          window.fetch = (u, o = {}) => { if (String(u).includes('/api/forward'))
            window.ffnSignals.push(o.signal); return f(u, o); }; }"""
    )
    held = []
    page.route("**/api/forward", lambda route: held.append(route))
    page.locator("#tokens").focus()
    page.keyboard.press("ArrowRight")  # 7 tokens: the answer is held back
    page.wait_for_function("() => window.ffnSignals.length === 1")
    page.unroute("**/api/forward")
    page.keyboard.press("ArrowRight")  # 8 tokens: supersedes the held request
    page.locator("#plot-hidden[data-rows='8']").wait_for(state="attached")
    settled(page)
    aborted = page.evaluate("() => window.ffnSignals.map((s) => s.aborted)")
    assert aborted == [True, False]  # the page cancelled the old request: it is never drawn
    assert page.locator("#plot-hidden").get_attribute("data-rows") == "8"
    assert page.locator("#tokens-value").inner_text() == "8"


SHOWN_WAIT_MS = 100
"""static/js/live.js: a wait shorter than this is not shown."""
OPACITY = "() => Number(getComputedStyle(document.querySelector('#plot-hidden')).opacity)"
OVERLAY = """() => { const w = document.querySelector('#plot-hidden').closest('.plot-wrap');
  const s = getComputedStyle(w, '::after');
  return { content: s.content, position: s.position, visibility: s.visibility,
    label: w.dataset.busyLabel,
    now: document.querySelector('#flow').hasAttribute('data-busy-now') }; }"""
# When the flow was marked busy and when its wait was shown (page clock, ms).
WATCH_WAIT = """() => { const f = document.querySelector('#flow'); const times = window.__wait = {};
  new MutationObserver(() => {
    if (f.getAttribute('aria-busy') === 'true') times.busy ??= performance.now();
    if (times.busy && f.hasAttribute('data-busy-now')) times.shown ??= performance.now();
  }).observe(f, { attributes: true, attributeFilter: ['aria-busy', 'data-busy-now'] }); }"""


def test_pending_views_are_dimmed_under_a_busy_overlay(page, server_url):  # type: ignore[no-untyped-def]
    """A wait is shown once it lasts 0.1 s (a fast step does not flash), and at once after
    an answer that took that long (live.js data-busy-now): dimmed plots, a "Computing…"
    label inside each."""
    page.goto(f"{server_url}/")
    wait_rendered(page)
    page.locator("#tokens").focus()
    page.keyboard.press("ArrowRight")  # a fast answer (tens of ms): the next wait is delayed
    page.locator("#plot-hidden[data-rows='7']").wait_for(state="attached")
    settled(page)
    held = []
    page.route("**/api/forward", lambda route: held.append(route))
    page.evaluate(WATCH_WAIT)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#flow').getAttribute('aria-busy')")
    page.wait_for_function(f"() => ({OPACITY})() < 0.5")  # then dimmed
    # the sentences computed from the answer too: they still say the last one's numbers
    summary = "() => Number(getComputedStyle(document.querySelector('#sparsity-summary')).opacity)"
    assert page.evaluate(summary) < 0.5
    wait = page.evaluate("() => window.__wait")
    assert wait["shown"] - wait["busy"] >= SHOWN_WAIT_MS - 1  # not shown for 0.1 s
    page.wait_for_function(f"() => ({OVERLAY})().visibility === 'visible'")  # and labelled
    overlay = page.evaluate(OVERLAY)
    assert overlay["position"] == "absolute"
    assert overlay["label"] and overlay["label"] in overlay["content"]
    page.screenshot(path=str(_artifact("busy-overlay.png")))
    # held well past 0.1 s (the page's own clock): this answer is a slow one
    page.evaluate("() => { window.__heldSince = performance.now(); }")
    page.wait_for_function("() => performance.now() - window.__heldSince > 150")
    held.pop().continue_()
    page.locator("#plot-hidden[data-rows='8']").wait_for(state="attached")
    settled(page)
    assert page.evaluate(OPACITY) == 1
    # after a slow answer the next wait is shown at once: dimmed and labelled, no delay
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#flow').getAttribute('aria-busy')")
    overlay = page.evaluate(OVERLAY)
    assert overlay["now"] is True and overlay["visibility"] == "visible"
    assert page.evaluate(OPACITY) < 0.5
    held.pop().continue_()
    page.unroute("**/api/forward")
    settled(page)
    assert page.evaluate(OPACITY) == 1
    assert page.recorder.errors == []


# The busy label's box (the ::after of each plot wrapper, live.css) against its plot's box.
BUSY_BOXES = """() => [...document.querySelectorAll('section[aria-busy="true"] .plot-wrap')]
  .filter((e) => e.offsetParent !== null && e.clientWidth > 0).map((e) => {
    const a = getComputedStyle(e, '::after');
    let w = parseFloat(a.width), h = parseFloat(a.height);
    if (a.boxSizing !== 'border-box') {
      w += parseFloat(a.paddingLeft) + parseFloat(a.paddingRight);
      h += parseFloat(a.paddingTop) + parseFloat(a.paddingBottom);
    }
    const r = e.getBoundingClientRect();
    return { plot: e.querySelector('.plot')?.id, label: w, labelH: h, width: r.width,
      height: r.height, content: a.content };
  })"""


@pytest.mark.parametrize(
    ("query", "size"),
    [
        ("lang=en&preset=llama-7b&big=1", (1280, 720)),  # the flow's narrow input/output
        ("lang=zh-CN&preset=llama-7b&big=1", (1920, 1080)),
        ("lang=en&embed=1&preset=llama-7b", (640, 360)),
    ],
)
def test_busy_label_stays_inside_each_plot(page, server_url, query, size):  # type: ignore[no-untyped-def]
    """The "Computing…" mark lies inside every plot it marks, at every size."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{server_url}/?{query}")
    page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=120_000)
    settled(page, 120_000)
    held = []
    page.route("**/api/forward", lambda route: held.append(route))
    with page.expect_request("**/api/forward"):  # held by the route until checked
        page.evaluate(
            "() => { const s = document.getElementById('seed'); s.value = '5';"
            " s.dispatchEvent(new Event('change')); }"
        )
    page.wait_for_function("() => document.querySelector('#flow[aria-busy=\"true\"]')")
    boxes = page.evaluate(BUSY_BOXES)
    assert boxes
    for b in boxes:
        assert b["content"] not in ("none", "normal", ""), b
        assert b["label"] <= b["width"] and b["labelH"] <= b["height"], b  # inside its plot
    for route in held:
        route.continue_()
    page.unroute("**/api/forward")
    settled(page, 120_000)
    assert page.recorder.errors == []


def test_sliders_offer_only_what_the_server_accepts(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?preset=llama-7b")
    wait_rendered(page, timeout=60_000)
    values = page.evaluate("() => JSON.parse(document.querySelector('#d_ff').dataset.values)")
    # SwiGLU at d_model 4096: 3 matrices; 16384 would be 201 M parameters (limit 150 M).
    assert max(values) == 11008
    assert 16384 not in values
    page.locator("#activation").select_option("relu")  # two matrices: 16384 fits
    values = page.evaluate("() => JSON.parse(document.querySelector('#d_ff').dataset.values)")
    assert max(values) == 16384


def test_a_refusal_is_shown_at_the_plots_and_at_its_control(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=4096&d_ff=16384&activation=relu&tokens=2")
    wait_rendered(page, timeout=60_000)

    # The page lowers d_ff when SwiGLU would not fit (test_fit_to_limit.py), so it no longer
    # asks for a refused shape itself. A server whose limit is lower than the page was told
    # (restarted with a smaller FFN_LAB_MAX_PARAMS while the page stayed open) still
    # refuses: the request keeps d_ff 16384, and the real server answers 422.
    def stale_limits(route):  # type: ignore[no-untyped-def]
        body = route.request.post_data_json
        if body.get("activation") == "swiglu":
            body["d_ff"] = 16384
        route.continue_(post_data=json.dumps(body))

    page.route("**/api/forward", stale_limits)
    page.locator("#activation").select_option("swiglu")  # 201 M parameters: refused
    page.locator("#flow .view-refused").wait_for(timeout=60_000)
    flow_msg = page.locator("#flow .view-refused").inner_text()
    control_msg = page.locator("[data-control='activation'] .field-error").inner_text()
    params = 3 * 4096 * 16384 + 2 * 16384 + 4096  # w1, w_gate, w2 and their biases
    assert f"{params:,}" in flow_msg and flow_msg == control_msg
    assert "max_params" not in flow_msg and "setting" not in flow_msg
    # At the plots: the message sits right under the flow's heading, inside the first screen.
    box = page.locator("#flow .view-refused").bounding_box()
    flow = page.locator("#flow").bounding_box()
    assert box is not None and flow is not None
    assert flow["y"] <= box["y"] < flow["y"] + 80
    # The plots below show the last configuration that ran: dimmed.
    page.locator("#flow[data-refused]").wait_for(state="attached")
    page.wait_for_function(
        "() => Number(getComputedStyle(document.querySelector('#plot-hidden')).opacity) < 0.5",
        timeout=10_000,
    )
    page.screenshot(path=str(_artifact("refused.png")))
    # Back to a size that runs: the messages go.
    page.locator("#activation").select_option("relu")
    page.locator("#flow .view-refused").wait_for(state="detached", timeout=60_000)
    assert page.locator(".field-error").count() == 0


def _artifact(name: str):  # type: ignore[no-untyped-def]
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


def test_requests_carry_a_supersede_key_per_requester(page, server_url):  # type: ignore[no-untyped-def]
    """The server drops a requester's older queued work when a newer step arrives
    (X-FFN-Lab-Supersede): each requester sends its own stable key."""
    keys: dict[str, set[str]] = {}

    def record(request):  # type: ignore[no-untyped-def]
        if request.method == "POST":
            key = request.headers.get("x-ffn-lab-supersede", "")
            keys.setdefault(urlsplit(request.url).path, set()).add(key)

    page.on("request", record)
    page.goto(f"{server_url}/")
    wait_rendered(page)
    step_tokens(page)
    step_tokens(page)
    forward = keys["/api/forward"]
    assert len(forward) == 1 and all(forward), keys  # one key, the same on every step
    assert forward != keys.get("/api/perturb", set()), keys  # another requester, another key
