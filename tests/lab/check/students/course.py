"""The course's two FFN classes, as a student types them (fixtures, imported by path)."""

import torch.nn.functional as F
from torch import nn


class PositionwiseFeedForward(nn.Module):
    """Implements FFN equation (The Annotated Transformer)."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(F.relu(self.w_1(x))))


class PositionWiseFeedForwardNetwork(nn.Module):
    """FFN(x) = act(x W1 + b1) W2 + b2 with the activation chosen by name."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1, activation: str = "relu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        if activation == "relu":
            self.activation = nn.ReLU()
        elif activation == "gelu":
            self.activation = nn.GELU()
        else:
            raise ValueError(f"Unsupported activation: {activation!r}; use 'relu' or 'gelu'")

    def forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))
