"""No silent zeros: refusals (exit 2, one line naming the cause and what the logs hold),
`--allow-empty`, the quarantine reasons ingest prints, and the warnings for case-file ids that
match nothing. Fixture: tests/fixtures/evidence (README.md, "Refusals and warnings")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from evidence_case import CASE_FILE, EVIDENCE_DIR, analyzed, case_copy
from partial_case import PARTIAL_DIR, partial_analyzed, partial_case

from forensics import pipeline
from forensics.case import load_case
from forensics.cli import app
from forensics.engines import DuckDBEngine
from forensics.errors import ForensicsError
from forensics.render import headline

# what the fixture's logs hold (README "Refusals and warnings"): 27 loaded requests, model m
# 26 from b04 00:01 to a13 06:01, model other 1 (a14 00:30)
HELD = (
    "the logs hold 27 request(s) from 2026-09-01T00:01:00Z to 2026-09-01T06:01:00Z, by model: "
    "m 26 (2026-09-01T00:01:00Z .. 2026-09-01T06:01:00Z), "
    "other 1 (2026-09-01T00:30:00Z .. 2026-09-01T00:30:00Z)"
)


def _one_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, output
    return lines[0]


@pytest.fixture
def db(tmp_path, runner) -> Path:
    """Both sources of the fixture ingested into a case database."""
    path = tmp_path / "case.duckdb"
    for log in ("a", "b"):
        result = runner.invoke(
            app,
            [
                "ingest",
                str(EVIDENCE_DIR / f"{log}.jsonl"),
                "--db",
                str(path),
                "--mapping",
                str(EVIDENCE_DIR / f"{log}.mapping.toml"),
            ],
        )
        assert result.exit_code == 0, result.output
    return path


def _analyze(runner, case: Path, db: Path, out: Path, *extra: str):
    return runner.invoke(app, ["analyze", str(case), "--db", str(db), "--out", str(out), *extra])


# --- no request in scope ----------------------------------------------------------------------


def test_analyze_refuses_a_models_typo_naming_the_models_the_logs_hold(runner, tmp_path, db):
    case = case_copy(tmp_path, replace=('models = ["m"]', 'models = ["m-typo"]'))
    result = _analyze(runner, case, db, tmp_path / "out")
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert (
        "no request of the case's models (m-typo) in the window 2026-09-01T00:00:00Z .. "
        f"2026-09-01T06:00:00Z; {HELD}; check models and [window]" in line
    )
    assert "--allow-empty" in line
    assert not (tmp_path / "out" / "summary.json").exists()


def test_analyze_refuses_a_window_in_the_wrong_year(runner, tmp_path, db):
    case = case_copy(
        tmp_path,
        replace=(
            'start = "2026-09-01T00:00:00Z"\nend = "2026-09-01T06:00:00Z"',
            'start = "2025-09-01T00:00:00Z"\nend = "2025-09-01T06:00:00Z"',
        ),
    )
    result = _analyze(runner, case, db, tmp_path / "out")
    assert result.exit_code == 2
    assert f"in the window 2025-09-01T00:00:00Z .. 2025-09-01T06:00:00Z; {HELD}" in _one_line(
        result.output
    )


def test_allow_empty_accepts_a_deliberate_zero_and_says_so(runner, tmp_path, db):
    case = case_copy(tmp_path, replace=('models = ["m"]', 'models = ["m-typo"]'))
    result = _analyze(runner, case, db, tmp_path / "out", "--allow-empty")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["exposure_count"] == 0
    assert summary["warnings"][0].startswith("no request of the case's models (m-typo)")
    assert summary["warnings"][0].endswith(": the count of zero was accepted")
    # q1 (invalid JSON) could still be anything; q5 and q9 are of model m, not m-typo
    assert summary["exposure_range"] == {
        "min": 0,
        "likely": 0,
        "max": 1,
        "contributions": [{"category": "quarantined", "direction": "max", "requests": 1}],
    }
    assert "warning: no request of the case's models (m-typo)" in result.output


def test_the_library_refuses_too_naming_allow_empty_as_a_keyword(tmp_path):
    case = load_case(case_copy(tmp_path, replace=('models = ["m"]', 'models = ["m-typo"]')))
    with DuckDBEngine() as engine:
        pipeline.ingest_sources(engine, case)
        with pytest.raises(ForensicsError, match="give allow_empty= to accept") as caught:
            pipeline.analyze_case(engine, case)
        assert caught.value.exit_code == 2
        summary, _ = pipeline.analyze_case(engine, case, allow_empty=True)
    assert summary["exposure_count"] == 0


# --- a [[source]] the database lacks ----------------------------------------------------------


@pytest.fixture
def db_a_only(tmp_path, runner) -> Path:
    path = tmp_path / "a-only.duckdb"
    result = runner.invoke(
        app,
        [
            "ingest",
            str(EVIDENCE_DIR / "a.jsonl"),
            "--db",
            str(path),
            "--mapping",
            str(EVIDENCE_DIR / "a.mapping.toml"),
        ],
    )
    assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize("command", ["analyze", "notify", "report"])
def test_a_source_missing_from_the_database_is_refused_naming_the_file(
    runner, tmp_path, db_a_only, command
):
    result = runner.invoke(
        app, [command, str(CASE_FILE), "--db", str(db_a_only), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert f"[[source]] {EVIDENCE_DIR / 'b.jsonl'} is not in the case database's inputs" in line
    assert f"(it holds 1 input(s): {EVIDENCE_DIR / 'a.jsonl'})" in line
    assert "forensics ingest" in line


def test_a_moved_copy_of_a_source_is_found_by_its_sha256(runner, tmp_path, db):
    case = case_copy(tmp_path, replace=('path = "b.jsonl"', 'path = "b-renamed.jsonl"'))
    shutil.copy(EVIDENCE_DIR / "b.jsonl", case.parent / "b-renamed.jsonl")
    result = _analyze(runner, case, db, tmp_path / "out")
    assert result.exit_code == 0, result.output


BLAST_DIR = Path(__file__).parent / "fixtures" / "blast_radius"


def _blast_run(tmp_path: Path) -> tuple[Path, Path]:
    """tests/fixtures/blast_radius copied and run: (the case file, the case database). Its
    engine logs are a folder source (`path = "engine"`, profile sglang: engine/edge-1.log)."""
    folder = tmp_path / "case"
    shutil.copytree(BLAST_DIR, folder)
    pipeline.run(folder / "incident.toml", tmp_path / "run")
    return folder / "incident.toml", tmp_path / "run" / pipeline.CASE_DB


def test_an_engine_log_of_a_folder_source_changed_since_ingest_is_refused(runner, tmp_path):
    """The engine logs' [[source]] is a folder: its files are those ingest read from it (the
    folder's SGLang logs), and one changed since ingest is refused like a gateway log (a line
    appended to engine/edge-1.log), with the engine logs' fix: a new database."""
    case, db = _blast_run(tmp_path)
    log = case.parent / "engine" / "edge-1.log"
    with log.open("a", encoding="utf-8") as f:
        f.write("one more line\n")
    result = _analyze(runner, case, db, tmp_path / "out")
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert f"[[source]] file {log} changed since it was ingested" in line
    assert "ingest the case's logs into a new --db (forensics run does)" in line


def test_a_moved_folder_of_engine_logs_is_still_the_cases(runner, tmp_path):
    """engine/ renamed to engine-moved/ after the run (the case file naming the new folder):
    its log is a moved copy of an input, found by its sha256, so no input is left out and the
    blast radius still takes m-edge's pool from it (README: 3 over capacity, 1 unknown)."""
    case, db = _blast_run(tmp_path)
    (case.parent / "engine").rename(case.parent / "engine-moved")
    text = case.read_text(encoding="utf-8").replace('path = "engine"', 'path = "engine-moved"')
    case.write_text(text, encoding="utf-8")
    result = _analyze(runner, case, db, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "no [[source]] of the case file names" not in result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    edge = next(m for m in summary["blast_radius"] if m["model"] == "m-edge")
    assert (edge["over_capacity"], edge["unknown_capacity"]) == (3, 1)


# --- an input that loads no record ------------------------------------------------------------


REASON = "implausible epoch ts for unit ms (not within 2000-2100 UTC)"


def _ingest_relative(runner, db: Path, *extra: str):
    return runner.invoke(
        app,
        [
            "ingest",
            str(EVIDENCE_DIR / "relative.jsonl"),
            "--db",
            str(db),
            "--mapping",
            str(EVIDENCE_DIR / "relative.mapping.toml"),
            *extra,
        ],
    )


def test_ingest_refuses_an_input_that_loads_no_record_naming_its_top_reasons(runner, tmp_path):
    result = _ingest_relative(runner, tmp_path / "case.duckdb")
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert (
        f"{EVIDENCE_DIR / 'relative.jsonl'}: loads no record: 3 of 3 record(s) quarantined "
        f"(top reasons: {REASON} 3); fix the mapping" in line
    )
    assert "--allow-empty" in line
    assert not (tmp_path / "case.duckdb").exists()  # nothing written


def test_ingest_allow_empty_loads_it_with_its_quarantine_rows_and_a_warning(runner, tmp_path):
    result = _ingest_relative(runner, tmp_path / "case.duckdb", "--allow-empty")
    assert result.exit_code == 0, result.output
    assert "warning: " in result.output and "loads no record" in result.output
    with DuckDBEngine(tmp_path / "case.duckdb") as engine:
        assert engine.rows("SELECT reason, count(*) FROM quarantine GROUP BY ALL") == [(REASON, 3)]


def test_run_refuses_it_too_and_leaves_out_as_it_was(runner, tmp_path):
    case = case_copy(
        tmp_path,
        replace=(
            'path = "b.jsonl"\nmapping = "b.mapping.toml"',
            'path = "relative.jsonl"\nmapping = "relative.mapping.toml"',
        ),
    )
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(case), "--out", str(out)])
    assert result.exit_code == 2
    assert "loads no record: 3 of 3 record(s) quarantined" in _one_line(result.output)
    assert not out.exists()


def test_ingest_prints_each_inputs_top_three_quarantine_reasons(runner, tmp_path):
    result = runner.invoke(
        app,
        [
            "ingest",
            str(EVIDENCE_DIR / "a.jsonl"),
            "--db",
            str(tmp_path / "case.duckdb"),
            "--mapping",
            str(EVIDENCE_DIR / "a.mapping.toml"),
        ],
    )
    assert result.exit_code == 0, result.output
    # 12 quarantined: conflicting duplicate 3, unparsable time ts 3, non-numeric token count
    # prompt_tokens 2, then four reasons of 1 each
    assert (
        f"quarantined in {EVIDENCE_DIR / 'a.jsonl'}: conflicting duplicate 3; unparsable time "
        "ts 3; non-numeric token count prompt_tokens 2 (of 12)"
    ) in result.output.replace("\n", " ").replace("  ", " ")


def test_run_prints_the_top_reasons_of_each_input_before_the_headline(runner, tmp_path):
    result = runner.invoke(app, ["run", str(CASE_FILE), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    reasons = result.output.index(f"quarantined in {EVIDENCE_DIR / 'a.jsonl'}: ")
    assert reasons < result.output.index("exposed responses: 10 (range 6-15")


# --- case-file ids that match nothing ---------------------------------------------------------

GHOST = (
    "[[exclude]] internal: 1 account(s) with no request of the case's models in the window: "
    "acct-ghost"
)
DC9 = (
    "[[capacity]] entry 4 (decode, nodes 'dc-9') matches no decode node of the case's requests "
    "in the window (nodes seen: dc-1)"
)


@pytest.fixture(scope="module")
def run_out(tmp_path_factory) -> tuple[Path, str]:
    from typer.testing import CliRunner

    out = tmp_path_factory.mktemp("run")
    result = CliRunner().invoke(app, ["run", str(CASE_FILE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


@pytest.mark.parametrize("warning", [GHOST, DC9])
def test_an_id_matching_nothing_is_a_warning_in_summary_headline_and_report(run_out, warning):
    out, output = run_out
    assert warning in json.loads((out / "summary.json").read_text())["warnings"]
    assert f"warning: {warning}" in output
    body = (out / "report.html").read_text()
    assert warning.replace("'", "&#39;") in body[: body.index("<script>")]


def test_the_headline_shows_each_summary_warning_once(run_out):
    _, output = run_out
    assert output.count(f"warning: {GHOST}") == 1


def test_summary_warnings_name_no_command_line_option_or_library_term(run_out):
    out, _ = run_out
    for warning in json.loads((out / "summary.json").read_text())["warnings"]:
        assert "--" not in warning and "\u27e6" not in warning, warning


def test_a_source_with_no_record_in_the_window_is_a_warning(tmp_path):
    case = case_copy(
        tmp_path,
        replace=('end = "2026-09-01T06:00:00Z"', 'end = "2026-09-01T00:30:00Z"'),
    )
    engine, summary = analyzed(case)
    engine.close()
    # in [00:00, 00:30) a.jsonl holds nothing (a01 and a14 are at 00:30): all 21 of its
    # records lie outside; b.jsonl holds b04 only: 5 of its 6 (83.3%) lie outside
    check = "check the mapping's time unit, origin and zone against the case's [window]"
    assert (
        "[[source]] a.jsonl: no record in the window; 21 of its 21 loaded record(s) (100.0%) "
        "lie outside the window, its records running from 2026-09-01T00:30:00Z to "
        f"2026-09-01T06:01:00Z: {check}"
    ) in summary["warnings"]
    assert (
        "[[source]] b.jsonl: 5 of its 6 loaded record(s) (83.3%) lie outside the window, its "
        f"records running from 2026-09-01T00:01:00Z to 2026-09-01T03:40:00Z: {check}"
    ) in summary["warnings"]


def test_pipeline_ingest_sources_returns_each_inputs_reasons():
    with DuckDBEngine() as engine:
        loaded = pipeline.ingest_sources(engine, load_case(CASE_FILE))
    assert [(Path(s.path).name, s.quarantined, s.reasons) for s in loaded.inputs] == [
        (
            "a.jsonl",
            12,
            (
                ("conflicting duplicate", 3),
                ("unparsable time ts", 3),
                ("non-numeric token count prompt_tokens", 2),
            ),
        ),
        ("b.jsonl", 0, ()),
    ]


# --- partial faults (tests/fixtures/partial, README.md) ------------------------------------


def test_inputs_the_case_does_not_name_are_left_out_and_named_in_a_warning():
    # named.jsonl gives 3 exposed; another case's other.jsonl (7 exposed, a torn line) and an
    # SGLang log pair in the same database are not the case's: 3, range 3-3, no engine figures
    engine, summary, warnings = partial_analyzed(partial_case("named"), others=True)
    engine.close()
    assert summary["exposure_count"] == 3
    assert summary["exposure_range"] == {"min": 3, "likely": 3, "max": 3, "contributions": []}
    assert summary["ingest"] == {
        "rows_read": 5,
        "rows_loaded": 5,
        "duplicates": 0,
        "quarantined": 0,
    }
    assert [i["path"] for i in summary["inputs"]] == ["named.jsonl"]
    assert summary.get("engine_signature") is None
    assert (
        "the case database holds 3 input(s) that no [[source]] of the case file names, left out "
        "of every figure: other.jsonl, ../sglang/0.5.18/decode-0.log, "
        "../sglang/0.5.18/prefill-0.log (name them in a [[source]] to count them)"
    ) in warnings


@pytest.fixture
def named_db(tmp_path, runner) -> Path:
    """named.jsonl of tests/fixtures/partial ingested into a case database."""
    path = tmp_path / "named.duckdb"
    result = runner.invoke(
        app,
        [
            "ingest",
            str(PARTIAL_DIR / "named.jsonl"),
            "--db",
            str(path),
            "--mapping",
            str(PARTIAL_DIR / "gateway.mapping.toml"),
        ],
    )
    assert result.exit_code == 0, result.output
    return path


def test_a_mistyped_model_among_several_is_refused_naming_the_closest_model(
    runner, tmp_path, named_db
):
    result = _analyze(runner, partial_case("models"), named_db, tmp_path / "out")
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert (
        "no request of the case's model 'glm-5.3-fp8' in the window 2026-09-01T00:00:00Z .. "
        "2026-09-01T06:00:00Z; the closest models the logs hold: 'glm-5.3' 4 "
        "(2026-09-01T01:00:00Z .. 2026-09-01T04:00:00Z); correct models in the case file"
    ) in line
    assert "--allow-empty" in line
    assert not (tmp_path / "out" / "summary.json").exists()


def test_allow_empty_accepts_a_model_with_no_request_and_says_so(runner, tmp_path, named_db):
    result = _analyze(runner, partial_case("models"), named_db, tmp_path / "out", "--allow-empty")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["exposure_count"] == 3  # glm-5.3's g1, g2, g3
    assert any(
        w.startswith("no request of the case's model 'glm-5.3-fp8'")
        and w.endswith(": the count of zero for it was accepted")
        for w in summary["warnings"]
    )


def test_a_capacity_timeline_covering_no_request_in_scope_is_refused(runner, tmp_path, named_db):
    result = _analyze(runner, partial_case("nocover"), named_db, tmp_path / "out")
    assert result.exit_code == 2
    assert (
        "no request in scope has a prefill [[capacity]] entry in force: entry 1 (nodes 'pf-*', "
        "from 2025-09-01T00:00:00Z to 2025-09-02T00:00:00Z) matches none of the 4 request(s) "
        "in band unknown_capacity, whose prefill nodes are pf-1 (2), pf-2 (2) and times run "
        "from 2026-09-01T01:00:00Z to 2026-09-01T04:00:00Z"
    ) in _one_line(result.output)
    assert not (tmp_path / "out" / "summary.json").exists()


def test_the_headline_says_how_many_requests_in_scope_lack_a_capacity():
    # halfcover.toml: only pf-1 has an entry: g3, g4 (pf-2) have none; range 2-3 (g3 800)
    engine, summary, _ = partial_analyzed(partial_case("halfcover"))
    engine.close()
    lines = headline.headline(summary).splitlines()
    # named.jsonl has no record at 00:00 and 05:00 (coverage gaps): the maximum may be higher
    assert (
        "exposed responses: 2 (range 2-3; the maximum may be higher: 2 hours of the window with "
        "no or few records (named.jsonl))"
    ) in lines
    assert "in scope: 4 of 5 loaded requests; 2 with no [[capacity]] entry in force" in lines


def test_over_capacity_requests_only_with_other_statuses_say_the_zero():
    # created.toml: 3 over capacity with 201, 1 with 500; success_status [200]: exposure 0
    engine, summary, warnings = partial_analyzed(partial_case("created"))
    engine.close()
    assert summary["exposure_count"] == 0
    assert (
        "no over-capacity request has a status in success_status [200]: the 4 over-capacity "
        "request(s) have status 201 (3), 500 (1); if any of these delivered a response, add it "
        "to success_status"
    ) in warnings
