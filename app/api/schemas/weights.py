"""Pydantic model of POST /api/weights/upload's answer."""

from __future__ import annotations

from pydantic import BaseModel, Field


class UploadResponse(BaseModel):
    """An uploaded layer: its id for `weights_id`, and what was found in the file."""

    weights_id: str = Field(description="give it as `weights_id` in /api/forward or /api/perturb")
    family: str = Field(
        description="naming recognised: ffn-lab, bert, gpt2, llama, meta-llama, t5, t5-gated"
    )
    format: str = Field(description="safetensors, npz or pt")
    d_model: int
    d_ff: int
    gated: bool = Field(description="three matrices (gate/up/down)")
    bias: bool
    activation: str = Field(
        description="the activation the family's models use (the file does not say; use it "
        "as `activation`, or any other of the same gatedness)"
    )
    shapes: dict[str, list[int]] = Field(description="paper orientation: w1 [d_model, d_ff], ...")
    found: list[str] = Field(description="tensor names in the file (first 200)")
