"""Engine logs under faults (tests/fixtures/sglang/faults/, every figure derived by hand in
its README.md): a torn line, pool lines that disagree, a late rank, two servers of one node
id, impossible figures and a log that goes back in time never move the count; the same
cases give the same summary on DuckDB and Spark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import pipeline
from forensics.cli import app
from forensics.engines import DuckDBEngine
from forensics.errors import InputError

FAULTS = Path(__file__).parent / "fixtures" / "sglang" / "faults"
SPAN = ("role", "node", "tokens", "reject_from", "context_len", "start", "end")


def _copy(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(FAULTS / name, folder)
    return folder


def _spans(result: pipeline.CapacityResult) -> list[tuple[object, ...]]:
    return [tuple(e[k] for k in SPAN) for e in result.entries]


def _derive(folder: Path, logs: str = "engine", out: str = "capacity.toml", **kw):
    """`forensics capacity LOGS --out OUT` in the case folder, as the case file expects."""
    return pipeline.capacity(
        [str(folder / logs)], folder / f"{logs}.duckdb", out=folder / out, **kw
    )


def _summary(folder: Path, case: str = "incident.toml", engine: str = "duckdb") -> dict:
    out = folder / f"out-{Path(case).stem}-{engine}"
    pipeline.run(folder / case, out, engine=engine)
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def _exposed(folder: Path, case: str = "incident.toml") -> list[str]:
    out = folder / f"out-{Path(case).stem}-duckdb"
    rows = (out / "exposed_requests.csv").read_text(encoding="utf-8").splitlines()[1:]
    return sorted(r.split(",")[0] for r in rows)


# --- 1. a torn max_total_num_tokens line -----------------------------------------------------


def test_a_torn_pool_line_is_quarantined_and_the_allocation_lines_give_the_pool(tmp_path):
    """README torn/: line 4 ends the file inside `max_total_num_tokens=15`; the pool is the
    1,500 tokens of lines 2-3, without reject_from (context_len was on the cut line)."""
    folder = _copy(tmp_path, "torn")
    result = _derive(folder)
    assert _spans(result) == [
        ("prefill", "prefill-1", 1500, None, None, "2026-09-01T00:00:20Z", None)
    ]
    (stats,) = result.inputs
    assert (stats.rows_read, stats.rows_loaded, stats.quarantined) == (4, 3, 1)
    with DuckDBEngine(folder / "engine.duckdb") as engine:
        assert engine.rows("SELECT source, row, reason FROM quarantine") == [
            (
                str(folder / "engine" / "prefill-1.log"),
                4,
                "line cut mid-field: max_total_num_tokens is not followed by its separator",
            )
        ]
    assert "max_total_num_tokens line was quarantined" in result.entries[0]["note"]


def test_a_torn_pool_line_never_counts_requests_that_fit_the_pool(tmp_path):
    """README torn/: t1 (1,200) and t2 (1,400) fit the 1,500-token pool, t3 (1,600) does not:
    1 exposed (read as 15 tokens, all three were)."""
    folder = _copy(tmp_path, "torn")
    _derive(folder)
    summary = _summary(folder)
    assert (summary["exposure_count"], summary["bands"]["fits"]) == (1, 2)
    assert _exposed(folder) == ["t3"]
    assert (
        "engine logs: engine/prefill-1.log:4: startup line quarantined: line cut mid-field: "
        "max_total_num_tokens is not followed by its separator"
    ) in summary["warnings"]


# --- 1. pool lines of one start that disagree ------------------------------------------------


def test_pool_lines_that_disagree_are_refused_naming_both_lines(tmp_path):
    """README disagree/: lines 2-3 allocate 1,400 tokens, line 4 says 1,500."""
    folder = _copy(tmp_path, "disagree")
    with pytest.raises(InputError) as info:
        _derive(folder)
    log = folder / "engine" / "prefill-3.log"
    assert (
        f"its pool figures disagree, #tokens: 1400 ({log}:2) and max_total_num_tokens=1500 "
        f"({log}:4)"
    ) in info.value.what
    assert not (folder / "capacity.toml").exists()


def test_pool_lines_that_disagree_are_a_warning_of_the_case(tmp_path):
    """README disagree/: the responder's own entry (1,400, reject_from 1,394) decides: d1
    (1,300) fits, d2 (1,450) is exposed; the warning names both lines."""
    folder = _copy(tmp_path, "disagree")
    summary = _summary(folder)
    assert summary["exposure_count"] == 1
    assert _exposed(folder) == ["d2"]
    assert (
        "engine logs: prefill-3 start at 2026-09-01T00:00:20Z: its pool figures disagree, "
        "#tokens: 1400 (engine/prefill-3.log:2) and max_total_num_tokens=1500 "
        "(engine/prefill-3.log:4); one start has one pool, so no [[capacity]] entry is "
        "derived for it: write it by hand from the line that belongs to this server"
    ) in summary["warnings"]


# --- 2. a late rank ------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["after", "before"])
def test_a_late_ranks_allocation_line_opens_no_start(tmp_path, order):
    """README late-rank/: TP1's allocation line just after (or before) TP0's capacity line
    belongs to the one start: 500 tokens, reject_from min(1023, 499) - 5 = 494, open."""
    folder = _copy(tmp_path, "late-rank")
    result = _derive(folder, order, f"capacity-{order}.toml")
    assert _spans(result) == [
        ("prefill", "prefill-4", 500, 494, 1024, "2026-09-01T00:00:20Z", None)
    ]


@pytest.mark.parametrize("order", ["after", "before"])
def test_a_497_token_prompt_is_exposed_whatever_the_order_of_the_ranks_lines(tmp_path, order):
    """README late-rank/: l1 (300) and l2 (493) are below 494, l3 (497) is refused by the
    scheduler and served from the placeholder: 1 exposed in both orders."""
    folder = _copy(tmp_path, "late-rank")
    _derive(folder, order, f"capacity-{order}.toml")
    summary = _summary(folder, f"incident-{order}.toml")
    assert summary["exposure_count"] == 1
    assert _exposed(folder, f"incident-{order}.toml") == ["l3"]


# --- 3. two servers of one node id ---------------------------------------------------------


def test_two_servers_of_one_node_id_whose_lines_interleave_are_refused(tmp_path):
    """README clash/: rackA/prefill-2.log (00:00:00 .. 02:00:00) and rackB/prefill-2.log
    (01:00:00 .. 02:00:00) both start a server as node prefill-2."""
    folder = _copy(tmp_path, "clash")
    with pytest.raises(InputError) as info:
        _derive(folder)
    a, b = (folder / "engine" / rack / "prefill-2.log" for rack in ("rackA", "rackB"))
    assert info.value.where == f"{a}, {b}"
    assert info.value.what.startswith(
        "both logs give node 'prefill-2' and their lines interleave in time "
        "(2026-09-01T00:00:00Z .. 2026-09-01T02:00:00Z and 2026-09-01T01:00:00Z .. "
        "2026-09-01T02:00:00Z)"
    )
    assert "'{folder}/{name}'" in info.value.line()
    with DuckDBEngine(folder / "engine.duckdb") as engine:  # nothing of either stays
        assert not engine.table_exists("inputs")


def test_two_servers_of_one_node_id_are_refused_whatever_lines_show_the_first_running(tmp_path):
    """README clash-late/: rackA's last lines (a `Prefill batch` at 01:30, an access line at
    02:00) are no evidence record, yet they prove it running 00:00:00 .. 02:00:00 while rackB
    started at 01:00:00: refused, naming both files."""
    folder = _copy(tmp_path, "clash-late")
    with pytest.raises(InputError) as info:
        _derive(folder)
    a, b = (folder / "engine" / rack / "prefill-2.log" for rack in ("rackA", "rackB"))
    assert info.value.where == f"{a}, {b}"
    assert info.value.what.startswith(
        "both logs give node 'prefill-2' and their lines interleave in time "
        "(2026-09-01T00:00:00Z .. 2026-09-01T02:00:00Z and 2026-09-01T01:00:00Z .. "
        "2026-09-01T02:00:00Z)"
    )


def test_a_node_rule_keeps_two_servers_apart(tmp_path):
    """README clash/: with `{folder}/{name}` each rack is its own node: 400 tokens (reject_from
    min(4095, 399) - 5 = 394) and 3,000 (min(4095, 2999) - 5 = 2994), both open."""
    folder = _copy(tmp_path, "clash")
    result = _derive(folder, node="{folder}/{name}")
    assert _spans(result) == [
        ("prefill", "rackA/prefill-2", 400, 394, 4096, "2026-09-01T00:00:20Z", None),
        ("prefill", "rackB/prefill-2", 3000, 2994, 4096, "2026-09-01T01:00:20Z", None),
    ]


def test_two_servers_kept_apart_judge_each_request_by_its_own_pool(tmp_path):
    """README clash/: c1 (1,000 on rackA at 02:00) is over rackA's 394, c2 (1,000 on rackB)
    fits rackB's 2,994, c3 (350 on rackA) fits: 1 exposed (merged, c1 fitted 3,000)."""
    folder = _copy(tmp_path, "clash")
    _derive(folder, node="{folder}/{name}")
    summary = _summary(folder)
    assert summary["exposure_count"] == 1
    assert _exposed(folder) == ["c1"]


def test_rotated_logs_of_one_node_still_merge(tmp_path):
    """README rotated/: day1 (00:00:00 .. 00:30:00) and day2 (01:00:00 .. 01:30:00) follow
    each other: one node, two spans (800 / 794, then 1,600 / 1,594)."""
    folder = _copy(tmp_path, "rotated")
    result = pipeline.capacity([str(folder)], folder / "r.duckdb")
    assert _spans(result) == [
        ("prefill", "prefill-5", 800, 794, 4096, "2026-09-01T00:00:20Z", "2026-09-01T01:00:20Z"),
        ("prefill", "prefill-5", 1600, 1594, 4096, "2026-09-01T01:00:20Z", None),
    ]


def test_a_launch_run_into_the_line_before_it_still_ends_the_span_before_it(tmp_path):
    """README run-in/: line 4 is a `Prefill batch` line cut short and the 01:00:00 server_args
    line run into it; the launch it marks has only line 5 (cut): the 1,500 span (reject_from
    1,494) ends at 01:00:20, and the file says why above its end. q1 1,200 fits, q2 1,600 is
    exposed, q3 1,800 at 02:00 matches no entry: 1 exposed, range 1-2."""
    folder = _copy(tmp_path, "run-in")
    result = _derive(folder)
    assert _spans(result) == [
        (
            "prefill",
            "prefill-8",
            1500,
            1494,
            4096,
            "2026-09-01T00:00:20Z",
            "2026-09-01T01:00:20Z",
        ),
    ]
    log = folder / "engine" / "prefill-8.log"
    assert [(f["kind"], f["source_row"]) for f in result.faults] == [
        ("quarantined", 4),
        ("no_capacity", 5),
        ("quarantined", 5),
    ]
    assert result.inputs[0].rows_read == 5 and result.inputs[0].quarantined == 2
    toml = (folder / "capacity.toml").read_text(encoding="utf-8")
    assert (
        "# ends here, where the logs show: engine logs: prefill-8 from 2026-09-01T01:00:20Z: a "
        "launch whose server_args line was quarantined, with no capacity line that could be "
        f"read ({log}:5)"
    ) in toml
    assert 'end = "2026-09-01T01:00:20Z"' in toml
    summary = _summary(folder)
    assert summary["exposure_count"] == 1
    assert (summary["exposure_range"]["min"], summary["exposure_range"]["max"]) == (1, 2)
    assert _exposed(folder) == ["q2"]


# --- 4. impossible figures -----------------------------------------------------------------


def test_impossible_figures_are_quarantined_naming_the_line(tmp_path, runner):
    """README absurd/: line 5 (a pool of 0) and line 8 (limit min(4, 1999) - 5 = -1) are
    quarantined; the start of line 4 has no pool, the one of line 6 takes line 7's 2,000."""
    folder = _copy(tmp_path, "absurd")
    res = runner.invoke(
        app,
        [
            "capacity",
            str(folder / "engine"),
            "--db",
            str(folder / "c.duckdb"),
            "--out",
            str(folder / "capacity.toml"),
        ],
    )
    assert res.exit_code == 0, res.output
    log = folder / "engine" / "prefill-6.log"
    assert (
        f"  fault: engine logs: {log}:5: startup line quarantined: impossible figure: a KV "
        "pool of 0 tokens (SGLang does not start with one)"
    ) in res.stdout
    assert (
        f"  fault: engine logs: {log}:8: startup line quarantined: impossible figures: the "
        "admission limit min(context_len - 1, max_total_num_tokens - 1) - 5 = -1 admits no "
        "prompt (SGLang does not start: Memory pool size is too small)"
    ) in res.stdout
    assert (
        "  fault: engine logs: prefill-6 from 2026-09-01T01:00:30Z: none of this start's "
        f"capacity lines could be read ({log}:5 was quarantined)"
    ) in res.stdout
    result = pipeline.capacity([str(folder / "engine")], folder / "c.duckdb")
    assert _spans(result) == [
        ("prefill", "prefill-6", 1000, 994, 4096, "2026-09-01T00:00:20Z", "2026-09-01T01:00:30Z"),
        ("prefill", "prefill-6", 2000, None, None, "2026-09-01T02:00:20Z", None),
    ]
    assert all(e["reject_from"] is None or e["reject_from"] > 0 for e in result.entries)


def test_requests_of_a_start_with_impossible_figures_match_no_capacity(tmp_path):
    """README absurd/: g1 (990) fits 994, g2 (996) is exposed, g3 (1,200 at 01:30) has no
    capacity (a max-side request: above the smallest pool, 1,000), g4 (1,500) fits 2,000,
    g5 (2,500) is exposed: 2 exposed, range 2-3."""
    folder = _copy(tmp_path, "absurd")
    _derive(folder)
    summary = _summary(folder)
    assert (summary["exposure_count"], summary["bands"]["unknown_capacity"]) == (2, 1)
    assert (summary["exposure_range"]["min"], summary["exposure_range"]["max"]) == (2, 3)
    assert _exposed(folder) == ["g2", "g5"]


# --- 5. a log that goes back in time -------------------------------------------------------


def test_a_log_that_goes_back_in_time_is_reported_with_both_line_numbers(tmp_path, runner):
    """README backwards/: line 5 (00:00:00) follows line 4 (15:00:00)."""
    folder = _copy(tmp_path, "backwards")
    res = runner.invoke(app, ["capacity", str(folder / "engine"), "--db", str(folder / "c.duckdb")])
    assert res.exit_code == 0, res.output
    assert (
        f"  fault: engine logs: {folder / 'engine' / 'prefill-7.log'}: line 5 "
        "(2026-09-01T00:00:00Z) is more than a second before line 4 above it "
        "(2026-09-01T15:00:00Z): the log goes back in time (rotated logs joined out of "
        "order?); its spans are built in time order"
    ) in res.stdout


def test_spans_of_a_log_out_of_order_are_built_in_time_order(tmp_path):
    """README backwards/: 1,000 tokens from 00:00:20 to 14:00:20 (reject_from 994, printed on
    line 8), then 2,000 (1,994); k1 (1,500 at 01:00) exposed, k2 (1,500 at 15:00) fits."""
    folder = _copy(tmp_path, "backwards")
    result = _derive(folder)
    assert _spans(result) == [
        ("prefill", "prefill-7", 1000, 994, 4096, "2026-09-01T00:00:20Z", "2026-09-01T14:00:20Z"),
        ("prefill", "prefill-7", 2000, 1994, 4096, "2026-09-01T14:00:20Z", None),
    ]
    assert _summary(folder)["exposure_count"] == 1
    assert _exposed(folder) == ["k1"]


# --- all cases in one, on DuckDB and on Spark ---------------------------------------------

DERIVED = [  # (logs, out, options) of forensics capacity, relative to the faults folder
    ("torn/engine", "torn/capacity.toml", {}),
    ("late-rank/after", "late-rank/capacity-after.toml", {}),
    ("clash/engine", "clash/capacity.toml", {"node": "{folder}/{name}"}),
    ("absurd/engine", "absurd/capacity.toml", {}),
    ("backwards/engine", "backwards/capacity.toml", {}),
    ("run-in/engine", "run-in/capacity.toml", {}),
]


@pytest.fixture
def all_cases(tmp_path) -> Path:
    """A copy of the faults folder with the capacity files all.toml takes, derived, and its
    case database (with its Parquet export under store/)."""
    from forensics import ingest
    from forensics.case import load_case

    folder = tmp_path / "faults"
    shutil.copytree(FAULTS, folder)
    for i, (logs, out, kw) in enumerate(DERIVED):
        pipeline.capacity([str(folder / logs)], tmp_path / f"c{i}.duckdb", out=folder / out, **kw)
    with DuckDBEngine(folder / "case.duckdb") as engine:
        pipeline.ingest_sources(engine, load_case(folder / "all.toml"))
        ingest.export_parquet(engine, folder / "store" / "requests")
    return folder


def test_all_cases_in_one_count_what_each_case_counts(all_cases):
    """README "All cases in one": t3, d2, l3, c1, g2, g5, k1, q2 exposed (8); g3 and q3 have
    no capacity (max side): range 8-10; the warnings hold each case's faults."""
    pipeline.analyze(all_cases / "all.toml", all_cases / "case.duckdb", all_cases / "duckdb")
    summary = json.loads((all_cases / "duckdb" / "summary.json").read_text(encoding="utf-8"))
    assert summary["exposure_count"] == 8
    assert (summary["exposure_range"]["min"], summary["exposure_range"]["max"]) == (8, 10)
    rows = (all_cases / "duckdb" / "exposed_requests.csv").read_text().splitlines()[1:]
    assert sorted(r.split(",")[0] for r in rows) == ["c1", "d2", "g2", "g5", "k1", "l3", "q2", "t3"]
    faults = [w for w in summary["warnings"] if w.startswith("engine logs: ")]
    # torn line 4, disagree, absurd: no capacity from 01:00:30, lines 5 and 8; backwards;
    # run-in: lines 4 and 5, no capacity from 01:00:20
    assert len(faults) == 9


@pytest.mark.spark
def test_all_cases_in_one_give_the_same_summary_on_spark(all_cases):
    """The summary (counts, range, warnings) is byte-identical on both engines: the case
    database analysed in DuckDB, and its Parquet export on Spark."""
    from forensics.engines.spark import session

    spark = session("local[2]")
    try:
        store = all_cases / "store" / "requests"
        pipeline.analyze(all_cases / "all.toml", all_cases / "case.duckdb", all_cases / "duckdb")
        pipeline.analyze(all_cases / "all.toml", store, all_cases / "spark", engine="spark")
    finally:
        spark.stop()
    duck = (all_cases / "duckdb" / "summary.json").read_bytes()
    assert (all_cases / "spark" / "summary.json").read_bytes() == duck
    assert json.loads(duck)["exposure_count"] == 8
