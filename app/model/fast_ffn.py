"""The server's FFN executor, "fast": the same computation as `eager_trace`, with the linear
maps run by `app.model.parallel` instead of each `nn.Linear`'s own forward.

- Big maps in inference (at least `parallel.MIN_SPLIT_WEIGHTS` weights: LLaMA-7B, 1024 ->
  4096) run on oneDNN's float32 linear (`torch.ops.mkldnn._linear_pointwise`), which reads
  the [out, in] rows the weight cache keeps them in (`parallel.laid_out`,
  `app.services.weight_cache`) at about the memory bandwidth.
- Their output features are split over a small pool of single-threaded workers, and a gated
  FFN's gate and up run at once; the numbers are bit-identical to the unsplit map
  (`tests/model/test_fast_ffn.py`).
- Smaller maps and anything autograd records run `F.linear`, as `nn.Linear` does, so below
  that size "fast" and "eager" give the same bits; above it they differ in the last bits
  (oneDNN against MKL's sgemm, ~1e-6 relative).

Like transformers' attention kernels, it is chosen outside the module:
`install(workers)` registers it in `app.model.ffn.FFN_EXECUTORS` and puts it in use (the
server does so at start-up, `app.main`).
"""

from __future__ import annotations

from torch import Tensor

from app.model import parallel
from app.model.ffn import (
    FFN_EXECUTORS,
    FFNTrace,
    PositionwiseFeedForward,
    use_executor,
)
from app.model.seeding import generator as stream_generator


def fast_trace(
    ffn: PositionwiseFeedForward, x: Tensor, dropout_seed: int | None = None
) -> FFNTrace:
    """`eager_trace(ffn, x, dropout_seed)` with the maps on `app.model.parallel`."""
    generator = None if dropout_seed is None else stream_generator(dropout_seed, "dropout")
    up: Tensor | None = None
    if ffn.w_gate is not None:
        pre_activation, up = parallel.linears(x, ffn.w_gate, ffn.w1)  # (T, d_ff) x 2
        hidden = ffn.act(pre_activation) * up  # (T, d_ff)
    else:
        pre_activation = parallel.linear(x, ffn.w1)  # (T, d_ff)
        hidden = ffn.act(pre_activation)  # (T, d_ff)
    kept, dropped = ffn.dropout(hidden, generator)  # (T, d_ff)
    output = parallel.linear(kept, ffn.w2)  # (T, d_model)
    return FFNTrace(x, pre_activation, up, hidden, dropped, kept, output)


FFN_EXECUTORS["fast"] = fast_trace


def install(workers: int | None = None) -> None:
    """Run every FFN with "fast" from now on; `workers`: threads a big map is split over
    (`parallel.set_workers`; None keeps the current count).

    Raises:
        ValueError: for workers < 1.
    """
    if workers is not None:
        parallel.set_workers(workers)
    use_executor("fast")
