"""The notebook layer takes its limits as data: `Limits` mirrors the server's `Settings`."""

from __future__ import annotations

from dataclasses import fields

import pytest

from app import lab
from app.api.deps import lab_limits
from app.config import Settings
from app.lab.limits import Limits


@pytest.mark.parametrize("name", [f.name for f in fields(Limits)])
def test_each_limit_defaults_to_the_server_setting_of_its_name(name: str) -> None:
    assert getattr(Limits(), name) == Settings.model_fields[name].default


def test_the_server_passes_its_own_settings_as_limits() -> None:
    limits = lab_limits(Settings(max_tokens=7, display_max_values=99))
    assert (limits.max_tokens, limits.display_max_values) == (7, 99)


def test_the_notebook_does_not_read_the_server_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FFN_LAB_MAX_TOKENS", "2")
    result = lab.forward(d_model=8, d_ff=16, num_tokens=5)
    assert result["hidden"].shape == (5, 16)


def test_a_request_past_a_limit_is_refused_with_the_limit_given() -> None:
    from app.lab.spec.specs import forward_spec

    with pytest.raises(ValueError, match="num_tokens"):
        forward_spec(Limits(max_tokens=4), d_model=8, d_ff=16, num_tokens=5)
    assert forward_spec(Limits(max_tokens=5), d_model=8, d_ff=16, num_tokens=5).num_tokens == 5
