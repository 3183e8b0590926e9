""" "Read this in your library": the page shows each tensor's names from the answer and the
code CI runs (app.analysis.library_snippets), in en and zh-CN, and the flow's captions carry
the names on hover."""

from __future__ import annotations

import httpx
import pytest

from app.analysis.library_snippets import snippets
from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser


def wait_names(page, rendered: int = 1) -> None:  # type: ignore[no-untyped-def]
    page.locator(f"#names[data-rendered='{rendered}']").wait_for(state="attached", timeout=30_000)


def test_names_and_code_of_the_family_in_view(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=names&activation=swiglu&d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    wait_names(page)
    body = {"d_model": 16, "d_ff": 64, "activation": "swiglu", "num_tokens": 6}
    answer = httpx.post(f"{server_url}/api/forward", json=body).json()["tensor_names"]
    rows = page.locator("#names-rows tr")
    assert rows.count() == 3 * len(answer)  # TransformerLens, Hugging Face, nnsight per tensor
    for key, entry in answer.items():
        drawn = page.locator(f"#names-rows tr[data-tensor='{key}'] td.mono").all_inner_texts()
        assert drawn[0] == entry["transformer_lens"]
        assert drawn[1].startswith(entry["huggingface"] + " → ")
        assert drawn[2] == entry["nnsight"] + ".save()"
    assert page.locator("#names-rows tr[data-tensor='up'] td.mono").first.inner_text() == (
        "blocks.{layer}.mlp.hook_pre_linear"
    )
    code = page.locator("#names-snippet")
    assert code.inner_text().strip() == snippets("llama", True, 0)["transformer_lens"]
    page.locator("#names [data-library='nnsight']").click()
    page.locator("#names-snippet[data-library='nnsight']").wait_for()
    assert code.inner_text().strip() == snippets("llama", True, 0)["nnsight"]
    # hover: the caption of each flow tensor carries its names
    title = page.locator("#shape-pre_activation").get_attribute("title") or ""
    assert "blocks.{layer}.mlp.hook_pre" in title
    assert "model.layers[{layer}].mlp.gate_proj" in title


def test_plain_ffn_offers_bert_and_gpt2_in_chinese(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=names&activation=relu&lang=zh-CN")
    wait_rendered(page)
    wait_names(page)
    assert page.locator("#names-heading").inner_text() == "在你的库里读取这些张量"
    options = page.locator("#names-family option")
    assert options.evaluate_all("os => os.map(o => o.value)") == ["bert", "gpt2"]
    assert "它的输出" in page.locator("#names-rows").inner_text()
    page.locator("#names [data-library='huggingface']").click()
    page.select_option("#names-family", "gpt2")
    page.locator("#names-snippet[data-family='gpt2'][data-library='huggingface']").wait_for()
    code = page.locator("#names-snippet").inner_text().strip()
    assert code == snippets("gpt2", False, 0)["huggingface"]
    assert "transformer.h[layer].mlp.c_fc" in code
