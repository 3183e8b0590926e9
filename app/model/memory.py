"""The model that learns a key-value memory (trained by `app.lab.learning`): one residual
sub-layer and a readout, as in a Transformer (Geva et al. 2021):

    logits = (x + f(x)) W_U + b_U,     f = FFN(x) = act(x W1 + b1) W2 + b2   (ffn=True)
                                       f = x A + a, a linear map           (ffn=False)
                                       f = (x W1 + b1) W2 + b2             (ffn=False,
                                                                            same_budget=True)

The last is the same-budget linear control: the FFN's own two maps and parameter count
without the activation, still a linear map of x (of rank at most min(d_model, d_ff)).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn

from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.model.ffn_weights import _linear_from, seeded_linear
from app.model.seeding import stream_seed

F32 = npt.NDArray[np.float32]


class MemoryModel(nn.Module):
    """logits = (x + f(x)) W_U + b_U with f the FFN (`ffn=True`), a linear map d_model ->
    d_model, or (`same_budget=True`) the FFN's two maps without the activation, from the
    seed's streams "train.init" (f) and "train.readout" (W_U, b_U). The same-budget map
    starts from exactly the FFN's initial w1, b1, w2, b2 (a plain FFN of the same seed)."""

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        activation: str,
        num_classes: int,
        seed: int,
        ffn: bool,
        same_budget: bool = False,
    ) -> None:
        super().__init__()
        d = d_model
        self.ffn: PositionwiseFeedForward | None = None
        self.linear: nn.Linear | None = None
        self.factored: nn.Sequential | None = None
        init_seed = stream_seed(seed, "train.init")
        if ffn and same_budget:
            raise ValueError("same_budget is the linear control: it needs ffn=False")
        if same_budget:
            w = FFNWeights.seeded(d, d_ff, seed, gated=False, bias=True, stream="train.init")
            self.factored = nn.Sequential(_linear_from(w.w1, w.b1), _linear_from(w.w2, w.b2))
        elif ffn:
            ffn_config = FFNConfig(d, d_ff, activation)
            weights = FFNWeights.seeded(
                d, d_ff, seed, gated=ffn_config.gated, bias=True, stream="train.init"
            )
            self.ffn = PositionwiseFeedForward(ffn_config, weights)
        else:
            self.linear = seeded_linear(d, d, init_seed)
        self.readout = seeded_linear(d, num_classes, stream_seed(seed, "train.readout"))
        self.requires_grad_(True)  # PositionwiseFeedForward is built frozen

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor | None]:
        """x [N, d_model] -> (logits [N, num_classes], hidden [N, d_ff] or None)."""
        if self.ffn is not None:
            trace = self.ffn.trace(x)
            return self.readout(x + trace.output), trace.hidden
        if self.factored is not None:
            return self.readout(x + self.factored(x)), None
        if self.linear is None:  # pragma: no cover - set in __init__ when ffn is False
            raise ValueError("the model has neither an FFN nor a linear map")
        return self.readout(x + self.linear(x)), None

    def final_weights(self) -> dict[str, F32]:
        """Copies of every weight in the paper's orientation (see `Final.weights`)."""
        out: dict[str, Tensor] = {}
        if self.ffn is not None:
            out |= {k: v for k, v in self.ffn.weights().named().items()}
        elif self.factored is not None:
            up, down = cast(nn.Linear, self.factored[0]), cast(nn.Linear, self.factored[1])
            out |= {"w1": up.weight.T, "b1": up.bias, "w2": down.weight.T, "b2": down.bias}
        elif self.linear is not None:
            out |= {"a": self.linear.weight.T, "a_bias": self.linear.bias}
        out |= {"w_u": self.readout.weight.T, "b_u": self.readout.bias}
        return {
            k: v.detach().clone(memory_format=torch.contiguous_format).numpy()
            for k, v in out.items()
        }

    def param_counts(self) -> dict[str, int]:
        """Trainable parameters: "sublayer" (FFN or linear map), "readout" and "total"."""
        sub: nn.Module | None = self.ffn or self.factored or self.linear
        sublayer = sum(p.numel() for p in sub.parameters()) if sub is not None else 0
        readout = sum(p.numel() for p in self.readout.parameters())
        return {"sublayer": sublayer, "readout": readout, "total": sublayer + readout}
