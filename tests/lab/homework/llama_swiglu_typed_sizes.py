"""Bug: sizes typed into the code (512, 2048)."""

import torch.nn.functional as F
from torch import nn


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(512, 2048, bias=False)
        self.up_proj = nn.Linear(512, 2048, bias=False)
        self.down_proj = nn.Linear(2048, 512, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
