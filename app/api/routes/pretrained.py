"""Endpoints of the pretrained model: which models exist, and how a text is tokenised."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import SettingsDep, lab_limits
from app.api.json_body import FastJsonRoute
from app.api.schemas.pretrained import ModelOut, TokenizeRequest, TokenizeResponse
from app.lab.pretrained import encode_text, invalid, load_model
from app.model.pretrained import INSTALL_HINT, MODEL_ID, SOURCE, is_available

router = APIRouter(prefix="/api", tags=["pretrained"], route_class=FastJsonRoute)


@router.get("/models", response_model=list[ModelOut])
def list_models() -> list[ModelOut]:
    """The pretrained models, and whether their weights are installed (nothing is loaded)."""
    available = is_available()
    return [
        ModelOut(
            id=MODEL_ID,
            name="all-MiniLM-L6-v2",
            source=SOURCE,
            available=available,
            install=None if available else INSTALL_HINT,
            layers=6,
            d_model=384,
            d_ff=1536,
            activation="gelu",
        )
    ]


@router.post("/tokenize", response_model=TokenizeResponse)
def post_tokenize(req: TokenizeRequest, settings: SettingsDep) -> TokenizeResponse:
    """WordPiece tokens of a text, with [CLS] and [SEP] (503 without the weights package)."""
    if len(req.text) > settings.max_text_chars:
        raise invalid(
            "text",
            f"text has {len(req.text)} characters; the limit is {settings.max_text_chars}",
            code="text_too_long",
            count=len(req.text),
            limit=settings.max_text_chars,
        )
    encoded = encode_text(load_model(), req.text, lab_limits(settings))
    return TokenizeResponse(
        tokens=encoded.tokens, token_ids=[int(i) for i in encoded.ids], special=encoded.special
    )
