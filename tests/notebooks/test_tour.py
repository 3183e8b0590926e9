"""notebooks/tour.ipynb runs top to bottom (nbclient, a python3 kernel of this interpreter)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

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


@pytest.mark.timeout(600)
# zmq may garbage-collect a socket of the finished kernel's channels late
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_tour_executes() -> None:
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
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert printed.strip() == sys.executable
    perturbation = nb.cells[7].outputs
    assert any("changed rows: [2]" in o.get("text", "") for o in perturbation)
    figures = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "data" in o]
    assert any("application/vnd.plotly.v1+json" in o["data"] for o in figures)
