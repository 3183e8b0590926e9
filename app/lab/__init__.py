"""FFN Lab as plain Python (no FastAPI, no Pydantic): `from app import lab`.

- `lab.check(module_or_class, d_model=..., d_ff=...)`: run the FFN debugging checklist on
  your own `torch.nn.Module` (see `app.lab.checker`); the `ffn-lab check` command runs the
  same checks on a file, in a subprocess with a time limit.
"""

from __future__ import annotations

from app.lab.checker import CannotCheck, CheckReport, CheckResult, check

__all__ = ["CannotCheck", "CheckReport", "CheckResult", "check"]
