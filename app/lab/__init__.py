"""FFN Lab as plain Python (no FastAPI, no Pydantic): `from app import lab`.

The layer the server, the snapshot and notebooks all use:

    r = lab.forward(d_model=16, d_ff=64, activation="gelu", num_tokens=6)
    lab.flow(r).show(); lab.sparsity(r).show()
    p = lab.perturb(d_model=16, d_ff=64, activation="gelu", num_tokens=6, position=2, scale=1.0)
    lab.perturbation(p).show()
    lab.forward(weights=lab.from_module(gpt2_block.mlp), num_tokens=6)

- `lab.notebook()` (once per notebook): figures that render in JupyterLab, VS Code and
  Colab and survive `jupyter nbconvert --to html` offline (`app.lab.renderer`);
  `lab.write_image(fig, "flow.png")` (or .svg) draws with kaleido in Chromium.
- `lab.explore()`: the page's sliders as a notebook widget computing in the kernel.
- Every forward answer's `tensor_names` says what TransformerLens, transformers and nnsight
  call each tensor (`app.analysis.tensor_names`).

- `lab.check(module_or_class, d_model=..., d_ff=...)`: run the FFN debugging checklist on
  your own `torch.nn.Module` (see `app.lab.checker`); the `ffn-lab check` command runs the
  same checks on a file, in a subprocess with a time limit.
- `lab.stack(n_layers=4, attention=True, position=2, ...)` and `lab.cheaper(rank=4, ...)`:
  the same numbers as POST /api/stack and /api/cheaper, keywords named as their bodies.
- `app.lab.stack` (a stack of layers with their own FFNs), `app.lab.train` (an FFN learning a
  key-value memory; task and model in `app.lab.memory`), `app.lab.cheaper` (low-rank and
  stacked FFNs): plain arguments in, dataclasses of tensors/arrays out, domain errors as
  `ValueError` subclasses.
"""

from __future__ import annotations

from app.lab.api import Result, cheaper, forward, perturb, stack
from app.lab.checker import CannotCheck, CheckReport, CheckResult, check
from app.lab.errors import InvalidValue, LabError, ModelUnavailable
from app.lab.explore import explore
from app.lab.figures import flow, perturbation, sparsity
from app.lab.from_module import from_module
from app.lab.renderer import notebook, write_image

__all__ = [
    "CannotCheck",
    "CheckReport",
    "CheckResult",
    "InvalidValue",
    "LabError",
    "ModelUnavailable",
    "Result",
    "cheaper",
    "check",
    "explore",
    "flow",
    "forward",
    "from_module",
    "notebook",
    "perturb",
    "perturbation",
    "sparsity",
    "stack",
    "write_image",
]
