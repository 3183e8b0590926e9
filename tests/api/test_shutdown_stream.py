"""SIGTERM with a training stream open: the stream ends at once with a final
`{"done": false, "reason": "server shutting down"}` line and the process exits (a real
uvicorn process, over TCP)."""

from __future__ import annotations

import json
import signal

import httpx

from tests.api.test_train_cancel import BODY
from tests.serverproc import start_server, stop_server


def test_sigterm_ends_an_open_training_stream_with_a_final_line() -> None:
    proc, base = start_server(env={"FFN_LAB_MAX_TRAIN_WORK": str(10**14)})
    try:
        with (
            httpx.Client(timeout=60) as client,
            client.stream("POST", f"{base}/api/train", json=BODY) as response,
        ):
            assert response.status_code == 200
            lines = response.iter_lines()
            assert json.loads(next(lines))["step"] == 0
            proc.send_signal(signal.SIGTERM)
            rest = [json.loads(line) for line in lines if line]
        assert rest, "the stream ended without a final line"
        assert rest[-1] == {"done": False, "reason": "server shutting down"}
        assert all("step" in line for line in rest[:-1])
        assert rest[-2:-1] == [] or rest[-2]["step"] < BODY["steps"]
        # uvicorn re-raises the signal it handled once it has shut down: exit by SIGTERM
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)  # a hang guard, not a time bound
    finally:
        stop_server(proc)
