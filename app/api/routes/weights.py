"""POST /api/weights/upload: a layer's FFN weights as a file, answered with a `weights_id`.

The body is the file itself (any content type), its name in `filename` (the extension says
the format: .safetensors, .npz, or a PyTorch state_dict .pt read with weights_only=True).
Nothing in the file is executed. The answer's `weights_id` goes into /api/forward or
/api/perturb instead of `weights`, so a 768 -> 3072 layer never travels as JSON.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.concurrency import run_in_threadpool

from app.api.json_body import FastJsonRoute
from app.api.middleware.body_limit import too_large_message
from app.api.schemas.responses import ErrorOut
from app.api.schemas.weights import UploadResponse
from app.config import get_settings
from app.lab.file_bounds import FileBounds
from app.lab.weight_files import FORMATS, LayerFile, read_layer
from app.services.uploads import UploadStore, upload_store

router = APIRouter(prefix="/api", tags=["weights"], route_class=FastJsonRoute)

BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "the file's bytes",
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.post(
    "/weights/upload",
    response_model=UploadResponse,
    responses={413: {"model": ErrorOut, "description": "file over upload_max_bytes"}},
    openapi_extra=BODY,
)
async def post_upload(
    request: Request,
    filename: str = Query(
        min_length=1,
        max_length=200,
        description=f"the file's name; its extension is the format ({', '.join(FORMATS)})",
    ),
) -> UploadResponse:
    """Read one layer's FFN weights (names mapped as `lab.from_module`), keep them, return
    their id, shapes and the activation the family uses.

    What the file declares (zip member sizes, .npy and .safetensors headers) is checked
    against `upload_max_bytes` before any tensor is read, so an upload needs at most the
    body plus 2 x `upload_max_bytes`; d_model and d_ff must be within the server's limits.
    Every refusal is a 422 naming the file, the tensor, the value or limit and what is
    allowed (`app.lab.file_bounds`, `app.lab.weight_files`); a body over `upload_max_bytes`
    is a 413. The body is held once while it arrives (`read_file`)."""
    settings = get_settings()
    data = await read_file(request, settings.upload_max_bytes)
    store = upload_store()
    key = UploadStore.key(data)
    layer = store.get(key)
    if not isinstance(layer, LayerFile):
        bounds = FileBounds(
            max_tensor_bytes=settings.upload_max_bytes,
            max_d_model=settings.max_d_model,
            max_d_ff=settings.max_d_ff,
            max_params=settings.max_params,
        )
        layer = await run_in_threadpool(read_layer, data, filename, settings.max_abs_value, bounds)
        store.put(key, layer)
    return _answer(key, layer)


async def read_file(request: Request, limit: int) -> bytes:
    """The request body (the file), read with the body held once while it arrives.

    With a Content-Length (bytes, at most `limit`) the chunks are copied into one
    preallocated buffer as they arrive, each freed at once, then into the `bytes` the parsers
    take (`safetensors` reads nothing else; a `bytes` is shared, not copied, by
    `io.BytesIO`): 2 x the body during that last copy, 1 x after it. Starlette's
    `request.body()` keeps every chunk in a list until it joins them, and the join copies
    even a body that came as one message (the stream ends with an empty chunk). A body
    without a Content-Length comes as one message from the body-limit middleware and is
    taken as it is.

    Raises:
        HTTPException: 413 for a body over `limit` bytes (the body-limit middleware refuses
            it first); 400 for a Content-Length that is not a number or a body that does not
            match it (which the server itself does not let through).
    """
    declared = _declared_length(request)
    if declared is None:
        chunks = [chunk async for chunk in request.stream() if chunk]
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        del chunks
        if len(data) > limit:
            raise HTTPException(413, too_large_message(limit, len(data)))
        return data
    if declared > limit:
        raise HTTPException(413, too_large_message(limit, declared))
    buffer = bytearray(declared)
    view = memoryview(buffer)
    size = 0
    async for chunk in request.stream():
        end = size + len(chunk)
        if end > declared:
            raise _not_declared(declared)
        view[size:end] = chunk
        size = end
        del chunk  # freed now, not when the next chunk replaces it
    view.release()
    if size != declared:
        raise _not_declared(declared)
    data = bytes(buffer)
    del buffer
    return data


def _not_declared(declared: int) -> HTTPException:
    return HTTPException(400, f"the request body is not the {declared:,} bytes it declared")


def _declared_length(request: Request) -> int | None:
    value = request.headers.get("content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise HTTPException(400, f"Content-Length {value[:40]!r} is not a number") from None


def _answer(key: str, layer: LayerFile) -> UploadResponse:
    return UploadResponse(
        weights_id=key,
        family=layer.family,
        format=layer.format,
        d_model=layer.d_model,
        d_ff=layer.d_ff,
        gated=layer.gated,
        bias=layer.bias,
        activation=layer.activation,
        shapes={name: list(a.shape) for name, a in layer.weights.items()},
        found=layer.found[:200],
    )
