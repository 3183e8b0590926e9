"""Pydantic v2 response models of the JSON API, for the OpenAPI documentation.

The server encodes the answers with orjson (NumPy arrays inside, see `app.api.encoding`);
these models describe exactly what is sent, and schemathesis checks the two agree.
Orientation is the paper's: `w1 [d_model, d_ff]`, `w2 [d_ff, d_model]` (Vaswani et al.
2017, eq. 2).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Matrix = list[list[float]]
Vector = list[float]


class SparsityOut(BaseModel):
    """Sparsity of the hidden activations, computed on the full [T, d_ff] tensor."""

    per_token: Vector = Field(description="[T], fraction of d_ff units inactive per token")
    per_neuron: Vector = Field(description="[d_ff], fraction of tokens on which a unit is active")
    overall: float = Field(description="fraction of all T x d_ff values inactive")
    dead_neurons: list[int] = Field(description="units inactive on every token")
    threshold: float = Field(description="0 for ReLU (exact zeros), else the |h| threshold")
    rule: Literal["exact_zero", "abs_below_threshold"]


class FlopsOut(BaseModel):
    """FLOPs of one forward pass (a multiply-add is 2 FLOPs)."""

    up: int
    activation: int
    gating: int
    down: int
    bias: int
    total: int
    per_token: int


class ConfigOut(BaseModel):
    """The configuration that was run."""

    d_model: int
    d_ff: int
    activation: str
    gated: bool
    bias: bool
    seed: int
    num_tokens: int
    input_seed: int | None
    mode: Literal["eval", "train"]
    dropout: float
    dropout_seed: int
    weights_source: Literal["seeded", "submitted", "pretrained"]
    model: str | None = Field(None, description="the pretrained model, when one was run")
    layer: int | None = Field(None, description="its encoder layer (0-based)")


class ColumnReductionOut(BaseModel):
    """Tensors of which only some columns were sent (display summary, `display='auto'`)."""

    tensors: list[str] = Field(
        description="response fields cut to the `kept` columns, e.g. pre_activation, up, hidden"
    )
    full_shape: list[int] = Field(description="[T, n], the shape computed (also in `shapes`)")
    kept: list[int] = Field(
        description="ascending column indices sent: column j of each tensor is unit kept[j]"
    )
    ranked_by: str = Field(
        description="the group's lead tensor (display='top_rms': whose per-column RMS chose them)"
    )
    start: int | None = Field(
        None, description="method 'window': first column sent (kept = start, ..., stop - 1)"
    )
    stop: int | None = Field(None, description="method 'window': one past the last column sent")


class ReductionOut(BaseModel):
    """What was summarised for display, and how; null in `reduction` when nothing was."""

    method: Literal["window", "top_rms_columns"] = Field(
        description=(
            "'window': k consecutive columns from `start` (display='auto'); "
            "'top_rms_columns': the k columns with the largest root mean square over the T "
            "tokens (display='top_rms')"
        )
    )
    max_values: int = Field(description="the answer's [T, n] tensors held more numbers than this")
    keep_values: int = Field(
        description="a summarised tensor keeps max(1, keep_values // T) columns"
    )
    groups: list[ColumnReductionOut]


class HistogramOut(BaseModel):
    """Equal-width histogram of every value of a full tensor."""

    edges: Vector = Field(description="[bins + 1]; bin i is [edges[i], edges[i+1])")
    counts: list[int] = Field(description="[bins]; they sum to the tensor's number of values")


class TensorNamesOut(BaseModel):
    """One tensor's names in TransformerLens 4, transformers and nnsight.

    `{layer}` stands for the layer index (filled in when a pretrained layer was run).
    """

    transformer_lens: str | None = Field(
        description="TransformerLens 4 hook (activations, e.g. blocks.{layer}.mlp.hook_pre) "
        "or parameter (weights, e.g. blocks.{layer}.mlp.W_in); null when it has none"
    )
    transformer_lens_also: list[str] | None = Field(
        None, description="TransformerLens 4's other names of the same activation"
    )
    huggingface: str = Field(
        description="module path in the family's top-level transformers class, e.g. "
        "model.layers[{layer}].mlp.gate_proj (a weight: its parameter)"
    )
    huggingface_reads: Literal["input", "output"] | None = Field(
        None, description="whether the tensor is that module's input or output"
    )
    huggingface_shape: str | None = Field(
        None, description="a weight's shape as the library stores it (nn.Linear: [out, in])"
    )
    nnsight: str = Field(description="the nnsight path, e.g. model.model.layers[0].mlp.input")
    shape: str = Field(description="the shape in FFN Lab's words, e.g. [T, d_ff]")
    family: Literal["bert", "gpt2", "llama"] = Field(
        description="the transformers family the paths are of (gated: llama; GELU tanh: gpt2; "
        "other one-branch FFNs and MiniLM: bert)"
    )


class ForwardResponse(BaseModel):
    """Every intermediate tensor of FFN(x) = act(x W1 + b1) W2 + b2 (Vaswani et al. 2017)."""

    config: ConfigOut
    shapes: dict[str, list[int]] = Field(description="tensor name -> shape")
    input: Matrix = Field(
        description="[T, d_model], the tokens x (columns as in `reduction` when summarised)"
    )
    pre_activation: Matrix = Field(
        description=(
            "[T, d_ff], x W1 + b1 (gated: x W_gate + b_gate); in a summarised answer only "
            "the columns listed in `reduction`"
        )
    )
    up: Matrix | None = Field(
        description="[T, d_ff], x W1 + b1 for gated variants, else null (columns as hidden)"
    )
    hidden: Matrix = Field(
        description=(
            "[T, d_ff], after the activation, before dropout; whole unless the answer's "
            "[T, n] tensors hold more than display_max_values numbers (81,920 by default: "
            "T=16 x 512->2048 is whole) and display='auto', then the columns in `reduction`"
        )
    )
    dropped: list[list[bool]] | None = Field(
        description="[T, d_ff] units dropped (train mode; columns as hidden)"
    )
    output: Matrix = Field(
        description="[T, d_model], the FFN output (columns as in `reduction` when summarised)"
    )
    sparsity: SparsityOut
    params: dict[str, int] = Field(description="parameters per tensor and total")
    flops: FlopsOut
    weights: dict[str, Matrix | Vector] | None = Field(
        None, description="the weights used, when include_weights is true"
    )
    tokens: list[str] | None = Field(
        None, description="[T] WordPiece tokens of `text` ([CLS], [SEP] shown); model only"
    )
    token_ids: list[int] | None = Field(None, description="[T] their vocabulary ids")
    special: list[bool] | None = Field(None, description="[T] true for [CLS]/[SEP]")
    reduction: ReductionOut | None = Field(
        None,
        description=(
            "null when every tensor was sent whole; else which tensors were summarised for "
            "display and which columns they kept. sparsity, params, flops and "
            "pre_activation_histogram are always computed on the full tensors"
        ),
    )
    pre_activation_histogram: HistogramOut | None = Field(
        None, description="histogram of every value of the full pre_activation [T, d_ff]"
    )
    tensor_names: dict[str, TensorNamesOut] | None = Field(
        None,
        description=(
            "each tensor's names in the libraries students read models with next "
            "(app.analysis.tensor_names): input, pre_activation, (up,) hidden, output, and "
            "the weights when include_weights is true"
        ),
    )


class PerturbResponse(BaseModel):
    """The output before and after nudging token `position`."""

    config: ConfigOut
    position: int
    input: Matrix = Field(description="[T, d_model] (columns as in `reduction` when summarised)")
    input_perturbed: Matrix = Field(description="[T, d_model], only row `position` differs")
    output: Matrix = Field(description="[T, d_model], FFN(input)")
    output_perturbed: Matrix = Field(description="[T, d_model], FFN(input_perturbed)")
    output_delta: Matrix = Field(description="[T, d_model], output_perturbed - output")
    delta_norm_per_position: Vector = Field(description="[T], L2 norm of each output row change")
    changed_positions: list[int] = Field(description="rows not bit-identical")
    max_abs_change_other_positions: float = Field(
        description="max |change| over rows other than `position`; exactly 0.0 for the FFN"
    )
    tokens: list[str] | None = Field(None, description="[T] tokens of `text`; model only")
    tokens_perturbed: list[str] | None = Field(
        None, description="[T] tokens after replace_word; model only"
    )
    perturbation: Literal["nudge", "replace_word"] = Field(
        "nudge", description="what changed row `position` of the input"
    )
    layer_delta_norm_per_position: Vector | None = Field(
        None,
        description="model only: [T], L2 norm of the change of the FULL encoder layer's output "
        "(attention + FFN + LayerNorms) when the same row of the layer's input changes; "
        "attention spreads it to every position",
    )
    layer_changed_positions: list[int] | None = Field(
        None, description="model only: rows of the full layer's output that changed"
    )
    layer_max_abs_change_other_positions: float | None = Field(
        None, description="model only: max |change| of the full layer at other positions"
    )
    reduction: ReductionOut | None = Field(
        None,
        description=(
            "null when every tensor was sent whole; else the [T, d_model] tensors were cut to "
            "the columns where output_delta is largest (5 T d_model > display_max_values). "
            "delta_norm_per_position, changed_positions and max_abs_change_other_positions "
            "are computed on the full tensors"
        ),
    )


class ActivationOut(BaseModel):
    """One supported activation."""

    name: str
    label: str
    gated: bool
    formula: str = Field(description="LaTeX")
    exact_zeros: bool
    source: str


class PresetOut(BaseModel):
    """A named configuration from the literature."""

    id: str
    name: str
    d_model: int
    d_ff: int
    activation: str
    bias: bool
    source: str
    num_tokens: int
    params: int
    weights: dict[str, Matrix | Vector] | None
    tokens: Matrix | None


class ComputeStatsOut(BaseModel):
    """Counters of the compute pools since the process started (see app/api/compute.py)."""

    started: int = Field(description="computations started in a pool")
    finished: int = Field(description="computations that ran to the end")
    running: int = Field(description="computations running now")
    dropped_disconnected: int = Field(description="not started: the client had gone")
    dropped_superseded: int = Field(
        description="not started: a newer request with the same X-FFN-Lab-Supersede came"
    )
    stopped_superseded: int = Field(description="stopped at a checkpoint: superseded")
    timed_out: int = Field(description="answered 503: over the time budget")
    max_stale_running: int = Field(
        description="most computations running at once whose answer was already superseded"
    )


class HealthOut(BaseModel):
    """Liveness and versions."""

    status: Literal["ok"]
    version: str
    torch: str
    numpy: str
    fastapi: str
    plotly: str
    python: str
    compute: ComputeStatsOut | None = Field(
        None, description="this process's compute counters (null before the app started)"
    )


class ErrorOut(BaseModel):
    """An error that is not about one field: 413 (body too large), 503 (busy), 500."""

    detail: str = Field(description="what went wrong, the value and the limit")
