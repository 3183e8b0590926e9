"""Request model of POST /api/handout."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class HandoutRequest(BaseModel):
    """Body of POST /api/handout: the language, and the page's address for the links back."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"lang": "zh-CN", "base_url": "http://127.0.0.1:8000/"}]},
    )

    lang: Literal["en", "zh-CN"] = Field("en", description="language of every sentence and label")
    base_url: str = Field(
        "http://127.0.0.1:8000/",
        max_length=500,
        pattern=r"^https?://[^\s\"'<>`]+$",
        description="the page's address (http or https), for each step's link back to the page",
    )
