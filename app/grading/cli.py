"""`ffn-lab check PATH.py:ClassName [--d-model 512] [--d-ff 2048] [--only NAME]...
[--format text|json|gradescope] [--weights checks.toml] [--output FILE]`.

Exit codes: 0 every check passes, 1 a check fails, 2 the checklist cannot run (no such
file or class, an import or constructor error, a timeout, a bad option; the error is
named). Imports no torch: the checks run in a worker process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.grading.gradescope import Weights, cannot_run_json, load_weights, results_json
from app.grading.report import REASONS, CannotCheck, CheckReport, select
from app.grading.runner import check_file

EXIT_PASSED, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2
FORMATS = ("text", "json", "gradescope")


def _parser() -> argparse.ArgumentParser:
    checks = "\n".join(f"  {name:<25} {reason}" for name, reason in REASONS.items())
    parser = argparse.ArgumentParser(
        prog="ffn-lab check",
        description=(
            "Run the FFN debugging checklist on your own torch.nn.Module, imported from "
            "PATH.py in a subprocess with a time limit. Each check runs at the sizes given "
            "and again at a second, unusual pair (d_model 24, d_ff 72)."
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
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this check (repeat for several)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (a table, the default), json, or gradescope (results.json)",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument(
        "--weights",
        type=Path,
        metavar="checks.toml",
        help="per-check weight and visibility for --format gradescope (TOML)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="write the json/gradescope answer to FILE (the table still goes to stdout)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds for your code, counted from when it starts (default 120)",
    )
    return parser


def _format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise CannotCheck(f"--json and --format {args.format} disagree: pick one")
    return "json" if args.json else (args.format or "text")


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
    select(args.only)
    try:
        kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        raise CannotCheck(f"--kwargs is not valid JSON ({exc.msg}): {args.kwargs!r}") from exc
    if not isinstance(kwargs, dict):
        raise CannotCheck(
            f"--kwargs must be a JSON object like '{{\"dropout\": 0.1}}', got {args.kwargs!r}"
        )
    return Path(path_text), class_name, kwargs


def _emit(answer: dict[str, Any], table: str | None, output: Path | None) -> None:
    """The answer as JSON on stdout, or in `output` (then the table goes to stdout)."""
    text = json.dumps(answer, indent=None if output is None else 2)
    if output is None:
        print(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + "\n", encoding="utf-8")
    if table is not None:
        print(table)


def main(argv: list[str] | None = None) -> int:
    """Run the check command; returns the exit code (0, 1 or 2)."""
    args = _parser().parse_args(argv)
    fmt = "text"
    weights: Weights | None = None
    try:
        fmt = _format(args)
        if args.weights is not None:
            if fmt != "gradescope":
                raise CannotCheck("--weights goes with --format gradescope")
            weights = load_weights(args.weights)
        path, class_name, kwargs = _options(args)
        report = check_file(
            path,
            class_name,
            d_model=args.d_model,
            d_ff=args.d_ff,
            kwargs=kwargs,
            timeout=args.timeout,
            only=args.only,
        )
    except CannotCheck as exc:
        return _cannot_run(str(exc), fmt, args.output)
    _show(report, fmt, weights, args.output)
    return EXIT_PASSED if report.passed else EXIT_FAILED


def _show(report: CheckReport, fmt: str, weights: Weights | None, output: Path | None) -> None:
    if fmt == "text":
        if output is not None:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(f"{report}\n", encoding="utf-8")
        print(report)
    elif fmt == "json":
        _emit(report.to_dict(), str(report), output)
    else:
        _emit(results_json(report, weights), str(report), output)


def _cannot_run(message: str, fmt: str, output: Path | None) -> int:
    if fmt == "json":
        _emit(
            {"passed": False, "status": "cannot_run", "checks": [], "error": message}, None, output
        )
    elif fmt == "gradescope":
        _emit(cannot_run_json(message), None, output)
    print(f"ffn-lab check: cannot run: {message}", file=sys.stderr)
    return EXIT_CANNOT_RUN
