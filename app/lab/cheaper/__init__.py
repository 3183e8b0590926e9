"""Cheaper FFNs (low-rank and stacked) against the full one: the comparison (`compare`) and
the POST /api/cheaper answer (`answer`)."""
