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
from forensics.analysis import owners
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.synth import sample

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import baselines  # noqa: E402
import run as benchmark  # noqa: E402

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


def test_both_baselines_give_the_blast_radius_of_every_model(tmp_path: Path) -> None:
    """The generated case holds two models, each with its own `[[capacity]]` entries (a
    `models` glob apiece): per model the requests are truth.json's `models` counts, and the
    case model's requests over capacity are its bands' exposed + excluded (delivered, over
    capacity, within the context window; the failed ones are not delivered), none of unknown
    capacity."""
    generated = sample.generate(tmp_path / "case", 30_000, seed=7, fmt="parquet").truth
    result = all_three(tmp_path / "case" / "incident.toml", tmp_path)
    assert result["identical"] is True, result["differences"]
    case_model = "@cf/zai-org/glm-5.3"
    radius = result["figures"]["toolkit"]["blast_radius"]
    assert {m: v[0] for m, v in radius.items()} == generated["models"]
    over = generated["bands"]["exposed"] + generated["bands"]["excluded"]
    assert radius[case_model][1] == over and radius[case_model][2] == 0
    for name in ("duckdb_sql", "polars"):
        assert result["figures"][name]["blast_radius"] == radius


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


@pytest.mark.parametrize("slot_rows", [1, 3, 100_000])
def test_walkback_owners_do_not_depend_on_the_slot_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slot_rows: int
) -> None:
    # the walk-back cuts the pools' running sums at slots of end time: one request a slot,
    # a few, or the whole window in one slot must all give the baselines' owners
    monkeypatch.setattr(owners, "SLOT_ROWS", slot_rows)
    result = all_three(ties_case(tmp_path / "case"), tmp_path)
    assert result["identical"] is True, result["differences"]
    assert result["figures"]["toolkit"]["owner_pairs"] > 0


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


def test_compare_reports_a_blast_radius_row_that_differs(tmp_path: Path) -> None:
    # one (model, node) row of the Polars blast radius with one more request over capacity:
    # that row is on each side only once (the toolkit's and the changed one), DuckDB's agree
    all_three(CASE_SMALL, tmp_path)
    radius = tmp_path / "pl" / "blast_radius.parquet"
    frame = pl.read_parquet(radius).sort("model", "prefill_node", nulls_last=False)
    changed = pl.int_range(pl.len()) == 0
    frame.with_columns(
        pl.when(changed).then(pl.col("over_capacity") + 1).otherwise("over_capacity")
    ).write_parquet(radius)
    result = baselines.compare(
        str(tmp_path / "case.duckdb"), str(tmp_path / "eq.duckdb"), str(tmp_path / "pl")
    )
    assert result["identical"] is False
    assert result["differences"]["polars_radius_only_toolkit"] == 1
    assert result["differences"]["polars_radius_only_polars"] == 1
    assert result["differences"]["duckdb_sql_radius_only_toolkit"] == 0


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


def test_the_file_system_of_a_path_is_its_longest_mount_point() -> None:
    if not Path("/proc/mounts").is_file():  # not Linux: the benchmark records it unknown
        assert benchmark.file_system(Path("/")) == "unknown"
        return
    assert benchmark.file_system(Path("/proc/self")) == "proc"
    assert benchmark.file_system(Path("/")) != "unknown"


def test_benchmark_entry_point_writes_every_field_and_passes_its_checks(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    args = ["--sizes", "20000", "--formats", "parquet,jsonl", "--repeats", "1"]
    args += ["--cli-repeats", "1", "--out", str(out), "--data-dir", str(tmp_path / "data")]
    args += ["--run-sizes", "20000", "--e2e-size", "20000", "--many-files", "10"]
    args += ["--out-dir", str(tmp_path / "outs")]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["correct"] is True
    # the commands wrote under --out-dir; each notify repeat had its own copy, removed after
    assert doc["settings"]["out_dir"] == str((tmp_path / "outs").resolve())
    assert doc["settings"]["out_dir_file_system"] != "unknown"
    assert (tmp_path / "outs").is_dir() and not list((tmp_path / "outs").glob("notify-*"))
    assert doc["machine"]["cores"] >= 1 and len(doc["machine"]["load_average_at_start"]) == 3
    assert doc["cli_startup"]["median_s"] > 0
    (row,) = doc["results"]
    assert row["size"] == 20000 and set(row["ingest"]) == {"parquet", "jsonl"}
    assert row["correctness"]["ok"] is True and row["analyze"]["identical"] is True
    for fmt, ingest in row["ingest"].items():
        contenders = ("toolkit", "duckdb_bare_read")
        if fmt == "jsonl":  # the equal-work ingests, checked against the toolkit's rows
            contenders += ("duckdb_sql", "polars")
            assert ingest["equal_work_identical"] is True
            assert ingest["ratio_toolkit_vs_duckdb_sql"] > 0
            assert ingest["ratio_toolkit_vs_polars"] > 0
        for contender in contenders:
            assert set(ingest[contender]) >= STEP_FIELDS
        assert ingest["ratio_toolkit_vs_bare_read"] > 0
    for contender in ("toolkit", "duckdb_sql", "polars"):
        assert set(row["analyze"][contender]) >= STEP_FIELDS
    assert row["analyze"]["ratio_toolkit_vs_duckdb_sql"] > 0
    assert row["analyze"]["ratio_toolkit_vs_polars"] > 0
    # the report stage: timed, its outputs' sizes, its headline figures checked against truth
    assert set(row["report"]["toolkit"]) >= STEP_FIELDS
    # what `forensics report` writes: the page, the timeline twice, the manifest updated
    report_files = {"report.html", "timeline.png", "timeline.svg", "manifest.json"}
    assert set(row["report"]["bytes"]) == report_files
    assert row["correctness"]["report_shows_truth"] is True
    # the notify stage (issue 39): timed against analyze, with what it wrote and the floor of
    # its files written bare
    assert set(row["notify"]["toolkit"]) >= STEP_FIELDS
    assert set(row["notify"]["bare_files"]) >= STEP_FIELDS
    assert row["notify"]["notices"] > 0 and row["notify"]["messages"] == row["notify"]["notices"]
    assert row["notify"]["ratio_vs_analyze"] > 0
    # forensics run at --run-sizes (Parquet) and at --e2e-size per format: every stage timed
    # (the library's steps: ingest, analyze, notify, report, chart export; "other" the rest),
    # the slowest named, the report's share of the run
    stages = {"ingest", "analyze", "notify", "report", "chart export", "other"}
    assert set(row["run"]["toolkit"]) >= STEP_FIELDS
    assert set(row["run"]["stages_s"]) == stages
    assert 0 < row["run"]["report_share"] < 1
    assert row["correctness"]["run_equals_truth"] is True
    assert [e["format"] for e in doc["end_to_end"]] == ["parquet", "jsonl"]
    for e in doc["end_to_end"]:
        assert set(e["stages_s"]) == stages and e["exposure_equals_truth"] is True
        assert e["slowest_stage"] in stages - {"other"}
        assert set(e["stages_cpu_s"]) == stages
    many = doc["many_files"]
    assert many["files"] == 10 and many["same_totals"] is True and many["files_per_s"] > 0
    assert many["totals"]["rows_read"] == 10 * 100  # ten files of 100 lines, none blank
    assert set(doc["targets"]) == {
        "analyze_within_1.5x_of_duckdb_sql",
        "parquet_ingest_within_1.8x_of_bare_read",
        "jsonl_ingest_within_1.25x_of_duckdb_sql_ingest",
        "peak_rss_under_2gb_at_20000",
        "report_under_2gb_30s_5mb_html_2mb_svg_at_20000",
        "report_under_a_quarter_of_run",
        "notify_within_analyze",
        "run_notify_stage_within_analyze_stage",
        "many_files_within_2x_of_one_file_at_10_files",
    }
    assert all(isinstance(t["met"], bool) for t in doc["targets"].values())
    assert "| 20,000 |" in doc["table"] and "chart export" in doc["table"]
    assert "bare file writes s" in doc["table"]


def test_every_step_forensics_run_reports_is_timed_in_a_named_stage(tmp_path: Path) -> None:
    # the benchmark times run's stages from the library's Progress steps, mapped by name: a
    # step renamed or added in the library must not fall silently into "other"
    times = benchmark.StepTimes()
    pipeline.run(CASE_SMALL, tmp_path / "out", progress=times)
    assert times.wall and set(times.wall) == set(times.cpu)
    stages = {benchmark.stage_of(step) for step in times.wall}
    assert stages == {"ingest", "analyze", "notify", "report", "chart export"}


def test_a_missed_growth_target_names_the_ratios_it_judged() -> None:
    # 1M -> 5M: n log n is 5.58x; JSONL ingest grew 5.7x (the miss), the others less
    scale = benchmark.scaling(
        [
            {
                "size": 1_000_000,
                "ingest": {
                    "parquet": {"toolkit": {"median_s": 1.2, "median_cpu_s": 2.0}},
                    "jsonl": {"toolkit": {"median_s": 4.7}},
                },
                "analyze": {"toolkit": {"median_s": 0.6, "median_cpu_s": 1.0}},
            },
            {
                "size": 5_000_000,
                "ingest": {
                    "parquet": {"toolkit": {"median_s": 4.8, "median_cpu_s": 8.0}},
                    "jsonl": {"toolkit": {"median_s": 26.79}},
                },
                "analyze": {"toolkit": {"median_s": 2.7, "median_cpu_s": 2.7}},
            },
        ]
    )
    target = benchmark.growth_target(scale)
    assert target["met"] is False
    assert set(target) == {
        "nlogn_ratio",
        "parquet_ingest_time_ratio",
        "jsonl_ingest_time_ratio",
        "analyze_time_ratio",
        "met",
    }
    assert round(target["nlogn_ratio"], 2) == 5.58  # 5 * ln(5e6) / ln(1e6)
    assert round(target["jsonl_ingest_time_ratio"], 2) == 5.70
    assert round(target["parquet_ingest_time_ratio"], 2) == 4.00


def test_benchmark_without_baselines_times_the_toolkit_and_checks_it_against_truth(
    tmp_path: Path,
) -> None:
    out = tmp_path / "latest.json"
    args = ["--sizes", "20000", "--formats", "parquet", "--repeats", "1", "--no-baselines"]
    args += ["--e2e-size", "0", "--many-files", "10", "--many-files-format", "parquet"]
    args += ["--one-row-group", "20000"]
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
    many = doc["many_files"]
    assert many["format"] == "parquet" and many["same_totals"] is True
    assert many["totals"]["rows_read"] == 10 * 100  # ten Parquet files of 100 rows
    assert set(doc["targets"]) == {
        "peak_rss_under_2gb_at_20000",
        "report_under_2gb_30s_5mb_html_2mb_svg_at_20000",
        "notify_within_analyze",
        "many_files_within_2x_of_one_file_at_10_files",
    }
    assert "| 20,000 |" in doc["table"] and "figures = truth" in doc["table"]
    assert "many files: 10 parquet files of 100 records" in doc["table"]
    # the sample written as one row group, its totals those of truth.json; no bare read
    one = doc["one_row_group"]
    assert one["requests"] == 20000 and one["row_groups"] == 1 and one["equals_truth"] is True
    assert set(one["toolkit"]) >= STEP_FIELDS and "duckdb_bare_read" not in one
    assert "one row group: 20,000 Parquet requests in one row group, toolkit" in doc["table"]


# --- the equal-work JSONL ingests -------------------------------------------------------------

INGEST_FIXTURE = ROOT / "tests" / "fixtures" / "ingest"


def ingest_all_three(log: Path, mapping: Path, tmp_path: Path) -> dict:
    """forensics ingest, the DuckDB SQL and the Polars equal-work ingests of one log."""
    from forensics import ingest

    report = ingest.ingest(log, tmp_path / "tk.duckdb", mapping=mapping)
    return {
        "toolkit": report,
        "duckdb_sql": baselines.duckdb_equal_work_ingest(
            str(log), str(tmp_path / "dd.duckdb"), str(mapping)
        ),
        "polars": baselines.polars_equal_work_ingest(str(log), str(tmp_path / "pl"), str(mapping)),
        "compare": baselines.compare_ingest(
            str(tmp_path / "tk.duckdb"), str(tmp_path / "dd.duckdb"), str(tmp_path / "pl")
        ),
    }


def test_equal_work_ingests_load_and_set_aside_what_forensics_ingest_does(tmp_path: Path) -> None:
    log = INGEST_FIXTURE / "gateway.jsonl.gz"
    result = ingest_all_three(log, INGEST_FIXTURE / "gateway.mapping.toml", tmp_path)
    assert result["compare"]["identical"] is True, result["compare"]["differences"]
    # by hand, line by line: 1 g1 loaded; 2 g2 loaded; 3 g1 again, identical: duplicate;
    # 4 torn: invalid JSON; 5 g4 loaded (no status: 200); 6 blank: no record; 7 g2 with
    # another prompt size: conflicting duplicate; 8 g5 prompt -3; 9 g6 time "late on
    # Thursday"; 10 a fragment: invalid JSON; 11 g7 without account; 12 g1 again: duplicate;
    # 13 g8 (nanoseconds cut, status 400) loaded; 14 g9 completion "abc"
    reasons = {
        "conflicting duplicate": 1,
        "invalid JSON": 2,
        "missing required field account_id": 1,
        "negative token count prompt_tokens": 1,
        "non-numeric token count completion_tokens": 1,
        "unparsable time ts": 1,
    }
    (stats,) = result["toolkit"].inputs
    for name in ("duckdb_sql", "polars"):
        r = result[name]
        assert (r["rows_read"], r["rows_loaded"], r["duplicates"], r["quarantined"]) == (
            13,
            4,
            2,
            7,
        )
        assert r["reasons"] == reasons
        assert r["sha256"] == stats.sha256
    assert (stats.rows_read, stats.rows_loaded, stats.duplicates, stats.quarantined) == (
        13,
        4,
        2,
        7,
    )


def test_equal_work_ingests_agree_with_forensics_ingest_on_a_generated_case(
    tmp_path: Path,
) -> None:
    truth = sample.generate(tmp_path / "case", 20_000, seed=7, fmt="jsonl").truth["ingest"]
    case = tmp_path / "case"
    result = ingest_all_three(case / "gateway.jsonl.gz", case / "gateway.mapping.toml", tmp_path)
    assert result["compare"]["identical"] is True, result["compare"]["differences"]
    assert result["toolkit"].totals() == truth
    for name in ("duckdb_sql", "polars"):
        assert {k: result[name][k] for k in truth} == truth
        assert result[name]["reasons"] == {"invalid JSON": truth["quarantined"]}  # torn lines


def test_compare_ingest_reports_a_record_loaded_differently(tmp_path: Path) -> None:
    log = INGEST_FIXTURE / "gateway.jsonl.gz"
    ingest_all_three(log, INGEST_FIXTURE / "gateway.mapping.toml", tmp_path)
    with duckdb.connect(str(tmp_path / "dd.duckdb")) as con:
        con.execute("UPDATE requests SET prompt_tokens = prompt_tokens + 1 WHERE request_id = 'g1'")
        con.execute("DELETE FROM quarantine WHERE reason = 'invalid JSON'")
    result = baselines.compare_ingest(
        str(tmp_path / "tk.duckdb"), str(tmp_path / "dd.duckdb"), str(tmp_path / "pl")
    )
    assert result["identical"] is False
    assert result["differences"]["duckdb_sql_requests_only_toolkit"] == 1
    assert result["differences"]["duckdb_sql_requests_only_duckdb_sql"] == 1
    assert result["differences"]["duckdb_sql_quarantine_only_toolkit"] == 2
    assert result["differences"]["polars_requests_only_toolkit"] == 0


def test_equal_work_ingests_refuse_a_mapping_they_were_not_written_for(tmp_path: Path) -> None:
    mapping = tmp_path / "other.mapping.toml"
    text = (INGEST_FIXTURE / "gateway.mapping.toml").read_text()
    mapping.write_text(text.replace('model = "model"', 'model = "engine"'))
    log = str(INGEST_FIXTURE / "gateway.jsonl.gz")
    with pytest.raises(ValueError, match="not the sample gateway's mapping"):
        baselines.duckdb_equal_work_ingest(log, str(tmp_path / "dd.duckdb"), str(mapping))
    with pytest.raises(ValueError, match="not the sample gateway's mapping"):
        baselines.polars_equal_work_ingest(log, str(tmp_path / "pl"), str(mapping))
