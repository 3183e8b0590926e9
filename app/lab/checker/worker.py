"""The subprocess side: `python [-O] -m app.lab.checker.worker SPEC_JSON OUT_PATH`.

SPEC_JSON["mode"] is "check" (import, build, run the checklist; write the report's JSON)
or "activation" (build with an unknown activation name; write what was raised; what
`lab.check` runs under `python -O`). A `CannotCheck` is written as {"error_text": message}.
The student's prints go to stderr. torch and the checker are imported before the first
phase line ("importing FILE"), from which the parent counts the time limit.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import torch


def _phase(text: str) -> None:
    from app.grading.runner import PHASE

    print(f"{PHASE}{text}", file=sys.stderr, flush=True)


def _answer(spec: dict[str, Any]) -> dict[str, Any]:
    from app.lab.checker import activation, build, run_checks

    path = Path(spec["path"])
    _phase(f"importing {path.name}")
    cls = build.load_class(path, spec["class_name"])
    if spec["mode"] == "activation":
        recipe = build.Recipe(cls, spec["kwargs"], activation_param=spec["activation_param"])
        return activation.outcome(recipe, int(spec["d_model"]))
    recipe = build.recipe(cls, int(spec["d_model"]), int(spec["d_ff"]), spec["kwargs"])
    _phase(f"building {recipe.describe()}")
    module = recipe.build()
    _phase("running the checks")
    report = run_checks(
        module,
        d_model=int(spec["d_model"]),
        recipe=recipe,
        source=activation.Source(path, spec["class_name"]),
        only=spec.get("only"),
        optimize_here=True,
    )
    return report.to_dict()


def main(argv: list[str]) -> int:
    """Run one spec; always writes OUT_PATH unless killed (exit 0 either way)."""
    from app.grading.report import CannotCheck

    spec: dict[str, Any] = json.loads(argv[0])
    out = Path(argv[1])
    torch.set_num_threads(1)  # small tensors; leave the other cores alone
    try:
        with contextlib.redirect_stdout(sys.stderr):
            answer = _answer(spec)
    except CannotCheck as exc:
        answer = {"error_text": str(exc)}
    out.write_text(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
