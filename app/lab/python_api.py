"""The notebook API: `lab.forward`, `lab.perturb`, `lab.stack`, `lab.cheaper` without a server.

Every keyword is a field of the matching API body, with the same name, default and checks
(see `ForwardRequest` / `PerturbRequest` in /openapi.json); the answer holds the same numbers
as POST /api/forward and /api/perturb, as NumPy arrays, by the API's field names:

    from app import lab
    r = lab.forward(d_model=16, d_ff=64, activation="gelu", num_tokens=6)
    r["hidden"]          # float32 [6, 64], after the activation (Vaswani et al. 2017 eq. 2)
    lab.flow(r).show()

Each runs the very function the server runs (app.lab.forward, app.lab.pretrained,
app.lab.stack.answer, app.lab.cheaper.answer) on a
process-wide weight cache of the server's class (`default_cache`, bounded by
`Limits.weight_cache_bytes`). The FFN runs on the
executor in use (`app.model.ffn.use_executor`): "eager" unless `app.model.fast_ffn.install()`
ran, as the server does. Maps under 4M weights give the server's numbers bit for bit either
way; bigger ones differ in the last bits unless "fast" is installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from app.lab import pretrained as runner_pretrained
from app.lab.cheaper.answer import cheaper_answer, cheaper_spec
from app.lab.forward import forward_answer, perturb_answer
from app.lab.limits import Limits
from app.lab.spec.specs import forward_spec, perturb_spec
from app.lab.stack.answer import stack_answer, stack_spec
from app.services.weight_cache import WeightCache

MODULE_KEYS = ("d_model", "d_ff", "activation", "bias")
"""What `lab.from_module` finds beside the weights (`app.lab.from_module.ModuleFFN`)."""


def module_weights(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with `weights=lab.from_module(m)` unpacked, as `**lab.from_module(m)` would be.

    A `ModuleFFN` passed as `weights` brings its d_model, d_ff, activation and bias along;
    a keyword given beside it must agree with the module (ReLU on a GELU block's weights
    would not be that block).

    Raises:
        ValueError: a keyword that contradicts the module (the message names both values).
    """
    found = body.get("weights")
    if not (isinstance(found, Mapping) and "weights" in found and "d_model" in found):
        return body
    out = {k: v for k, v in body.items() if k != "weights"}
    for key in MODULE_KEYS:
        if key in out and out[key] != found[key]:
            raise ValueError(
                f"{key} = {out[key]!r} contradicts the module's {key} = {found[key]!r}; "
                "leave it out: lab.from_module(m) sets it"
            )
        out[key] = found[key]
    out["weights"] = found["weights"]
    return out


class Result(Mapping[str, Any]):
    """An answer of `lab.forward` / `lab.perturb`: read it by the API's field names.

    `r["hidden"]` (or `r.hidden`) is a NumPy array; nested blocks (`config`, `sparsity`,
    `shapes`, ...) are dicts as in the JSON answer. Fields the answer does not have for this
    run (e.g. `up` when not gated) are None.
    """

    def __init__(self, kind: str, data: Mapping[str, Any]) -> None:
        self.kind = kind
        self.data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __getattr__(self, name: str) -> Any:
        data = self.__dict__.get("data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"{self.kind} answer has no field {name!r}; fields: {list(data)}")

    def __repr__(self) -> str:
        config = self.data.get("config", {})
        head = ", ".join(
            f"{k}={config[k]!r}"
            for k in ("d_model", "d_ff", "activation", "num_tokens")
            if k in config
        )
        arrays = ", ".join(
            f"{k} {list(v.shape)}" for k, v in self.data.items() if isinstance(v, np.ndarray)
        )
        return f"<lab.{self.kind}: {head}; {arrays}>"


@lru_cache(maxsize=1)
def default_cache() -> WeightCache:
    """The session's weight cache (seeded weights and models, LRU by bytes), made on first
    use with the default `Limits.weight_cache_bytes`."""
    return WeightCache(Limits().weight_cache_bytes)


def forward(**body: Any) -> Result:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and keep every intermediate tensor.

    Keywords: the POST /api/forward body (d_model, d_ff, activation, seed, bias, tokens,
    num_tokens, input_seed, weights, mode, dropout, dropout_seed, sparsity_threshold,
    include_weights, model, layer, text, display, unit_start, feature_start), same defaults.
    `tokens` and `weights` may be lists, NumPy arrays or torch tensors; `lab.from_module(m)`
    gives d_model, d_ff, activation, bias and weights of a transformers block: pass it as
    `weights=lab.from_module(m)` or unpack it, `**lab.from_module(m)`.

    Returns:
        The /api/forward answer: input [T, d_model], pre_activation / up / hidden [T, d_ff],
        output [T, d_model] (float32), sparsity, params, flops, shapes, config, reduction
        (when summarised for display: `display="full"` sends every column).

    Raises:
        TypeError: a keyword the API body does not have.
        ValueError: a value the API refuses with a 422 (the message names the field), or
            a keyword that contradicts `weights=lab.from_module(m)`;
            `app.lab.errors.ModelUnavailable` when the pretrained weights are not installed.
    """
    limits = Limits()
    spec = forward_spec(limits, **module_weights(body))
    with server_threads(limits):
        if spec.model is not None:
            return Result("forward", runner_pretrained.forward(spec, limits))
        return Result("forward", forward_answer(spec, default_cache(), limits))


def perturb(**body: Any) -> Result:
    """Nudge token `position` and compare the output row by row, as POST /api/perturb.

    Keywords: the forward keywords plus position, delta (a d_model vector) or scale (L2 norm
    of a random direction drawn by direction_seed), and replace_word (model only).

    Returns:
        The /api/perturb answer: input, input_perturbed, output, output_perturbed,
        output_delta [T, d_model], delta_norm_per_position [T], changed_positions,
        max_abs_change_other_positions (exactly 0: the FFN mixes no positions).

    Raises:
        TypeError, ValueError: as `forward`.
    """
    limits = Limits()
    spec = perturb_spec(limits, **module_weights(body))
    with server_threads(limits):
        if spec.model is not None:
            return Result("perturb", runner_pretrained.perturb(spec, limits))
        return Result("perturb", perturb_answer(spec, default_cache(), limits))


def stack(**body: Any) -> Result:
    """A stack of `n_layers` FFN sub-layers (or full blocks), as POST /api/stack.

    Keywords: the POST /api/stack body: the forward keywords plus n_layers (1 to 12),
    share_weights (ALBERT-style: layer 0's FFN everywhere), attention (self-attention +
    FFN blocks), norm ("post" or "pre"), num_heads, and a nudge: position with delta
    [d_model] or scale (L2 norm of a random direction drawn by direction_seed). With
    model = "minilm-l6" and text, the real encoder's first n_layers layers.

    Returns:
        The /api/stack answer: layers (per layer params, weights_stream, update_ratio [T],
        attention_update_ratio, sparsity, output_row_norms [T] and, with a nudge,
        delta_norm_per_position [T], changed_positions), params_total, output float32
        [T, d_model] (the last layer's), changed_positions and
        max_abs_change_other_positions (exactly 0 without attention).

    Raises:
        TypeError, ValueError: as `forward` (the messages are the API's 422 words).
    """
    limits = Limits()
    spec = stack_spec(limits, **module_weights(body))
    with server_threads(limits, single=False):
        return Result("stack", stack_answer(spec, limits))


def cheaper(**body: Any) -> Result:
    """The plain FFN beside a low-rank one and MobileBERT's stacked FFNs, as POST /api/cheaper.

    Keywords: the forward keywords (seeded or submitted weights; no model) plus rank (r of
    W1 ~ U V, default d_model // 4), d_inner (the bottleneck, default d_model // 4) and
    num_ffns (F stacked small FFNs, default 4).

    Returns:
        The /api/cheaper answer: variants (plain, low_rank, stacked: params, params_ratio,
        flops, flops_ratio, output float32 [T, d_model], output_row_norms [T],
        max_abs_diff_from_plain, relative_error), singular_values of W1, energy_kept.

    Raises:
        TypeError, ValueError: as `forward`.
    """
    limits = Limits()
    spec = cheaper_spec(limits, **module_weights(body))
    with server_threads(limits, single=True):
        return Result("cheaper", cheaper_answer(spec, default_cache()))


@contextmanager
def server_threads(limits: Limits, single: bool = False) -> Iterator[None]:
    """Run with the server's torch thread count (`torch_threads`), then restore the caller's.

    A float32 matmul split over 1 or 2 threads rounds differently in the last bit, so the
    same count is what makes `lab.forward` equal to POST /api/forward bit for bit. `single`:
    one thread, as POST /api/cheaper runs (its SVD is far faster on one thread).
    """
    count = 1 if single else limits.torch_threads
    if not count:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
