"""GPT-2's MLP: Conv1D layers (weights [in, out], x @ W + b), tanh GELU, dropout."""

import math

import torch
from torch import nn


class Conv1D(nn.Module):
    """Hugging Face's GPT-2 Conv1D: a linear layer whose weight is [nx, nf] (in, out)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = (*x.size()[:-1], self.nf)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


class GPT2MLP(nn.Module):
    def __init__(self, n_embd, n_inner, resid_pdrop=0.1):
        super().__init__()
        self.c_fc = Conv1D(n_inner, n_embd)
        self.c_proj = Conv1D(n_embd, n_inner)
        self.dropout = nn.Dropout(resid_pdrop)

    def forward(self, x):
        return self.dropout(self.c_proj(gelu_new(self.c_fc(x))))
