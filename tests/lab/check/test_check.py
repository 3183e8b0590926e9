"""lab.check in Python: the course's classes pass, each broken variant fails what it should."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from app import lab
from app.lab.checker import CHECK_NAMES
from app.lab.checker.build import recipe
from app.model.ffn import FFNConfig, PositionwiseFeedForward

from .conftest import student

SIZES = {"d_model": 16, "d_ff": 64}


@pytest.mark.parametrize("name", ["PositionwiseFeedForward", "PositionWiseFeedForwardNetwork"])
def test_the_course_classes_pass_every_check(name: str) -> None:
    report = lab.check(student("course", name), **SIZES)
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert report.passed, str(report)
    assert "hidden width 64" in report["shapes"].detail
    assert "2,128 = 2·d_model·d_ff + d_ff + d_model" in report["shared_parameters"].detail
    assert "dropout p=0.1 acts" in report["eval_deterministic"].detail
    activation = report["raises_on_bad_activation"]
    if name == "PositionWiseFeedForwardNetwork":  # takes activation by name: really checked
        assert not activation.skipped
        assert "raises ValueError, also under python -O" in activation.detail
    else:
        assert activation.skipped


# Each variant and the checks it must fail, with a word of the detail each failure prints.
# Faults that join tokens fail position_wise (the behaviour) and no_token_mixing (the op);
# learned per-position weights are extra parameters too; a missing W2 breaks the shapes,
# the parameter formula and the residual alike; the mean over tokens also reaches the
# output past W2.
BROKEN = [
    (
        "MeanOverTokens",
        {
            "position_wise": "changed output row",
            "no_token_mixing": "mean",
            "no_residual_inside": "bypasses the down-projection",
        },
    ),
    (
        "PerPositionWeights",
        {"position_wise": "different outputs", "shared_parameters": "position_scale [64, 16]"},
    ),
    ("PerPositionBuffer", {"position_wise": "the weights differ between positions"}),
    ("SoftmaxMixing", {"position_wise": "changed output row", "no_token_mixing": "[2, 7, 7]"}),
    ("AssertActivation", {"raises_on_bad_activation": "raised AssertionError"}),
    ("AssertThenValueError", {"raises_on_bad_activation": "KeyError"}),
    ("DropoutInEval", {"eval_deterministic": "two eval-mode calls"}),
    ("DropoutNeverApplied", {"eval_deterministic": "dropout does not act"}),
    (
        "NoDownProjection",
        {
            "shapes": "gave output [1, 1, 64]",
            "shared_parameters": "1 d_model×d_ff matrix",
            "residual_ready": "64 is not d_model=16",
        },
    ),
    (
        "LayerNormOverTokens",
        {"position_wise": "changed output row", "no_token_mixing": "layer_norm"},
    ),
]


@pytest.mark.parametrize(("name", "fails"), BROKEN, ids=[b[0] for b in BROKEN])
def test_each_broken_variant_fails_exactly_its_checks(name: str, fails: dict[str, str]) -> None:
    report = lab.check(student("broken", name), **SIZES)
    assert set(report.failed) == set(fails), str(report)
    for check_name, words in fails.items():
        assert words in report[check_name].detail, report[check_name].detail
    assert not report.passed


def test_a_hidden_width_that_ignores_d_ff_fails_shapes_only() -> None:
    report = lab.check(student("broken", "IgnoresDFF"), d_model=16, d_ff=48)
    assert report.failed == ["shapes"], str(report)
    assert "hidden width 64" in report["shapes"].detail
    assert "d_ff=48 was asked for" in report["shapes"].detail


@pytest.mark.parametrize("activation", ["relu", "gelu", "swiglu", "geglu"])
@pytest.mark.parametrize("bias", [True, False])
def test_the_projects_ffn_instance_passes(activation: str, bias: bool) -> None:
    ffn = PositionwiseFeedForward(FFNConfig(16, 64, activation, bias=bias, dropout=0.1))
    report = lab.check(ffn, d_model=16, d_ff=64)
    assert report.passed, str(report)
    matrices = 3 if activation in ("swiglu", "geglu") else 2
    assert f"{matrices}·d_model·d_ff" in report["shared_parameters"].detail


def test_the_projects_ffn_class_passes_through_an_adapter() -> None:
    report = lab.check(student("project", "ProjectFFN"), **SIZES)
    assert report.passed, str(report)
    assert "also under python -O" in report["raises_on_bad_activation"].detail


class _Probe(nn.Module):
    """forward = a given function of x (for checking what no_token_mixing sees)."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)

    def mix(self, h: torch.Tensor) -> torch.Tensor:
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_2(torch.relu(self.w_1(self.mix(x))))


def _normalize_default_dim(h: torch.Tensor) -> torch.Tensor:
    return nn.functional.normalize(h)  # dim=1 by default: the T axis of [B, T, d]


def _einsum_scores(h: torch.Tensor) -> torch.Tensor:
    return torch.einsum("bts,bsd->btd", torch.einsum("btd,bsd->bts", h, h).softmax(-1), h)


def _token_mixing_mlp(h: torch.Tensor) -> torch.Tensor:  # MLP-Mixer's token MLP
    weight = torch.ones(h.shape[1], h.shape[1]) / h.shape[1]
    return nn.functional.linear(h.transpose(1, 2), weight).transpose(1, 2)


def _cumsum(h: torch.Tensor) -> torch.Tensor:
    return h.cumsum(dim=-2)


def _attention(h: torch.Tensor) -> torch.Tensor:
    return nn.functional.scaled_dot_product_attention(h, h, h)


_MHA = nn.MultiheadAttention(16, num_heads=2, batch_first=True)
_CONV = nn.Conv1d(16, 16, kernel_size=3, padding=1)  # over T, as in a [B, d, T] layout


def _attention_module(h: torch.Tensor) -> torch.Tensor:
    return _MHA(h, h, h, need_weights=False)[0]


def _conv_over_tokens(h: torch.Tensor) -> torch.Tensor:
    return _CONV(h.transpose(1, 2)).transpose(1, 2)


@pytest.mark.parametrize(
    "mix",
    [
        _normalize_default_dim,
        _einsum_scores,
        _token_mixing_mlp,
        _cumsum,
        _attention,
        _attention_module,
        _conv_over_tokens,
    ],
)
def test_no_token_mixing_sees_functional_ops(mix: object) -> None:
    module = _Probe(16, 64)
    module.mix = mix  # type: ignore[method-assign, assignment]
    report = lab.check(module, **SIZES)
    assert "no_token_mixing" in report.failed, str(report)
    assert "position_wise" in report.failed


def test_the_report_prints_as_a_table_as_html_and_as_json() -> None:
    report = lab.check(student("broken", "DropoutInEval"), **SIZES)
    lines = str(report).splitlines()
    assert lines[0] == "ffn-lab check: DropoutInEval(d_model=16, d_ff=64)"
    assert lines[1].split()[:2] == ["check", "result"]
    rows = {line.split()[0]: line.split()[1] for line in lines[2:11]}
    assert rows == {
        name: "FAIL" if name == "eval_deterministic" else "pass" for name in CHECK_NAMES
    } | {"raises_on_bad_activation": "n/a"}
    assert lines[11] == (
        "7 of 8 checks pass (1 not applicable) at d_model=16, d_ff=64 and d_model=24, d_ff=72; "
        "failed: eval_deterministic"
    )
    page = report._repr_html_()
    assert page.count("<tr>") == 10 and "eval_deterministic" in page
    data = json.loads(json.dumps(report.to_dict()))
    assert data["passed"] is False and data["status"] == "failed"
    assert [(c["name"], c["passed"]) for c in data["checks"]][4] == ("eval_deterministic", False)
    assert set(data["checks"][0]) >= {"name", "passed", "detail", "status"}
    statuses = {c["name"]: c["status"] for c in data["checks"]}
    assert statuses["eval_deterministic"] == "failed" and statuses["shapes"] == "passed"
    assert statuses["raises_on_bad_activation"] == "not_applicable"
    assert data["sizes"] == [{"d_model": 16, "d_ff": 64}, {"d_model": 24, "d_ff": 72}]
    assert lab.CheckReport.from_dict(data) == report
    with pytest.raises(KeyError, match="shapes"):
        report["shape"]


def test_constructor_arguments_are_matched_by_the_usual_names() -> None:
    class ByOtherNames(nn.Module):
        def __init__(self, dim: int, hidden_dim: int, bias: bool) -> None:
            super().__init__()
            self.up = nn.Linear(dim, hidden_dim, bias=bias)
            self.down = nn.Linear(hidden_dim, dim, bias=bias)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.down(torch.relu(self.up(x)))

    with pytest.raises(lab.CannotCheck, match=r"needs 'bias'.*--kwargs"):
        lab.check(ByOtherNames, **SIZES)
    report = lab.check(ByOtherNames, **SIZES, kwargs={"bias": False})
    assert report.subject == "ByOtherNames(dim=16, hidden_dim=64, bias=False)"
    assert report.passed, str(report)
    assert "2,048 = 2·d_model·d_ff (" in report["shared_parameters"].detail
    with pytest.raises(lab.CannotCheck, match="takes no parameter 'dropout'"):
        lab.check(ByOtherNames, **SIZES, kwargs={"bias": True, "dropout": 0.1})


def test_bad_calls_get_clear_errors() -> None:
    with pytest.raises(ValueError, match="needs d_model"):
        lab.check(PositionwiseFeedForward(FFNConfig(16, 64)))
    with pytest.raises(lab.CannotCheck, match="raised ValueError: d_ff must be a positive"):
        lab.check(student("project", "ProjectFFN"), d_model=16, d_ff=0)
    with pytest.raises(lab.CannotCheck, match=r"not a torch\.nn\.Module class"):
        lab.check(int)  # type: ignore[arg-type]


def test_softmax_mixing_fails_position_wise_at_the_default_sizes() -> None:
    """At d_model=512 large random tokens make softmax(x x^T) one-hot; the small-scale
    inputs still show the mixing."""
    report = lab.check(student("broken", "SoftmaxMixing"))
    assert set(report.failed) == {"position_wise", "no_token_mixing"}, str(report)
    assert "1/sqrt(d_model)" in report["position_wise"].detail


@pytest.mark.parametrize(
    ("d_model_name", "d_ff_name"),
    [
        ("n_embd", "n_inner"),
        ("dim", "hidden_dim"),
        ("hidden_size", "intermediate_size"),
        ("embed_dim", "ffn_dim"),
        ("d_model", "d_inner"),
        ("d_model", "d_mlp"),
    ],
)
def test_the_hidden_width_is_found_under_the_names_libraries_use(
    d_model_name: str, d_ff_name: str
) -> None:
    source = (
        "from torch import nn\n\n"
        "class FFN(nn.Module):\n"
        f"    def __init__(self, {d_model_name}, {d_ff_name}):\n"
        "        super().__init__()\n"
        f"        self.up = nn.Linear({d_model_name}, {d_ff_name})\n"
        f"        self.down = nn.Linear({d_ff_name}, {d_model_name})\n"
        "        self.act = nn.GELU()\n\n"
        "    def forward(self, x):\n"
        "        return self.down(self.act(self.up(x)))\n"
    )
    namespace: dict[str, object] = {}
    exec(source, namespace)
    built = recipe(namespace["FFN"], 16, 64)  # type: ignore[arg-type]
    assert built.kwargs == {d_model_name: 16, d_ff_name: 64}
    assert (built.d_model_param, built.d_ff_param) == (d_model_name, d_ff_name)
