"""POST /api/weights/upload refuses every file it cannot use with a 422 that names the file,
the tensor, the value or limit and what is allowed: bad values, tensors that are not plain
dense float arrays, shapes the server cannot run, and files that claim to unpack to more
than the upload limit (refused before they are unpacked, with bounded memory)."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from safetensors.torch import save as save_safetensors


def npz(**arrays: Any) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def pt(state: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def safetensors(**tensors: torch.Tensor) -> bytes:
    return save_safetensors(tensors)


WRITERS: dict[str, Callable[[dict[str, torch.Tensor]], bytes]] = {
    "npz": lambda t: npz(**{k: v.numpy() for k, v in t.items()}),
    "safetensors": lambda t: safetensors(**t),
    "pt": pt,
}


def refusal(client: TestClient, data: bytes, filename: str) -> dict[str, Any]:
    response = client.post(
        "/api/weights/upload",
        params={"filename": filename},
        content=data,
        headers={"content-type": "application/octet-stream"},
    )
    assert response.status_code == 422, (response.status_code, response.text[:500])
    detail: dict[str, Any] = response.json()["detail"][0]
    assert detail["loc"] == ["body", "file"]
    assert detail["params"]["file"] == filename
    assert filename in detail["msg"]
    return detail


def layer(**change: torch.Tensor) -> dict[str, torch.Tensor]:
    base = {"w1": torch.full((4, 8), 0.5), "w2": torch.full((8, 4), 0.25)}
    return base | change


@pytest.mark.parametrize("kind", sorted(WRITERS))
@pytest.mark.parametrize(
    ("value", "shown"), [(float("nan"), "nan"), (float("inf"), "inf"), (-1e6, "-1000000.0")]
)
def test_bad_values_are_named(client: TestClient, kind: str, value: float, shown: str) -> None:
    w1 = torch.full((4, 8), 0.5)
    w1[2, 3] = value
    detail = refusal(client, WRITERS[kind](layer(w1=w1)), f"layer.{kind}")
    assert detail["code"] == "file_bad_value"
    assert detail["params"]["name"] == "w1[2, 3]"
    assert detail["params"]["value"] == shown and detail["params"]["limit"] == "10000"
    assert "finite" in detail["msg"]


def _quantized() -> torch.Tensor:
    return torch.quantize_per_tensor(torch.ones(4, 8), 0.1, 0, torch.qint8)


KINDS: dict[str, tuple[Callable[[], dict[str, torch.Tensor]], str]] = {
    "meta": (lambda: layer(w1=torch.empty(4, 8, device="meta")), "meta"),
    "sparse": (lambda: layer(w1=torch.ones(4, 8).to_sparse()), "sparse"),
    "quantized": (lambda: layer(w1=_quantized()), "quantized"),
    "complex": (lambda: layer(w1=torch.ones(4, 8, dtype=torch.complex64)), "complex64"),
    "bool": (lambda: layer(w1=torch.ones(4, 8, dtype=torch.bool)), "bool"),
    "int": (lambda: layer(w1=torch.ones(4, 8, dtype=torch.int64)), "int64"),
    "0-dim": (lambda: layer(b1=torch.tensor(1.0), b2=torch.zeros(4)), "0-dim"),
    "non-contiguous": (lambda: layer(w1=torch.ones(8, 4).T), "contiguous"),
    "view": (lambda: layer(w1=torch.ones(64)[:32].view(4, 8)), "view"),
}


def _shared() -> dict[str, torch.Tensor]:
    w1 = torch.ones(4, 8)
    return {"w1": w1, "w_gate": w1, "w2": torch.ones(8, 4)}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", sorted(KINDS))
def test_tensors_that_are_not_plain_float_arrays(client: TestClient, case: str) -> None:
    make, words = KINDS[case]
    detail = refusal(client, pt(make()), f"{case}.pt")
    assert detail["code"].startswith("file_"), detail
    assert words in detail["msg"]


def test_tensors_sharing_storage(client: TestClient) -> None:
    detail = refusal(client, pt(_shared()), "shared.pt")
    assert detail["code"] == "file_shared"
    assert "storage" in detail["msg"]


@pytest.mark.parametrize("kind", ["npz", "safetensors"])
def test_integer_files_are_refused_before_loading(client: TestClient, kind: str) -> None:
    tensors = layer(w1=torch.ones(4, 8, dtype=torch.int32))
    detail = refusal(client, WRITERS[kind](tensors), f"ints.{kind}")
    assert detail["code"] == "file_dtype" and "int32" in detail["msg"]
    assert "float32" in detail["params"]["allowed"]


@pytest.mark.parametrize("kind", sorted(WRITERS))
@pytest.mark.parametrize(
    ("d_model", "d_ff", "what"), [(4, 0, "d_ff"), (0, 4, "d_model"), (1, 200_000, "d_ff")]
)
def test_shapes_nothing_can_use(
    client: TestClient, kind: str, d_model: int, d_ff: int, what: str
) -> None:
    tensors = {"w1": torch.zeros(d_model, d_ff), "w2": torch.zeros(d_ff, d_model)}
    detail = refusal(client, WRITERS[kind](tensors), f"shape.{kind}")
    assert detail["code"] == "file_layer_size"
    assert detail["params"]["what"] == what and detail["params"]["value"] == max(
        0, d_ff if what == "d_ff" else d_model
    )


# --- bounded unpacking ----------------------------------------------------------------------

LIMIT = 4 << 20
"""The upload limit these tests set (4 MiB): a bomb unpacks to 64x that."""
BOMB_FLOATS = 64 * LIMIT // 4


@pytest.fixture
def small_limit(settings_env: pytest.MonkeyPatch) -> Iterator[TestClient]:
    settings_env.setenv("FFN_LAB_UPLOAD_MAX_BYTES", str(LIMIT))
    from app.main import create_app

    with TestClient(create_app()) as c:
        yield c


def _deflated_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def npz_bomb() -> bytes:
    """w1 [1, 16M] and w2 [16M, 1] zeros (128 MiB once unpacked), deflated to ~130 kB."""
    members = {}
    for name, shape in (("w1", (1, BOMB_FLOATS // 2)), ("w2", (BOMB_FLOATS // 2, 1))):
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": shape}
        )
        members[f"{name}.npy"] = header.getvalue() + bytes(4 * BOMB_FLOATS // 2)
    return _deflated_zip(members)


def pt_bomb() -> bytes:
    """A torch.save zip whose members are re-deflated: 128 MiB of storages in ~130 kB."""
    half = BOMB_FLOATS // 2
    plain = pt({"w1": torch.zeros(1, half), "w2": torch.zeros(half, 1)})
    with zipfile.ZipFile(io.BytesIO(plain)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    return _deflated_zip(members)


def safetensors_liar() -> bytes:
    """A header that claims w1 is [65536, 65536] float32 (16 GiB) in a 1 kB file."""
    header = {"w1": {"dtype": "F32", "shape": [65536, 65536], "data_offsets": [0, 1 << 34]}}
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + bytes(1024)


@pytest.mark.parametrize(
    ("name", "make", "code"),
    [
        ("bomb.npz", npz_bomb, "file_too_big_unpacked"),
        ("bomb.pt", pt_bomb, "file_too_big_unpacked"),
        ("liar.safetensors", safetensors_liar, "file_lying_header"),
    ],
)
def test_bombs_are_refused_before_unpacking(
    small_limit: TestClient, name: str, make: Callable[[], bytes], code: str
) -> None:
    data = make()
    assert len(data) < LIMIT
    tracemalloc.start()
    try:
        detail = refusal(small_limit, data, name)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert detail["code"] == code
    assert peak < 2 * LIMIT, f"{peak:,} bytes traced while refusing {name}"


def test_a_bad_value_past_the_first_checked_block_is_named(client: TestClient) -> None:
    """Values are checked a block at a time: one far into the tensor is found and named."""
    from app.lab.layer_checks import CHUNK

    w1 = torch.full((64, 2 * CHUNK // 64), 0.5)
    w2 = torch.full((2 * CHUNK // 64, 64), 0.25)
    w1[50, 7] = float("nan")
    detail = refusal(client, WRITERS["npz"]({"w1": w1, "w2": w2}), "layer.npz")
    assert detail["code"] == "file_bad_value"
    assert detail["params"]["name"] == "w1[50, 7]"


def _request(chunks: list[bytes], declared: int | None) -> Any:
    from starlette.requests import Request

    headers = [] if declared is None else [(b"content-length", str(declared).encode())]
    pending = list(chunks)

    async def receive() -> dict[str, Any]:
        body = pending.pop(0) if pending else b""
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    return Request({"type": "http", "method": "POST", "headers": headers}, receive)


@pytest.mark.parametrize("declared", [True, False])
def test_the_file_is_read_whole_from_its_chunks(declared: bool) -> None:
    from anyio import run

    from app.api.routes.weights import read_file

    chunks = [bytes([i]) * (1000 + i) for i in range(20)]
    whole = b"".join(chunks)
    request = _request(chunks, len(whole) if declared else None)
    assert run(read_file, request, len(whole)) == whole


@pytest.mark.parametrize(
    ("chunks", "declared", "limit", "status"),
    [
        ([b"x" * 10], 10, 9, 413),  # declared over the limit
        ([b"x" * 10], None, 9, 413),  # chunked over the limit
        ([b"x" * 10], 12, 100, 400),  # shorter than declared
        ([b"x" * 10, b"x" * 5], 12, 100, 400),  # longer than declared
    ],
)
def test_a_body_that_is_too_large_or_not_as_declared_is_refused(
    chunks: list[bytes], declared: int | None, limit: int, status: int
) -> None:
    from anyio import run
    from fastapi import HTTPException

    from app.api.routes.weights import read_file

    with pytest.raises(HTTPException) as caught:
        run(read_file, _request(chunks, declared), limit)
    assert caught.value.status_code == status
