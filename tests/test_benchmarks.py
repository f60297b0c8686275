"""The benchmark's equal-work baselines compute what `forensics analyze` computes, and its
entry point runs end to end at a tiny size (no timing assertions)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from forensics import pipeline
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.synth import sample

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import baselines  # noqa: E402

CASE_SMALL = ROOT / "tests" / "fixtures" / "case_small" / "incident.toml"
STEP_FIELDS = {"median_s", "median_wall_s", "median_cpu_s", "peak_rss_mb", "runs_s", "load_1m"}


def all_three(case_toml: Path, tmp_path: Path) -> dict:
    """Ingest and analyze the case with the toolkit, run both baselines on its requests
    exported to Parquet, and compare the three."""
    case = load_case(case_toml)
    db = tmp_path / "case.duckdb"
    with DuckDBEngine(db) as eng:
        pipeline.ingest_sources(eng, case)
        pipeline.analyze_engine(eng, case, tmp_path / "out")
    requests = tmp_path / "requests.parquet"
    baselines.export_requests(db, requests)
    baselines.duckdb_equal_work(str(case_toml), str(requests), str(tmp_path / "eq.duckdb"))
    baselines.polars_equal_work(str(case_toml), str(requests), str(tmp_path / "pl"))
    return baselines.compare(str(db), str(tmp_path / "eq.duckdb"), str(tmp_path / "pl"))


def test_toolkit_and_both_baselines_agree_on_the_hand_built_case(tmp_path: Path) -> None:
    result = all_three(CASE_SMALL, tmp_path)
    assert result["identical"] is True, result["differences"]
    toolkit = result["figures"]["toolkit"]
    assert toolkit["bands"]["exposed"] > 0 and toolkit["owner_pairs"] > 0  # not vacuous
    assert len(toolkit["bands"]) >= 4
    for name in ("duckdb_sql", "polars"):
        assert result["figures"][name]["bands"] == toolkit["bands"]
        assert result["figures"][name]["owner_pairs"] == toolkit["owner_pairs"]


def test_toolkit_and_both_baselines_agree_on_a_generated_30k_case(tmp_path: Path) -> None:
    truth = sample.generate(tmp_path / "case", 30_000, seed=7, fmt="parquet").truth
    result = all_three(tmp_path / "case" / "incident.toml", tmp_path)
    assert result["identical"] is True, result["differences"]
    bands = {b: n for b, n in truth["bands"].items() if n}
    for name in ("toolkit", "duckdb_sql", "polars"):
        assert result["figures"][name]["bands"] == bands
    assert result["figures"]["toolkit"]["owner_pairs"] > 0


TIES_CASE = """
name = "Ties and gaps"
models = ["m"]
context_window = 900
success_status = [200, 201]
[window]
start = "2026-09-01T00:00:00Z"
end = "2026-09-01T06:00:00Z"
[[source]]
path = "requests.csv"
profile = "canonical"
[[capacity]]
role = "prefill"
nodes = "p?"
tokens = 300
start = "2026-09-01T01:00:00Z"
end = "2026-09-01T03:00:00Z"
[[capacity]]
role = "prefill"
nodes = "p[12]"
tokens = 500
start = "2026-09-01T00:00:00Z"
end = "2026-09-01T04:00:00Z"
[[capacity]]
role = "prefill"
nodes = "*"
tokens = 400
start = "2026-09-01T02:00:00Z"
[[capacity]]
role = "decode"
nodes = "d[!3]"
tokens = 2000
start = "2026-09-01T00:00:00Z"
end = "2026-09-01T02:00:00Z"
[[capacity]]
role = "decode"
nodes = "d*"
tokens = 700
start = "2026-09-01T02:00:00Z"
[[exclude]]
reason = "test"
accounts = ["a0"]
"""


def ties_case(folder: Path, n: int = 4000, seed: int = 3) -> Path:
    """Requests on a coarse time grid (many equal arrival and end times), zero-token and
    null-completion requests, null nodes, statuses and ends, gaps in the capacity timeline,
    nodes no entry matches, another model and times outside the window."""
    rnd = random.Random(seed)
    folder.mkdir(parents=True)
    start = datetime(2026, 9, 1, tzinfo=UTC)

    def iso(t: datetime) -> str:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    lines = [",".join(baselines.REQUEST_COLUMNS)]
    for i in range(n):
        ts = start + timedelta(minutes=rnd.randrange(-20, 380, 5))
        end = rnd.choice(["", iso(ts), *[iso(ts + timedelta(minutes=rnd.choice([0, 5, 10])))] * 3])
        prompt = rnd.choice([0, 100, 250, 300, 301, 450, 500, 501, 650, 900, 901])
        row = {
            "request_id": f"r{i:05d}",
            "ts": iso(ts),
            "account_id": f"a{rnd.randrange(8)}",
            "model": rnd.choice(["m"] * 9 + ["other"]),
            "prompt_tokens": str(prompt),
            "completion_tokens": rnd.choice(["", "0", "40", "200"]),
            "status": rnd.choice(["", "200", "201", "200", "500"]),
            "prefill_node": rnd.choice(["", "p1", "p2", "p3", "q1", "p12"]),
            "decode_node": rnd.choice(["", "d1", "d2", "d3", "e1"]),
            "ts_end": end,
        }
        lines.append(",".join(row[c] for c in baselines.REQUEST_COLUMNS))
    (folder / "requests.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "incident.toml").write_text(TIES_CASE, encoding="utf-8")
    return folder / "incident.toml"


def test_toolkit_and_both_baselines_agree_on_ties_gaps_and_nulls(tmp_path: Path) -> None:
    result = all_three(ties_case(tmp_path / "case"), tmp_path)
    assert result["identical"] is True, result["differences"]
    toolkit = result["figures"]["toolkit"]
    assert set(toolkit["bands"]) == {
        "fits",
        "exposed",
        "excluded",
        "over_capacity_failed",
        "over_context",
        "unknown_capacity",
    }
    assert toolkit["owner_pairs"] > 0


def test_compare_reports_a_request_banded_differently(tmp_path: Path) -> None:
    all_three(CASE_SMALL, tmp_path)
    bands = tmp_path / "pl" / "bands.parquet"
    frame = pl.read_parquet(bands)
    flipped = frame.with_columns(
        pl.when(pl.col("band") == "exposed").then(pl.lit("fits")).otherwise("band").alias("band")
    )
    flipped.write_parquet(bands)
    exposed = frame.filter(pl.col("band") == "exposed").height
    result = baselines.compare(
        str(tmp_path / "case.duckdb"), str(tmp_path / "eq.duckdb"), str(tmp_path / "pl")
    )
    assert result["identical"] is False
    assert result["differences"]["polars_bands_only_toolkit"] == exposed
    assert result["differences"]["polars_exposed_only_toolkit"] == exposed
    assert result["differences"]["duckdb_sql_bands_only_toolkit"] == 0


@pytest.mark.parametrize(
    "pattern", ["*", "decode-b*", "pf-a?", "pf-[ab]1", "pf-[!a]*", "dc.1", "a+b", "x[0-9]"]
)
def test_the_polars_glob_matches_what_duckdb_glob_matches(pattern: str) -> None:
    names = ["decode-b1", "decode-a1", "pf-a1", "pf-a12", "pf-b1", "pf-c7", "dc.1", "dcx1"]
    names += ["a+b", "aab", "x5", "xa", ""]
    duck = {n for n in names if duckdb.execute("SELECT ? GLOB ?", [n, pattern]).fetchall()[0][0]}
    polars = set(
        pl.Series(names).filter(pl.Series(names).str.contains(baselines.glob_regex(pattern)))
    )
    assert polars == duck


def test_benchmark_entry_point_writes_every_field_and_passes_its_checks(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    args = ["--sizes", "20000", "--formats", "parquet,jsonl", "--repeats", "1"]
    args += ["--run-sizes", "20000"]
    args += ["--cli-repeats", "1", "--out", str(out), "--data-dir", str(tmp_path / "data")]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["correct"] is True
    assert doc["machine"]["cores"] >= 1 and len(doc["machine"]["load_average_at_start"]) == 3
    assert doc["cli_startup"]["median_s"] > 0
    (row,) = doc["results"]
    assert row["size"] == 20000 and set(row["ingest"]) == {"parquet", "jsonl"}
    assert row["correctness"]["ok"] is True and row["analyze"]["identical"] is True
    for ingest in row["ingest"].values():
        for contender in ("toolkit", "duckdb_bare_read"):
            assert set(ingest[contender]) >= STEP_FIELDS
        assert ingest["ratio_toolkit_vs_bare_read"] > 0
    for contender in ("toolkit", "duckdb_sql", "polars"):
        assert set(row["analyze"][contender]) >= STEP_FIELDS
    assert row["analyze"]["ratio_toolkit_vs_duckdb_sql"] > 0
    assert row["analyze"]["ratio_toolkit_vs_polars"] > 0
    assert set(row["report"]["toolkit"]) >= STEP_FIELDS
    assert set(row["report"]["bytes"]) == {"report.html", "timeline.png", "timeline.svg"}
    assert row["correctness"]["report_shows_truth"] is True
    assert set(row["run"]["toolkit"]) >= STEP_FIELDS
    assert set(row["run"]["stages_s"]) == {"ingest", "analyze", "notify", "report"}
    assert 0 < row["run"]["report_share"] < 1
    assert row["correctness"]["run_equals_truth"] is True
    assert set(doc["targets"]) == {
        "analyze_within_1.5x_of_duckdb_sql",
        "parquet_ingest_within_2x_of_bare_read",
        "peak_rss_under_2gb_at_20000",
        "report_under_2gb_30s_5mb_html_2mb_svg_at_20000",
        "report_under_a_quarter_of_run",
    }
    assert all(isinstance(t["met"], bool) for t in doc["targets"].values())
    assert "| 20,000 |" in doc["table"]


def test_benchmark_without_baselines_times_the_toolkit_and_checks_it_against_truth(
    tmp_path: Path,
) -> None:
    out = tmp_path / "latest.json"
    args = ["--sizes", "20000", "--formats", "parquet", "--repeats", "1", "--no-baselines"]
    args += ["--cli-repeats", "1", "--out", str(out), "--data-dir", str(tmp_path / "data")]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    (row,) = doc["results"]
    assert set(row["ingest"]["parquet"]) == {"file_bytes", "toolkit", "totals", "truth"}
    assert set(row["analyze"]["figures"]) == {"toolkit"} and row["analyze"]["identical"] is None
    assert row["correctness"] == {
        "toolkit_equals_truth": True,
        "parquet_ingest_equals_truth": True,
        "report_shows_truth": True,
        "ok": True,
    }
    assert set(doc["targets"]) == {
        "peak_rss_under_2gb_at_20000",
        "report_under_2gb_30s_5mb_html_2mb_svg_at_20000",
    }
    assert "| 20,000 |" in doc["table"] and "figures = truth" in doc["table"]
