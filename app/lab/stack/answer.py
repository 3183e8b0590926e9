"""POST /api/stack's answer as plain Python: `StackSpec` in, the answer's dict out.

`check_stack` holds the stack body's checks (the API's `StackRequest` runs them in its
validator, `lab.stack(...)` through `stack_spec`); `stack_answer` assembles every field of
`StackResponse` from `app.lab.stack.run` (seeded or shared layers) or `app.lab.stack.pretrained`
(the real encoder's layers). No HTTP, no Pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from app.analysis import flop_count, param_counts
from app.analysis.budget import attention_flop_count
from app.lab import pretrained as runner_pretrained
from app.lab.forward import config_out, input_tokens, random_direction, shallow_dict
from app.lab.limits import Limits
from app.lab.spec.specs import (
    PRETRAINED_D_MODEL,
    PRETRAINED_HEADS,
    PRETRAINED_LAYERS,
    SEED_MAX,
    ForwardSpec,
    build_spec,
    check_bool,
    check_choice,
    check_delta,
    check_int,
    check_number,
)
from app.lab.stack.pretrained import pretrained_stack
from app.lab.stack.run import (
    LayerChange,
    StackResult,
    attention_param_count,
    build_stack,
    run_stack,
)
from app.model.ffn import FFNConfig, FFNWeights
from app.model.pretrained import MODEL_ID
from app.services.checkpoint import checkpoint

Array = npt.NDArray[np.float32]
NORMS = ("post", "pre")
MAX_LAYERS = 12
"""The body's own bound on n_layers (the server's `max_layers` setting may be lower)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class StackSpec(ForwardSpec):
    """A stack of `n_layers` layers (see `StackRequest` for every field).

    Attributes:
        n_layers, share_weights (ALBERT-style, layer 0's FFN everywhere), attention (full
        blocks), norm ("post" or "pre"), num_heads: the stack's shape.
        position: the token to nudge (None: no perturbation); delta_array float32
            [d_model], or `scale` (1 when None) with `direction_seed`.
    """

    n_layers: int = 4
    share_weights: bool = False
    attention: bool = False
    norm: str = "post"
    num_heads: int = 1
    position: int | None = None
    delta_array: Array | None = None
    scale: float | None = None
    direction_seed: int = 0

    @property
    def distinct_layers(self) -> int:
        """How many different sets of weights the stack holds (1 when shared)."""
        return 1 if self.share_weights else self.n_layers

    @property
    def heads(self) -> int:
        """The attention heads each layer runs: the pretrained model's own (12) with
        `model`, else `num_heads`."""
        return PRETRAINED_HEADS if self.model is not None else self.num_heads

    def layer_config(self) -> FFNConfig:
        """Every layer's FFN shape (the pretrained model's: 384 -> 1536, GELU)."""
        if self.model is not None:
            return FFNConfig(PRETRAINED_D_MODEL, 4 * PRETRAINED_D_MODEL, "gelu")
        return self.ffn_config()

    def stack_params(self) -> int:
        """FFN (+ attention) parameters over the distinct layers."""
        config = self.layer_config()
        per_layer = param_counts(config)["total"]
        if self.attention:
            per_layer += attention_param_count(config.d_model, config.bias)
        return self.distinct_layers * per_layer

    def stack_flops(self, max_tokens: int) -> int:
        """FLOPs of the run: one pass (two with a nudge) through every layer (model: at
        `max_tokens`, the most tokens a text may give)."""
        config = self.layer_config()
        t = max_tokens if self.model is not None else self.token_count
        per_layer = flop_count(config, t).total
        if self.attention:
            per_layer += attention_flop_count(config.d_model, t, self.heads, bias=config.bias).total
        passes = 1 if self.position is None else 2
        return passes * self.n_layers * per_layer


def stack_spec(limits: Limits, **body: Any) -> StackSpec:
    """A `StackSpec` from the keywords of a POST /api/stack body, checked as the API checks
    it (the forward body's checks, the fields' own bounds, then `check_stack`).

    Raises:
        TypeError: an argument the API body does not have.
        ValueError: a value the API refuses with a 422; the message names the field.
    """
    spec = build_spec(StackSpec, limits, body)
    check_int("n_layers", spec.n_layers, 1, MAX_LAYERS)
    check_bool("share_weights", spec.share_weights)
    check_bool("attention", spec.attention)
    check_choice("norm", spec.norm, NORMS)
    check_int("num_heads", spec.num_heads, 1)
    if spec.position is not None:
        check_int("position", spec.position, 0)
    if spec.scale is not None:
        check_number("scale", spec.scale, 0.0)
    check_int("direction_seed", spec.direction_seed, 0, SEED_MAX)
    delta = body.get("delta")
    if delta is not None and hasattr(delta, "detach"):
        delta = delta.detach().cpu().numpy()
    array = check_stack(spec, delta, body.get("weights") is not None, limits)
    return spec if array is None else replace(spec, delta_array=array)


def check_stack(spec: StackSpec, delta: Any, weights_given: bool, limits: Limits) -> Array | None:
    """The stack body's checks, after the forward body's; returns the validated `delta`.

    Raises:
        ValueError: with the words of the API's 422 (the field, the value, what is allowed).
    """
    if spec.model is not None:
        if spec.n_layers > PRETRAINED_LAYERS:
            raise ValueError(
                f"n_layers = {spec.n_layers} is too many: {spec.model!r} has "
                f"{PRETRAINED_LAYERS} layers"
            )
        if spec.share_weights:
            raise ValueError(
                f"share_weights is not available with model = {spec.model!r}: its layers have "
                "their own trained weights"
            )
        if spec.norm != "post":
            raise ValueError(f"model = {spec.model!r} is post-norm (BERT); leave norm out")
        if spec.layer != 0:
            raise ValueError("layer is not used by the stack: n_layers says how many layers run")
        return _check_nudge(spec, delta, limits.max_abs_value, pretrained=True)
    if spec.n_layers > limits.max_layers:
        raise ValueError(
            f"n_layers = {spec.n_layers} is too many: a stack has 1 to {limits.max_layers} layers"
        )
    if spec.mode != "eval":
        raise ValueError(
            "mode = 'train' is not available for the stack: it runs in eval mode (no "
            "dropout); leave mode out"
        )
    if weights_given and not spec.share_weights:
        raise ValueError(
            "weights are one FFN: with weights, set share_weights = true (every layer "
            "uses them), or leave weights out for each layer's own seeded FFN"
        )
    if spec.attention and spec.d_model % spec.num_heads:
        raise ValueError(
            f"num_heads = {spec.num_heads} does not divide d_model = {spec.d_model}; each "
            "head needs d_k = d_model / num_heads (try 1)"
        )
    if spec.attention and spec.num_heads > limits.max_heads:
        raise ValueError(
            f"num_heads = {spec.num_heads} is too many: at most {limits.max_heads} heads"
        )
    params = spec.stack_params()
    if params > limits.max_params:
        raise ValueError(
            f"this stack (n_layers = {spec.n_layers}, d_model = {spec.d_model}, d_ff = "
            f"{spec.d_ff}) has {params:,} parameters; this server runs at most "
            f"{limits.max_params:,}. Use fewer layers, share_weights, or a smaller d_ff"
        )
    return _check_nudge(spec, delta, limits.max_abs_value)


def _check_nudge(
    spec: StackSpec, delta: Any, max_abs_value: float, pretrained: bool = False
) -> Array | None:
    if spec.position is None:
        given = [n for n, v in (("delta", delta), ("scale", spec.scale)) if v is not None]
        if given:
            raise ValueError(f"{given[0]} needs a position: the token to nudge")
        return None
    count = spec.token_count
    width = PRETRAINED_D_MODEL if pretrained else spec.d_model
    if not pretrained and spec.position >= count:
        raise ValueError(
            f"position = {spec.position} is out of range: there are {count} tokens, "
            f"so position must be in [0, {count - 1}]"
        )
    if delta is not None and spec.scale is not None:
        raise ValueError("give either delta or scale, not both")
    array = check_delta(delta, width, max_abs=max_abs_value)
    if spec.scale is not None and spec.scale > max_abs_value:
        raise ValueError(f"scale = {spec.scale:g} is too large: at most {max_abs_value:g}")
    return array


def _nudge(spec: StackSpec, d_model: int) -> torch.Tensor | None:
    if spec.position is None:
        return None
    if spec.delta_array is not None:
        return torch.from_numpy(spec.delta_array)
    scale = 1.0 if spec.scale is None else spec.scale
    return random_direction(d_model, scale, spec.direction_seed)


def _threshold(spec: StackSpec, limits: Limits) -> float:
    if spec.sparsity_threshold is not None:
        return spec.sparsity_threshold
    return limits.sparsity_threshold


def stack_answer(spec: StackSpec, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/stack returns (see `StackResponse`): per layer its params,
    weights stream, update ratios [T], sparsity and output row norms [T]; the last layer's
    output float32 [T, d_model]; with `position`, how each layer's output moved.

    Raises:
        InvalidValue: model mode, a position past the text's tokens.
        ModelUnavailable: model mode without the weights package.
    """
    if spec.model is not None:
        return _pretrained_answer(spec, limits)
    config = spec.ffn_config()
    submitted = spec.weights_arrays
    weights = (
        None
        if submitted is None
        else FFNWeights.from_named({k: torch.from_numpy(v) for k, v in submitted.items()})
    )
    stack = build_stack(
        config,
        spec.n_layers,
        spec.seed,
        share_weights=spec.share_weights,
        attention=spec.attention,
        norm=spec.norm,
        num_heads=spec.num_heads,
        weights=weights,
    )
    checkpoint()
    result = run_stack(
        stack,
        input_tokens(spec),
        position=spec.position,
        nudge=_nudge(spec, spec.d_model),
        threshold=_threshold(spec, limits),
        between_passes=checkpoint,
    )
    return _answer(spec, result, config_out(spec, config))


def _pretrained_answer(spec: StackSpec, limits: Limits) -> dict[str, Any]:
    """The real encoder's first n_layers layers on the text's embeddings."""
    model = runner_pretrained.load_model()
    encoded = runner_pretrained.encode_text(model, spec.text or "", limits)
    t = len(encoded.tokens)
    if spec.position is not None and spec.position >= t:
        raise runner_pretrained.invalid(
            "position",
            f"position = {spec.position} is out of range: the text has {t} tokens, so position "
            f"must be in [0, {t - 1}]",
            spec.position,
        )
    stack = pretrained_stack(model.encoder, spec.n_layers, attention=spec.attention)
    with torch.inference_mode():
        x = model.encoder.embed(encoded.ids)
    result = run_stack(
        stack,
        x,
        position=spec.position,
        nudge=_nudge(spec, model.config.hidden_size),
        threshold=_threshold(spec, limits),
        between_passes=checkpoint,
    )
    ffn = model.encoder.layer(0).ffn
    config = config_out(spec, ffn.config) | {
        "num_tokens": t,
        "input_seed": None,
        "weights_source": "pretrained",
        "model": MODEL_ID,
        "layer": None,
    }
    return _answer(spec, result, config) | {"tokens": encoded.tokens, "special": encoded.special}


def _change(change: LayerChange | None) -> dict[str, Any]:
    if change is None:
        return {
            "changed_positions": None,
            "delta_norm_per_position": None,
            "max_abs_change_other_positions": None,
        }
    return {
        "changed_positions": change.changed_positions,
        "delta_norm_per_position": change.delta_norm_per_position,
        "max_abs_change_other_positions": change.max_abs_change_other_positions,
    }


def _answer(spec: StackSpec, result: StackResult, config: dict[str, Any]) -> dict[str, Any]:
    layers = [
        {
            "index": layer.index,
            "params": layer.params,
            "weights_stream": layer.weights_stream,
            "update_ratio": layer.update_ratio,
            "attention_update_ratio": layer.attention_update_ratio,
            "sparsity": shallow_dict(layer.sparsity),
            "output_row_norms": layer.output_row_norms,
            **_change(layer.change),
        }
        for layer in result.layers
    ]
    return {
        "config": config,
        "n_layers": spec.n_layers,
        "share_weights": spec.share_weights,
        "attention": spec.attention,
        "norm": spec.norm,
        "num_heads": spec.heads,
        "layers": layers,
        "params_total": result.params_total,
        "attention_params_total": result.attention_params_total,
        "output": result.output.numpy(),
        "position": spec.position,
        **_change(result.change),
    }
