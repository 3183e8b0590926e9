"""Class sessions over HTTP on a real server: every endpoint, every refusal.

The FFN's answers at the reveal are checked against numbers computed here from the shapes
and from the tiny preset's integer weights (tests/reference.py), not against the server.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from app.model.presets import PRESETS
from tests import reference
from tests.serverproc import start_server, stop_server
from tests.sessionhelpers import read_until

CODE = re.compile(r"^[A-HJ-NP-Z2-9]{6}$")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    proc, url = start_server({"FFN_LAB_SESSION_CREATE_BURST": "1000"})
    yield url
    stop_server(proc)


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=30) as c:
        yield c


def start(client: httpx.Client) -> tuple[str, dict[str, str]]:
    r = client.post("/api/sessions")
    assert r.status_code == 201, r.text
    body = r.json()
    return body["code"], {"Authorization": f"Bearer {body['presenter_token']}"}


def test_create_answers_code_link_token_and_qr(client: httpx.Client) -> None:
    r = client.post("/api/sessions")
    assert r.status_code == 201
    body = r.json()
    assert CODE.match(body["code"]), body["code"]
    assert body["join_url"] == f"/join/{body['code']}"
    assert len(body["presenter_token"]) >= 32
    assert body["qr_svg"].startswith("<svg") and "<path" in body["qr_svg"]
    assert body["join_absolute"].endswith(body["join_url"])
    assert body["presenter_token"] not in body["join_absolute"]
    codes = {client.post("/api/sessions").json()["code"] for _ in range(5)}
    assert len(codes) == 5 and all(not set(c) & set("0O1I") for c in codes)


def test_state_is_published_versioned_and_read_back(client: httpx.Client) -> None:
    code, auth = start(client)
    r = client.put(f"/api/sessions/{code}/state", json={"d_model": 8, "d_ff": 32}, headers=auth)
    assert r.status_code == 200 and r.json() == {"version": 1}
    state = {"d_model": 8, "d_ff": 48, "panel": "sparsity", "lesson": True, "step": 3}
    r = client.put(f"/api/sessions/{code}/state", json=state, headers=auth)
    assert r.json() == {"version": 2}
    got = client.get(f"/api/sessions/{code}").json()
    assert got["state"] == state and got["version"] == 2 and got["question"] is None


@pytest.mark.parametrize(
    ("state", "field"),
    [
        ({"d_model": 0}, "d_model"),
        ({"d_ff": "64"}, "d_ff"),
        ({"activation": "tanh"}, "activation"),
        ({"bias": 1}, "bias"),
        ({"scale": 9.5}, "scale"),
        ({"panel": "nowhere"}, "panel"),
        ({"colour": "red"}, "colour"),
        ({"lang": "en"}, "lang"),
        ({"text": "x" * 501}, "text"),
    ],
)
def test_malformed_state_is_422_naming_the_field(
    client: httpx.Client, state: dict[str, object], field: str
) -> None:
    code, auth = start(client)
    r = client.put(f"/api/sessions/{code}/state", json=state, headers=auth)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail[0]["loc"] == ["body", field]
    assert field in detail[0]["msg"]


def test_state_that_is_not_an_object_or_not_json_is_422(client: httpx.Client) -> None:
    code, auth = start(client)
    r = client.put(f"/api/sessions/{code}/state", json=[1, 2], headers=auth)
    assert r.status_code == 422
    r = client.put(f"/api/sessions/{code}/state", content=b"{nope", headers=auth)
    assert r.status_code == 422 and "JSON" in r.json()["detail"][0]["msg"]
    r = client.put(f"/api/sessions/{code}/state", content=b"[" * 20_000, headers=auth)
    assert r.status_code == 413


def test_students_cannot_drive_the_class(client: httpx.Client) -> None:
    code, auth = start(client)
    _, other_auth = start(client)
    q = client.post(f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth)
    qid = q.json()["id"]
    for headers in ({}, {"Authorization": "Bearer nope"}, other_auth, {"Authorization": "x"}):
        assert (
            client.put(f"/api/sessions/{code}/state", json={}, headers=headers).status_code == 403
        )
        r = client.post(
            f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=headers
        )
        assert r.status_code == 403
        r = client.post(f"/api/sessions/{code}/questions/{qid}/reveal", headers=headers)
        assert r.status_code == 403
        assert client.delete(f"/api/sessions/{code}", headers=headers).status_code == 403
    assert client.get(f"/api/sessions/{code}").json()["question"]["id"] == qid


def test_unknown_codes_are_404(client: httpx.Client) -> None:
    for code in ("ZZZZZZ", "abc", "0OOOO1"):
        assert client.get(f"/api/sessions/{code}").status_code == 404
        assert client.get(f"/api/sessions/{code}/events").status_code == 404
        assert client.put(f"/api/sessions/{code}/state", json={}).status_code == 404
        body = {"question_id": "x", "choice": "c0", "device": "device-0001"}
        assert client.post(f"/api/sessions/{code}/answers", json=body).status_code == 404


def test_events_start_with_current_state_and_question(client: httpx.Client) -> None:
    code, auth = start(client)
    client.put(f"/api/sessions/{code}/state", json={"d_ff": 16}, headers=auth)
    client.put(f"/api/sessions/{code}/state", json={"d_ff": 128}, headers=auth)
    q = client.post(f"/api/sessions/{code}/questions", json={"kind": "gelu_zeros"}, headers=auth)
    with client.stream("GET", f"/api/sessions/{code}/events") as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = read_until(r, "question")
    assert [e.type for e in events] == ["state", "question"]
    assert events[0].data == {"state": {"d_ff": 128}, "version": 2}
    assert events[1].data["question"]["id"] == q.json()["id"]
    assert all(e.id is not None for e in events)


def test_last_event_id_resumes_with_the_missed_events(client: httpx.Client) -> None:
    code, auth = start(client)
    client.put(f"/api/sessions/{code}/state", json={"d_ff": 16}, headers=auth)
    with client.stream("GET", f"/api/sessions/{code}/events") as r:
        first = read_until(r, "state")[-1]
    for width in (20, 24):
        client.put(f"/api/sessions/{code}/state", json={"d_ff": width}, headers=auth)
    headers = {"Last-Event-ID": str(first.id)}
    with client.stream("GET", f"/api/sessions/{code}/events", headers=headers) as r:
        missed = read_until(r, "state", count=2)
    assert [e.data["state"]["d_ff"] for e in missed] == [20, 24]
    assert [e.id for e in missed] == [first.id + 1, first.id + 2]
    # a resume from further back than the log reaches: the current state instead
    with client.stream("GET", f"/api/sessions/{code}/events", headers={"Last-Event-ID": "-1"}) as r:
        assert read_until(r, "state")[0].data["state"] == {"d_ff": 24}


def test_live_events_reach_an_open_stream(client: httpx.Client, base: str) -> None:
    code, auth = start(client)
    with (
        httpx.Client(base_url=base, timeout=30) as listener,
        listener.stream("GET", f"/api/sessions/{code}/events") as r,
    ):
        assert read_until(r, "state")[0].data["version"] == 0
        client.put(f"/api/sessions/{code}/state", json={"tokens": 9}, headers=auth)
        event = read_until(r, "state")[-1]
        assert event.data == {"state": {"tokens": 9}, "version": 1}
        q = client.post(
            f"/api/sessions/{code}/questions", json={"kind": "rows_changed"}, headers=auth
        ).json()
        assert read_until(r, "question")[-1].data["question"]["id"] == q["id"]
        body = {"question_id": q["id"], "choice": "c1", "device": "device-live1"}
        assert client.post(f"/api/sessions/{code}/answers", json=body).status_code == 200
        # a student's stream: how many answered, not what they chose (until the reveal)
        tally = read_until(r, "tally")[-1].data
        assert tally == {"question_id": q["id"], "total": 1}
        client.post(f"/api/sessions/{code}/questions/{q['id']}/reveal", headers=auth)
        reveal = read_until(r, "reveal")[-1].data
        assert reveal["answer"]["correct"] == ["c1"] and reveal["counts"]["c1"] == 1
        assert client.delete(f"/api/sessions/{code}", headers=auth).status_code == 204
        assert read_until(r, "ended")[-1].data["reason"] == "lecturer"
    assert client.get(f"/api/sessions/{code}").status_code == 404


def test_the_tally_counts_reach_the_lecturers_stream_only(client: httpx.Client, base: str) -> None:
    """The client that created the session holds the presenter cookie; a program may send
    the presenter token instead; a student's stream gets the total alone."""
    code, auth = start(client)
    q = client.post(f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth)
    qid = q.json()["id"]
    created = client.cookies.get(f"ffnlab_presenter_{code}")
    assert created == auth["Authorization"].split()[1]
    path = f"/api/sessions/{code}/events"
    with (
        httpx.Client(base_url=base, timeout=30) as student,
        httpx.Client(base_url=base, timeout=30, headers=auth) as program,
        client.stream("GET", path) as lecturer_r,
        student.stream("GET", path) as student_r,
        program.stream("GET", path) as program_r,
    ):
        for r in (lecturer_r, student_r, program_r):
            read_until(r, "question")
        for device, choice in (("device-tal1", "c2"), ("device-tal2", "c2")):
            body = {"question_id": qid, "choice": choice, "device": device}
            assert student.post(f"/api/sessions/{code}/answers", json=body).status_code == 200
        for r in (lecturer_r, program_r):
            tally = read_until(r, "tally")[-1].data
            assert tally["counts"]["c2"] == tally["total"] >= 1, tally
        seen = read_until(student_r, "tally")[-1].data
        assert set(seen) == {"question_id", "total"} and seen["total"] >= 1
    wrong = {"Authorization": "Bearer not-the-token"}
    assert client.get(path, headers=wrong).status_code == 403


def test_one_answer_per_device_changeable_until_the_reveal(client: httpx.Client) -> None:
    code, auth = start(client)
    q = client.post(f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth)
    qid = q.json()["id"]
    answers = [("device-aaaa", "c0"), ("device-aaaa", "c1"), ("device-bbbb", "c1"),
               ("device-cccc", "c3")]  # fmt: skip
    for device, choice in answers:
        body = {"question_id": qid, "choice": choice, "device": device}
        assert client.post(f"/api/sessions/{code}/answers", json=body).status_code == 200
    r = client.post(f"/api/sessions/{code}/questions/{qid}/reveal", headers=auth)
    assert r.status_code == 200
    data = r.json()
    assert data["counts"] == {"c0": 0, "c1": 2, "c2": 0, "c3": 1, "c4": 0} and data["total"] == 3
    assert data["answer"]["correct"] == ["c1"]  # h is [T, d_ff]
    late = {"question_id": qid, "choice": "c0", "device": "device-dddd"}
    r = client.post(f"/api/sessions/{code}/answers", json=late)
    assert r.status_code == 409 and "revealed" in r.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question_id": "Q", "choice": "c9", "device": "device-eeee"}, "choice"),
        ({"question_id": "Q", "choice": "c0", "device": "short"}, "device"),
        ({"question_id": "Q", "choice": "c0", "device": "bad device!"}, "device"),
        ({"question_id": "Q", "choice": "c0"}, "device"),
        ({"question_id": "Q", "choice": "c0", "device": "device-eeee", "name": "Ann"}, "name"),
    ],
)
def test_bad_answers_are_422_naming_the_field(
    client: httpx.Client, body: dict[str, str], field: str
) -> None:
    code, auth = start(client)
    qid = client.post(
        f"/api/sessions/{code}/questions", json={"kind": "zero_fraction"}, headers=auth
    ).json()["id"]
    body = {k: (qid if v == "Q" else v) for k, v in body.items()}
    r = client.post(f"/api/sessions/{code}/answers", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][-1] == field


def test_answer_to_an_old_question_is_404(client: httpx.Client) -> None:
    code, auth = start(client)
    old = client.post(f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth)
    client.post(f"/api/sessions/{code}/questions", json={"kind": "shape_of"}, headers=auth)
    body = {"question_id": old.json()["id"], "choice": "c0", "device": "device-ffff"}
    assert client.post(f"/api/sessions/{code}/answers", json=body).status_code == 404


def test_unknown_question_kind_is_422(client: httpx.Client) -> None:
    code, auth = start(client)
    r = client.post(f"/api/sessions/{code}/questions", json={"kind": "vibes"}, headers=auth)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "kind"]


def reveal(client: httpx.Client, state: dict[str, object], kind: str) -> dict[str, object]:
    code, auth = start(client)
    assert client.put(f"/api/sessions/{code}/state", json=state, headers=auth).status_code == 200
    q = client.post(f"/api/sessions/{code}/questions", json={"kind": kind}, headers=auth).json()
    r = client.post(f"/api/sessions/{code}/questions/{q['id']}/reveal", headers=auth)
    assert r.status_code == 200, r.text
    answer = r.json()["answer"]
    values = {c["id"]: c.get("value") for c in q["choices"]}
    return {"question": q, "answer": answer, "picked": [values[c] for c in answer["correct"]]}


@pytest.mark.parametrize(
    ("d_model", "d_ff", "bias", "tokens"), [(16, 64, True, 6), (8, 40, False, 1)]
)
def test_parameter_count_answer_and_its_slips(
    client: httpx.Client, d_model: int, d_ff: int, bias: bool, tokens: int
) -> None:
    state = {"d_model": d_model, "d_ff": d_ff, "bias": bias, "tokens": tokens}
    got = reveal(client, state, "parameter_count")
    right = 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)
    assert got["picked"] == [right] and got["answer"]["value"] == right
    shown = {c["value"] for c in got["question"]["choices"]}
    assert d_model * d_ff in shown  # d_model x d_ff once
    if bias:
        assert 2 * d_model * d_ff in shown  # biases forgotten
    if tokens > 1:
        assert right * tokens in shown  # counted per token
    assert all("why" not in c for c in got["question"]["choices"])  # kept until the reveal


def test_params_when_t_doubles_is_unchanged(client: httpx.Client) -> None:
    got = reveal(client, {"d_model": 12, "d_ff": 48, "tokens": 5}, "params_when_t_doubles")
    assert got["picked"] == [2 * 12 * 48 + 48 + 12]


def test_rows_changed_is_one_row(client: httpx.Client) -> None:
    got = reveal(client, {"tokens": 7, "position": 3, "activation": "gelu"}, "rows_changed")
    # position 3, as the page counts positions (0 to T - 1)
    assert got["picked"] == [1] and got["answer"]["params"]["rows"] == "3"


def test_zero_fraction_on_the_tiny_preset_matches_the_hand_computation(
    client: httpx.Client,
) -> None:
    tiny = next(p for p in PRESETS if p.id == "tiny")
    assert tiny.weights is not None and tiny.tokens is not None
    x = np.array(tiny.tokens, dtype=np.float64)
    pre = x @ np.array(tiny.weights["w1"]) + np.array(tiny.weights["b1"])
    share = float(np.mean(reference.relu(pre) == 0))
    state = {"preset": "tiny", "d_model": 2, "d_ff": 4, "tokens": 3}
    got = reveal(client, state, "zero_fraction")
    assert got["answer"]["value"] == pytest.approx(share)
    (lo, hi) = got["picked"][0]
    assert lo <= share < hi


def test_gelu_zeros_answer(client: httpx.Client) -> None:
    got = reveal(client, {"d_model": 16, "d_ff": 64}, "gelu_zeros")
    assert got["answer"]["value"] == 0.0 and got["picked"] == ["none"]


def test_join_pages(client: httpx.Client) -> None:
    code, _ = start(client)
    r = client.get(f"/join/{code}")
    assert r.status_code == 200 and f'data-join-code="{code}"' in r.text
    r = client.get("/join")
    assert r.status_code == 200 and 'id="join-code"' in r.text
    r = client.get("/join/QQQQQQ")
    assert r.status_code == 404 and 'id="join-code"' in r.text and "QQQQQQ" in r.text
    r = client.get(f"/join?code={code.lower()[:3]}-{code.lower()[3:]}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/join/{code}"
    assert client.get(f"/join/{code.lower()}", follow_redirects=False).status_code == 303
