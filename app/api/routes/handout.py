"""POST /api/handout: the guided lesson as one offline HTML file (Plotly inlined once)."""

from __future__ import annotations

import threading

import anyio.to_thread
from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse

from app.api.encoding import json_response
from app.api.schemas.handout import HandoutRequest
from app.api.schemas.responses import ErrorOut
from app.lab.handout.render import render_handout

router = APIRouter(prefix="/api", tags=["export"])
_building = threading.Lock()


@router.post(
    "/handout",
    response_class=HTMLResponse,
    responses={
        503: {
            "description": "busy: a handout is being built",
            "content": {"application/json": {"schema": ErrorOut.model_json_schema()}},
        }
    },
)
async def post_handout(req: HandoutRequest) -> Response:
    """Every lesson step's picture (computed by the real FFN for the step's settings),
    numbers, sentence and link back to the step, as one HTML file that opens offline and
    prints to PDF one step per block. Builds one handout at a time (about 20 steps, three of
    them short trainings and one a capacity sweep: tens of seconds on a busy machine)."""
    if not _building.acquire(blocking=False):
        response = json_response(
            {
                "detail": "the server is already building a lesson handout; try again when "
                "it has finished (it takes under a minute)"
            },
            503,
        )
        response.headers["retry-after"] = "30"
        return response
    try:
        html = await anyio.to_thread.run_sync(render_handout, req.lang, req.base_url)
    finally:
        _building.release()
    name = f"ffn-lab_lesson-handout_{req.lang}.html"
    return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="{name}"'})
