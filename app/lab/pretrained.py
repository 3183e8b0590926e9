"""Forward and perturb on a real pretrained layer (model = 'minilm-l6').

The encoder runs the text to the input of layer L's FFN; the FFN itself is our
`PositionwiseFeedForward` with the layer's real weights (see app.model.bert). Errors a user
can cause (a position outside the tokens, a word that is not one WordPiece token) are
`InvalidValue`s naming the field (the API's 422s); a missing weights package is
`ModelUnavailable` (the API's 503), which says how to install it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from app.analysis import compare_outputs, flop_count, param_counts, sparsity
from app.analysis.tensor_names import tensor_names
from app.lab.display import Group, summarise
from app.lab.errors import InvalidValue, ModelUnavailable
from app.lab.forward import (
    change_fields,
    config_out,
    display_starts,
    perturb_display,
    perturbed_tensors,
    random_direction,
    with_room_for,
)
from app.lab.limits import Limits
from app.lab.spec.specs import ForwardSpec, PerturbSpec
from app.model.bert import LayerTrace
from app.model.ffn import FFNTrace, PositionwiseFeedForward
from app.model.pretrained import (
    MODEL_ID,
    Encoded,
    Pretrained,
    PretrainedUnavailable,
    get_pretrained,
)


def invalid(
    field: str, message: str, value: Any = None, code: str | None = None, **params: Any
) -> InvalidValue:
    """The error for a bad `field` (the API answers it with a 422 naming the body field;
    `code` and `params` let the page say it in its language)."""
    return InvalidValue(field, message, value, code, **params)


def load_model() -> Pretrained:
    """The process-wide model.

    Raises:
        ModelUnavailable: the weights package is missing (the API answers 503); the
            message gives the install command.
    """
    try:
        return get_pretrained()
    except PretrainedUnavailable as exc:
        raise ModelUnavailable(str(exc)) from None


def encode_text(model: Pretrained, text: str, limits: Limits) -> Encoded:
    """Tokenise, refusing more than `max_tokens` tokens (`InvalidValue` on `text`)."""
    encoded = model.encode(text)
    if len(encoded.tokens) > limits.max_tokens:
        raise InvalidValue(
            "text",
            f"text gives {len(encoded.tokens)} tokens (with [CLS] and [SEP]); the limit is "
            f"{limits.max_tokens}",
            code="text_tokens",
            count=len(encoded.tokens),
            limit=limits.max_tokens,
        )
    return encoded


def _config_out(req: ForwardSpec, ffn: PositionwiseFeedForward, tokens: int) -> dict[str, Any]:
    """The core's `config` block, with what the pretrained layer fixes (eval, no dropout)."""
    return config_out(req, ffn.config) | {
        "num_tokens": tokens,
        "input_seed": None,
        "mode": "eval",
        "dropout": 0.0,
        "weights_source": "pretrained",
        "model": MODEL_ID,
        "layer": req.layer,
    }


def _trace(ffn: PositionwiseFeedForward, x: torch.Tensor) -> FFNTrace:
    with torch.inference_mode():
        return ffn.trace(x)


def forward(req: ForwardSpec, limits: Limits) -> dict[str, Any]:
    """POST /api/forward with a model: the layer's FFN on the text's real hidden states."""
    model = load_model()
    encoded = encode_text(model, req.text or "", limits)
    layer = model.encoder.run_to(encoded.ids, req.layer)
    ffn = model.encoder.layer(req.layer).ffn
    trace = _trace(ffn, layer.ffn_input)
    threshold = (
        req.sparsity_threshold if req.sparsity_threshold is not None else limits.sparsity_threshold
    )
    stats = sparsity(trace.hidden, ffn.config.activation, threshold)
    weights = ffn.weights().named()
    t = len(encoded.tokens)
    shapes = {
        "input": list(trace.input.shape),
        "pre_activation": list(trace.pre_activation.shape),
        "hidden": list(trace.hidden.shape),
        "output": list(trace.output.shape),
    } | {name: list(w.shape) for name, w in weights.items()}
    shown, reduction = summarise(
        [
            Group({"pre_activation": trace.pre_activation, "hidden": trace.hidden}, "hidden"),
            Group({"input": trace.input, "output": trace.output}, "output"),
        ],
        with_room_for(limits, stats.per_neuron.size + stats.per_token.size),
        req.display,
        display_starts(req),
    )
    return {
        "config": _config_out(req, ffn, t),
        "shapes": shapes,
        "input": shown["input"],
        "pre_activation": shown["pre_activation"],
        "up": None,
        "hidden": shown["hidden"],
        "dropped": None,
        "output": shown["output"],
        "reduction": reduction,
        "sparsity": asdict(stats),
        "params": param_counts(ffn.config),
        "flops": asdict(flop_count(ffn.config, t)),
        "weights": (
            {name: np.ascontiguousarray(w.numpy()) for name, w in weights.items()}
            if req.include_weights
            else None
        ),
        "tokens": encoded.tokens,
        "token_ids": [int(i) for i in encoded.ids],
        "special": encoded.special,
        "tensor_names": tensor_names(
            ffn.config.activation,
            ffn.config.gated,
            ffn.config.bias,
            model=req.model,
            layer=req.layer,
            weights=req.include_weights,
        ),
    }


def _replacement(model: Pretrained, encoded: Encoded, req: PerturbSpec) -> tuple[int, str]:
    """The vocabulary id and token of `replace_word`, checked against the position."""
    word = (req.replace_word or "").strip()
    if encoded.special[req.position]:
        raise invalid(
            "position",
            f"position {req.position} is the special token {encoded.tokens[req.position]}; "
            "pick a word (1 to "
            f"{len(encoded.tokens) - 2})",
            req.position,
        )
    pieces = model.word_pieces(word)
    if len(pieces) != 1:
        raise invalid(
            "replace_word",
            f"{word!r} is {len(pieces)} WordPiece tokens {pieces}; the swap needs exactly one "
            "token so that every other position keeps its place (try a common word)",
            word,
        )
    token_id = model.token_id(pieces[0])
    if token_id is None:  # pragma: no cover - the tokenizer only emits vocabulary tokens
        raise invalid("replace_word", f"{pieces[0]!r} is not in the vocabulary", word)
    return token_id, pieces[0]


def _nudge(req: PerturbSpec, d_model: int) -> torch.Tensor:
    given = req.delta_array
    if given is not None:
        return torch.from_numpy(given)
    scale = req.scale if req.scale is not None else 1.0
    return random_direction(d_model, scale, req.direction_seed)  # as the core's nudge


def perturb(req: PerturbSpec, limits: Limits) -> dict[str, Any]:
    """POST /api/perturb with a model: change row `position`, compare the FFN and the layer.

    The same change is made to row `position` of two inputs: the FFN's input (LayerNorm
    after attention) and the whole encoder layer's input. With `replace_word`, that row is
    the one the swapped sentence has there (at layer 0: simply the other word's embedding);
    otherwise a nudge is added. Every other row keeps the original sentence's values, so
    any change elsewhere is made by the block itself: never by the FFN (position-wise,
    Vaswani et al. 2017 eq. 2), always by attention. States are computed by separate calls
    of the same shape, so unchanged FFN rows compare bit for bit.
    """
    model = load_model()
    encoded = encode_text(model, req.text or "", limits)
    t = len(encoded.tokens)
    if req.position >= t:
        raise invalid(
            "position",
            f"position = {req.position} is out of range: the text has {t} tokens, so position "
            f"must be in [0, {t - 1}]",
            req.position,
        )
    block = model.encoder.layer(req.layer)
    original: LayerTrace = model.encoder.run_to(encoded.ids, req.layer)
    ffn_in = original.ffn_input.clone()
    layer_in = original.layer_input.clone()
    tokens_perturbed = list(encoded.tokens)
    if req.replace_word is not None:
        token_id, token = _replacement(model, encoded, req)
        ids = encoded.ids.clone()
        ids[req.position] = token_id
        swapped = model.encoder.run_to(ids, req.layer)
        ffn_in[req.position] = swapped.ffn_input[req.position]
        layer_in[req.position] = swapped.layer_input[req.position]
        tokens_perturbed[req.position] = token
        kind = "replace_word"
    else:
        nudge = _nudge(req, model.config.hidden_size)
        ffn_in[req.position] += nudge
        layer_in[req.position] += nudge
        kind = "nudge"
    before = _trace(block.ffn, original.ffn_input)
    after = _trace(block.ffn, ffn_in)
    stats = compare_outputs(before.output, after.output, req.position)
    with torch.inference_mode():
        layer_before = block.trace(original.layer_input).layer_output
        layer_after = block.trace(layer_in).layer_output
    layer_stats = compare_outputs(layer_before, layer_after, req.position)
    shown, reduction = perturb_display(
        original.ffn_input, ffn_in, before, after, stats, limits, req
    )
    return {
        "config": _config_out(req, block.ffn, t),
        "position": req.position,
        **perturbed_tensors(shown),
        "reduction": reduction,  # before the changes here (the FFN answer has it last)
        **change_fields(stats),
        "tokens": encoded.tokens,
        "tokens_perturbed": tokens_perturbed,
        "perturbation": kind,
        **change_fields(layer_stats, "layer_"),
    }
