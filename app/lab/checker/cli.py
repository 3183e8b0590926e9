"""`ffn-lab check PATH.py:ClassName [--d-model 512] [--d-ff 2048] [--kwargs JSON] [--json]`.

Exit codes: 0 every check passes, 1 a check fails, 2 the checklist cannot run (no such
file or class, an import or constructor error, a timeout; the error is named).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.lab.checker.build import CannotCheck
from app.lab.checker.report import REASONS
from app.lab.checker.runner import check_file

EXIT_PASSED, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    checks = "\n".join(f"  {name:<25} {reason}" for name, reason in REASONS.items())
    parser = argparse.ArgumentParser(
        prog="ffn-lab check",
        description=(
            "Run the FFN debugging checklist on your own torch.nn.Module, imported from "
            "PATH.py in a subprocess with a time limit."
        ),
        epilog=f"checks:\n{checks}\n\nexit codes: 0 all pass, 1 a check fails, 2 cannot run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="PATH.py:ClassName", help="the file and the class")
    parser.add_argument("--d-model", type=int, default=512, help="token width (default 512)")
    parser.add_argument("--d-ff", type=int, default=2048, help="hidden width (default 2048)")
    parser.add_argument(
        "--kwargs",
        default="{}",
        metavar="JSON",
        help="more constructor arguments as a JSON object, e.g. '{\"dropout\": 0.1}'",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for autograders")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds before giving up (default 120)"
    )
    return parser


def _cannot_run(message: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"passed": False, "checks": [], "error": message}))
    else:
        print(f"ffn-lab check: cannot run: {message}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def _options(args: argparse.Namespace) -> tuple[Path, str, dict[str, Any]]:
    """The file, the class name and the kwargs; CannotCheck naming what is wrong."""
    path_text, sep, class_name = str(args.target).rpartition(":")
    if not sep or not path_text or not class_name:
        raise CannotCheck(f"expected PATH.py:ClassName, got {args.target!r}")
    for flag, value in (("--d-model", args.d_model), ("--d-ff", args.d_ff)):
        if value < 1:
            raise CannotCheck(f"{flag} must be a positive integer, got {value}")
    if args.timeout <= 0:
        raise CannotCheck(f"--timeout must be positive, got {args.timeout:g}")
    try:
        kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        raise CannotCheck(f"--kwargs is not valid JSON ({exc.msg}): {args.kwargs!r}") from exc
    if not isinstance(kwargs, dict):
        raise CannotCheck(
            f"--kwargs must be a JSON object like '{{\"dropout\": 0.1}}', got {args.kwargs!r}"
        )
    return Path(path_text), class_name, kwargs


def main(argv: list[str] | None = None) -> int:
    """Run the check command; returns the exit code (0, 1 or 2)."""
    args = _parser().parse_args(argv)
    try:
        path, class_name, kwargs = _options(args)
        report = check_file(
            path,
            class_name,
            d_model=args.d_model,
            d_ff=args.d_ff,
            kwargs=kwargs,
            timeout=args.timeout,
        )
    except CannotCheck as exc:
        return _cannot_run(str(exc), args.json)
    print(json.dumps(report.to_dict()) if args.json else report)
    return EXIT_PASSED if report.passed else EXIT_FAILED
