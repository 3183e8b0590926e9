"""Request models of POST /api/train and /api/train/capacity: an FFN learning a memory.

Every bound comes from `app.config.Settings` and is checked here, before anything is built;
a refusal is a 422 naming the field, the value and what is allowed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.api.schemas.values import known_activation
from app.config import get_settings
from app.lab.learning.memory import TrainConfig, model_params, training_flops
from app.lab.spec.specs import SEED_MAX
from app.model.activations import ACTIVATIONS


class TrainBase(BaseModel):
    """The task and the optimiser, shared by a run and a capacity sweep."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    task: Literal["memory"] = Field(
        "memory",
        description="memory: num_pairs random keys in R^d_model, each with a random target "
        "class (Geva et al. 2021 read FFNs as key-value memories)",
    )
    d_model: int = Field(16, ge=1, description="width of a key and of the residual stream")
    activation: str = Field(
        "relu", description="activation key", json_schema_extra={"enum": list(ACTIVATIONS)}
    )
    num_pairs: int = Field(64, ge=1, description="key-value pairs to memorise")
    num_classes: int = Field(4, ge=2, description="target classes")
    steps: int = Field(300, ge=1, description="Adam steps, each on every pair")
    lr: float = Field(0.03, gt=0.0, le=10.0, description="Adam's learning rate")
    seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds keys, targets and init")
    log_every: int | None = Field(
        None, ge=1, description="a progress line every this many steps (default steps / 100)"
    )
    sparsity_threshold: float | None = Field(
        None, ge=0.0, le=1e3, description="|h| below this is inactive (smooth activations)"
    )

    @model_validator(mode="before")
    @classmethod
    def _default_steps_within_the_limit(cls, data: Any) -> Any:
        """Without `steps`, the default (300; 500 for a sweep), or the server's most if lower."""
        if isinstance(data, dict) and "steps" not in data:
            default = cls.model_fields["steps"].default
            data = {**data, "steps": min(default, get_settings().max_train_steps)}
        return data

    _known_activation = field_validator("activation")(known_activation)

    @model_validator(mode="after")
    def _check_task_size(self) -> TrainBase:
        settings = get_settings()
        for name, limit in (
            ("d_model", settings.max_d_model),
            ("num_pairs", settings.max_train_pairs),
            ("num_classes", settings.max_train_classes),
            ("steps", settings.max_train_steps),
        ):
            value = getattr(self, name)
            if value > limit:
                raise ValueError(f"{name} = {value} is too large: at most {limit:,} for training")
        return self

    def train_config(self, *, d_ff: int, ffn: bool) -> TrainConfig:
        """The plain-Python run this body asks for."""
        threshold = self.sparsity_threshold
        if threshold is None:
            threshold = get_settings().sparsity_threshold
        return TrainConfig(
            task=self.task,
            d_model=self.d_model,
            d_ff=d_ff,
            activation=self.activation,
            num_pairs=self.num_pairs,
            num_classes=self.num_classes,
            steps=self.steps,
            lr=self.lr,
            seed=self.seed,
            ffn=ffn,
            log_every=self.log_every or max(1, self.steps // 100),
            threshold=threshold,
        )


def check_run(config: TrainConfig) -> None:
    """Raise ValueError (a 422) when one run is over the parameter or work bound."""
    settings = get_settings()
    _check_max_d_ff(config.d_ff)
    params = model_params(config)
    if params > settings.max_train_params:
        raise ValueError(
            f"d_model = {config.d_model}, d_ff = {config.d_ff} gives a model of {params:,} "
            f"parameters; training runs at most {settings.max_train_params:,}. Use a smaller "
            "d_ff or d_model"
        )


def _check_max_d_ff(d_ff: int) -> None:
    limit = get_settings().max_d_ff
    if d_ff > limit:
        raise ValueError(f"d_ff = {d_ff} is too large: at most {limit:,}")


def _work_message(flops: int) -> str:
    limit = get_settings().max_train_work
    return (
        f"this training needs about {flops:,} floating-point operations; the server runs at "
        f"most {limit:,} in one request. Use fewer steps, fewer pairs or a smaller d_ff"
    )


class TrainRequest(TrainBase):
    """Body of POST /api/train: one model, trained and streamed as NDJSON."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"task": "memory", "d_model": 16, "d_ff": 64, "num_pairs": 64, "steps": 300},
                {"d_model": 16, "d_ff": 64, "num_pairs": 64, "ffn": False},
            ]
        }
    )

    d_ff: int = Field(64, ge=1, description="hidden width of the FFN")
    ffn: bool = Field(True, description="false: the same model with a linear map in its place")
    same_budget: bool = Field(
        False,
        description="with ffn false: the linear map is the FFN's own two maps without the "
        "activation, (x W1 + b1) W2 + b2 at width d_ff, so it has the FFN's parameter count "
        "and is still linear in x (the same-budget control)",
    )
    include_weights: bool = Field(
        False, description="the final line also carries the keys and the trained weights"
    )
    unit: int | None = Field(
        None,
        ge=0,
        description=(
            "which unit the final key-value reading shows (default: the unit whose written "
            "class best matches the keys it fires on)"
        ),
    )

    @model_validator(mode="after")
    def _check_bounds(self) -> TrainRequest:
        if self.ffn and self.same_budget:
            raise ValueError(
                "same_budget = true asks for the linear control with the FFN's parameter "
                "count; it needs ffn = false (the FFN itself already has that budget)"
            )
        config = self.config()
        check_run(config)
        if training_flops(config) > get_settings().max_train_work:
            raise ValueError(_work_message(training_flops(config)))
        if self.unit is not None and self.unit >= self.d_ff:
            raise ValueError(
                f"unit = {self.unit} is out of range: the FFN has d_ff = {self.d_ff} units, so "
                f"unit must be in [0, {self.d_ff - 1}]"
            )
        return self

    def config(self) -> TrainConfig:
        """The run."""
        return replace(
            self.train_config(d_ff=self.d_ff, ffn=self.ffn), same_budget=self.same_budget
        )


class CapacityRequest(TrainBase):
    """Body of POST /api/train/capacity: the same pairs memorised at several widths d_ff."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"d_model": 16, "num_pairs": 64, "d_ff_values": [4, 16, 64]}]
        }
    )

    num_pairs: int = Field(512, ge=1, description="key-value pairs to memorise")
    num_classes: int = Field(16, ge=2, description="target classes")
    steps: int = Field(500, ge=1, description="Adam steps of each run")
    d_ff_values: list[int] = Field(
        default_factory=lambda: [4, 8, 16, 32, 64, 128],
        description="the widths to train, in order",
    )
    include_no_ffn: bool = Field(True, description="also train the model without the FFN")

    @model_validator(mode="after")
    def _check_widths(self) -> CapacityRequest:
        limit = get_settings().max_capacity_widths
        if not self.d_ff_values:
            raise ValueError("d_ff_values is empty: give at least one width, e.g. [16, 64]")
        if len(self.d_ff_values) > limit:
            raise ValueError(
                f"d_ff_values has {len(self.d_ff_values)} widths; a sweep trains at most {limit}"
            )
        if min(self.d_ff_values) < 1:
            raise ValueError("every value of d_ff_values must be at least 1")
        total = 0
        for config in self.configs():
            check_run(config)
            total += training_flops(config)
        if total > get_settings().max_train_work:
            raise ValueError(_work_message(total))
        return self

    def configs(self) -> list[TrainConfig]:
        """Every run of the sweep (the no-FFN model first when included)."""
        runs = [self.train_config(d_ff=1, ffn=False)] if self.include_no_ffn else []
        return runs + [self.train_config(d_ff=w, ffn=True) for w in self.d_ff_values]
