"""Bug: the paper's sizes typed into the code."""

import torch.nn.functional as F
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(512, 2048)
        self.w_2 = nn.Linear(2048, 512)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(F.relu(self.w_1(x))))
