"""The limits the notebook layer works within, as data (no server settings read here).

`app.lab` refuses a request past these limits with the API's own words, and sizes what it
shows by them. A notebook uses `Limits()` (the server's defaults) or its own; the server
builds one from its `Settings` (`app.api.deps.lab_limits`), so its environment variables
(FFN_LAB_MAX_TOKENS, ...) apply to its answers. Each field's meaning is the description of
the `Settings` field of the same name (app/config.py); `tests/lab/test_limits.py` checks
that the defaults are the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Sizes and bounds of one computation (counts; bytes where the name says so).

    Attributes:
        max_tokens: most tokens T in one request.
        max_d_model, max_d_ff: largest widths.
        max_params: most FFN parameters.
        max_submitted_weights: most numbers in user-submitted weights.
        max_abs_value: largest |value| in submitted tokens, weights and deltas.
        max_heads: most attention heads in the teaching views.
        max_influence_flops: most FLOPs of the attention-vs-FFN influence check.
        max_svd_values: most weights whose singular values the cheaper view computes.
        max_layers: most layers in one stack.
        max_scatter_points: most pre-activations per variant scattered on its curve.
        display_max_values: most numbers of one answer sent in full.
        display_keep_values: numbers kept per tensor above `display_max_values`.
        histogram_bins: bins of the pre-activation histogram.
        sparsity_threshold: default |h| below which a smooth activation counts as zero.
        max_text_chars: longest text for the pretrained model.
        torch_threads: torch intra-op threads a computation runs with (0: torch's default).
        weight_cache_bytes: bytes of seeded weights a session's cache keeps.
    """

    max_tokens: int = 64
    max_d_model: int = 4096
    max_d_ff: int = 16384
    max_params: int = 150_000_000
    max_submitted_weights: int = 1_100_000
    max_abs_value: float = 1e4
    max_heads: int = 64
    max_influence_flops: int = 2_000_000_000
    max_svd_values: int = 4_194_304
    max_layers: int = 12
    max_scatter_points: int = 2000
    display_max_values: int = 81_920
    display_keep_values: int = 8_192
    histogram_bins: int = 60
    sparsity_threshold: float = 0.01
    max_text_chars: int = 500
    torch_threads: int = 1
    weight_cache_bytes: int = 896 * 1024 * 1024
