"""A lesson step's picture: its figure, the numbers shown beside it, and its kind."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go


@dataclass(frozen=True)
class Picture:
    """A step's figure, the numbers shown beside it, and the figure's data key (`kind`)."""

    kind: str
    figure: go.Figure
    numbers: list[str]
