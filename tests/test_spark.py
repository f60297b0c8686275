"""The Spark engine gives byte-identical outputs to DuckDB (bundled and generated cases).

One local[2] SparkSession is shared by the module; every engine the pipeline opens reuses it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import pipeline
from forensics.cli import app
from forensics.engines.spark import _spark_format, resolve_master, session
from forensics.synth import sample

pytestmark = pytest.mark.spark

BUNDLED = Path(__file__).resolve().parent.parent / "sample_logs" / "glm53" / "incident.toml"
BLAST = Path(__file__).resolve().parent / "fixtures" / "blast_radius" / "incident.toml"
ROOMS = Path(__file__).resolve().parent / "fixtures" / "range-review" / "engine-rooms"
OWNERS_EXCLUDED = Path(__file__).resolve().parent / "fixtures" / "owners_excluded" / "incident.toml"
COMPARED = (
    "summary.json",
    "exposed_requests.csv",
    "blast_radius.csv",
    "notify/recipients.csv",
    "notify/data_owners.csv",
    "notify/excluded.csv",
    "notify/jurisdictions.csv",
    "notify/README.md",
    "notify/notices/index.csv",  # every notice's sha256
    "notify/no_contact.csv",
    "notify/regulator_summary.md",
    "notify/incident.json",
)


@pytest.fixture(scope="module")
def spark():
    s = session("local[2]")
    yield s
    s.stop()


def _run_both(case: Path, out: Path) -> tuple[Path, Path]:
    pipeline.run(case, out / "duckdb")
    pipeline.run(case, out / "spark", engine="spark")
    return out / "duckdb", out / "spark"


def _differing(a: Path, b: Path) -> list[str]:
    return [name for name in COMPARED if (a / name).read_bytes() != (b / name).read_bytes()]


@pytest.fixture(scope="module")
def bundled(spark, tmp_path_factory) -> tuple[Path, Path]:
    return _run_both(BUNDLED, tmp_path_factory.mktemp("bundled"))


@pytest.fixture(scope="module")
def generated(spark, tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("generated")
    sample.generate(base / "case", requests=30_000, seed=7, fmt="jsonl", engine_logs=True)
    return _run_both(base / "case" / "incident.toml", base)


@pytest.fixture(scope="module")
def blast(spark, tmp_path_factory) -> tuple[Path, Path]:
    """tests/fixtures/blast_radius: four models, shared nodes, engine capacity, a prober."""
    return _run_both(BLAST, tmp_path_factory.mktemp("blast"))


@pytest.fixture(scope="module")
def time_window(spark, tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("time_window")
    shutil.copytree(BUNDLED.parent, base / "case")
    case = base / "case" / "incident.toml"
    policy = 'policy = "pool-walkback"'
    assert policy in case.read_text()
    case.write_text(case.read_text().replace(policy, 'policy = "time-window"\nlookback = "30m"'))
    return _run_both(case, base)


def test_bundled_case_outputs_are_byte_identical_on_both_engines(bundled):
    duck, spark_out = bundled
    assert _differing(duck, spark_out) == []


def test_bundled_case_on_spark_finds_the_reference_155_exposures(bundled):
    summary = json.loads((bundled[1] / "summary.json").read_text())
    assert summary["exposure_count"] == 155
    assert summary["excluded_by_reason"] == {"internal-test": 60, "security-researcher": 50}


def test_generated_case_outputs_are_byte_identical_on_both_engines(generated):
    duck, spark_out = generated
    assert _differing(duck, spark_out) == []


def test_blast_radius_and_probing_are_byte_identical_on_both_engines(blast):
    """The hand-derived figures of tests/fixtures/blast_radius/README.md, on Spark too."""
    duck, spark_out = blast
    written = [n for n in COMPARED if (duck / n).is_file()]  # no accounts file: no jurisdictions
    assert "blast_radius.csv" in written
    assert [n for n in written if (duck / n).read_bytes() != (spark_out / n).read_bytes()] == []
    summary = json.loads((spark_out / "summary.json").read_text())
    radius = {
        m["model"]: (m["over_capacity"], m["unknown_capacity"]) for m in summary["blast_radius"]
    }
    assert radius == {"m-chat": (0, 0), "m-edge": (3, 1), "m-long": (10, 0), "m-side": (0, 4)}
    assert summary["flagged_accounts"] == ["acct-probe"]
    reasons = summary["classification"]["accounts"]["acct-probe"]["reasons"]
    assert sorted(r["test"] for r in reasons) == [
        "probe_length_burst",
        "probe_max_tokens",
        "probe_prefix",
    ]


@pytest.fixture(scope="module")
def rooms(spark, tmp_path_factory) -> tuple[Path, Path]:
    """tests/fixtures/range-review/engine-rooms: shared and disagreeing bootstrap rooms."""
    return _run_both(ROOMS / "incident.toml", tmp_path_factory.mktemp("rooms"))


def test_engine_room_lengths_are_byte_identical_on_both_engines(rooms):
    """The hand-derived figures of tests/fixtures/range-review/README.md, on Spark too."""
    duck, spark_out = rooms
    for output in ("summary.json", "exposed_requests.csv", "blast_radius.csv"):
        assert (duck / output).read_bytes() == (spark_out / output).read_bytes(), output
    summary = json.loads((spark_out / "summary.json").read_text())
    rng = summary["exposure_range"]
    assert (summary["exposure_count"], rng["min"], rng["max"]) == (3, 1, 6)
    assert summary["blast_radius"][0]["in_window"] == 4


@pytest.mark.parametrize("name", ["other-models", "capacity-overlap"])
def test_range_review_blast_radius_is_byte_identical_on_both_engines(tmp_path_factory, spark, name):
    """tests/fixtures/range-review: another model's own context limit (engine logs) or none
    bounds its over-capacity requests; two capacity entries of different globs holding for
    the same requests are warned about; on Spark too (README figures)."""
    case = ROOMS.parent / name / "incident.toml"
    duck, spark_out = _run_both(case, tmp_path_factory.mktemp(name))
    for output in ("summary.json", "blast_radius.csv"):
        assert (duck / output).read_bytes() == (spark_out / output).read_bytes(), output
    summary = json.loads((spark_out / "summary.json").read_text())
    over = {m["model"]: m["over_capacity"] for m in summary["blast_radius"]}
    if name == "other-models":
        assert over == {"big": 2, "m": 1, "small": 1}
    else:
        assert any(w.startswith("[[capacity]] entries 1 (") for w in summary["warnings"])


def test_time_window_owners_are_byte_identical_on_both_engines(time_window):
    duck, spark_out = time_window
    assert _differing(duck, spark_out) == []
    owners = json.loads((spark_out / "summary.json").read_text())["data_owners"]
    assert owners["policy"] == "time-window" and owners["pairs"] > 0  # not vacuous


def test_excluded_responses_owners_are_byte_identical_on_both_engines(spark, tmp_path_factory):
    """tests/fixtures/owners_excluded/README.md: a researcher's response walked back, a QA
    response on a node without decode capacity (partial)."""
    duck, spark_out = _run_both(OWNERS_EXCLUDED, tmp_path_factory.mktemp("owners_excluded"))
    written = [n for n in COMPARED if (duck / n).is_file()]  # no [notify] deadlines
    assert "notify/data_owners.csv" in written
    assert [n for n in written if (duck / n).read_bytes() != (spark_out / n).read_bytes()] == []
    owners = json.loads((spark_out / "summary.json").read_text())["data_owners"]
    assert owners["read_by"]["excluded"] == {"accounts": 3, "requests": 3, "pairs": 3}
    assert (owners["status"], owners["excluded_unattributed"]) == ("partial", 1)


def test_run_on_spark_writes_the_hive_partitioned_requests_store(bundled):
    store = bundled[1] / "requests"
    days = sorted(p.name for p in store.iterdir() if p.is_dir())
    assert days[0] == "day=2026-08-20"
    models = {p.name for p in store.glob("day=*/model=*")}
    assert "model=%40cf%2Fzai-org%2Fglm-5.3" in models
    assert (bundled[1] / "requests_tables" / "inputs").is_dir()


def test_analyze_notify_report_on_a_parquet_store_through_the_cli(bundled, runner, tmp_path):
    duck, spark_out = bundled
    store = str(spark_out / "requests")
    common = ["--db", store, "--out", str(tmp_path), "--engine", "spark"]
    for command in ("analyze", "notify", "report"):
        result = runner.invoke(app, [command, str(BUNDLED), *common])
        assert result.exit_code == 0, result.output
    assert _differing(duck, tmp_path) == []
    assert (tmp_path / "report.html").is_file()


def test_spark_engine_on_a_missing_store_is_one_clear_error(runner, tmp_path):
    missing = str(tmp_path / "nope")
    args = ["analyze", str(BUNDLED), "--db", missing, "--out", str(tmp_path), "--engine", "spark"]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert "--to-parquet" in result.output


def test_glob_matches_like_duckdb_on_spark(spark):
    from forensics.engines.spark import spark_sql

    text, _ = spark_sql(
        "SELECT 'decode-b7' GLOB 'decode-b*' AS a, 'decode-a1' GLOB 'decode-b*' AS b, "
        "'n.1' GLOB 'n?1' AS c, 'nx1' GLOB 'n.1' AS d"
    )
    assert spark.sql(text).collect()[0] == (True, False, True, False)


@pytest.mark.parametrize(
    "node", ["pf\\1", "a*b", "a?b", "x[1]", "a]b", "p\\[x]", "a.b", "decode-b1"]
)
def test_a_generated_capacity_glob_matches_its_node_on_spark_as_in_duckdb(spark, node):
    import duckdb

    from forensics.engines.spark import spark_sql
    from forensics.render.capacity_entries import _glob_literal

    pattern = _glob_literal(node)
    spark.createDataFrame(
        [(node, pattern), (node + "x", pattern), ("x" + node, pattern)], "n string, p string"
    ).createOrReplaceTempView("globs")
    text, _ = spark_sql("SELECT n GLOB p AS m FROM globs")
    # exactly the node itself, as DuckDB's GLOB and the case file's fnmatch take it
    assert [r[0] for r in spark.sql(text).collect()] == [True, False, False]
    assert duckdb.execute("SELECT ? GLOB ?", [node, pattern]).fetchone() == (True,)


def test_strftime_format_becomes_a_quoted_spark_pattern():
    assert _spark_format("%Y-%m-%dT%H:%M:%S.%fZ") == "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'"


def test_master_comes_from_the_option_then_env_then_spark_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert resolve_master() == "local[*]"
    (tmp_path / "spark-defaults.conf").write_text("spark.master spark://h:7077\n")
    assert resolve_master() is None
    monkeypatch.setenv("SPARK_MASTER", "spark://env:7077")
    assert resolve_master() == "spark://env:7077"
    assert resolve_master("local[3]") == "local[3]"


@pytest.fixture(scope="module")
def evidence_both(spark, tmp_path_factory) -> tuple[Path, Path]:
    """The evidence fixture (tests/fixtures/evidence) with a clock skew, a token tolerance and
    the README's engine-log rows, analysed in DuckDB and, from its Parquet export, on Spark:
    every category of the exposure range runs on both engines."""
    from evidence_case import add_engine_rows, case_copy

    from forensics import ingest
    from forensics.case import load_case
    from forensics.engines import DuckDBEngine

    base = tmp_path_factory.mktemp("evidence")
    case_file = case_copy(
        base, '\n[uncertainty]\nclock_skew = "2m"\nprompt_tokens_tolerance = 50\n'
    )
    db = base / "case.duckdb"
    with DuckDBEngine(db) as engine:
        pipeline.ingest_sources(engine, load_case(case_file))
        add_engine_rows(engine)
        ingest.export_parquet(engine, base / "store" / "requests")
    pipeline.analyze(case_file, db, base / "duckdb")
    pipeline.analyze(case_file, base / "store" / "requests", base / "spark", engine="spark")
    return base / "duckdb", base / "spark"


def test_evidence_fixture_summary_is_byte_identical_on_both_engines(evidence_both):
    duck, spark_out = evidence_both
    assert (duck / "summary.json").read_bytes() == (spark_out / "summary.json").read_bytes()
    summary = json.loads((spark_out / "summary.json").read_text())
    assert (summary["exposure_range"]["min"], summary["exposure_range"]["max"]) == (4, 20)


@pytest.fixture(scope="module")
def partial_both(spark, tmp_path_factory) -> dict[str, tuple[Path, Path, Path]]:
    """tests/fixtures/partial on both engines: spark.toml (missing statuses, skew with
    tolerance, a unit off by 1000, a partial outage in one case), engine.toml (the engine's
    input length deciding) and named.toml on a database that also holds another case's
    inputs. Per case: (DuckDB out, Spark out, the Parquet store)."""
    from partial_case import other_inputs, partial_case

    from forensics import ingest
    from forensics.case import load_case
    from forensics.engines import DuckDBEngine

    runs = {}
    for name, others in (("spark", False), ("engine", False), ("named", True)):
        base = tmp_path_factory.mktemp(f"partial-{name}")
        case_file = partial_case(name)
        db = base / "case.duckdb"
        with DuckDBEngine(db) as engine:
            pipeline.ingest_sources(engine, load_case(case_file))
            if others:
                other_inputs(engine)
            ingest.export_parquet(engine, base / "store" / "requests")
        store = base / "store" / "requests"
        pipeline.analyze(case_file, db, base / "duckdb")
        pipeline.analyze(case_file, store, base / "spark", engine="spark")
        runs[name] = (base / "duckdb", base / "spark", store)
    return runs


@pytest.mark.parametrize("name", ["spark", "engine", "named"])
def test_partial_fault_figures_are_byte_identical_on_both_engines(partial_both, name):
    duck, spark_out, _ = partial_both[name]
    for output in ("summary.json", "exposed_requests.csv"):
        assert (duck / output).read_bytes() == (spark_out / output).read_bytes(), output
    summary = json.loads((spark_out / "summary.json").read_text())
    # not vacuous: the figures of tests/fixtures/partial/README.md, on Spark
    expected = {"spark": (11, 6, 12), "engine": (1, 1, 1), "named": (3, 3, 3)}[name]
    rng = summary["exposure_range"]
    assert (summary["exposure_count"], rng["min"], rng["max"]) == expected


def test_a_mistyped_model_is_refused_on_spark_as_on_duckdb(partial_both, tmp_path):
    from partial_case import partial_case

    from forensics.errors import ForensicsError

    store = partial_both["named"][2]
    with pytest.raises(ForensicsError) as caught:
        pipeline.analyze(partial_case("models"), store, tmp_path, engine="spark")
    assert caught.value.exit_code == 2
    assert "the closest models the logs hold: 'glm-5.3' 4" in str(caught.value)
