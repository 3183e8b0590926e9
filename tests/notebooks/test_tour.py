"""notebooks/tour.ipynb runs top to bottom (nbclient, a python3 kernel of this interpreter),
exports to HTML with `jupyter nbconvert --to html`, and that file draws its figures in
Chromium with no network: plotly.js inlined once, each heatmap holding the kernel's numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app import lab
from app.lab.renderer import can_draw_png

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from jupyter_client.manager import KernelManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "notebooks" / "tour.ipynb"


def test_tour_is_stored_without_outputs() -> None:
    nb = nbformat.read(TOUR, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], "clear the outputs before committing"
            assert cell.execution_count is None


class VenvKernelManager(KernelManager):
    """A python3 kernel run by this interpreter (the venv's python), whatever kernelspecs
    are installed on the machine."""

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        return [sys.executable, "-m", "ipykernel_launcher", "-f", self.connection_file]


def execute_tour() -> Any:
    """The tour, executed by a kernel of this interpreter (the last cell prints it)."""
    nb = nbformat.read(TOUR, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        kernel_manager_class=VenvKernelManager,
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()  # starts the kernel, runs every cell, shuts the kernel down
    return nb


@pytest.fixture(scope="module")
def executed() -> Any:
    return execute_tour()


def figure_outputs(nb: Any) -> list[dict[str, Any]]:
    return [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]


@pytest.mark.slow
@pytest.mark.timeout(600)
# zmq may garbage-collect a socket of the finished kernel's channels late
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_tour_executes(executed: Any) -> None:
    nb = executed
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert printed.strip() == sys.executable
    perturbation = nb.cells[7].outputs
    assert any("changed rows: [2]" in o.get("text", "") for o in perturbation)
    figures = figure_outputs(nb)
    assert len(figures) >= 4
    # every figure also travels as HTML; plotly.js is written by the first figure only
    html = [o["data"]["text/html"] for o in figures]
    assert all("Plotly.newPlot" in h for h in html)
    assert [PLOTLY_HEADER in h for h in html].count(True) == 1
    assert PLOTLY_HEADER in html[0]
    if can_draw_png():  # a picture for viewers without JavaScript (GitHub, print)
        assert all(o["data"]["image/png"] for o in figures)
    names = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "blocks.{layer}.mlp.hook_pre" in names
    widgets = [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(widgets) == 1  # lab.explore()


PLOTLY_HEADER = "plotly.js v"
"""The banner comment at the top of plotly.min.js."""


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(600)
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_exported_html_draws_offline(executed: Any, tmp_path: Path, browser: Any) -> None:
    source = tmp_path / "tour.ipynb"
    nbformat.write(executed, source)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(source)],
        check=True,
        capture_output=True,
        env=os.environ | {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
        timeout=300,
    )
    page_file = tmp_path / "tour.html"
    text = page_file.read_text(encoding="utf-8")
    assert text.count(PLOTLY_HEADER) == 1, "plotly.js must be inlined exactly once"
    expected_figures = len(figure_outputs(executed))
    # what the kernel computed for the first figure (same call as the tour's section 1)
    r = lab.forward(d_model=16, d_ff=64, activation="gelu", num_tokens=6)
    refused: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:

        def offline(route: Any) -> None:
            if not route.request.url.startswith("file://"):
                refused.append(route.request.url)
                route.abort()
            else:
                route.continue_()

        context.route("**/*", offline)
        page = context.new_page()
        page.goto(page_file.as_uri())
        plots = page.locator(".js-plotly-plot")
        plots.nth(expected_figures - 1).locator(".main-svg").first.wait_for()
        assert plots.count() == expected_figures
        drawn = json.loads(
            plots.first.evaluate(
                # plotly.js decodes the figure's base64 arrays into typed arrays
                "el => JSON.stringify(el._fullData.filter(t => t.type === 'heatmap')"
                ".map(t => Array.from(t.z, row => Array.from(row))))"
            )
        )
    finally:
        context.close()
    # the flow's heatmaps: input, pre_activation, hidden, output, as the kernel computed
    assert len(drawn) == 4
    for z, key in zip(drawn, ["input", "pre_activation", "hidden", "output"], strict=True):
        np.testing.assert_allclose(np.asarray(z), r[key], rtol=0, atol=1e-6, err_msg=key)
    assert not [u for u in refused if "plotly" in u], refused
