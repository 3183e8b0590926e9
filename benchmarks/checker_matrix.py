"""Every check's result on every homework file, through `ffn-lab check` as a grader runs it.

    python -m benchmarks.checker_matrix                    # tests/lab/homework, 512 -> 2048
    python -m benchmarks.checker_matrix --dir DIR --d-model 512 --d-ff 2048

Each file is checked in the checker's own worker process (`app.grading.runner.check_file`,
what `ffn-lab check FILE:Class --format json` runs), with the class named by the file's
style (its name's first word). Prints one row per file: pass / FAIL / n/a per check, the
worker's wall time, and the command line that reproduces the row; then the `--help` start
time (median of 5 runs of `python -m app.cli check --help`) beside its 1 s bound, and the
load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from app.grading.report import CHECK_NAMES, CannotCheck
from app.grading.runner import check_file

ROOT = Path(__file__).resolve().parents[1]
CLASSES = {
    "paper": "PositionwiseFeedForward",
    "sequential": "FeedForward",
    "gelu": "Mlp",
    "llama": "LlamaMLP",
    "gpt2": "GPT2MLP",
}
SHORT = {
    "shapes": "shapes",
    "position_wise": "pos",
    "no_token_mixing": "mix",
    "shared_parameters": "params",
    "eval_deterministic": "eval",
    "residual_ready": "res_ready",
    "raises_on_bad_activation": "bad_act",
    "nonlinear": "nonlin",
    "no_residual_inside": "no_res_in",
}


def help_seconds(runs: int = 5) -> list[float]:
    """Wall times of `python -m app.cli check --help` in fresh processes."""
    times = []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "app.cli", "check", "--help"],
            capture_output=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "tests" / "lab" / "homework")
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--d-ff", type=int, default=2048)
    args = parser.parse_args()
    files = sorted(args.dir.glob("*.py"))
    width = max(len(f.stem) for f in files)
    head = "  ".join(f"{SHORT[n]:>{max(len(SHORT[n]), 4)}}" for n in CHECK_NAMES)
    print(f"sizes asked for: d_model={args.d_model}, d_ff={args.d_ff} (and 24 -> 72)")
    print(f"{'file':<{width}}  {head}  {'time':>6}")
    for path in files:
        class_name = CLASSES[path.stem.split("_")[0]]
        start = time.perf_counter()
        try:
            report = check_file(path, class_name, d_model=args.d_model, d_ff=args.d_ff, timeout=300)
        except CannotCheck as exc:
            print(f"{path.stem:<{width}}  cannot run: {exc}")
            continue
        seconds = time.perf_counter() - start
        marks = {c.name: c.mark for c in report.checks}
        cells = "  ".join(f"{marks.get(n, '-'):>{max(len(SHORT[n]), 4)}}" for n in CHECK_NAMES)
        print(f"{path.stem:<{width}}  {cells}  {seconds:5.1f}s")
    rel = (
        args.dir.resolve().relative_to(ROOT)
        if args.dir.resolve().is_relative_to(ROOT)
        else args.dir
    )
    print(
        f"\none row: ffn-lab check {rel}/FILE.py:CLASS --d-model {args.d_model} "
        f"--d-ff {args.d_ff} --format json"
    )
    times = help_seconds()
    print(
        f"ffn-lab check --help: median {statistics.median(times):.3f} s over {len(times)} runs "
        f"(min {min(times):.3f}, max {max(times):.3f}; bound 1 s)"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machine)")


if __name__ == "__main__":
    main()
