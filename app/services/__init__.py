"""Process-wide state shared by all requests: weight cache, compute pools, corpus index."""
