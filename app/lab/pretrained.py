"""Forward and perturb on a real pretrained layer (model = 'minilm-l6').

The encoder runs the text to the input of layer L's FFN; the FFN itself is our
`PositionwiseFeedForward` with the layer's real weights (see app.model.bert). Errors a user
can cause (a position outside the tokens, a word that is not one WordPiece token) are 422s
shaped like Pydantic's; a missing weights package is a 503 that says how to install it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import torch
from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError

from app.analysis import compare_outputs, flop_count, param_counts, sparsity
from app.api.schemas.ffn import ForwardRequest, PerturbRequest
from app.config import Settings
from app.lab import ffn as runner
from app.lab.ffn import random_direction
from app.model.bert import LayerTrace
from app.model.ffn import FFNTrace, PositionwiseFeedForward
from app.model.pretrained import (
    MODEL_ID,
    Encoded,
    Pretrained,
    PretrainedUnavailable,
    get_pretrained,
)


def invalid(field: str, message: str, value: Any = None) -> RequestValidationError:
    """A 422 naming `field` in the body, like the ones Pydantic makes."""
    error: dict[str, Any] = {"loc": ("body", field), "msg": message, "type": "value_error"}
    if value is not None:
        error["input"] = value
    return RequestValidationError([error])


def load_model() -> Pretrained:
    """The process-wide model, or a 503 with the install command when it is missing."""
    try:
        return get_pretrained()
    except PretrainedUnavailable as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None


def encode_text(model: Pretrained, text: str, settings: Settings) -> Encoded:
    """Tokenise, refusing more than `max_tokens` tokens with a 422 on `text`."""
    encoded = model.encode(text)
    if len(encoded.tokens) > settings.max_tokens:
        raise invalid(
            "text",
            f"text gives {len(encoded.tokens)} tokens (with [CLS] and [SEP]); the limit is "
            f"{settings.max_tokens} (setting max_tokens)",
        )
    return encoded


def _config_out(req: ForwardRequest, ffn: PositionwiseFeedForward, tokens: int) -> dict[str, Any]:
    """The core's `config` block, with what the pretrained layer fixes (eval, no dropout)."""
    return runner.config_out(req, ffn.config) | {
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


def forward(req: ForwardRequest, settings: Settings) -> dict[str, Any]:
    """POST /api/forward with a model: the layer's FFN on the text's real hidden states."""
    model = load_model()
    encoded = encode_text(model, req.text or "", settings)
    layer = model.encoder.run_to(encoded.ids, req.layer)
    ffn = model.encoder.layer(req.layer).ffn
    trace = _trace(ffn, layer.ffn_input)
    threshold = (
        req.sparsity_threshold
        if req.sparsity_threshold is not None
        else settings.sparsity_threshold
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
    return {
        "config": _config_out(req, ffn, t),
        "shapes": shapes,
        "input": trace.input.numpy(),
        "pre_activation": trace.pre_activation.numpy(),
        "up": None,
        "hidden": trace.hidden.numpy(),
        "dropped": None,
        "output": trace.output.numpy(),
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
    }


def _replacement(model: Pretrained, encoded: Encoded, req: PerturbRequest) -> tuple[int, str]:
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


def _nudge(req: PerturbRequest, d_model: int) -> torch.Tensor:
    given = req.delta_array
    if given is not None:
        return torch.from_numpy(given)
    scale = req.scale if req.scale is not None else 1.0
    return random_direction(d_model, scale, req.direction_seed)  # as the core's nudge


def perturb(req: PerturbRequest, settings: Settings) -> dict[str, Any]:
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
    encoded = encode_text(model, req.text or "", settings)
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
    return {
        "config": _config_out(req, block.ffn, t),
        "position": req.position,
        "input": original.ffn_input.numpy(),
        "input_perturbed": ffn_in.numpy(),
        "output": before.output.numpy(),
        "output_perturbed": after.output.numpy(),
        "output_delta": stats.delta,
        "delta_norm_per_position": stats.delta_norm_per_position,
        "changed_positions": stats.changed_positions,
        "max_abs_change_other_positions": stats.max_abs_change_other_positions,
        "tokens": encoded.tokens,
        "tokens_perturbed": tokens_perturbed,
        "perturbation": kind,
        "layer_delta_norm_per_position": layer_stats.delta_norm_per_position,
        "layer_changed_positions": layer_stats.changed_positions,
        "layer_max_abs_change_other_positions": layer_stats.max_abs_change_other_positions,
    }
