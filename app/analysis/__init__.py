"""Pure analysis of FFN tensors: tensors in, plain data (NumPy arrays, numbers) out.

Knows nothing of HTTP or Plotly.
"""

from app.analysis.counts import FlopCount, flop_count, param_counts
from app.analysis.perturbation import PerturbationStats, compare_outputs
from app.analysis.sparsity import DEFAULT_THRESHOLD, SparsityStats, sparsity

__all__ = [
    "DEFAULT_THRESHOLD",
    "FlopCount",
    "PerturbationStats",
    "SparsityStats",
    "compare_outputs",
    "flop_count",
    "param_counts",
    "sparsity",
]
