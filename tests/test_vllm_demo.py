"""The bundled vLLM prefill/decode case (sample_logs/vllm-pd/): the figures its README
derives by hand, and the same outputs from DuckDB and Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import pipeline

CASE = pipeline.demo_case("vllm-pd")
COMPARED = ("summary.json", "exposed_requests.csv", "notify/recipients.csv")


@pytest.fixture(scope="module")
def duck(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vllm-pd") / "duckdb"
    pipeline.demo(out, case="vllm-pd")
    return out


def test_the_demo_reads_the_case_readme_figures(duck: Path) -> None:
    """README: exposure 0, range 0-3 (g-003, g-007, bench-7f3c), 5 faulted requests, all
    engine_only: g-009 explained by its excluded account, g-011 by its status 499, g-003 and
    g-007 band fits, bench-7f3c without a gateway record (the last three are the range's 3);
    83 read, 74 loaded, 9 duplicates."""
    s = json.loads((duck / "summary.json").read_text())
    assert s["exposure_count"] == 0
    assert (s["exposure_range"]["min"], s["exposure_range"]["max"]) == (0, 3)
    assert s["engine_kv_faults"] == 5
    rec = s["engine_reconciliation"]
    assert rec["matched"]["count"] == 0
    assert {k: v["request_ids"] for k, v in rec["engine_only"]["reasons"].items()} == {
        "KV transfer fault: excluded account (internal-test)": ["g-009"],
        "KV transfer fault: gateway status 499: response not delivered to the client (band fits)": [
            "g-011"
        ],
        "KV transfer fault: gateway band fits": ["g-003", "g-007"],
        "KV transfer fault: no gateway request with this id": ["chatcmpl-bench-7f3c"],
    }
    assert (s["ingest"]["rows_read"], s["ingest"]["rows_loaded"], s["ingest"]["duplicates"]) == (
        83,
        74,
        9,
    )


def test_the_capacity_spans_cross_the_new_year_window(duck: Path) -> None:
    """12-31 lines read as 2026 from the window's start: pools from 2026-12-31."""
    s = json.loads((duck / "summary.json").read_text())
    assert [(c["node"], c["tokens"], c["start"]) for c in s["engine_capacity"]] == [
        ("prefill-0", 431984, "2026-12-31T21:52:02Z"),
        ("prefill-1", 431984, "2026-12-31T21:52:02Z"),
        ("decode-0", 862400, "2026-12-31T21:52:30Z"),
    ]


def test_the_reports_what_happened_tells_the_kv_transfer_faults_not_a_small_pool(
    duck: Path,
) -> None:
    """README: every pool (431,984 and 862,400 tokens) is larger than the 131,072-token
    context window, and the engines logged KV transfer faults for 5 requests: the opening
    paragraph says so, not that a pool was smaller than the window."""
    html = (duck / "report.html").read_text()
    start = html.index("<strong>What happened.</strong>")
    text = " ".join(html[start : html.index("</div>", start)].split())
    assert "The prefill KV-cache pool was smaller" not in text
    assert (
        "No prefill KV-cache pool in the case's evidence was smaller than the advertised "
        "context window of 131,072 tokens."
    ) in text
    assert "The engines' own logs record KV transfer faults for 5 request(s)" in text


def test_the_report_shows_pool_usage_under_the_timeline(duck: Path) -> None:
    assert 'id="chart-pool-usage"' in (duck / "report.html").read_text()


@pytest.mark.spark
def test_duckdb_and_spark_give_identical_outputs(duck: Path, tmp_path: Path) -> None:
    from forensics.engines.spark import session

    spark = session("local[2]")
    try:
        pipeline.run(CASE, tmp_path / "spark", engine="spark")
    finally:
        spark.stop()
    differing = [
        name
        for name in COMPARED
        if (duck / name).read_bytes() != (tmp_path / "spark" / name).read_bytes()
    ]
    assert differing == []
