"""FastAPI dependencies: settings (and the lab's `Limits` from them), the shared weight cache
and the compute pools."""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated

from fastapi import Depends, Request

from app.config import Settings, get_settings
from app.lab.limits import Limits
from app.services.compute import ComputePools
from app.services.weight_cache import WeightCache


def get_cache(request: Request) -> WeightCache:
    """The app's weight cache, made in the lifespan."""
    cache: WeightCache = request.app.state.weight_cache
    return cache


def get_pools(request: Request) -> ComputePools:
    """The app's compute pools (light and heavy) with the time budget, made in the lifespan."""
    pools: ComputePools = request.app.state.compute_pools
    return pools


def lab_limits(settings: Settings) -> Limits:
    """The server's limits as the data the notebook layer takes (`app.lab.limits.Limits`):
    every field of `Limits` from the `Settings` field of the same name."""
    return Limits(**{f.name: getattr(settings, f.name) for f in fields(Limits)})


SettingsDep = Annotated[Settings, Depends(get_settings)]
CacheDep = Annotated[WeightCache, Depends(get_cache)]
PoolsDep = Annotated[ComputePools, Depends(get_pools)]
