"""POST /api/weights/upload: a layer's FFN weights as a file, answered with a `weights_id`.

The body is the file itself (any content type), its name in `filename` (the extension says
the format: .safetensors, .npz, or a PyTorch state_dict .pt read with weights_only=True).
Nothing in the file is executed. The answer's `weights_id` goes into /api/forward or
/api/perturb instead of `weights`, so a 768 -> 3072 layer never travels as JSON.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from app.api.json_body import FastJsonRoute
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
    allowed (`app.lab.file_bounds`, `app.lab.weight_files`)."""
    data = await request.body()
    settings = get_settings()
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
