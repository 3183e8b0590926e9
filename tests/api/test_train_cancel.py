"""Closing the /api/train stream stops the server's work (a real uvicorn process, over TCP).

The server counts every optimiser step it takes (GET /api/train/status); after the client
hangs up, the training must end as cancelled, long before its requested steps, and the
count must stop growing (checked while another, short training runs to its end).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.serverproc import start_server, stop_server

STEPS = 5000
BODY = {
    "d_model": 64,
    "d_ff": 512,
    "num_pairs": 2048,
    "num_classes": 16,
    "steps": STEPS,
    "log_every": 5,
}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    proc, url = start_server(env={"FFN_LAB_MAX_TRAIN_WORK": str(10**14)})
    try:
        yield url
    finally:
        stop_server(proc)


def status(base: str) -> dict:
    return httpx.get(f"{base}/api/train/status", timeout=10).json()


def test_closing_the_stream_stops_the_training(base: str) -> None:
    url = f"{base}/api/train"
    with httpx.Client(timeout=60) as client, client.stream("POST", url, json=BODY) as r:
        assert r.status_code == 200
        lines = r.iter_lines()
        assert json.loads(next(lines))["step"] == 0
        assert json.loads(next(lines))["step"] == 5
        assert status(base)["running"] == 1
    # leaving the block closed the connection mid-stream
    deadline = time.monotonic() + 60
    while (now := status(base))["running"] and time.monotonic() < deadline:
        time.sleep(0.05)  # polling for the server's state, not waiting a fixed time
    assert now["running"] == 0 and now["cancelled"] == 1 and now["completed"] == 0
    assert 5 <= now["steps_run"] < STEPS
    # Nothing runs on in the background: while a short training streams to its end, the
    # server takes exactly that training's steps and no others.
    short = {"d_model": 16, "d_ff": 64, "num_pairs": 64, "steps": 300, "log_every": 100}
    r = httpx.post(f"{base}/api/train", json=short, timeout=60)
    assert json.loads(r.text.splitlines()[-1])["final"]["step"] == 300
    again = status(base)
    assert again["steps_run"] == now["steps_run"] + 300
    assert again["completed"] == 1 and again["cancelled"] == 1


def test_a_new_run_right_after_a_cancel_gets_the_freed_slot(base: str) -> None:
    """The page cancels a run and starts the next at once (Train pressed again, the lesson's
    next step): the server has not yet seen the hang-up when the new request arrives, so
    it waits briefly for the slot instead of answering 503 "busy"."""
    url = f"{base}/api/train"
    limit = 2  # the server's default number of trainings at once
    with httpx.Client(timeout=60) as client:
        held = [client.stream("POST", url, json=BODY) for _ in range(limit)]
        answers = [h.__enter__() for h in held]
        for r in answers:
            assert r.status_code == 200
            assert json.loads(next(r.iter_lines()))["step"] == 0
        held[0].__exit__(None, None, None)  # cancel one run ...
        again = httpx.post(url, json={**BODY, "steps": 10}, timeout=60)  # ... start the next
        held[1].__exit__(None, None, None)
    assert again.status_code == 200, again.text
    assert json.loads(again.text.splitlines()[-1])["final"]["step"] == 10
