"""Bug: weights stored as [in, out] but applied with F.linear, which wants [out, in]."""

import torch
import torch.nn.functional as F
from torch import nn


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate = nn.Parameter(torch.randn(hidden_size, intermediate_size) * 0.02)
        self.up = nn.Parameter(torch.randn(hidden_size, intermediate_size) * 0.02)
        self.down = nn.Parameter(torch.randn(intermediate_size, hidden_size) * 0.02)

    def forward(self, x):
        return F.linear(F.silu(F.linear(x, self.gate)) * F.linear(x, self.up), self.down)
