"""What a layer file's tensors may hold, checked after reading and before use.

Each refusal is a 422 (`InvalidValue`) naming the file's tensor, the value or limit and what
is allowed: tensors that are not plain dense float data (meta, sparse, quantized, complex,
integer or bool, 0-dim, views sharing storage), NaN/Inf or values over the limit, shapes
that do not make one FFN, and sizes over the server's limits (`FileBounds`). Used by
`app.lab.weight_files.read_layer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from app.lab.errors import InvalidValue
from app.lab.file_bounds import FileBounds, refuse

Array = npt.NDArray[np.float32]


def kind_refusal(code: str, name: str, what: str, fix: str, **params: Any) -> InvalidValue:
    return refuse(
        f"{name} is {what}; FFN Lab reads plain dense float tensors ({fix})",
        code,
        name=name,
        **params,
    )


def check_plain(found: Mapping[str, torch.Tensor], views: bool) -> None:
    """Each tensor (by its name in the file) is a dense, contiguous CPU float array that has
    its storage to itself (`views`: a .pt's tensors can be views; .npz and .safetensors arrays
    always own their memory, in C or Fortran order)."""
    storages: dict[int, str] = {}
    for name, tensor in found.items():
        if tensor.device.type != "cpu":
            raise kind_refusal(
                "device",
                name,
                f"on the {tensor.device.type} device (no values)",
                "save its values on the CPU",
                device=tensor.device.type,
            )
        if tensor.layout != torch.strided:
            layout = str(tensor.layout).removeprefix("torch.")
            raise kind_refusal(
                "sparse", name, f"a {layout} tensor", "use .to_dense()", layout=layout
            )
        if tensor.is_quantized:
            dtype = str(tensor.dtype).removeprefix("torch.")
            raise kind_refusal(
                "quantized", name, f"quantized ({dtype})", "use .dequantize()", dtype=dtype
            )
        if tensor.is_complex() or not tensor.is_floating_point():
            raise refuse(
                f"{name} has dtype {str(tensor.dtype).removeprefix('torch.')}; FFN Lab reads "
                "float16, bfloat16, float32 or float64 numbers",
                "dtype",
                name=name,
                dtype=str(tensor.dtype).removeprefix("torch."),
                allowed="float16, bfloat16, float32, float64",
            )
        if tensor.ndim == 0:
            raise kind_refusal(
                "zero_dim", name, "a single number (0-dim)", "a vector or a matrix is needed"
            )
        if not views:
            continue
        base = tensor
        if not base.is_contiguous():
            raise kind_refusal(
                "non_contiguous", name, "not contiguous (strided view)", "use .contiguous()"
            )
        storage = base.untyped_storage()
        if storage.nbytes() != base.numel() * base.element_size() or base.storage_offset():
            raise kind_refusal("view", name, "a view into a larger storage", "use .clone()")
        if storage.nbytes() and (other := storages.get(storage.data_ptr())) is not None:
            raise kind_refusal(
                "shared", name, f"sharing its storage with {other}", "use .clone()", other=other
            )
        storages[storage.data_ptr()] = name


CHUNK = 1 << 16
"""Values checked at a time. The scratch tensors of one step (|x|, the masks) stay under
glibc's mmap threshold (at most 512 KiB for float64), so they come from the heap and are
reused step after step; at 1 << 20 values each step mapped and unmapped ~8 MiB of fresh
pages, as much resident memory on top of the file and its tensors, and no faster."""


def check_values(name: str, tensor: torch.Tensor, limit: float) -> None:
    """Every value is finite and within ±limit, checked in the tensor's own dtype."""
    flat = tensor.detach().reshape(-1)
    for start in range(0, flat.numel(), CHUNK):
        part = flat[start : start + CHUNK]
        bad = ~torch.isfinite(part) | (part.abs() > limit)
        if bool(bad.any()):
            offset = start + int(torch.nonzero(bad)[0, 0])
            index = [int(i) for i in np.unravel_index(offset, tuple(tensor.shape))]
            value = float(flat[offset])
            raise refuse(
                f"{name}{index} = {value!r}: values must be finite and within ±{limit:g}",
                "bad_value",
                name=f"{name}{index}",
                value=repr(value),
                limit=f"{limit:g}",
            )


def check_limits(weights: Mapping[str, Array], bounds: FileBounds) -> None:
    """d_model and d_ff within 1..the server's limits, parameters within max_params."""
    d_model, d_ff = (int(n) for n in weights["w1"].shape)
    for what, value, most in (
        ("d_model", d_model, bounds.max_d_model),
        ("d_ff", d_ff, bounds.max_d_ff),
    ):
        if not 1 <= value <= most:
            raise refuse(
                f"the layer's {what} is {value:,}; this server runs {what} from 1 to {most:,}",
                "layer_size",
                what=what,
                value=value,
                limit=most,
            )
    params = sum(int(a.size) for a in weights.values())
    if params > bounds.max_params:
        raise refuse(
            f"the layer has {params:,} parameters; this server runs at most {bounds.max_params:,}",
            "layer_params",
            value=params,
            limit=bounds.max_params,
        )


def check_shapes(weights: Mapping[str, Array]) -> None:
    w1 = weights["w1"]
    if w1.ndim != 2:
        raise refuse(
            f"w1 has shape {list(w1.shape)}; expected a matrix [d_model, d_ff]",
            "w1_shape",
            shape=" × ".join(map(str, w1.shape)),
        )
    d_model, d_ff = w1.shape
    expected: dict[str, tuple[int, ...]] = {
        "w1": (d_model, d_ff),
        "w2": (d_ff, d_model),
        "w_gate": (d_model, d_ff),
    }
    expected |= {"b1": (d_ff,), "b2": (d_model,), "b_gate": (d_ff,)}
    for name, array in weights.items():
        if tuple(array.shape) != expected[name]:
            raise refuse(
                f"{name} has shape {list(array.shape)}; with w1 [{d_model}, {d_ff}] it must be "
                f"{list(expected[name])}",
                "shape",
                name=name,
                shape=" × ".join(map(str, array.shape)),
                expected=" × ".join(map(str, expected[name])),
                d_model=int(d_model),
                d_ff=int(d_ff),
            )
    if "b_gate" in weights and "w_gate" not in weights:
        raise refuse(
            "the file has b_gate but no gate weight: b_gate belongs to a gated layer", "gate_bias"
        )
    biases = sorted(n for n in ("b1", "b2", "b_gate") if n in weights)
    wanted = sorted(["b1", "b2"] + (["b_gate"] if "w_gate" in weights else []))
    if biases and biases != wanted:
        missing = sorted(set(wanted) - set(biases))
        raise refuse(
            f"the file has biases {biases} but not {missing}: FFN Lab's FFN has "
            "biases on every linear map or on none",
            "biases",
            found=", ".join(biases),
            missing=", ".join(missing),
        )
