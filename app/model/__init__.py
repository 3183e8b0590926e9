"""The FFN itself, in PyTorch only: no HTTP, no Plotly.

See Vaswani et al. 2017, "Attention Is All You Need", section 3.3, eq. 2.
"""

from app.model.activations import ACTIVATIONS, ActivationSpec, get_activation
from app.model.ffn import (
    FeedForward,
    FFNConfig,
    FFNTrace,
    FFNWeights,
    GatedFeedForward,
    PositionwiseFeedForward,
)

__all__ = [
    "ACTIVATIONS",
    "ActivationSpec",
    "FFNConfig",
    "FFNTrace",
    "FFNWeights",
    "FeedForward",
    "GatedFeedForward",
    "PositionwiseFeedForward",
    "get_activation",
]
