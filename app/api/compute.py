"""How a request's work is run and answered over HTTP: inline on the event loop, or in the
compute pools (`app.services.compute`), with the answers for work that gave none:

- 409 when a newer request with the same `X-FFN-Lab-Supersede` header superseded it;
- 499 when its client disconnected before its turn (nginx's "client closed request");
- 503 with `Retry-After` when it did not finish within the time budget.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response

from app.api.encoding import json_response
from app.services.compute import ComputePools, Cost, NotRun

SUPERSEDE_HEADER = "x-ffn-lab-supersede"
"""Request header: requests with equal values supersede each other, newest wins."""
SUPERSEDE_MAX_CHARS = 200


def timeout_message(budget: float, cost: Cost) -> str:
    """The 503 message: what took too long and the time budget (no setting names)."""
    return (
        f"the server is busy: this {cost.cost_class} request ({cost.params:,} parameters, "
        f"{cost.flops:,} FLOPs) did not finish within its budget of {budget:g} s. "
        "Try again in a moment, or use a smaller configuration."
    )


def superseded_message(key: str) -> str:
    """The 409 message of a request that a newer one with the same key replaced."""
    return (
        f"superseded: a newer request with the same {SUPERSEDE_HEADER} ({key!r}) arrived, "
        "so this one was not computed (or was stopped). Only the newest answer is sent."
    )


def not_run_response(outcome: NotRun) -> Response:
    """The JSON answer `{"detail": ...}` for work that gave no answer (409, 499 or 503)."""
    if outcome.reason == "superseded":
        return json_response({"detail": superseded_message(outcome.key or "")}, 409)
    if outcome.reason == "disconnected":
        return json_response({"detail": "client disconnected"}, 499)
    response = json_response({"detail": timeout_message(outcome.budget, outcome.cost)}, 503)
    response.headers["retry-after"] = str(max(1, round(outcome.budget / 4)))
    return response


async def run_in_pools(
    pools: ComputePools,
    work: Callable[[], Response],
    cost: Cost,
    supersede: str | None = None,
    disconnected: Callable[[], Awaitable[bool]] | None = None,
) -> Response:
    """`pools.run(...)` answered over HTTP: the work's own response, else `not_run_response`."""
    outcome = await pools.run(work, cost, supersede, disconnected)
    return not_run_response(outcome) if isinstance(outcome, NotRun) else outcome


def supersede_key(headers: Any) -> str | None:
    """The request's supersede key (header `X-FFN-Lab-Supersede`), or None; at most
    `SUPERSEDE_MAX_CHARS` characters are used."""
    value = headers.get(SUPERSEDE_HEADER)
    if not value:
        return None
    return str(value)[:SUPERSEDE_MAX_CHARS]


async def run_request(
    request: Request, work: Callable[[], Response], cost: Cost, inline: bool = False
) -> Response:
    """Run one request's work: inline on the event loop when `inline` (tiny work), else in
    the app's pools with the request's supersede key and disconnect check."""
    if inline:
        return work()
    pools: ComputePools = request.app.state.compute_pools
    return await run_in_pools(
        pools, work, cost, supersede_key(request.headers), request.is_disconnected
    )
