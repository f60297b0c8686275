"""Smoke test of the benchmark entry point at a tiny size (no timing assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP_FIELDS = {"median_s", "median_wall_s", "peak_rss_mb", "runs_s"}


def run_tiny(tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "latest.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--sizes",
            "20000",
            "--formats",
            "parquet,jsonl",
            "--repeats",
            "1",
            "--out",
            str(out),
            "--data-dir",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    return proc, json.loads(out.read_text()) if out.is_file() else {}


def test_benchmark_entry_point_writes_every_field_and_passes_its_correctness_check(
    tmp_path: Path,
) -> None:
    proc, doc = run_tiny(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert doc["correct"] is True
    assert doc["machine"]["cores"] >= 1 and doc["machine"]["memory_gib"] > 0
    assert [(r["size"], r["format"]) for r in doc["results"]] == [
        (20000, "parquet"),
        (20000, "jsonl"),
    ]
    for row in doc["results"]:
        assert row["correctness"]["ok"] is True
        assert set(row["correctness"]) == {
            "toolkit_exposure_equals_truth",
            "duckdb_raw_exposure_equals_truth",
            "toolkit_ingest_equals_truth",
            "pandas_exposure_equals_truth",
            "pandas_owners_equal_toolkit",
            "ok",
        }
        for contender in ("toolkit", "duckdb_raw"):
            assert STEP_FIELDS | {"rows_per_s"} <= set(row["ingest"][contender])
        for contender in ("toolkit", "duckdb_raw_exposure"):
            assert set(row["analyze"][contender]) >= STEP_FIELDS
        assert row["analyze"]["pandas"]["mode"] == "measured"
        assert set(row["analyze"]["pandas"]) >= STEP_FIELDS
        for ratio in (
            row["ingest"]["ratio_toolkit_vs_duckdb"],
            row["analyze"]["ratio_toolkit_vs_duckdb"],
            row["analyze"]["ratio_pandas_vs_toolkit"],
        ):
            assert ratio > 0
    assert set(doc["targets"]) == {
        "ingest_within_2x_of_duckdb",
        "analyze_20000_under_60s",
        "analyze_20x_faster_than_pandas",
        "peak_rss_under_4gb",
        "growth_within_nlogn",
    }
    assert "| 20,000 | parquet |" in doc["table"] and "| 20,000 | jsonl |" in doc["table"]
    assert "2 cores" in doc["table"] or f"{doc['machine']['cores']} cores" in doc["table"]
