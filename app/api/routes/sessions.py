"""Class sessions over HTTP: a lecturer's page followed by students, and predict-then-reveal.

    POST   /api/sessions                         201 {code, join_url, presenter_token, qr_svg}
    GET    /api/sessions/{code}                  the current state, question and reveal
    PUT    /api/sessions/{code}/state            lecturer (Bearer token): {"version": n}
    GET    /api/sessions/{code}/events           text/event-stream: state, question, tally,
                                                 reveal, ended (Last-Event-ID resumes)
    POST   /api/sessions/{code}/questions        lecturer: {"kind": ...} -> the question
    POST   /api/sessions/{code}/answers          students: {question_id, choice, device}
    POST   /api/sessions/{code}/questions/{id}/reveal   lecturer: the FFN's answer + counts
    DELETE /api/sessions/{code}                  lecturer: end it (every screen is told)
    GET    /join, /join/{code}                   the students' way in (a code field; the page)

Refusals: 403 without the presenter token, 404 for an unknown code (the join page lets them
retype it), 422 naming the field, 409 after the reveal, 429 for floods and a full session,
503 when the server has its most sessions. The state, questions and answers live in
app/services/sessions; the questions' choices and answers in app/lab/questions; what these
routes share (refusals as HTTP answers, codes, the presenter's token, QR codes) in
app/api/session_helpers.py.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Header, HTTPException, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse

from app.api.deps import lab_limits
from app.api.encoding import json_response
from app.api.routes.pages import PANELS, boot_data, templates
from app.api.schemas.sessions import (
    AnswerAccepted,
    AnswerRequest,
    QuestionRequest,
    SessionCreated,
    SessionOut,
    StateVersion,
    state_errors,
    state_schema,
)
from app.api.session_helpers import (
    REFUSALS,
    bearer,
    client_of,
    code_of,
    panels,
    presenter_cookie,
    public_question,
    qr_svg,
    refusals,
    service,
)
from app.config import get_settings
from app.lab.questions import Question, answer_question, build_question
from app.services.sessions.codes import normal_code

Code = Annotated[
    str, Path(min_length=1, max_length=16, description="the session code, e.g. K7QF3M")
]
QuestionId = Annotated[str, Path(min_length=1, max_length=32, description="the question's id")]

router = APIRouter(prefix="/api/sessions", tags=["sessions"], responses=REFUSALS)
pages = APIRouter(tags=["pages"], include_in_schema=False)

STATE_MAX_BYTES = 16 * 1024
"""Largest state body (the page's settings are well under 2 kB; typed text <= 500 chars)."""

RETRY_MS = 2000
"""The `retry:` an event stream asks browsers to wait before reconnecting (ms)."""


@router.post("", status_code=201, response_model=SessionCreated)
async def create_session(request: Request, response: Response) -> SessionCreated:
    """Start a class session. Keep `presenter_token` in the lecturer's tab only. The answer
    also sets the presenter cookie (HttpOnly, this session's URLs only), by which the
    lecturer's event stream gets the tally's counts."""
    with refusals():
        created = await service(request).create(client_of(request))
    join_url = f"/join/{created.code}"
    absolute = str(request.base_url).rstrip("/") + join_url
    response.set_cookie(
        presenter_cookie(created.code),
        created.token,
        path=f"/api/sessions/{created.code}",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return SessionCreated(
        code=created.code,
        join_url=join_url,
        presenter_token=created.token,
        qr_svg=qr_svg(absolute),
        join_absolute=absolute,
    )


@router.get("/{code}", response_model=SessionOut)
async def get_session(code: Code, request: Request) -> SessionOut:
    """The session as a screen joining now sees it (404 when it has ended)."""
    code = code_of(code)
    with refusals():
        record = await service(request).require(code)
    return SessionOut(
        code=code,
        join_url=f"/join/{code}",
        version=int(record.get("version", 0)),
        state=record.get("state") or {},
        question=public_question(record.get("question")),
        reveal=record.get("reveal"),
    )


async def read_body(request: Request, limit: int) -> Any:
    """The JSON body, refused (413) past `limit` bytes before it is parsed."""
    size = 0
    chunks = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"request body is over the limit of {limit:,} bytes")
        chunks.append(chunk)
    try:
        return orjson.loads(b"".join(chunks))
    except orjson.JSONDecodeError as exc:
        raise RequestValidationError(
            [
                {
                    "loc": ("body",),
                    "msg": f"the body is not valid JSON ({exc})",
                    "type": "json_invalid",
                }
            ]
        ) from exc


@router.put(
    "/{code}/state",
    response_model=StateVersion,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def put_state(
    code: Code,
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
) -> StateVersion:
    """Publish the lecturer's page state (the URL's keys, e.g. {"d_model": 64, "d_ff": 256,
    "panel": "flow"}); every student's page follows. 422 names a key or value the page's
    URL schema refuses."""
    code = code_of(code)
    token = bearer(authorization)
    sessions = service(request)
    with refusals():
        await sessions.authorize(code, token)  # 403/404 before the body is read
    raw = await read_body(request, STATE_MAX_BYTES)
    errors = state_errors(raw, state_schema(get_settings(), panels()))
    if errors:
        raise RequestValidationError(errors)
    with refusals():
        version = await sessions.put_state(code, token, raw)
    return StateVersion(version=version)


@router.get(
    "/{code}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def get_events(
    code: Code,
    request: Request,
    device: str | None = None,
    last_event_id: Annotated[str | None, Header()] = None,
    authorization: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """The session's events as `text/event-stream`: first the current state (and the open
    question with its reveal), then every change. `Last-Event-ID` (sent by a reconnecting
    browser) resumes after that event while the server still has the ones missed.

    The lecturer's stream (the presenter cookie, or `Authorization: Bearer <presenter_token>`
    from a program; a wrong token there is 403) gets each `tally` with its `counts`; a
    student's gets how many answered (`question_id`, `total`): the counts come with the
    reveal."""
    code = code_of(code)
    client = device if device and device.isascii() and 8 <= len(device) <= 64 else None
    resume: int | None = None
    if last_event_id and last_event_id.strip().isdigit():
        resume = int(last_event_id.strip())
    sessions = service(request)
    presenter = False
    with refusals():
        if authorization is not None:
            await sessions.authorize(code, bearer(authorization))
            presenter = True
        elif cookie := request.cookies.get(presenter_cookie(code)):
            presenter = await sessions.is_presenter(code, cookie)
        listener = await sessions.listen(code, client or client_of(request), resume)

    async def body() -> AsyncIterator[bytes]:
        yield b"retry: %d\n\n" % RETRY_MS
        async for event in listener.events():
            if event is None:
                yield b": keep-alive\n\n"
            else:
                yield event.wire if presenter else event.student_wire

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"},
    )


@router.post("/{code}/questions", status_code=201)
async def post_question(
    code: Code,
    req: QuestionRequest,
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
) -> Response:
    """Ask the class a question about the FFN as the session shows it now."""
    code = code_of(code)
    token = bearer(authorization)
    sessions = service(request)
    with refusals():
        record = await sessions.authorize(code, token)
        question = build_question(req.kind, record.get("state") or {}, secrets.token_hex(4))
        await sessions.open_question(code, token, question.to_dict(), question.public())
    return json_response(question.public(), status_code=201)


@router.post("/{code}/answers", response_model=AnswerAccepted)
async def post_answer(code: Code, req: AnswerRequest, request: Request) -> AnswerAccepted:
    """A student's answer (anonymous: a random device id, one answer per device)."""
    code = code_of(code)
    with refusals():
        await service(request).answer(code, req.question_id, req.choice, req.device)
    return AnswerAccepted(question_id=req.question_id, choice=req.choice)


@router.post("/{code}/questions/{question_id}/reveal")
async def post_reveal(
    code: Code,
    question_id: QuestionId,
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
) -> Response:
    """Run the FFN on the question's state and show its answer beside the class's counts."""
    code = code_of(code)
    token = bearer(authorization)
    sessions = service(request)
    with refusals():
        await sessions.authorize(code, token)
        question = Question.from_dict(await sessions.question(code, question_id))
    cache = request.app.state.weight_cache
    try:
        answer = await asyncio.to_thread(
            answer_question, question, cache, lab_limits(get_settings())
        )
    except ValueError as exc:
        raise RequestValidationError(
            [{"loc": ("body", "state"), "msg": str(exc), "type": "value_error"}]
        ) from exc
    with refusals():
        data = await sessions.reveal(code, token, question_id, answer.to_dict())
    return json_response(data)


@router.delete("/{code}", status_code=204)
async def delete_session(
    code: Code, request: Request, authorization: Annotated[str | None, Header()] = None
) -> Response:
    """End the session: every screen says so; nothing of it is kept."""
    code = code_of(code)
    with refusals():
        await service(request).end(code, bearer(authorization))
    return Response(status_code=204)


# ---- pages ----


@pages.get("/join", response_class=HTMLResponse, response_model=None)
async def join_form(request: Request, code: str | None = None) -> Response:
    """A code field (phones); `?code=` goes on to /join/{code}."""
    if code:
        normal = normal_code(code)
        if normal is not None:
            return RedirectResponse(f"/join/{normal}", status_code=303)
        return join_page(request, code, 404)
    return join_page(request, "", 200)


@pages.get("/join/{code}", response_class=HTMLResponse, response_model=None)
async def join_session(code: str, request: Request) -> Response:
    """The page, following session `code`; 404 with a code field when there is no such one."""
    normal = normal_code(code)
    if normal is None or await service(request).store.get(normal) is None:
        return join_page(request, code[:12], 404)
    if normal != code:
        return RedirectResponse(f"/join/{normal}", status_code=303)
    return templates.TemplateResponse(
        request,
        "index.html",
        {"boot": boot_data(), "panels": PANELS, "session_code": normal},
    )


def join_page(request: Request, tried: str, status: int) -> HTMLResponse:
    """The join form; `tried` is a code that was not found (shown, to retype)."""
    return templates.TemplateResponse(
        request,
        "join.html",
        {"boot": {"i18n": boot_data()["i18n"]}, "tried": tried, "not_found": status == 404},
        status_code=status,
    )
