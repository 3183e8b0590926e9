"""The guided lesson runs start to end by keyboard, in both languages, with the step in the URL.

The steps on the teaching panels (attention vs FFN, budget, dropout, block, variants,
misconceptions) must open their panel, highlight it and show numbers that the tests here
recompute from the shapes (parameter counts) or check against the step's settings.
"""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from tests.browser.classroom import DOCS, catalog, fill, wait_answers
from tests.browser.conftest import layout_stable

pytestmark = pytest.mark.browser
STEP_IDS = [
    "what",
    "shapes",
    "up",
    "activation",
    "position",
    "attention",
    "shared",
    "budget",
    "dropout",
    "residual",
    "gelu",
    "swiglu",
    "variants",
    "misconceptions",
    "cheaper",
    "depth",
    "learn",
    "deadzone",
    "memory",
    "capacity",
]
STEP = {step_id: n for n, step_id in enumerate(STEP_IDS, start=1)}
TIMEOUT = 30_000


def _value(page, selector: str) -> float:  # type: ignore[no-untyped-def]
    """The data-value of the (first) element matched, waited for."""
    el = page.locator(selector).first
    el.wait_for(state="attached", timeout=TIMEOUT)
    return float(el.get_attribute("data-value") or "nan")


def _plot_y(page, plot_id: str, trace: int = 0) -> list[float]:  # type: ignore[no-untyped-def]
    return page.evaluate(  # type: ignore[no-any-return]
        "([id, k]) => Array.from(document.getElementById(id).data[k].y)", [plot_id, trace]
    )


def _open_and_highlighted(page, section: str, *targets: str) -> None:  # type: ignore[no-untyped-def]
    """The step opened `section` (the `open` class of the panel choice) and outlined targets."""
    page.locator(f"#{section}.open").wait_for(timeout=TIMEOUT)
    assert page.locator(f"#{section}").is_visible()
    for target in targets:
        assert page.locator(f"{target}.lesson-highlight").count() == 1, target
    # The first target was brought into view, above the lesson card (even the last panel).
    box = page.locator(targets[0]).bounding_box()
    card = page.locator("#lesson").bounding_box()
    assert box and card and 0 <= box["y"] < card["y"], (targets[0], box, card)


def _llama_d_ff(d_model: int, multiple_of: int = 256) -> int:
    """LLaMA's SwiGLU width, recomputed here: 2/3 · 4 d_model rounded up to a multiple."""
    hidden = int(2 * 4 * d_model / 3)
    return -(-hidden // multiple_of) * multiple_of


def check_attention(page) -> None:  # type: ignore[no-untyped-def]
    """The same nudge: attention moves all T rows, the FFN only the nudged one (position 2)."""
    _open_and_highlighted(
        page, "attention-vs-ffn", "#attention-moved", "#plot-attention-norms", "#plot-ffn-norms"
    )
    tokens = int(page.locator("#tokens-value").inner_text())
    assert tokens == 6
    assert _value(page, f"#attention-moved[data-value='{tokens}']") == tokens
    assert _value(page, "#ffn-moved") == 1
    attention = _plot_y(page, "plot-attention-norms")
    ffn = _plot_y(page, "plot-ffn-norms")
    assert len(attention) == len(ffn) == tokens
    assert all(v > 0 for v in attention)
    assert [i for i, v in enumerate(ffn) if v != 0] == [2]


def check_budget(page) -> None:  # type: ignore[no-untyped-def]
    """8·d² FFN weights against 4·d² attention weights at 512 -> 2048; FLOPs grow with T."""
    _open_and_highlighted(page, "budget", "#budget-table", "#plot-budget-flops", "#conv-diff")
    d, d_ff = 512, 2048
    assert page.locator("#d_model-value").inner_text() == str(d)
    assert page.locator("#d_ff-value").inner_text() == str(d_ff)
    assert _value(page, f"#budget-ffn-weights[data-value='{8 * d * d}']") == 2 * d * d_ff
    assert _value(page, "#budget-attn-weights") == 4 * d * d
    assert _value(page, "#budget-ffn-params") == 8 * d * d + d_ff + d  # + b1 + b2
    assert _value(page, "#budget-attn-params") == 4 * d * d + 4 * d  # + b_q, b_k, b_v, b_o
    assert _value(page, "#budget-share") == pytest.approx(
        (8 * d * d + d_ff + d) / (4 * d * d + 4 * d)
    )
    params = _plot_y(page, "plot-budget-params")
    flops = _plot_y(page, "plot-budget-flops")
    assert len(set(params)) == 1 and params[0] == 8 * d * d + d_ff + d  # independent of T
    assert len(flops) > 2 and all(b > a for a, b in pairwise(flops))
    assert 0 <= _value(page, "#conv-diff") < 1e-3  # Conv1d(kernel 1) = the FFN


def check_dropout(page) -> None:  # type: ignore[no-untyped-def]
    """The panel's own p follows the sentence (p = 0.1) and it is in training mode."""
    _open_and_highlighted(page, "dropout", "#dropout")
    assert page.locator("#mode").input_value() == "train"
    assert page.locator("#dropout-p").input_value() == "0.1"
    assert page.locator('input[name="dropout-mode"][value="train"]').is_checked()
    page.locator("#dropout[data-mode='train']").wait_for(state="attached", timeout=TIMEOUT)


def check_variants(page) -> None:  # type: ignore[no-untyped-def]
    """ReLU exact zeros, GELU near zeros only, SwiGLU three matrices, LLaMA's d_ff rule."""
    _open_and_highlighted(
        page, "variants", "#variants-table", "#variants-llama", "#plot-variant-sparsity"
    )
    assert page.locator("#variants-match").is_checked()  # the step's panel-state
    d, d_ff = 512, 2048
    matched = round(d_ff * (2 * d + 1) / (3 * d + 2))  # 3 d d' + 2 d' + d = 2 d d_ff + d_ff + d
    row = '#variants-table tr[data-variant="{}"] td:nth-child({})'
    assert _value(page, row.format("swiglu", 3) + f"[data-value='{matched}']") == matched
    assert _value(page, row.format("swiglu", 2)) == 3
    assert _value(page, row.format("relu", 2)) == 2
    assert _value(page, row.format("relu", 4)) == 2 * d * d_ff + d_ff + d
    assert _value(page, row.format("swiglu", 4)) == 3 * d * matched + 2 * matched + d
    assert _value(page, row.format("relu", 5)) > 0.2  # exact zeros
    assert _value(page, row.format("gelu", 5)) == 0  # no exact zeros ...
    assert _value(page, row.format("gelu", 6)) > 0  # ... but near-zeros
    assert _value(page, "#variants-llama") == _llama_d_ff(4096) == 11008
    llama = page.locator("#variants-llama").inner_text()
    assert f"{_llama_d_ff(d):,}" in llama  # 1,536 for d_model = 512


def check_misconceptions(page) -> None:  # type: ignore[no-untyped-def]
    """Two linear layers, no mixing of tokens, one set of weights for every T."""
    _open_and_highlighted(
        page, "misconceptions", "#myth-one-layer", "#myth-mixing", "#myth-own-weights"
    )
    assert _value(page, "#myth-layers[data-value='2']") == 2
    assert page.locator("#myth-mixing-result").get_attribute("data-changed") == "1"
    assert _value(page, "#myth-mixing-result") == 0  # every other row bit for bit
    assert _value(page, "#myth-additivity") > 0
    d, d_ff = 16, 64
    cells = page.locator("#myth-tokens-table tbody tr td:nth-child(2)")
    assert cells.count() > 1
    params = {float(c.get_attribute("data-value") or "nan") for c in cells.all()}
    assert params == {2 * d * d_ff + d_ff + d}


def check_deadzone(page) -> None:  # type: ignore[no-untyped-def]
    """Learning rate 1 with ReLU, trained as the step opens: the dead-unit line ends above 0."""
    _open_and_highlighted(page, "train", "#plot-train-dead", "#train-lr", "#train-activation")
    assert page.locator("#train-lr").input_value() == "1"
    assert page.locator("#train-activation").input_value() == "relu"
    page.locator("#train[data-train-state='done']").wait_for(state="attached", timeout=90_000)
    dead = page.evaluate(
        "() => document.getElementById('plot-train-dead').data.map((t) => Array.from(t.y))"
    )
    assert dead and dead[-1][-1] > 0, dead


def check_memory(page) -> None:  # type: ignore[no-untyped-def]
    """The step trains and reads one unit as a key and a value."""
    _open_and_highlighted(page, "train", "#plot-train-key", "#plot-train-value")
    page.locator("#train[data-train-state='done']").wait_for(state="attached", timeout=90_000)
    page.locator("#train-reading[data-unit]").wait_for(state="attached")
    fires = page.evaluate("() => document.getElementById('plot-train-key').data[0].x.length")
    assert fires > 0


def check_capacity(page) -> None:  # type: ignore[no-untyped-def]
    """The step runs the capacity sweep: one bar per width and one for the no-FFN model."""
    _open_and_highlighted(page, "train", "#plot-train-capacity")
    page.locator("#train[data-capacity-state='done']").wait_for(state="attached", timeout=120_000)
    bars = page.evaluate("() => document.getElementById('plot-train-capacity').data[0].x")
    assert len(bars) == 7 and bars[0] < bars[-1]  # the no-FFN model holds fewer pairs


CHECKS = {
    "attention": check_attention,
    "budget": check_budget,
    "dropout": check_dropout,
    "variants": check_variants,
    "misconceptions": check_misconceptions,
    "deadzone": check_deadzone,
    "memory": check_memory,
    "capacity": check_capacity,
}


def _step_in_url(page, n: int) -> None:  # type: ignore[no-untyped-def]
    """The step is in the URL (step 1 is the default, so it is left out). The page writes
    the address once the step's answer is drawn: wait for it."""

    def shows_step(url: str) -> bool:
        return bool(re.search(r"[?&]lesson=1(&|$)", url)) and bool(
            re.search(rf"[?&]step={n}(&|$)", url) or (n == 1 and "step=" not in url)
        )

    page.wait_for_url(shows_step, timeout=15_000)


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
                layout_stable(page)
                DOCS.mkdir(exist_ok=True)
                page.screenshot(path=str(DOCS / "screenshot-lesson.png"))
        if step_id in CHECKS:
            CHECKS[step_id](page)
        if step_id == "residual":
            _open_and_highlighted(page, "block", "#block")
            assert page.locator('input[name="block-norm"][value="post"]').is_checked()
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
    page.locator(f'#lesson[data-step="{STEP_IDS[-2]}"]').wait_for()
    _step_in_url(page, total - 1)
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")
    page.wait_for_url(lambda url: "lesson" not in url and "step=" not in url, timeout=15_000)
    assert page.locator(".lesson-highlight").count() == 0
    # the page as it was before the lesson: no step's settings left behind (e.g.
    # layers=6, train_compare=0 and cheap_rank=128 in the address after Finish)
    for key in ("layers=", "train_", "cheap_rank=", "d_model=", "position=", "norm="):
        assert key not in page.url, (key, page.url)
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
    # In the lesson its keys win even over a focused slider: the lesson
    # steps, the slider does not move (tests/browser/test_lesson_keys.py has the rest).
    page.locator("#tokens").focus()
    page.keyboard.press("ArrowRight")
    page.locator('#lesson[data-step="attention"]').wait_for()
    assert page.locator("#tokens-value").inner_text() == "6"
    assert page.recorder.errors == []


def test_a_step_sets_its_panels_own_controls_however_you_got_there(page, server_url):  # type: ignore[no-untyped-def]
    """The residual step shows post-norm (the paper's) even after a student chose pre-norm."""
    residual = STEP["residual"]
    page.goto(f"{server_url}/?lesson=1&step={residual}")
    page.locator('#lesson[data-step="residual"]').wait_for()
    wait_answers(page)
    page.locator("#block[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)
    page.locator('input[name="block-norm"][value="pre"]').check()
    messages = catalog("en")
    formula = page.locator("#block-formula")
    page.locator(f"#block-formula:text-is('{messages['block.formula_pre']}')").wait_for()
    page.locator("#lesson-next").focus()
    page.keyboard.press("ArrowRight")
    page.locator('#lesson[data-step="gelu"]').wait_for()
    page.keyboard.press("ArrowLeft")
    page.locator('#lesson[data-step="residual"]').wait_for()
    assert page.locator('input[name="block-norm"][value="post"]').is_checked()
    page.locator(f"#block-formula:text-is('{messages['block.formula_post']}')").wait_for()
    assert formula.inner_text() == messages["block.formula_post"]
    assert page.recorder.errors == []


def test_embedded_lesson_opens_the_attention_panel(page, server_url):  # type: ignore[no-untyped-def]
    """In a slide (embed) the attention step shows only its panel, the attention comparison."""
    page.goto(f"{server_url}/?embed=1&lesson=1&step={STEP['attention']}")
    page.locator('#lesson[data-step="attention"]').wait_for()
    wait_answers(page)
    shown = page.locator("main > section:visible")
    assert shown.count() == 1 and shown.first.get_attribute("id") == "attention-vs-ffn"
    assert _value(page, "#attention-moved[data-value='6']") == 6
    assert _value(page, "#ffn-moved") == 1
    assert page.recorder.errors == []


def test_a_step_leaves_nothing_to_the_next_and_leaving_restores_the_page(page, server_url):  # type: ignore[no-untyped-def]
    # step 15 sets a low rank of 128 at 512 x 2048; step 16 (16 wide) must not inherit it
    page.goto(f"{server_url}/?lesson=1&step={STEP['cheaper']}")
    page.locator('#lesson[data-step="cheaper"]').wait_for()
    wait_answers(page)
    assert "cheap_rank=128" in page.url
    page.keyboard.press("ArrowRight")
    page.locator('#lesson[data-step="depth"]').wait_for()
    page.wait_for_url(lambda url: "step=" + str(STEP["depth"]) in url, timeout=15_000)
    assert "cheap_rank=" not in page.url
    # a lesson started from the page gives the page back as it was when it is left
    page.goto(f"{server_url}/?d_model=32&d_ff=128&layers=3&panel=stack")
    wait_answers(page)
    page.locator("#lesson-start").click()
    page.locator('#lesson[data-step="what"]').wait_for()
    page.keyboard.press("Escape")
    page.locator("#lesson").wait_for(state="hidden")
    page.wait_for_url(lambda url: "lesson" not in url, timeout=15_000)
    for key in ("d_model=32", "d_ff=128", "layers=3", "panel=stack"):
        assert key in page.url, (key, page.url)
    assert page.locator("#d_model-value").inner_text() == "32"


def test_a_tall_panel_shows_the_heading_of_the_highlighted_part(page, server_url):  # type: ignore[no-untyped-def]
    # step 20 used to scroll the capacity plot to the top: its heading and the Run button
    # above it were off-screen, above an empty band over the card
    page.goto(f"{server_url}/?lang=en&lesson=1&step={STEP['capacity']}")
    page.locator('#train[data-capacity-state="done"]').wait_for(state="attached", timeout=120_000)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    heading = page.locator('#train h3[data-i18n="train.capacity_heading"]').bounding_box()
    plot = page.locator("#plot-train-capacity").bounding_box()
    card = page.locator("#lesson").bounding_box()
    assert heading and plot and card
    assert heading["y"] >= 0, heading
    assert plot["y"] + plot["height"] <= card["y"] + 1, (plot, card)
