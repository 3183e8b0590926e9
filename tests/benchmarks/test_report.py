"""The benchmark keeps one result: latest.json and the latest.md table the docs include."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import report

ROW = {"metric": "a | b", "measured": "1 ms", "target": "<= 2 ms", "ok": True, "bound": "-"}
RAW = {
    "commit": "0123456789abcdef0123456789abcdef01234567",
    "date": "2026-01-02",
    "cpus": 2,
    "torch_threads": 1,
    "load_average_start": "1.0 1.0 1.0",
    "load_average_end": "0.5 0.5 0.5",
    "matmul_gflops": 90.0,
    "read_gbs": 18.0,
}


def test_a_run_overwrites_the_latest_result(tmp_path: Path) -> None:
    report.write_latest({"rows": [ROW], "raw": RAW}, tmp_path)
    second = {**ROW, "metric": "second", "ok": False}
    json_path, md_path = report.write_latest({"rows": [second], "raw": RAW}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "latest.md"]
    assert json.loads(json_path.read_text())["rows"] == [second]
    table = md_path.read_text()
    assert "| second | 1 ms | <= 2 ms | **no** | - |" in table
    assert "a \\| b" not in table


def test_the_table_names_the_commit_and_date_and_escapes_pipes() -> None:
    table = report.markdown({"rows": [ROW], "raw": RAW})
    assert "commit `0123456` on 2026-01-02" in table
    assert "| a \\| b | 1 ms | <= 2 ms | yes | - |" in table


def test_the_committed_table_is_made_from_the_committed_result() -> None:
    result = json.loads((report.RESULTS / "latest.json").read_text(encoding="utf-8"))
    assert (report.RESULTS / "latest.md").read_text(encoding="utf-8") == report.markdown(result)
    assert len(result["raw"]["commit"]) >= 40 and result["raw"]["date"]
