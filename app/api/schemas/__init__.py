"""Pydantic request and response models of the JSON API (the OpenAPI contract)."""
