"""The benchmark's one kept result: `benchmarks/results/latest.json` and `latest.md`.

`python -m benchmarks.run` overwrites both after a full run; `docs/performance.md` includes
`latest.md` (the table) in the documentation site. The JSON holds the table's rows and the
raw figures, with the commit the run measured and the date it ran.

    python -m benchmarks.report                      # latest.md again from latest.json
    python -m benchmarks.report run.json --commit 0b71ef9 --date 2026-12-02
                                                     # a saved run becomes the latest
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# A change under these paths changes what the benchmark measures.
MEASURED_PATHS = ("app", "static", "templates", "benchmarks")


def provenance(root: Path = ROOT) -> dict[str, str]:
    """The commit of the measured tree (`-dirty` when its measured files differ) and today.

    Returns `{"commit": "<40 hex>[-dirty]" or "unknown", "date": "YYYY-MM-DD"}` (UTC).
    """
    date = datetime.now(UTC).date().isoformat()
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", *MEASURED_PATHS],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown", "date": date}
    return {"commit": commit + ("-dirty" if changed else ""), "date": date}


def _cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, no line breaks."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown(result: dict[str, Any]) -> str:
    """The run as Markdown: who and where it measured, then one table row per figure."""
    raw = result["raw"]
    commit = str(raw.get("commit", "unknown"))
    short = commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")
    lines = [
        f"Measured on commit `{short}` on {raw.get('date', 'an unknown date')} with "
        "`python -m benchmarks.run`: "
        f"{raw['cpus']} CPUs shared with other work, torch threads {raw['torch_threads']}, "
        f"load average {raw['load_average_start']} at the start and "
        f"{raw['load_average_end']} at the end; `torch.matmul` "
        f"{raw['matmul_gflops']:.1f} GFLOP/s, memory read {raw['read_gbs']:.1f} GB/s, "
        "one frame 16.7 ms.",
        "",
        "| figure | measured | target | met | bound |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in result["rows"]:
        met = "—" if row["ok"] is None else ("yes" if row["ok"] else "**no**")
        cells = (row["metric"], row["measured"], row["target"], met, row["bound"])
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def write_latest(result: dict[str, Any], out_dir: Path = RESULTS) -> tuple[Path, Path]:
    """Write (overwrite) `latest.json` and `latest.md` in `out_dir`; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "latest.json", out_dir / "latest.md"
    json_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(markdown(result), encoding="utf-8")
    return json_path, md_path


def main(argv: list[str] | None = None) -> int:
    """Make `latest.md` (and `latest.json`) from a saved run of `benchmarks.run --json`."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__)
    parser.add_argument("json", type=Path, nargs="?", default=RESULTS / "latest.json")
    parser.add_argument("--commit", help="the commit the run measured (if the file lacks it)")
    parser.add_argument("--date", help="the day of the run, YYYY-MM-DD (if the file lacks it)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of latest.*")
    args = parser.parse_args(argv)
    result = json.loads(args.json.read_text(encoding="utf-8"))
    if args.commit:
        result["raw"]["commit"] = args.commit
    if args.date:
        result["raw"]["date"] = args.date
    for path in write_latest(result, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
