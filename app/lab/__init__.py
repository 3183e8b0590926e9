"""FFN Lab's experiments as plain Python: the layer the server, the snapshot and notebooks use.

from app import lab
r = lab.forward(d_model=16, d_ff=64, activation="gelu", num_tokens=6)
lab.flow(r).show(); lab.sparsity(r).show()
p = lab.perturb(d_model=16, d_ff=64, activation="gelu", num_tokens=6, position=2, scale=1.0)
lab.perturbation(p).show()
lab.forward(**lab.from_module(gpt2_block.mlp), num_tokens=6)
"""

from app.lab.api import Result, forward, perturb
from app.lab.errors import InvalidValue, LabError, ModelUnavailable
from app.lab.figures import flow, perturbation, sparsity
from app.lab.from_module import from_module

__all__ = [
    "InvalidValue",
    "LabError",
    "ModelUnavailable",
    "Result",
    "flow",
    "forward",
    "from_module",
    "perturb",
    "perturbation",
    "sparsity",
]
