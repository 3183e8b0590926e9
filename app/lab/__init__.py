"""Experiments built on the model: plain arguments in, dataclasses of tensors/arrays out.

Nothing here knows HTTP, Pydantic or Plotly; domain errors are `ValueError` subclasses.
"""
