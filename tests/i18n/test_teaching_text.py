"""Teaching sentences that must say what the FFN does, in both languages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

I18N = Path(__file__).resolve().parents[2] / "static" / "i18n"


def _catalog(lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted((I18N / lang).glob("*.json")):
        out |= json.loads(f.read_text(encoding="utf-8"))
    return out


@pytest.mark.parametrize(("lang", "bilinear"), [("en", "bilinear"), ("zh-CN", "双线性")])
def test_gated_card_says_bilinear_not_collapse(lang: str, bilinear: str) -> None:
    text = _catalog(lang)["myth.one_layer.bilinear"]
    assert bilinear in text and "{value}" in text
    assert "collapse" not in text and "合并" not in text


@pytest.mark.parametrize(
    ("lang", "wrong"), [("en", "most of the FFN's"), ("zh-CN", "FFN 的大部分参数")]
)
def test_lesson_up_step_gives_w1_and_w2_equal_shares(lang: str, wrong: str) -> None:
    text = _catalog(lang)["lesson.up.text"]
    assert wrong not in text
    assert "d_model · d_ff" in text  # each matrix's share, stated
    assert ("two thirds" in text) if lang == "en" else ("三分之二" in text)  # of the block


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_llama_rule_sentences_print_each_computation_once(lang: str) -> None:
    c = _catalog(lang)
    general, at_4096, tiny = c["variants.llama"], c["variants.llama_4096"], c["variants.llama_tiny"]
    # LLaMA's own width: the current computation only, no second copy of the 4096 example
    assert "{four_4096}" not in at_4096 and at_4096.count("{two_thirds}") == 1
    assert "{rule}" in at_4096
    # a tiny width shows the exact 2/3 · 4 · d_model, never the rounded-up 256
    assert "{rule}" not in tiny and "{two_thirds}" in tiny and "256" in tiny
    assert general.count("{two_thirds}") == 1 and "{rule}" in general


@pytest.mark.parametrize(("lang", "independently"), [("en", "independently"), ("zh-CN", "独立")])
def test_dropout_sentence_drops_each_unit_independently(lang: str, independently: str) -> None:
    """Dropout drops each unit on its own with probability p; it does not zero an exact
    fraction p of the units."""
    text = _catalog(lang)["lesson.dropout.text"]
    assert independently in text and "p = 0.1" in text
    assert "random fraction" not in text and "比例" not in text


@pytest.mark.parametrize(("lang", "without"), [("en", "without its biases"), ("zh-CN", "去掉偏置")])
def test_bias_free_formula_says_it_drops_the_papers_biases(lang: str, without: str) -> None:
    """Eq. 2 of the paper has b1 and b2: the bias-free formula cites it only as eq. 2
    without them."""
    text = _catalog(lang)["app.formula_nobias"]
    assert without in text and "b₁" not in text and "b₂" not in text
