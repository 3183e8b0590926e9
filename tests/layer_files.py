"""Hypothesis strategies for uploaded layer files: every accepted format (.npz, .safetensors,
.pt) from random shapes, dtypes and values, then corrupted (truncated, bytes flipped, a
lying header, members deflated at huge ratios). Used by tests/api/test_upload_fuzz.py and
the OpenAPI fuzz (benchmarks/fuzz.py)."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np
import torch
from hypothesis import strategies as st
from safetensors.torch import save as save_safetensors

FORMATS = ("npz", "safetensors", "pt")
DTYPES = (torch.float32, torch.float16, torch.float64, torch.bfloat16, torch.int32, torch.bool)
SPECIAL = (0.0, 1.0, -1.0, 1e4, 1e5, float("nan"), float("inf"), float("-inf"))


def _tensor(draw: st.DrawFn, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    seed = draw(st.integers(0, 2**16))
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    if values.numel() and draw(st.booleans()):
        flat = values.reshape(-1)
        flat[draw(st.integers(0, flat.numel() - 1))] = draw(st.sampled_from(SPECIAL))
    if dtype == torch.bool:
        return values > 0
    if dtype == torch.int32:
        return values.nan_to_num(0).clamp(-100, 100).to(torch.int32)
    return values.to(dtype)


def _write(kind: str, tensors: dict[str, torch.Tensor]) -> bytes:
    if kind == "safetensors":
        return save_safetensors({k: v.contiguous() for k, v in tensors.items()})
    buffer = io.BytesIO()
    if kind == "pt":
        torch.save(tensors, buffer)
    else:
        arrays = {
            k: (v.float() if v.dtype == torch.bfloat16 else v).numpy() for k, v in tensors.items()
        }
        np.savez(buffer, **arrays)
    return buffer.getvalue()


def _deflated(data: bytes) -> bytes:
    """The same zip with every member deflated (a zeros layer inflates ~1000x)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    return out.getvalue()


def _lying(kind: str, data: bytes, factor: int) -> bytes:
    """A header that claims `factor` times the data: the safetensors header's shapes, or
    the zip directory's uncompressed sizes."""
    if kind == "safetensors":
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8 : 8 + n])
        for entry in header.values():
            if isinstance(entry, dict) and entry.get("shape"):
                entry["shape"][0] *= factor
        text = json.dumps(header).encode()
        return struct.pack("<Q", len(text)) + text + data[8 + n :]
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at >= 0:  # central directory: uncompressed size at offset 24
        (size,) = struct.unpack_from("<I", out, at + 24)
        struct.pack_into("<I", out, at + 24, min(2**32 - 1, size * factor))
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


@st.composite
def layer_files(draw: st.DrawFn, max_side: int = 48) -> tuple[str, bytes]:
    """(filename, bytes) of a layer file, valid or not (see the module docstring)."""
    kind = draw(st.sampled_from(FORMATS))
    d_model = draw(st.integers(0, max_side))
    d_ff = draw(st.integers(0, max_side))
    dtype = draw(st.sampled_from(DTYPES))
    gated = draw(st.booleans())
    bias = draw(st.booleans())
    zeros = draw(st.booleans())
    tensors = {
        "w1": _tensor(draw, (d_model, d_ff), dtype),
        "w2": _tensor(draw, (d_ff, d_model), dtype),
    }
    if gated:
        tensors["w_gate"] = _tensor(draw, (d_model, d_ff), dtype)
    if bias:
        tensors |= {"b1": _tensor(draw, (d_ff,), dtype), "b2": _tensor(draw, (d_model,), dtype)}
        if gated:
            tensors["b_gate"] = _tensor(draw, (d_ff,), dtype)
    if zeros:
        tensors = {k: torch.zeros_like(v) for k, v in tensors.items()}
    data = _write(kind, tensors)
    corruption = draw(st.sampled_from(["none", "truncate", "flip", "lie", "deflate"]))
    if corruption == "truncate" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif corruption == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    elif corruption == "lie":
        data = _lying(kind, data, draw(st.sampled_from([2, 1000, 10**6])))
    elif corruption == "deflate" and kind != "safetensors":
        data = _deflated(data)
    return f"layer.{kind}", data
