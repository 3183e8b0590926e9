"""An independent NumPy reference of the FFN (float64), written from the papers' formulas."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]

_erf = np.vectorize(math.erf)


def relu(z: F64) -> F64:
    return np.maximum(z, 0.0)


def gelu(z: F64) -> F64:
    """Exact GELU, z * Phi(z) (Hendrycks & Gimpel 2016)."""
    return 0.5 * z * (1.0 + _erf(z / math.sqrt(2.0)))


def gelu_tanh(z: F64) -> F64:
    """The tanh approximation used by GPT-2."""
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


def silu(z: F64) -> F64:
    return z / (1.0 + np.exp(-z))


ELEMENTWISE = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh, "silu": silu}
GATE_OF = {"swiglu": silu, "geglu": gelu, "geglu_tanh": gelu_tanh}


def ffn(
    x: F64,
    w1: F64,
    b1: F64 | None,
    w2: F64,
    b2: F64 | None,
    activation: str,
    w_gate: F64 | None = None,
    b_gate: F64 | None = None,
) -> dict[str, F64]:
    """FFN(x) = act(x W1 + b1) W2 + b2; gated: act(x W_gate + b_gate) * (x W1 + b1)."""
    up = x @ w1 + (0.0 if b1 is None else b1)
    if activation in GATE_OF:
        assert w_gate is not None
        pre = x @ w_gate + (0.0 if b_gate is None else b_gate)
        hidden = GATE_OF[activation](pre) * up
    else:
        pre = up
        hidden = ELEMENTWISE[activation](pre)
    output = hidden @ w2 + (0.0 if b2 is None else b2)
    return {"pre_activation": pre, "up": up, "hidden": hidden, "output": output}
