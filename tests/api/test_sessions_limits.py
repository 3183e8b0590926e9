"""Class sessions under pressure, on servers with small caps: floods get 429, a full server
503, a full session 429, an idle session ends (and its open streams are told)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.serverproc import start_server, stop_server
from tests.sessionhelpers import read_until

SMALL = {
    "FFN_LAB_MAX_SESSIONS": "3",
    "FFN_LAB_MAX_STUDENTS_PER_SESSION": "1",
    "FFN_LAB_SESSION_ANSWER_RATE": "0.01",
    "FFN_LAB_SESSION_ANSWER_BURST": "3",
    "FFN_LAB_SESSION_STATE_RATE": "0.01",
    "FFN_LAB_SESSION_STATE_BURST": "4",
    "FFN_LAB_SESSION_CONNECT_RATE": "0.01",
    "FFN_LAB_SESSION_CONNECT_BURST": "2",
    "FFN_LAB_SESSION_CREATE_BURST": "100",
}


@pytest.fixture(scope="module")
def small() -> Iterator[str]:
    proc, url = start_server(SMALL)
    yield url
    stop_server(proc)


def create(client: httpx.Client) -> tuple[str, dict[str, str]]:
    r = client.post("/api/sessions")
    assert r.status_code == 201, r.text
    return r.json()["code"], {"Authorization": f"Bearer {r.json()['presenter_token']}"}


def test_caps_and_floods(small: str) -> None:
    with httpx.Client(base_url=small, timeout=30) as client:
        code, auth = create(client)
        # state flood: the burst passes, then 429 with Retry-After and a sentence
        codes = [
            client.put(f"/api/sessions/{code}/state", json={"d_ff": 8}, headers=auth).status_code
            for _ in range(6)
        ]
        assert codes[:3] == [200, 200, 200] and codes[-1] == 429
        r = client.put(f"/api/sessions/{code}/state", json={"d_ff": 8}, headers=auth)
        assert r.status_code == 429 and "Retry-After" in r.headers
        assert "Too many lecturer changes" in r.json()["detail"]

        code, auth = create(client)
        q = client.post(f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth)
        body = {"question_id": q.json()["id"], "choice": "c0", "device": "device-flood"}
        answers = [
            client.post(f"/api/sessions/{code}/answers", json=body).status_code for _ in range(5)
        ]
        assert answers[:3] == [200, 200, 200] and answers[-1] == 429
        other = {**body, "device": "device-other"}  # another device is not held back
        assert client.post(f"/api/sessions/{code}/answers", json=other).status_code == 200

        # one student (plus the lecturer's own page) per session here: the third stream is 429
        with (
            client.stream("GET", f"/api/sessions/{code}/events?device=device-s1") as a,
            client.stream("GET", f"/api/sessions/{code}/events?device=device-s2") as b,
        ):
            read_until(a, "state")
            read_until(b, "state")
            r = client.get(f"/api/sessions/{code}/events?device=device-s3")
            assert r.status_code == 429 and "students" in r.json()["detail"]
        # connection flood from one device (on a session of its own: the streams above may
        # still be counted until the server sees them closed)
        code, auth = create(client)
        statuses = []
        for _ in range(4):
            with client.stream("GET", f"/api/sessions/{code}/events?device=device-s4") as s:
                statuses.append(s.status_code)
        assert statuses[:2] == [200, 200] and statuses[-1] == 429
        r = client.get(f"/api/sessions/{code}/events?device=device-s4")
        assert r.status_code == 429 and "Too many connections" in r.json()["detail"]

        # sessions per server: 3 made above, the fourth is refused with 503 until one ends
        r = client.post("/api/sessions")
        assert r.status_code == 503 and "limit" in r.json()["detail"]
        assert client.delete(f"/api/sessions/{code}", headers=auth).status_code == 204
        assert client.post("/api/sessions").status_code == 201


@pytest.mark.slow
def test_an_idle_session_ends_and_its_streams_are_told() -> None:
    proc, base = start_server(
        {"FFN_LAB_SESSION_IDLE_S": "1.5", "FFN_LAB_SESSION_KEEPALIVE_S": "0.3"}
    )
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            code, _ = create(client)
            with client.stream("GET", f"/api/sessions/{code}/events") as r:
                events = read_until(r, "ended")
            assert events[-1].data == {"reason": "idle"}
            assert client.get(f"/api/sessions/{code}").status_code == 404
    finally:
        stop_server(proc)
