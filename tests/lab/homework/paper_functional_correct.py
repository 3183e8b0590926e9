"""Eq. 2 by hand: max(0, x W1 + b1) W2 + b2 with parameters of its own."""

import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.W1 = nn.Parameter(torch.randn(d_model, d_ff) / d_model**0.5)
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.W2 = nn.Parameter(torch.randn(d_ff, d_model) / d_ff**0.5)
        self.b2 = nn.Parameter(torch.zeros(d_model))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.dropout(torch.relu(x @ self.W1 + self.b1))
        return h @ self.W2 + self.b2
