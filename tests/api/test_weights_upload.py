"""POST /api/weights/upload: .safetensors, .npz and .pt layers, named as lab.from_module knows
them, run through /api/forward by `weights_id`; bad files get a 422 naming what was found."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from safetensors.torch import save as save_safetensors

transformers = pytest.importorskip("transformers")

from transformers.models.bert.modeling_bert import BertLayer  # noqa: E402
from transformers.models.gpt2.modeling_gpt2 import GPT2MLP  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaMLP  # noqa: E402

from app.model.ffn import FFNConfig, PositionwiseFeedForward  # noqa: E402

X = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))


def _pt(state: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def _upload(client: TestClient, data: bytes, filename: str) -> dict[str, object]:
    response = client.post(
        "/api/weights/upload",
        params={"filename": filename},
        content=data,
        headers={"content-type": "application/octet-stream"},
    )
    assert response.status_code == 200, response.text
    answer: dict[str, object] = response.json()
    return answer


def _run(
    client: TestClient, answer: dict[str, object], tokens: torch.Tensor, activation: str = ""
) -> np.ndarray:
    body = {
        "d_model": answer["d_model"],
        "d_ff": answer["d_ff"],
        "activation": activation or answer["activation"],
        "bias": answer["bias"],
        "weights_id": answer["weights_id"],
        "tokens": tokens.tolist(),
        "display": "full",
    }
    response = client.post("/api/forward", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["config"]["weights_source"] == "submitted"
    return np.asarray(response.json()["output"], dtype=np.float32)


def test_gpt2_safetensors(client: TestClient) -> None:
    mlp = GPT2MLP(32, transformers.GPT2Config(n_embd=8, n_layer=1, n_head=2)).eval()
    state = {f"h.0.mlp.{k}": v.contiguous() for k, v in mlp.state_dict().items()}
    answer = _upload(client, save_safetensors(state), "block.safetensors")
    assert (answer["family"], answer["format"], answer["activation"]) == (
        "gpt2",
        "safetensors",
        "gelu_tanh",
    )
    with torch.no_grad():
        expected = mlp(X).numpy()
    np.testing.assert_allclose(_run(client, answer, X), expected, atol=1e-5, rtol=0)


def test_llama_state_dict_pt(client: TestClient) -> None:
    config = transformers.LlamaConfig(
        hidden_size=8, intermediate_size=32, num_attention_heads=2, num_key_value_heads=2
    )
    mlp = LlamaMLP(config).eval()
    answer = _upload(client, _pt(mlp.state_dict()), "mlp.pt")
    assert (answer["family"], answer["gated"], answer["bias"]) == ("llama", True, False)
    with torch.no_grad():
        expected = mlp(X).numpy()
    np.testing.assert_allclose(_run(client, answer, X), expected, atol=1e-5, rtol=0)


def test_bert_layer_pt_skips_attention_output(client: TestClient) -> None:
    config = transformers.BertConfig(hidden_size=8, intermediate_size=32, num_attention_heads=2)
    layer = BertLayer(config).eval()
    answer = _upload(client, _pt(layer.state_dict()), "layer.pt")
    assert answer["family"] == "bert"
    assert answer["shapes"] == {"w1": [8, 32], "b1": [32], "w2": [32, 8], "b2": [8]}
    with torch.no_grad():
        expected = layer.output.dense(layer.intermediate(X)).numpy()
    np.testing.assert_allclose(_run(client, answer, X), expected, atol=1e-5, rtol=0)


def test_our_names_npz(client: TestClient) -> None:
    ffn = PositionwiseFeedForward(FFNConfig(8, 32, "relu"), seed=4)
    arrays = {k: v.numpy() for k, v in ffn.weights().named().items()}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    answer = _upload(client, buffer.getvalue(), "ours.npz")
    assert (answer["family"], answer["activation"]) == ("ffn-lab", "relu")
    with torch.inference_mode():
        expected = ffn(X).numpy()
    # same numbers; the weights' memory layout (and so the summation order) may differ
    np.testing.assert_allclose(_run(client, answer, X), expected, atol=1e-6, rtol=0)


def test_a_768_to_3072_layer_fits(client: TestClient) -> None:
    """~19 MB of float32: over the 16 MiB JSON body limit, under the upload limit."""
    ffn = PositionwiseFeedForward(FFNConfig(768, 3072, "gelu"), seed=1)
    state = {k: v.contiguous() for k, v in ffn.weights().named().items()}
    data = save_safetensors(state)
    assert len(data) > 16 * 1024 * 1024
    answer = _upload(client, data, "big.safetensors")
    tokens = torch.randn(4, 768, generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        expected = ffn(tokens).numpy()
    output = _run(client, answer, tokens, activation="gelu")
    np.testing.assert_allclose(output, expected, atol=1e-5, rtol=0)


def _refused(client: TestClient, data: bytes, filename: str) -> str:
    response = client.post("/api/weights/upload", params={"filename": filename}, content=data)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"][-1] == "file"
    message: str = detail["msg"]
    return message


def test_bad_files_are_422s_that_say_what_was_found(client: TestClient) -> None:
    assert "not a readable .safetensors" in _refused(client, b"garbage", "x.safetensors")
    assert "not a readable .npz" in _refused(client, b"garbage", "x.npz")
    assert ".safetensors, .npz, .pt" in _refused(client, b"abc", "x.json")
    names = _refused(client, _pt({"encoder.weight": torch.zeros(2, 2)}), "x.pt")
    assert "encoder.weight" in names and "gate_proj" in names
    config = transformers.BertConfig(
        hidden_size=8, intermediate_size=32, num_attention_heads=2, num_hidden_layers=2
    )
    model = transformers.BertModel(config)
    many = _refused(client, _pt(model.state_dict()), "bert.pt")
    assert "2 layers" in many and "encoder.layer.1.intermediate.dense.weight" in many
    shapes = {"w1": np.zeros((8, 32), np.float32), "w2": np.zeros((16, 8), np.float32)}
    buffer = io.BytesIO()
    np.savez(buffer, **shapes)
    assert "w2 has shape [16, 8]" in _refused(client, buffer.getvalue(), "bad.npz")


class Exploit:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("executed",))


def test_nothing_is_executed_from_a_pt_file(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    buffer = io.BytesIO()
    torch.save({"w1": Exploit()}, buffer, pickle_module=pickle)
    message = _refused(client, buffer.getvalue(), "evil.pt")
    assert "runs nothing" in message
    assert "executed" not in capsys.readouterr().out
    pickled = _refused(client, pickle.dumps({"w1": np.zeros(3)}), "plain.npz")
    assert "npz" in pickled


def test_weights_id_must_fit_the_request(client: TestClient) -> None:
    ffn = PositionwiseFeedForward(FFNConfig(8, 32, "relu"), seed=4)
    buffer = io.BytesIO()
    np.savez(buffer, **{k: v.numpy() for k, v in ffn.weights().named().items()})
    answer = _upload(client, buffer.getvalue(), "ours.npz")
    base = {"d_model": 8, "d_ff": 32, "num_tokens": 3, "weights_id": answer["weights_id"]}
    cases = [
        ({"d_ff": 16}, "d_ff = 32"),
        ({"activation": "swiglu"}, "not gated"),
        ({"bias": False}, "has biases"),
        ({"weights_id": "0" * 24}, "upload the file again"),
    ]
    for change, words in cases:
        response = client.post("/api/forward", json=base | change)
        assert response.status_code == 422, response.text
        assert words in response.text
    assert client.post("/api/forward", json=base).status_code == 200


def test_upload_over_the_limit_is_413(client: TestClient, settings_env: pytest.MonkeyPatch) -> None:
    settings_env.setenv("FFN_LAB_UPLOAD_MAX_BYTES", "2048")
    from app.main import create_app

    with TestClient(create_app()) as small:
        response = small.post(
            "/api/weights/upload", params={"filename": "x.npz"}, content=b"0" * 4096
        )
    assert response.status_code == 413
    assert "2,048" in response.json()["detail"]


def test_a_file_sent_in_chunks_without_a_length_reads_the_same(client: TestClient) -> None:
    """Transfer-Encoding: chunked (no Content-Length) gives the same layer and id."""
    buffer = io.BytesIO()
    rng = np.random.default_rng(0)
    np.savez(buffer, w1=rng.standard_normal((8, 32), np.float32), w2=np.ones((32, 8), np.float32))
    data = buffer.getvalue()
    declared = _upload(client, data, "ours.npz")
    response = client.post(
        "/api/weights/upload",
        params={"filename": "ours.npz"},
        content=iter([data[:100], data[100:1000], data[1000:]]),
        headers={"content-type": "application/octet-stream"},
    )
    assert response.status_code == 200, response.text
    assert response.json() == declared
