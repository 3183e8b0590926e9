"""Broken FFNs, one fault each (fixtures for tests/lab/check/test_check.py, imported by path).

Each class is the course's FFN (w_1, ReLU, dropout, w_2) with one change.
"""

import torch
import torch.nn.functional as F
from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}


class _Base(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def ffn(self, x):
        return self.w_2(self.dropout(F.relu(self.w_1(x))))


class MeanOverTokens(_Base):
    """Adds the mean over the sequence: every output row sees every token."""

    def forward(self, x):
        return self.ffn(x) + x.mean(dim=1, keepdim=True)


class PerPositionWeights(_Base):
    """A learned weight per position: not 'identically' at every position."""

    def __init__(self, d_model, d_ff, dropout=0.1, max_len=64):
        super().__init__(d_model, d_ff, dropout)
        self.position_scale = nn.Parameter(torch.rand(max_len, d_model) + 0.5)

    def forward(self, x):
        return self.ffn(x) * self.position_scale[: x.shape[1]]


class PerPositionBuffer(_Base):
    """A fixed (not learned) scale per position: same parameters, different per position."""

    def __init__(self, d_model, d_ff, dropout=0.1, max_len=64):
        super().__init__(d_model, d_ff, dropout)
        self.register_buffer("position_scale", torch.linspace(0.5, 1.5, max_len)[:, None])

    def forward(self, x):
        return self.ffn(x) * self.position_scale[: x.shape[1]]


class SoftmaxMixing(_Base):
    """softmax(x x^T) x: attention without weights, hidden inside the FFN."""

    def forward(self, x):
        scores = torch.softmax(x @ x.transpose(-2, -1), dim=-1)  # [B, T, T]
        return self.ffn(scores @ x)


class AssertActivation(_Base):
    """Checks the activation name with assert: gone under python -O."""

    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__(d_model, d_ff, dropout)
        assert activation in ACTIVATIONS, f"unknown activation {activation}"
        self.act = ACTIVATIONS[activation]()

    def forward(self, x):
        return self.w_2(self.dropout(self.act(self.w_1(x))))


class DropoutInEval(_Base):
    """F.dropout with training=True: random in eval mode too."""

    def forward(self, x):
        return self.w_2(F.dropout(F.relu(self.w_1(x)), p=0.1, training=True))


class NoDownProjection(nn.Module):
    """Forgets W2: the output is d_ff wide."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(F.relu(self.w_1(x)))


class LayerNormOverTokens(_Base):
    """An extra LayerNorm over the T axis (normalises each feature across the tokens)."""

    def forward(self, x):
        y = self.ffn(x)
        return F.layer_norm(y.transpose(1, 2), (y.shape[1],)).transpose(1, 2)


class AssertThenValueError(_Base):
    """Turns an assert into a ValueError: right under python, wrong under python -O."""

    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__(d_model, d_ff, dropout)
        try:
            assert activation in ACTIVATIONS
        except AssertionError:
            raise ValueError(f"unknown activation {activation!r}") from None
        self.act = ACTIVATIONS[activation]()  # KeyError under python -O

    def forward(self, x):
        return self.w_2(self.dropout(self.act(self.w_1(x))))


class DropoutNeverApplied(_Base):
    """Builds nn.Dropout but never calls it: no regularisation in training."""

    def forward(self, x):
        return self.w_2(F.relu(self.w_1(x)))


class IgnoresDFF(nn.Module):
    """Hard-codes the hidden width as 4 d_model instead of taking d_ff."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, 4 * d_model)
        self.w_2 = nn.Linear(4 * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(F.relu(self.w_1(x))))
