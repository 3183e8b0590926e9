"""The FFN weights of a `torch.nn.Module` of a known family, ready for `lab.forward`.

`from_module(module)` reads the two (or three, gated) linear maps of a feed-forward block and
returns them in the paper's orientation (Vaswani et al. 2017, eq. 2: `w1` is
`[d_model, d_ff]`, `x @ w1`), together with the activation and bias they imply, as the
keyword arguments `lab.forward` takes, unpacked or as `weights`:

    lab.forward(**lab.from_module(mlp), num_tokens=6)
    lab.forward(weights=lab.from_module(mlp), num_tokens=6)      # the same run

BERT keeps its FFN in two modules of a layer; give the layer, or both halves:

    layer = bert.encoder.layer[2]
    lab.forward(weights=lab.from_module(layer.intermediate, layer.output), num_tokens=6)

Known families (names of the field; the gated ones follow LLaMA's gate/up/down):

- transformers' BERT: a `BertLayer`, or `BertIntermediate` + `BertOutput` given together
  (`intermediate.dense` is W1, `output.dense` is W2; BertOutput's LayerNorm and residual
  belong to the sub-layer around the FFN, not to the FFN);
- transformers' `GPT2MLP`: `c_fc`, `c_proj` are `Conv1D`s that store `[in, out]` already;
- transformers' `LlamaMLP`: `gate_proj`, `up_proj`, `down_proj`; Meta's reference code names
  them `w1` (gate), `w3` (up), `w2` (down), and that `FeedForward` is read too;
- transformers' `T5DenseActDense` (`wi`, `wo`) and `T5DenseGatedActDense` (`wi_0` gate,
  `wi_1` up, `wo`); T5's gated-gelu uses the tanh GELU (`gelu_new`);
- FFN Lab's own `app.model.ffn.PositionwiseFeedForward`.

The activation is found by what the module's activation computes (compared on a grid of
values with each activation FFN Lab knows), not by its class name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn

from app.model.activations import ACTIVATIONS
from app.model.ffn import PositionwiseFeedForward

FAMILIES = (
    "BertLayer, or BertIntermediate + BertOutput (transformers)",
    "GPT2MLP (c_fc / c_proj)",
    "LlamaMLP (gate_proj / up_proj / down_proj), or Meta's FeedForward (w1 / w3 / w2)",
    "T5DenseActDense (wi / wo) and T5DenseGatedActDense (wi_0 / wi_1 / wo)",
    "FFN Lab's PositionwiseFeedForward",
)

GATED_OF = {"silu": "swiglu", "gelu": "geglu", "gelu_tanh": "geglu_tanh"}
"""The gated activation whose gate applies this element-wise function."""

Array = npt.NDArray[np.float32]


class ModuleFFN(TypedDict):
    """What `from_module` returns: keyword arguments of `lab.forward` / `lab.perturb`.

    Attributes:
        d_model: width of a token vector.
        d_ff: width of the hidden layer.
        activation: a key of `app.model.ACTIVATIONS` (e.g. "gelu", "swiglu").
        bias: whether the linear maps have biases.
        weights: float32 arrays in the paper's orientation: w1 [d_model, d_ff] (up),
            w2 [d_ff, d_model] (down), w_gate [d_model, d_ff] (gated only), and b1 [d_ff],
            b2 [d_model], b_gate [d_ff] when bias is true.
    """

    d_model: int
    d_ff: int
    activation: str
    bias: bool
    weights: dict[str, Array]


def from_module(module: nn.Module, output: nn.Module | None = None) -> ModuleFFN:
    """The FFN of `module` as `lab.forward` keyword arguments (see `ModuleFFN`).

    Args:
        module: a feed-forward block of a known family (see this module's docstring), or a
            BertIntermediate when `output` is its BertOutput.
        output: the BertOutput that goes with a BertIntermediate; None otherwise, e.g.
            `lab.from_module(bert.encoder.layer[2].intermediate, bert.encoder.layer[2].output)`
            (`intermediate.dense` is W1 [d_model, d_ff] after transposing torch's [out, in],
            `output.dense` is W2; BertOutput's LayerNorm and residual are not read).

    Returns:
        A `ModuleFFN`: pass it as `lab.forward(weights=...)` or unpack it, `**`.

    Raises:
        ValueError: for a module of no known family (the message lists the families), an
            activation FFN Lab does not have, or biases on only some of the linear maps.
    """
    if isinstance(module, PositionwiseFeedForward):
        config = module.config
        named = module.weights().named()
        return _result(
            {name: _array(t) for name, t in named.items()}, config.activation, config.bias
        )
    if output is not None:
        return _bert(module, output)
    children = dict(module.named_children())
    if "intermediate" in children and "output" in children:
        return _bert(children["intermediate"], children["output"])
    if {"c_fc", "c_proj"} <= children.keys():
        return _plain(_conv1d(children["c_fc"]), _conv1d(children["c_proj"]), _act(module, "act"))
    if {"gate_proj", "up_proj", "down_proj"} <= children.keys():
        return _gated(
            _linear(children["gate_proj"]),
            _linear(children["up_proj"]),
            _linear(children["down_proj"]),
            _act(module, "act_fn"),
        )
    if {"w1", "w2", "w3"} <= children.keys():  # Meta's LLaMA FeedForward: w2(silu(w1 x) * w3 x)
        return _gated(
            _linear(children["w1"]),
            _linear(children["w3"]),
            _linear(children["w2"]),
            "silu",
        )
    if {"wi_0", "wi_1", "wo"} <= children.keys():
        return _gated(
            _linear(children["wi_0"]),
            _linear(children["wi_1"]),
            _linear(children["wo"]),
            _act(module, "act"),
        )
    if {"wi", "wo"} <= children.keys():
        return _plain(_linear(children["wi"]), _linear(children["wo"]), _act(module, "act"))
    raise ValueError(_unknown(module))


def _unknown(module: nn.Module) -> str:
    kind = type(module).__name__
    return (
        f"{kind} is not a feed-forward block FFN Lab can read; known: " + "; ".join(FAMILIES) + "."
    )


Linear = tuple[Tensor, Tensor | None]
"""(weight [in, out] in the paper's orientation, bias [out] or None)."""


def _linear(layer: nn.Module) -> Linear:
    """An nn.Linear's weight, turned from torch's [out, in] to the paper's [in, out]."""
    if not isinstance(layer, nn.Linear):
        raise ValueError(f"expected an nn.Linear, got {type(layer).__name__}")
    return layer.weight.detach().T, None if layer.bias is None else layer.bias.detach()


def _conv1d(layer: nn.Module) -> Linear:
    """GPT-2's Conv1D stores its weight as [in, out] already (x @ weight + bias)."""
    if isinstance(layer, nn.Linear):
        return _linear(layer)
    weight = getattr(layer, "weight", None)
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError(f"expected GPT-2's Conv1D with a 2-D weight, got {type(layer).__name__}")
    bias = getattr(layer, "bias", None)
    return weight.detach(), bias.detach() if isinstance(bias, Tensor) else None


def _bert(intermediate: nn.Module, output: nn.Module) -> ModuleFFN:
    up = getattr(intermediate, "dense", None)
    down = getattr(output, "dense", None)
    if up is None or down is None:
        raise ValueError(
            f"{type(intermediate).__name__} + {type(output).__name__}: expected BERT's "
            "intermediate.dense and output.dense; known: " + "; ".join(FAMILIES) + "."
        )
    return _plain(_linear(up), _linear(down), _act(intermediate, "intermediate_act_fn"))


def _act(module: nn.Module, attribute: str) -> str:
    """The registry key of the element-wise function `module.<attribute>` computes."""
    fn = getattr(module, attribute, None)
    if not callable(fn):
        raise ValueError(f"{type(module).__name__} has no activation {attribute!r}")
    return identify_activation(fn)


PROBE = torch.linspace(-8.0, 8.0, 2001)


def identify_activation(fn: Callable[[Tensor], Tensor]) -> str:
    """The key of the non-gated activation in `ACTIVATIONS` that `fn` computes.

    `fn` is evaluated on 2,001 points in [-8, 8] and compared with each activation's
    module (float32, within 1e-6 absolute).

    Raises:
        ValueError: when it matches none of them; the message lists what was tried.
    """
    with torch.no_grad():
        values = fn(PROBE)
    tried = []
    for name, spec in ACTIVATIONS.items():
        if spec.gated:
            continue
        tried.append(name)
        with torch.no_grad():
            reference = spec.factory()(PROBE)
        if torch.allclose(values, reference, rtol=0.0, atol=1e-6):
            return name
    kind = type(fn).__name__
    raise ValueError(
        f"the activation {kind} computes none of the functions FFN Lab knows ({', '.join(tried)})"
    )


def _array(t: Tensor) -> Array:
    return np.ascontiguousarray(t.detach().to(torch.float32).cpu().numpy())


def _bias(*biases: Tensor | None) -> bool:
    present = [b is not None for b in biases]
    if any(present) and not all(present):
        raise ValueError(
            "some linear maps of this block have a bias and others do not; FFN Lab's FFN "
            "has biases on all of them or on none"
        )
    return all(present)


def _plain(up: Linear, down: Linear, activation: str) -> ModuleFFN:
    bias = _bias(up[1], down[1])
    weights: dict[str, Tensor | None] = {"w1": up[0], "w2": down[0]}
    if bias:
        weights |= {"b1": up[1], "b2": down[1]}
    return _result({k: _array(v) for k, v in weights.items() if v is not None}, activation, bias)


def _gated(gate: Linear, up: Linear, down: Linear, activation: str) -> ModuleFFN:
    gated = GATED_OF.get(activation)
    if gated is None or gated not in ACTIVATIONS:
        raise ValueError(
            f"a gated block with {activation!r} in its gate is not one FFN Lab has; gated: "
            + ", ".join(name for name, spec in ACTIVATIONS.items() if spec.gated)
        )
    bias = _bias(gate[1], up[1], down[1])
    weights: dict[str, Tensor | None] = {"w_gate": gate[0], "w1": up[0], "w2": down[0]}
    if bias:
        weights |= {"b_gate": gate[1], "b1": up[1], "b2": down[1]}
    return _result({k: _array(v) for k, v in weights.items() if v is not None}, gated, bias)


def _result(weights: dict[str, Array], activation: str, bias: bool) -> ModuleFFN:
    d_model, d_ff = weights["w1"].shape
    return ModuleFFN(
        d_model=int(d_model),
        d_ff=int(d_ff),
        activation=activation,
        bias=bias,
        weights=weights,
    )


def describe(result: ModuleFFN) -> dict[str, Any]:
    """Shapes of what `from_module` found, for printing (no arrays)."""
    return {
        "d_model": result["d_model"],
        "d_ff": result["d_ff"],
        "activation": result["activation"],
        "bias": result["bias"],
        "weights": {name: list(a.shape) for name, a in result["weights"].items()},
    }
