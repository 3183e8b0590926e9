"""Two processes sharing one class session through Redis (FFN_LAB_REDIS_URL): the lecturer
on one, students on the other, all follow; a process that dies leaves the session to the
other. Each test starts its own redis-server on a free port."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from benchmarks import nginx
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


@pytest.mark.skipif(not nginx.available(), reason="nginx is not installed (apt-get install nginx)")
def test_a_replica_killed_mid_lecture(redis_url: str) -> None:
    """Students behind nginx on two replicas; one replica dies: the students it served
    reconnect through the proxy (Last-Event-ID) and get what the lecturer changed."""
    env = {"FFN_LAB_REDIS_URL": redis_url}
    a, base_a = start_server(env)
    b, base_b = start_server(env)
    try:
        with (
            nginx.Nginx(upstreams=[base_a, base_b]) as proxy,
            httpx.Client(base_url=base_b, timeout=30) as lecturer,
            httpx.Client(base_url=proxy.base, timeout=30) as students,
        ):
            created = lecturer.post("/api/sessions").json()
            code, token = created["code"], created["presenter_token"]
            auth = {"Authorization": f"Bearer {token}"}
            lecturer.put(f"/api/sessions/{code}/state", json={"d_ff": 32}, headers=auth)
            path = f"/api/sessions/{code}/events"
            # round robin: of two streams through nginx, one is on each replica
            with students.stream("GET", path) as s1, students.stream("GET", path) as s2:
                last = [read_until(s, "state")[-1].id for s in (s1, s2)]
                a.kill()  # killed, not stopped: its streams just break
                a.wait(timeout=10)
                lecturer.put(f"/api/sessions/{code}/state", json={"d_ff": 40}, headers=auth)
                got = []
                for stream, seen in zip((s1, s2), last, strict=True):
                    try:
                        got.append(read_until(stream, "state")[-1])
                    except (AssertionError, httpx.HTTPError):
                        # this one was on the dead replica: reconnect as a browser does
                        headers = {"Last-Event-ID": str(seen)}
                        with students.stream("GET", path, headers=headers) as again:
                            assert again.status_code == 200
                            got.append(read_until(again, "state")[-1])
                assert [e.data["state"] for e in got] == [{"d_ff": 40}, {"d_ff": 40}]
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                stop_server(proc)
