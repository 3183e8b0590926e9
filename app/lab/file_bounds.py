"""What an uploaded layer file declares, checked before any tensor is read from it.

A zip (.npz, a PyTorch .pt) says in its directory how large each member is once unpacked, an
.npy member says its dtype and shape in its header, and a .safetensors file says every
tensor's dtype, shape and byte range in its JSON header. These checks read only those
declarations, so a 1 MB file that claims to unpack to 1 GB is refused before it is unpacked.
Python's `zipfile` never yields more than a member's declared size (a member that inflates
further fails its CRC check), so the declared sizes bound what reading can allocate.

The bound: the tensors of one file hold at most `max_tensor_bytes` as stored and at most
`max_tensor_bytes` once converted to float32, so reading an upload needs at most the body
plus 2 x `max_tensor_bytes` (the server sets it to the upload limit, `upload_max_bytes`).

Every refusal is an `InvalidValue` on the field "file" with a stable code (`file_<code>`)
and params naming the file, the member or tensor, the value and the limit.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.lab.errors import InvalidValue

MAX_MEMBERS = 1000
"""Most members in an uploaded zip (an FFN layer has at most six tensors)."""
MAX_HEADER_BYTES = 1 << 20
"""Largest .safetensors JSON header, .npy header or .pt pickle (data.pkl) read."""
FLOAT_DTYPES_SAFETENSORS = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}
"""The .safetensors dtypes FFN Lab reads, with their sizes in bytes."""
SAFETENSORS_NAMES = {
    **{f"I{n}": f"int{n}" for n in (8, 16, 32, 64)},
    **{f"U{n}": f"uint{n}" for n in (8, 16, 32, 64)},
    "BOOL": "bool",
    "C64": "complex64",
}
"""torch's names of .safetensors dtypes that are refused (for the message)."""
ALLOWED_DTYPES = "float16, bfloat16, float32 or float64"


@dataclass(frozen=True)
class FileBounds:
    """Limits on what one uploaded file may declare.

    Attributes:
        max_tensor_bytes: most bytes of tensors, as stored and as float32 (each).
        max_d_model: largest d_model (w1's rows) the server runs.
        max_d_ff: largest d_ff (w1's columns) the server runs.
        max_params: most FFN parameters the server runs.
    """

    max_tensor_bytes: int
    max_d_model: int
    max_d_ff: int
    max_params: int


def refuse(message: str, code: str, **params: Any) -> InvalidValue:
    """A refused file: `code` and `params` let the page say it in its language."""
    error = InvalidValue("file", message, None, f"file_{code}")
    error.params = params
    return error


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MiB"


def _too_big(filename: str, total: int, bounds: FileBounds, what: str) -> InvalidValue:
    return refuse(
        f"{filename!r} {what} {_mib(total)} of tensors once unpacked; the limit is "
        f"{_mib(bounds.max_tensor_bytes)} (one layer's FFN weights)",
        "too_big_unpacked",
        file=filename,
        size=_mib(total),
        limit=_mib(bounds.max_tensor_bytes),
    )


def check_zip(data: bytes, filename: str, bounds: FileBounds, kind: str) -> None:
    """Check a zip's directory (and an .npz's .npy headers) against `bounds`.

    Raises:
        InvalidValue: not a zip, too many members, members that unpack to more than
            `max_tensor_bytes` (declared sizes, before unpacking), an .npy member whose dtype
            is not floating-point or whose header is too large or inconsistent.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise refuse(
            f"{filename!r} is not a readable .{kind} file of tensors: {exc} (an .npz or a "
            ".pt from torch.save is a zip)",
            "unreadable",
            name=filename,
            kind=kind,
        ) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise refuse(
                f"{filename!r} holds {len(infos):,} files; at most {MAX_MEMBERS:,} are read",
                "members",
                file=filename,
                count=len(infos),
                limit=MAX_MEMBERS,
            )
        total = sum(max(0, info.file_size) for info in infos)
        if total > bounds.max_tensor_bytes:
            raise _too_big(filename, total, bounds, "says it unpacks to")
        if kind == "npz":
            _check_npy_headers(archive, infos, filename, bounds)


def _check_npy_headers(
    archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo], filename: str, bounds: FileBounds
) -> None:
    float32_bytes = 0
    for info in infos:
        with archive.open(info) as member:
            try:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(
                        member, max_header_size=MAX_HEADER_BYTES
                    )
                else:
                    shape, _, dtype = np.lib.format.read_array_header_2_0(
                        member, max_header_size=MAX_HEADER_BYTES
                    )
            except (ValueError, OSError, SyntaxError, zipfile.BadZipFile) as exc:
                raise refuse(
                    f"{filename!r}: {info.filename} is not a readable .npy array ({exc})",
                    "unreadable",
                    name=filename,
                    kind="npz",
                ) from None
        tensor = info.filename.removesuffix(".npy")
        if dtype.kind != "f":
            raise _dtype(filename, tensor, str(dtype))
        count = math.prod(int(n) for n in shape)
        if count * dtype.itemsize > info.file_size:
            raise refuse(
                f"{filename!r}: {tensor} says it is {list(shape)} {dtype} "
                f"({_mib(count * dtype.itemsize)}) but holds {_mib(info.file_size)}",
                "lying_header",
                file=filename,
                name=tensor,
            )
        float32_bytes += 4 * count
    if float32_bytes > bounds.max_tensor_bytes:
        raise _too_big(filename, float32_bytes, bounds, "holds")


def _dtype(filename: str, tensor: str, dtype: str) -> InvalidValue:
    return refuse(
        f"{filename!r}: {tensor} has dtype {dtype}; FFN Lab reads {ALLOWED_DTYPES} numbers",
        "dtype",
        file=filename,
        name=tensor,
        dtype=dtype,
        allowed=ALLOWED_DTYPES,
    )


def check_safetensors(data: bytes, filename: str, bounds: FileBounds) -> None:
    """Parse a .safetensors header (8-byte little-endian length, then JSON) with a bound and
    check each tensor's dtype, shape and byte range before anything is loaded.

    Raises:
        InvalidValue: a header too long or not JSON, a dtype that is not floating-point, a
            byte range that does not match its shape or lies outside the file, or tensors
            over `max_tensor_bytes`.
    """

    def broken(reason: str) -> InvalidValue:
        return refuse(
            f"{filename!r} is not a readable .safetensors file of tensors: {reason}",
            "unreadable",
            name=filename,
            kind="safetensors",
        )

    if len(data) < 8:
        raise broken("it is shorter than its 8-byte header length")
    (length,) = struct.unpack("<Q", data[:8])
    if length > min(MAX_HEADER_BYTES, len(data) - 8):
        raise broken(f"its header says it is {length:,} bytes long; the file has {len(data):,}")
    try:
        header = json.loads(data[8 : 8 + length])
    except (ValueError, RecursionError) as exc:
        raise broken(f"its header is not JSON ({str(exc)[:120]})") from None
    if not isinstance(header, dict):
        raise broken("its header is not a JSON object")
    payload = len(data) - 8 - length
    stored = 0
    float32_bytes = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise broken(f"the entry of {name!r} is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(dtype, str):
            raise broken(f"{name!r} has no dtype")
        if dtype not in FLOAT_DTYPES_SAFETENSORS:
            raise _dtype(filename, name, SAFETENSORS_NAMES.get(dtype, dtype.lower()))
        if not (
            isinstance(shape, list)
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
            and isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in offsets)
        ):
            raise broken(f"{name!r} has no valid shape or data_offsets")
        count = math.prod(shape)
        begin, end = offsets
        if (
            not 0 <= begin <= end <= payload
            or end - begin != count * FLOAT_DTYPES_SAFETENSORS[dtype]
        ):
            raise refuse(
                f"{filename!r}: {name} says it is {shape} {dtype} at bytes {offsets}, which "
                f"does not fit its shape or the file's {payload:,} bytes of data",
                "lying_header",
                file=filename,
                name=str(name),
            )
        stored += end - begin
        float32_bytes += 4 * count
    if max(stored, float32_bytes) > bounds.max_tensor_bytes:
        raise _too_big(filename, max(stored, float32_bytes), bounds, "holds")


def check_pt(data: bytes, filename: str, bounds: FileBounds) -> None:
    """A .pt must be torch.save's zip format (its storages are members of known size) with a
    small pickle; the legacy format declares storage sizes only inside the pickle.

    Raises:
        InvalidValue: not a zip, members over `max_tensor_bytes` once unpacked, or a pickle
            (data.pkl) over MAX_HEADER_BYTES.
    """
    if not data.startswith(b"PK\x03\x04"):
        raise refuse(
            f"{filename!r} is not a readable .pt file of tensors: it is not in torch.save's "
            "zip format (PyTorch 1.6 or later); save it with torch.save(module.state_dict(), "
            "path)",
            "unreadable",
            name=filename,
            kind="pt",
        )
    check_zip(data, filename, bounds, "pt")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.filename.endswith("data.pkl") and info.file_size > MAX_HEADER_BYTES:
                raise refuse(
                    f"{filename!r}: its pickle is {_mib(info.file_size)}; a state_dict's is "
                    f"under {_mib(MAX_HEADER_BYTES)}",
                    "too_big_unpacked",
                    file=filename,
                    size=_mib(info.file_size),
                    limit=_mib(MAX_HEADER_BYTES),
                )
