"""POST /api/cheaper's answer as plain Python: `CheaperSpec` in, the answer's dict out.

`check_cheaper` holds the body's own checks (the API's `CheaperRequest` runs them in its
validator, `lab.cheaper(...)` through `cheaper_spec`); `cheaper_answer` measures the plain,
low-rank and stacked FFNs of `app.lab.cheaper` on the same input. No HTTP, no Pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from app.lab.cheaper.compare import compare
from app.lab.forward import build_model, config_out, input_tokens
from app.lab.limits import Limits
from app.lab.spec.specs import ForwardSpec, build_spec, check_int, seeded_only_message
from app.services.checkpoint import checkpoint
from app.services.weight_cache import WeightCache

MAX_NUM_FFNS = 12


@dataclass(frozen=True, kw_only=True, eq=False)
class CheaperSpec(ForwardSpec):
    """The forward run plus the cheaper FFNs' shapes (see `CheaperRequest`).

    Attributes:
        rank: r of W1 ~ U V (None: d_model // 4, at least 1).
        d_inner: MobileBERT's bottleneck width (None: d_model // 4, at least 1).
        num_ffns: F, the stacked small FFNs.
    """

    rank: int | None = None
    d_inner: int | None = None
    num_ffns: int = 4

    @property
    def rank_used(self) -> int:
        """r, the given one or d_model // 4 (within [1, min(d_model, d_ff)])."""
        default = min(max(1, self.d_model // 4), self.d_ff)
        return self.rank if self.rank is not None else default

    @property
    def d_inner_used(self) -> int:
        """The bottleneck width, the given one or max(1, d_model // 4)."""
        return self.d_inner if self.d_inner is not None else max(1, self.d_model // 4)


def cheaper_spec(limits: Limits, **body: Any) -> CheaperSpec:
    """A `CheaperSpec` from the keywords of a POST /api/cheaper body, checked as the API
    checks it (seeded or submitted weights only: no pretrained model).

    Raises:
        TypeError: an argument the API body does not have.
        ValueError: a value the API refuses with a 422; the message names the field.
    """
    spec = build_spec(CheaperSpec, limits, body)
    if spec.model is not None:
        raise ValueError(seeded_only_message(spec.model))
    if spec.rank is not None:
        check_int("rank", spec.rank, 1)
    if spec.d_inner is not None:
        check_int("d_inner", spec.d_inner, 1)
    check_int("num_ffns", spec.num_ffns, 1, MAX_NUM_FFNS)
    check_cheaper(spec.d_model, spec.d_ff, spec.rank, spec.d_inner, limits.max_svd_values)
    return spec


def check_cheaper(
    d_model: int, d_ff: int, rank: int | None, d_inner: int | None, max_svd_values: int
) -> None:
    """The cheaper body's checks, after the forward body's.

    Raises:
        ValueError: with the words of the API's 422.
    """
    entries = d_model * d_ff
    if entries > max_svd_values:
        raise ValueError(
            f"d_model = {d_model}, d_ff = {d_ff}: W1 has {entries:,} entries; the "
            f"low-rank view factors W1 by SVD and takes at most {max_svd_values:,} "
            "(e.g. 1024 x 4096)"
        )
    limit = min(d_model, d_ff)
    if rank is not None and rank > limit:
        raise ValueError(
            f"rank = {rank} is too large: a rank-r factorisation of W1 "
            f"[{d_model}, {d_ff}] needs r <= min(d_model, d_ff) = {limit}"
        )
    if d_inner is not None and d_inner > d_model:
        raise ValueError(
            f"d_inner = {d_inner} is too large: the bottleneck must be at most d_model = {d_model}"
        )


def cheaper_answer(spec: CheaperSpec, cache: WeightCache) -> dict[str, Any]:
    """Everything POST /api/cheaper returns (see `CheaperResponse`): per variant (plain,
    low_rank, stacked) params, FLOPs, output float32 [T, d_model], its row norms [T] and its
    error against the plain output; W1's singular values and the energy the rank keeps."""
    spec = replace(spec, mode="eval")
    plain = build_model(spec, cache)
    x = input_tokens(spec)
    rank, d_inner = spec.rank_used, spec.d_inner_used
    variants, singular = compare(
        plain, x, rank=rank, d_inner=d_inner, num_ffns=spec.num_ffns, seed=spec.seed
    )
    checkpoint()
    base = variants[0]
    base_norm = float(torch.linalg.matrix_norm(base.output))
    out = []
    for v in variants:
        diff = v.output - base.output
        out.append(
            {
                "name": v.name,
                "params": v.params,
                "params_ratio": v.params["total"] / base.params["total"],
                "flops": v.flops,
                "flops_ratio": v.flops / base.flops,
                "output": v.output.numpy(),
                "output_row_norms": torch.linalg.vector_norm(v.output, dim=1).numpy(),
                "approximates_plain": v.approximates_plain,
                "max_abs_diff_from_plain": float(diff.abs().max()) if diff.numel() else 0.0,
                "relative_error": (
                    float(torch.linalg.matrix_norm(diff)) / base_norm if base_norm > 0 else 0.0
                ),
            }
        )
    energy = singular.double() ** 2
    return {
        "config": config_out(spec, plain.config),
        "rank": rank,
        "d_inner": d_inner,
        "num_ffns": spec.num_ffns,
        "variants": out,
        "singular_values": singular.numpy(),
        "energy_kept": float(energy[:rank].sum() / energy.sum()) if energy.sum() > 0 else 1.0,
    }
