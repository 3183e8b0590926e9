"""The homework set: correct FFNs of five styles pass every check; each one-bug file fails
the check that names its bug, with words a student can act on.

Files live in tests/lab/homework/ (one submission each); all run at the checker's
defaults, d_model 512 and d_ff 2048, the sizes a student who types them in would use.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app import lab
from app.lab.checker.build import load_class

HOMEWORK = Path(__file__).resolve().parents[1] / "homework"
CLASSES = {
    "paper": "PositionwiseFeedForward",
    "sequential": "FeedForward",
    "gelu": "Mlp",
    "llama": "LlamaMLP",
    "gpt2": "GPT2MLP",
}
TYPED = "sizes typed into the code"
TRANSPOSED = "transposed?"
TWICE = "adds its input itself"

# file -> {check that must fail: words its detail must contain}; {} = every check passes
EXPECTED: dict[str, dict[str, str]] = {
    "paper_correct": {},
    "paper_functional_correct": {},
    "paper_no_activation": {"nonlinear": "activation (ReLU, GELU, SiLU) is missing between w_1"},
    "paper_residual_inside": {"no_residual_inside": TWICE, "residual_ready": "add x twice"},
    "paper_typed_sizes": {"shapes": TYPED, "nonlinear": TYPED},
    "paper_wrong_w2_shape": {
        "shapes": "gave output [1, 1, 2048]",
        "shared_parameters": "w_2.weight [2048, 2048] has the wrong shape",
    },
    "paper_activation_after_w2": {"nonlinear": "the activation comes after W2"},
    "paper_dropout_always_on": {"eval_deterministic": "two eval-mode calls"},
    "paper_missing_bias": {"shared_parameters": "b2 [512] is a parameter the forward pass never"},
    "sequential_correct": {},
    "sequential_no_activation": {"nonlinear": "missing between net.0 (Linear) and net.2"},
    "sequential_residual_inside": {"no_residual_inside": TWICE},
    "sequential_post_norm_inside": {"no_residual_inside": "bypasses the down-projection"},
    "gelu_dropout_correct": {},
    "gelu_dropout_no_activation": {"nonlinear": "the FFN is an affine map"},
    "gelu_dropout_typed_d_model": {"shapes": "fc1.weight [72, 512]"},
    "llama_swiglu_correct": {},
    "llama_swiglu_residual_inside": {"no_residual_inside": TWICE},
    "llama_swiglu_typed_sizes": {"shapes": TYPED},
    "llama_swiglu_transposed": {"shapes": TRANSPOSED},
    "gpt2_conv1d_correct": {},
    "gpt2_conv1d_missing_bias": {"shared_parameters": "never uses"},
    "gpt2_conv1d_transposed": {"shapes": TRANSPOSED},
    "gpt2_conv1d_activation_after_w2": {"nonlinear": "entering c_proj (Conv1D) is an affine"},
}


def homework_class(stem: str) -> type:
    """The class a homework file defines, by its style (the file name's first word)."""
    return load_class(HOMEWORK / f"{stem}.py", CLASSES[stem.split("_")[0]])


def test_every_homework_file_has_an_expectation() -> None:
    assert sorted(p.stem for p in HOMEWORK.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_each_homework_file_fails_the_check_naming_its_bug(stem: str) -> None:
    report = lab.check(homework_class(stem))
    expected = EXPECTED[stem]
    if not expected:
        assert report.passed, str(report)
        assert report.sizes == ((512, 2048), (24, 72))
        return
    assert set(expected) <= set(report.failed), str(report)
    for name, words in expected.items():
        assert words in report[name].detail, report[name].detail
