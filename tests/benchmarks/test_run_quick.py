"""The benchmark command runs end to end on its tiny setting (its numbers are not checked)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.browser
def test_quick_benchmark_prints_the_table(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    header = "metric | measured | target | pass | bound"
    assert header in " ".join(result.stdout.split())  # the table, whatever the widths
    data = json.loads(out.read_text(encoding="utf-8"))
    metrics = " ".join(row["metric"] for row in data["rows"])
    for name in ("cold", "warm", "/api/health", "latency", "largest response", "RSS", "students"):
        assert name in metrics, name
    if shutil.which("wrk"):
        assert "trivial FastAPI" in metrics and "ceiling" in metrics
    assert data["raw"]["matmul_gflops"] > 0
    assert data["raw"]["random_errors"] == 0
    assert data["raw"]["largest_body_bytes"] > 0
    every = [row for row in data["rows"] if row["measured"] != "skipped"]
    assert all(row["target"] and row["bound"] for row in every)


def test_random_bodies_are_valid_configurations() -> None:
    from app.config import Settings
    from app.model.ffn import FFNConfig, expected_shapes
    from benchmarks.run import random_bodies

    settings = Settings()
    bodies = random_bodies(50, settings, max_params=10**12)
    assert len(bodies) == 50
    for body in bodies:
        config = FFNConfig(body["d_model"], body["d_ff"], body["activation"], body["bias"])
        params = sum(math.prod(s) for s in expected_shapes(config).values())
        assert params <= settings.max_params
        assert 1 <= body["num_tokens"] <= settings.max_tokens
