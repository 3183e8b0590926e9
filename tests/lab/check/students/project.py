"""The project's own FFN behind the constructor a student would write (an adapter)."""

from app.model.ffn import FFNConfig, PositionwiseFeedForward


class ProjectFFN(PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, activation="relu", dropout=0.1):
        super().__init__(FFNConfig(d_model, d_ff, activation, dropout=dropout))
