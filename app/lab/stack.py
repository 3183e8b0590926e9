"""A stack of Transformer layers, each with its own position-wise FFN.

Layer i (0-based) is either an FFN sub-layer alone (``attention=False``) or a full encoder
block, self-attention then FFN, each with its residual connection and LayerNorm
(``attention=True``; Vaswani et al. 2017, section 3.1):

    post-norm:  x = LN(x + Attn(x));      x = LN(x + FFN(x))
    pre-norm:   x = x + Attn(LN(x));      x = x + FFN(LN(x))

Every LayerNorm is `torch.nn.LayerNorm(d_model)` with its default parameters. Layer i's FFN
weights come from the independent stream ``f"layer{i}.weights"`` of the seed, its attention
weights from ``f"layer{i}.attention"`` (`app.model.seeding`). With ``share_weights``
(ALBERT, Lan et al. 2020, cross-layer sharing of all parameters) every layer uses layer 0's
FFN and layer 0's attention, so the FFN parameters are counted once.

`run_stack` measures, per layer: the FFN's update ``‖FFN(x)‖ / ‖x‖`` per position (x is
the residual stream entering the FFN sub-layer), the hidden sparsity and the output row
norms; and, given a nudge of one token, which rows of each layer's output changed. The two
states are two separate forward calls of the same shape, so rows are compared bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn

from app.analysis import compare_outputs, param_counts
from app.analysis.sparsity import DEFAULT_THRESHOLD, SparsityStats, sparsity
from app.model.attention import SelfAttention
from app.model.block import NORMS
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward

F32 = npt.NDArray[np.float32]


class StackError(ValueError):
    """A stack that cannot be built or run (bad size, norm, position or input shape)."""


def ffn_stream(layer: int) -> str:
    """The seeding stream of layer `layer`'s FFN weights."""
    return f"layer{layer}.weights"


def attention_stream(layer: int) -> str:
    """The seeding stream of layer `layer`'s attention weights."""
    return f"layer{layer}.attention"


class StackLayer(nn.Module):
    """One layer: [self-attention sub-layer], then the FFN sub-layer, each residual + LN.

    Args:
        ffn: the layer's FFN.
        attention: a module mapping [T, d_model] to the attention sub-layer's output
            (before the residual add), or None for an FFN sub-layer alone.
        norm: "post" or "pre".
        attention_norm, ffn_norm: the LayerNorms (default: `nn.LayerNorm(d_model)`).
    """

    def __init__(
        self,
        ffn: PositionwiseFeedForward,
        attention: nn.Module | None,
        norm: str,
        attention_norm: nn.Module | None = None,
        ffn_norm: nn.Module | None = None,
    ) -> None:
        super().__init__()
        d_model = ffn.config.d_model
        self.norm = norm
        self.ffn = ffn
        self.attention = attention
        self.attention_norm: nn.Module | None = None
        if attention is not None:
            self.attention_norm = attention_norm or nn.LayerNorm(d_model)
        self.ffn_norm = ffn_norm or nn.LayerNorm(d_model)
        self.requires_grad_(False)


@dataclass(frozen=True)
class LayerTrace:
    """One layer's pass (float32; T tokens).

    Attributes:
        input: [T, d_model], the residual stream entering the layer.
        attention_output: [T, d_model], Attn(x) (or Attn(LN(x))), None without attention.
        ffn_residual: [T, d_model], the residual stream entering the FFN sub-layer (x in
            ‖FFN(x)‖ / ‖x‖).
        ffn_output: [T, d_model], the FFN's output (what is added to the residual stream).
        hidden: [T, d_ff], the FFN's hidden activations.
        output: [T, d_model], the layer's output.
    """

    input: Tensor
    attention_output: Tensor | None
    ffn_residual: Tensor
    ffn_output: Tensor
    hidden: Tensor
    output: Tensor


def _layer_trace(layer: StackLayer, x: Tensor) -> LayerTrace:
    attention_output = None
    residual = x
    if layer.attention is not None and layer.attention_norm is not None:
        if layer.norm == "post":
            attention_output = layer.attention(residual)  # (T, d_model)
            residual = layer.attention_norm(residual + attention_output)  # (T, d_model)
        else:
            attention_output = layer.attention(layer.attention_norm(residual))  # (T, d_model)
            residual = residual + attention_output  # (T, d_model)
    if layer.norm == "post":
        trace = layer.ffn.trace(residual)
        output = layer.ffn_norm(residual + trace.output)  # (T, d_model)
    else:
        trace = layer.ffn.trace(layer.ffn_norm(residual))
        output = residual + trace.output  # (T, d_model)
    return LayerTrace(x, attention_output, residual, trace.output, trace.hidden, output)


class Stack(nn.Module):
    """`n_layers` layers applied in order to x float32 [T, d_model] (eval mode, no grad)."""

    def __init__(
        self,
        layers: list[StackLayer],
        shared: bool,
        submitted: bool = False,
        attention_params: int = 0,
        source: str = "seeded",
    ) -> None:
        super().__init__()
        self.attention_params = attention_params
        self.source = source
        self.modules_in_order = nn.ModuleList(layers)  # registered, for .eval()/.to()
        self.layers: list[StackLayer] = list(layers)  # typed access
        self.shared = shared
        self.submitted = submitted

    def trace(self, x: Tensor) -> list[LayerTrace]:
        """Every layer's trace, in order.

        Raises:
            StackError: unless x is [T, d_model] with T >= 1.
        """
        d_model = self.layers[0].ffn.config.d_model
        if x.dim() != 2 or x.shape[1] != d_model or x.shape[0] < 1:
            raise StackError(f"x must be [T, {d_model}] with T >= 1, got {list(x.shape)}")
        traces: list[LayerTrace] = []
        with torch.inference_mode():
            for layer in self.layers:
                trace = _layer_trace(layer, x)
                traces.append(trace)
                x = trace.output
        return traces


def build_stack(
    config: FFNConfig,
    n_layers: int,
    seed: int,
    *,
    share_weights: bool = False,
    attention: bool = False,
    norm: str = "post",
    num_heads: int = 1,
    weights: FFNWeights | None = None,
) -> Stack:
    """Build the stack (see the module docstring).

    Args:
        config: every layer's FFN shape (eval mode: dropout is not applied).
        n_layers: number of layers, >= 1.
        seed: the user's seed; layer i's FFN is drawn from its stream "layer{i}.weights"
            and its attention from "layer{i}.attention" (`app.model.seeding`).
        share_weights: one FFN (and one attention) for every layer, ALBERT-style.
        attention: full blocks (attention + FFN) instead of FFN sub-layers alone.
        norm: "post" or "pre".
        num_heads: attention heads (must divide d_model).
        weights: FFN weights for every layer; requires `share_weights`.

    Raises:
        StackError: n_layers < 1, an unknown norm, weights without share_weights, or a bad
            head count.
    """
    if n_layers < 1:
        raise StackError(f"n_layers must be at least 1, got {n_layers}")
    if norm not in NORMS:
        raise StackError(f"unknown norm {norm!r}; supported: {', '.join(NORMS)}")
    if weights is not None and not share_weights:
        raise StackError("submitted weights are one FFN: they need share_weights = true")
    eval_config = FFNConfig(config.d_model, config.d_ff, config.activation, config.bias)

    def seeded(layer: int) -> FFNWeights:
        return FFNWeights.seeded(
            config.d_model,
            config.d_ff,
            seed,
            gated=config.gated,
            bias=config.bias,
            stream=ffn_stream(layer),
        )

    layers: list[StackLayer] = []
    shared_ffn: PositionwiseFeedForward | None = None
    shared_attention: SelfAttention | None = None
    for i in range(n_layers):
        if shared_ffn is not None:
            ffn = shared_ffn
            attn = shared_attention
        else:
            layer_weights = weights or seeded(i)  # i = 0 when shared: layer 0's weights
            ffn = PositionwiseFeedForward(eval_config, layer_weights)
            ffn.eval()
            attn = None
            if attention:
                try:
                    attn = SelfAttention(
                        config.d_model,
                        num_heads,
                        seed,
                        bias=config.bias,
                        stream=attention_stream(i),
                    )
                except ValueError as error:
                    raise StackError(str(error)) from error
            if share_weights:
                shared_ffn, shared_attention = ffn, attn
        layers.append(StackLayer(ffn, attn, norm))
    attention_params = attention_param_count(config.d_model, config.bias) if attention else 0
    return Stack(layers, share_weights, weights is not None, attention_params)


def attention_param_count(d_model: int, bias: bool) -> int:
    """Parameters of one self-attention sub-layer: 4 d_model² (+ 4 d_model with biases)."""
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


@dataclass(frozen=True)
class LayerChange:
    """How one layer's output moved when the input token `position` was nudged.

    Attributes:
        delta_norm_per_position: float32 [T], ‖Δ output row‖₂.
        changed_positions: rows of the layer's output that are not bit-identical.
        max_abs_change_other_positions: max |Δ| over rows other than `position`.
    """

    delta_norm_per_position: F32
    changed_positions: list[int]
    max_abs_change_other_positions: float


@dataclass(frozen=True)
class LayerResult:
    """One layer's numbers.

    Attributes:
        index: 0-based layer index.
        params: its FFN's parameters per tensor and "total" (`param_counts`).
        weights_stream: the seeding stream its FFN weights come from ("submitted" when the
            user gave them).
        update_ratio: float32 [T], ‖FFN(x)‖ / ‖x‖ per position (NaN where ‖x‖ = 0).
        attention_update_ratio: float32 [T], ‖Attn‖ / ‖x‖ (x entering the layer), or None.
        sparsity: of the FFN's hidden [T, d_ff] (`app.analysis.sparsity`).
        output_row_norms: float32 [T], ‖layer output row‖₂.
        change: the perturbation after this layer, or None without a nudge.
    """

    index: int
    params: dict[str, int]
    weights_stream: str
    update_ratio: F32
    attention_update_ratio: F32 | None
    sparsity: SparsityStats
    output_row_norms: F32
    change: LayerChange | None


@dataclass(frozen=True)
class StackResult:
    """What `run_stack` measured.

    Attributes:
        layers: one `LayerResult` per layer.
        params_total: FFN parameters of the whole stack (one FFN's when shared).
        attention_params_total: attention parameters (0 without attention).
        output: float32 [T, d_model], the last layer's output.
        change: the perturbation after the last layer, or None.
    """

    layers: list[LayerResult]
    params_total: int
    attention_params_total: int
    output: Tensor
    change: LayerChange | None


def _ratio(numerator: Tensor, denominator: Tensor) -> F32:
    num = torch.linalg.vector_norm(numerator, dim=1)
    den = torch.linalg.vector_norm(denominator, dim=1)
    ratio = torch.where(den > 0, num / den.clamp_min(torch.finfo(den.dtype).tiny), torch.nan)
    out: F32 = ratio.numpy()
    return out


def _change(before: Tensor, after: Tensor, position: int) -> LayerChange:
    stats = compare_outputs(before, after, position)
    return LayerChange(
        stats.delta_norm_per_position, stats.changed_positions, stats.max_abs_change_other_positions
    )


def run_stack(
    stack: Stack,
    x: Tensor,
    *,
    position: int | None = None,
    nudge: Tensor | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    between_passes: Callable[[], None] | None = None,
) -> StackResult:
    """Run the stack on x [T, d_model]; with `position` and `nudge` [d_model], run it again
    on x with `nudge` added to row `position` (a separate call) and compare layer by layer.

    `between_passes` is called after each pass (the server stops abandoned work there).

    Raises:
        StackError: a bad x, a position outside [0, T), a nudge of the wrong shape, or a
            nudge without a position.
    """
    traces = stack.trace(x)
    if between_passes is not None:
        between_passes()
    changes: list[LayerChange] | None = None
    if position is not None or nudge is not None:
        if position is None or nudge is None:
            raise StackError("a perturbation needs both a position and a nudge")
        if not 0 <= position < x.shape[0]:
            raise StackError(f"position must be in [0, {x.shape[0] - 1}], got {position}")
        if tuple(nudge.shape) != (x.shape[1],):
            raise StackError(f"the nudge must be [{x.shape[1]}], got {list(nudge.shape)}")
        x_perturbed = x.clone()
        x_perturbed[position] += nudge
        traces_after = stack.trace(x_perturbed)
        if between_passes is not None:
            between_passes()
        changes = [
            _change(a.output, b.output, position) for a, b in zip(traces, traces_after, strict=True)
        ]
    layers: list[LayerResult] = []
    for i, (layer, trace) in enumerate(zip(stack.layers, traces, strict=True)):
        config = layer.ffn.config
        if stack.source == "pretrained":
            stream = f"pretrained layer {i}"
        elif stack.submitted:
            stream = "submitted"
        else:
            stream = ffn_stream(0 if stack.shared else i)
        layers.append(
            LayerResult(
                index=i,
                params=param_counts(config),
                weights_stream=stream,
                update_ratio=_ratio(trace.ffn_output, trace.ffn_residual),
                attention_update_ratio=(
                    None
                    if trace.attention_output is None
                    else _ratio(trace.attention_output, trace.input)
                ),
                sparsity=sparsity(trace.hidden, config.activation, threshold),
                output_row_norms=torch.linalg.vector_norm(trace.output, dim=1).numpy(),
                change=None if changes is None else changes[i],
            )
        )
    first = stack.layers[0]
    distinct = 1 if stack.shared else len(stack.layers)
    ffn_params = param_counts(first.ffn.config)["total"]
    attention_params = stack.attention_params
    return StackResult(
        layers=layers,
        params_total=distinct * ffn_params,
        attention_params_total=distinct * attention_params,
        output=traces[-1].output,
        change=None if changes is None else changes[-1],
    )
