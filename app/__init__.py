"""FFN Lab: a teaching instrument for the Transformer's position-wise feed-forward network."""

__version__ = "0.1.0"
