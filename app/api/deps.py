"""FastAPI dependencies: settings and the shared weight cache."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.config import Settings, get_settings
from app.model.cache import WeightCache


def get_cache(request: Request) -> WeightCache:
    """The app's weight cache, made in the lifespan."""
    cache: WeightCache = request.app.state.weight_cache
    return cache


SettingsDep = Annotated[Settings, Depends(get_settings)]
CacheDep = Annotated[WeightCache, Depends(get_cache)]
