"""Plotly figures of an answer for notebooks and the snapshot: the panels (`panels`) and the
shared parts they are drawn with (`parts`: colour scale, windows, captions)."""
