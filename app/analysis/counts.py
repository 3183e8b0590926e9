"""Parameter and FLOP counts of one FFN, from its shape alone.

Convention (as in Kaplan et al. 2020, Appendix; Hoffmann et al. 2022): a multiply-add
is 2 FLOPs; a bias add, an activation and a gating product are 1 FLOP per element.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.model.ffn import FFNConfig, expected_shapes


def param_counts(config: FFNConfig) -> dict[str, int]:
    """Number of parameters per tensor (w1, b1, w2, b2, w_gate, b_gate) and `total`.

    The count does not depend on the number of tokens T: every position shares the
    same weights. E.g. 512/2048 with biases: 2,099,712.
    """
    counts = {name: _numel(shape) for name, shape in expected_shapes(config).items()}
    counts["total"] = sum(counts.values())
    return counts


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@dataclass(frozen=True)
class FlopCount:
    """FLOPs of one forward pass over T tokens (eval mode).

    Attributes:
        up: 2 T d_model d_ff for x W1 (twice that for gated variants: W1 and W_gate).
        activation: T d_ff, the element-wise function.
        gating: T d_ff for the gated product, else 0.
        down: 2 T d_ff d_model for h W2.
        bias: T d_ff (+ T d_ff gated) + T d_model when biases are on, else 0.
        total: the sum.
        per_token: total / T.
    """

    up: int
    activation: int
    gating: int
    down: int
    bias: int
    total: int
    per_token: int


def flop_count(config: FFNConfig, num_tokens: int) -> FlopCount:
    """FLOPs of one forward pass of `num_tokens` tokens through the FFN.

    Raises:
        ValueError: if `num_tokens` < 1.
    """
    if num_tokens < 1:
        raise ValueError(f"num_tokens must be >= 1, got {num_tokens!r}")
    t, d_model, d_ff = num_tokens, config.d_model, config.d_ff
    n_up = 2 if config.gated else 1
    up = n_up * 2 * t * d_model * d_ff
    activation = t * d_ff
    gating = t * d_ff if config.gated else 0
    down = 2 * t * d_ff * d_model
    bias = (n_up * t * d_ff + t * d_model) if config.bias else 0
    total = up + activation + gating + down + bias
    return FlopCount(up, activation, gating, down, bias, total, total // t)
