"""Two processes sharing one class session through Redis (FFN_LAB_REDIS_URL): the lecturer
on one, students on the other, all follow; a process that dies leaves the session to the
other. Each test starts its own redis-server on a free port."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.serverproc import start_server, stop_server
from tests.sessionhelpers import RedisServer, read_until, redis_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not redis_available(), reason="redis-server is not installed (apt-get install redis-server)"
    ),
]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with RedisServer() as server:
        yield server.url


def test_lecturer_on_one_process_students_on_another(redis_url: str) -> None:
    env = {"FFN_LAB_REDIS_URL": redis_url}
    a, base_a = start_server(env)
    b, base_b = start_server(env)
    try:
        with (
            httpx.Client(base_url=base_a, timeout=30) as la,
            httpx.Client(base_url=base_b, timeout=30) as sb,
        ):
            created = la.post("/api/sessions").json()
            code, auth = created["code"], {"Authorization": f"Bearer {created['presenter_token']}"}
            la.put(f"/api/sessions/{code}/state", json={"d_ff": 96}, headers=auth)
            assert sb.get(f"/api/sessions/{code}").json()["state"] == {"d_ff": 96}
            with sb.stream("GET", f"/api/sessions/{code}/events") as r:
                assert read_until(r, "state")[-1].data["state"] == {"d_ff": 96}
                la.put(f"/api/sessions/{code}/state", json={"d_ff": 100}, headers=auth)
                assert read_until(r, "state")[-1].data == {"state": {"d_ff": 100}, "version": 2}
                q = la.post(
                    f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth
                )
                qid = q.json()["id"]
                assert read_until(r, "question")[-1].data["question"]["id"] == qid
                for i, choice in enumerate(["c1", "c1", "c0"]):
                    body = {"question_id": qid, "choice": choice, "device": f"device-r{i:04d}"}
                    assert sb.post(f"/api/sessions/{code}/answers", json=body).status_code == 200
                done = la.post(f"/api/sessions/{code}/questions/{qid}/reveal", headers=auth).json()
                assert done["counts"]["c1"] == 2 and done["total"] == 3
                assert read_until(r, "reveal")[-1].data["total"] == 3
            # the lecturer's process dies: the session lives on in Redis
            stop_server(a)
            assert sb.put(
                f"/api/sessions/{code}/state", json={"d_ff": 104}, headers=auth
            ).json() == {"version": 3}
            with sb.stream("GET", f"/api/sessions/{code}/events") as r:
                assert read_until(r, "state")[-1].data["state"] == {"d_ff": 104}
            assert sb.delete(f"/api/sessions/{code}", headers=auth).status_code == 204
            assert sb.get(f"/api/sessions/{code}").status_code == 404
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                stop_server(proc)
