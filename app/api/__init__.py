"""HTTP layer: routes, Pydantic schemas and response encoding. Imports model and analysis."""
