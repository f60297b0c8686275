"""Repeated request_ids and changed files under the direct load (outcomes derived by hand).

Ingest loads every valid record straight from the source and settles only the ids that
repeat (or were loaded before) by content; these cases are the ones that design could get
wrong: a repeat whose first record is invalid, a file that changed at the same path (refused,
or replaced under force), repeats across the inputs of one call, a mapping without request_id.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from dbrows import rows as db_rows
from dbrows import write_parquet

from forensics.errors import InputError
from forensics.ingest import ingest

HEADER = (
    "request_id,ts,account_id,model,prompt_tokens,completion_tokens,status,"
    "prefill_node,decode_node,ts_end"
)


def _csv(path: Path, *rows: str) -> Path:
    path.write_text(HEADER + "\n" + "".join(r + "\n" for r in rows))
    return path


def _row(rid: str, tokens: int | str = 100, ts: str = "2026-08-27T10:00:00Z") -> str:
    return f"{rid},{ts},a1,m,{tokens},10,200,p1,d1,"


def _outcomes(report) -> list[tuple[int, int, int, int]]:
    return [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs]


def test_a_repeat_whose_first_record_is_invalid_loads_the_later_valid_one(tmp_path):
    # line 2: x with negative tokens (quarantined); line 3: x valid -> loaded
    log = _csv(tmp_path / "a.csv", _row("x", -1), _row("x", 5), _row("y"))
    report = ingest([log], tmp_path / "c.duckdb", profile="canonical")
    assert _outcomes(report) == [(3, 2, 0, 1)]
    db = tmp_path / "c.duckdb"
    assert db_rows(db, "SELECT request_id, prompt_tokens, source_row FROM requests ORDER BY 1") == [
        ("x", 5, 3),
        ("y", 100, 4),
    ]
    assert db_rows(db, "SELECT row, reason FROM quarantine") == [
        (2, "negative token count prompt_tokens")
    ]


def test_repeats_keep_the_first_record_and_count_each_later_one(tmp_path):
    # x on lines 2, 3 (same), 4 (other tokens), 5 (same as 2) -> load 2, dup 3 and 5, conflict 4
    log = _csv(tmp_path / "a.csv", _row("x"), _row("x"), _row("x", 7), _row("x"), _row("z"))
    report = ingest([log], tmp_path / "c.duckdb", profile="canonical")
    assert _outcomes(report) == [(5, 2, 2, 1)]
    db = tmp_path / "c.duckdb"
    assert db_rows(db, "SELECT request_id, source_row FROM requests ORDER BY 1") == [
        ("x", 2),
        ("z", 6),
    ]
    assert db_rows(db, "SELECT row, reason FROM quarantine") == [(4, "conflicting duplicate")]


def test_a_changed_file_at_the_same_path_replaces_what_it_loaded_before_under_force(tmp_path):
    # first version: a, b, c (lines 2-4). Second version, same path: a again, b with other
    # tokens, line 4 invalid although line 4 loaded before, d new. Without force it is refused
    # (the database holds other content from the path); with force the first version's load
    # is replaced: a, b (9) and d load, line 4 is quarantined, c is gone.
    log = _csv(tmp_path / "grow.csv", _row("a"), _row("b"), _row("c"))
    db = tmp_path / "c.duckdb"
    ingest([log], db, profile="canonical")
    _csv(log, _row("a"), _row("b", 9), _row("e", "x"), _row("d"))
    with pytest.raises(InputError, match="other content loaded from this path"):
        ingest([log], db, profile="canonical")
    report = ingest([log], db, profile="canonical", force=True)
    assert _outcomes(report) == [(4, 3, 0, 1)]
    assert db_rows(db, "SELECT request_id, prompt_tokens, source_row FROM requests ORDER BY 1") == [
        ("a", 100, 2),
        ("b", 9, 3),
        ("d", 100, 5),
    ]
    assert db_rows(db, "SELECT row, reason FROM quarantine ORDER BY row") == [
        (4, "non-numeric token count prompt_tokens"),
    ]


def test_repeats_across_the_inputs_of_one_call(tmp_path):
    # one.csv: p, q. two.csv: q (same: duplicate), p (other tokens: conflict), q again, r
    one = _csv(tmp_path / "one.csv", _row("p"), _row("q"))
    two = _csv(tmp_path / "two.csv", _row("q"), _row("p", 3), _row("q"), _row("r"))
    report = ingest([one, two], tmp_path / "c.duckdb", profile="canonical")
    assert _outcomes(report) == [(2, 2, 0, 0), (4, 1, 2, 1)]
    db = tmp_path / "c.duckdb"
    assert db_rows(db, "SELECT request_id, source_row, prompt_tokens FROM requests ORDER BY 1") == [
        ("p", 2, 100),
        ("q", 3, 100),
        ("r", 5, 100),
    ]


def test_records_without_a_request_id_mapping_are_each_their_own_request(tmp_path):
    # no request_id column mapped: ids are made from the file and row; identical rows stay
    log = tmp_path / "noid.csv"
    log.write_text(
        "ts,account_id,model,prompt_tokens\n"
        "2026-08-27T10:00:00Z,a1,m,5\n"
        "2026-08-27T10:00:00Z,a1,m,5\n"
        "2026-08-27T10:00:00Z,a1,m,oops\n"
    )
    mapping = tmp_path / "noid.toml"
    mapping.write_text(
        'format = "csv"\n[fields]\nts = "ts"\naccount_id = "account_id"\nmodel = "model"\n'
        'prompt_tokens = "prompt_tokens"\n'
    )
    report = ingest([log], tmp_path / "c.duckdb", mapping=mapping)
    assert _outcomes(report) == [(3, 2, 0, 1)]
    loaded = db_rows(tmp_path / "c.duckdb", "SELECT source_row FROM requests ORDER BY 1")
    assert loaded == [(2,), (3,)]


def test_ingest_into_an_open_engine_leaves_its_optimizer_settings_as_they_were(tmp_path):
    # the direct load turns filter pushdown off for its one statement only
    from forensics.engines import DuckDBEngine
    from forensics.ingest import ingest_into

    log = _csv(tmp_path / "a.csv", _row("x"), _row("x", -1))
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        ingest_into(engine, [log], profile="canonical")
        assert engine.scalar("SELECT current_setting('disabled_optimizers')") == ""


def _row_groups(path: Path) -> int:
    """The row groups of a Parquet file, by its footer."""
    con = duckdb.connect()
    try:
        return con.execute(
            "SELECT num_row_groups FROM parquet_file_metadata($p)", {"p": str(path)}
        ).fetchall()[0][0]
    finally:
        con.close()


def _parquet(path: Path, rows: str) -> Path:
    """A Parquet file of (id, t, acct, n, lat) rows written by DuckDB from a VALUES list."""
    return write_parquet(path, f"SELECT * FROM (VALUES {rows}) AS v(id, t, acct, n, lat)")


def test_parquet_repeats_quarantine_and_sql_failures_name_the_right_rows(tmp_path):
    # the second input of the call (its rows are picked by the file's row number): by hand,
    # row 3 repeats row 1, row 7 the first input's r9 (duplicates); row 4 repeats r2 with
    # another count (conflict), row 5 has a negative count, row 6's latency overflows the
    # { sql } end time: quarantined with their raw values; rows 1 and 2 load
    t = "'2026-08-27T10:00:00Z'"
    a = _parquet(tmp_path / "a.parquet", f"('r9', {t}, 'x', 9, 10)")
    b = _parquet(
        tmp_path / "b.parquet",
        f"('r1', {t}, 'x', 5, 10), ('r2', {t}, 'x', 6, 10), ('r1', {t}, 'x', 5, 10), "
        f"('r2', {t}, 'x', 7, 10), ('r5', {t}, 'x', -1, 10), "
        f"('r6', {t}, 'x', 5, 9223372036854775807), ('r9', {t}, 'x', 9, 10)",
    )
    mapping = tmp_path / "m.toml"
    mapping.write_text(
        'format = "parquet"\n[fields]\nrequest_id = "id"\nts = "t"\naccount_id = "acct"\n'
        'model = { const = "m" }\nprompt_tokens = "n"\n'
        'ts_end = { sql = "t::TIMESTAMPTZ + to_milliseconds(lat)" }\n'
    )
    db = tmp_path / "c.duckdb"
    report = ingest([a, b], db, mapping=mapping)
    assert [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs] == [
        (1, 1, 0, 0),
        (7, 2, 2, 3),
    ]
    assert db_rows(
        db, "SELECT request_id, source, source_row, prompt_tokens FROM requests ORDER BY 1"
    ) == [
        ("r1", str(b), 1, 5),
        ("r2", str(b), 2, 6),
        ("r9", str(a), 1, 9),
    ]
    quarantined = db_rows(db, "SELECT row, reason, raw FROM quarantine ORDER BY row")
    assert [(row, reason) for row, reason, _ in quarantined] == [
        (4, "conflicting duplicate"),
        (5, "negative token count prompt_tokens"),
        (6, "sql of fields.ts_end failed on this record"),
    ]
    assert [json.loads(raw)["n"] for _, _, raw in quarantined] == [7, -1, 5]
    assert any(f"{b}: sql of fields.ts_end failed on 1 record(s)" in w and "row 6:" in w
               for w in report.warnings)  # fmt: skip


def test_a_spare_thread_only_where_a_few_row_groups_leave_cores_idle():
    from forensics.ingest.load import spare_thread

    # (row groups, threads) -> threads: each thread takes at most row_groups // threads
    assert spare_thread(5, 2) == 3  # 2, 2, 1 rather than 3 and 2
    assert spare_thread(3, 2) == 3
    assert spare_thread(7, 2) == 3  # 3, 2, 2 rather than 4 and 3
    assert spare_thread(9, 4) == 5  # at most 2 each rather than 3
    assert spare_thread(10, 8) == 10
    # they divide, are no more than the threads, are four a thread or more, or one core
    assert [spare_thread(*c) for c in ((4, 2), (1, 2), (2, 2), (8, 2), (9, 2), (3, 1))] == [
        None
    ] * 6


def test_the_ids_are_grouped_on_three_threads_where_duckdb_runs_two():
    from forensics.ingest.load import aggregate_threads

    assert aggregate_threads(2) == 3
    assert [aggregate_threads(n) for n in (1, 3, 4, 8)] == [None] * 4


def test_an_ingest_on_two_threads_finds_its_repeats_and_leaves_two_threads(tmp_path):
    from forensics.engines import DuckDBEngine
    from forensics.ingest import ingest_into
    from forensics.mapping import profile

    log = tmp_path / "one.parquet"  # one row group: no spare thread, so the keys alone raise
    write_parquet(
        log,
        "SELECT 'r' || (range % 9000) AS request_id, "
        "TIMESTAMPTZ '2026-08-27 10:00:00+00' + to_seconds(range % 9000) AS ts, "
        "'a' AS account_id, 'm' AS model, 5 + (range // 9000) * (range % 2) AS prompt_tokens "
        "FROM range(10000)",
    )
    with DuckDBEngine(tmp_path / "c.duckdb", threads=2) as engine:
        report = ingest_into(engine, [log], mapping=profile("canonical"))
        assert engine.scalar("SELECT current_setting('threads')") == 2
        conflicts = engine.scalar("SELECT count(*) FROM quarantine WHERE reason LIKE '%conflict%'")
    # rows 9000-9999 repeat the ids of rows 0-999: the even ones exactly (duplicates), the odd
    # ones with 6 prompt tokens rather than 5 (conflicts)
    (s,) = report.inputs
    assert (s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) == (10000, 9000, 500, 500)
    assert conflicts == 500


def test_a_parquet_file_of_few_row_groups_loads_on_a_spare_thread_then_restores_them(tmp_path):
    from forensics.engines import DuckDBEngine
    from forensics.ingest import ingest_into
    from forensics.ingest.inputfile import prepare
    from forensics.ingest.load import _load_threads
    from forensics.ingest.shape import shape_of
    from forensics.ingest.staging import stage
    from forensics.mapping import profile

    log = tmp_path / "five.parquet"  # 5 row groups of 2,048 rows (DuckDB's vector size)
    write_parquet(
        log,
        "SELECT 'r' || range AS request_id, TIMESTAMPTZ '2026-08-27 10:00:00+00' AS ts, "
        "'a' AS account_id, 'm' AS model, 5 AS prompt_tokens FROM range(10240)",
        "ROW_GROUP_SIZE 2048",
    )
    assert _row_groups(log) == 5
    m = profile("canonical")
    with DuckDBEngine(tmp_path / "c.duckdb", threads=2) as engine:
        p = prepare(log, m, tmp_path)
        p.table = stage(engine, p, 0, shape_of(m, engine))  # reads the row groups
        with _load_threads(engine, p):
            assert engine.scalar("SELECT current_setting('threads')") == 3
        assert engine.scalar("SELECT current_setting('threads')") == 2
        report = ingest_into(engine, [log], mapping=m)
        assert engine.scalar("SELECT current_setting('threads')") == 2
    assert [(s.rows_read, s.rows_loaded) for s in report.inputs] == [(10240, 10240)]


def test_a_file_of_fewer_row_groups_than_threads_is_read_as_row_ranges():
    from forensics.ingest.staging import MIN_RANGE_ROWS, row_ranges

    # (rows, row groups, threads, largest row group's bytes, memory limit) -> [lo, hi) ranges
    # of the file's 0-based row numbers
    mb, gb = 10**6, 15 * 10**8  # a row group of 35 MB, the default limit of 1.5 GB
    assert row_ranges(1_000_055, 1, 2, 35 * mb, gb) == [(0, 500_027), (500_027, 1_000_055)]
    assert row_ranges(1_000_000, 3, 4, 35 * mb, gb) == [
        (0, 250_000),
        (250_000, 500_000),
        (500_000, 750_000),
        (750_000, 1_000_000),
    ]
    assert row_ranges(2 * MIN_RANGE_ROWS, 1, 2, 375 * mb, gb) == [
        (0, MIN_RANGE_ROWS),
        (MIN_RANGE_ROWS, 2 * MIN_RANGE_ROWS),
    ]
    # as many row groups as threads or more, a range under DuckDB's row group size, one core,
    # or two copies of the row group over half the limit (447 MB: a 10M-row one)
    cases = (
        (1_000_000, 2, 2, 35 * mb, gb),
        (1_000_000, 5, 2, 35 * mb, gb),
        (2 * MIN_RANGE_ROWS - 1, 1, 2, 35 * mb, gb),
        (1_000_000, 1, 1, 35 * mb, gb),
        (10_000_000, 1, 2, 447 * mb, gb),
        (2 * MIN_RANGE_ROWS, 1, 2, 375 * mb + 1, gb),
    )
    assert [row_ranges(*c) for c in cases] == [[]] * 6


def test_sizes_read_as_duckdb_shows_them():
    from forensics.ingest.staging import size_bytes

    assert size_bytes("1.3 GiB") == int(1.3 * 2**30)
    assert size_bytes("512.0 MiB") == 512 * 2**20
    assert size_bytes("1000 bytes") == 1000
    assert size_bytes("18.8 GiB") == int(18.8 * 2**30)
    assert [size_bytes(t) for t in ("", "lots", "1.5 parsecs", "GiB")] == [0] * 4


def test_a_one_row_group_file_loads_as_two_ranges_each_row_once(tmp_path):
    from forensics.engines import DuckDBEngine
    from forensics.ingest import ingest_into

    # one row group of 245,767 rows (2 * 122,880 + 7), read on 2 threads as rows [0, 122,883)
    # and [122,883, 245,767) (0-based). Row 122,883, the second range's first, repeats row 0
    # (a duplicate); the last row repeats row 122,882's id, the first range's last, with
    # other tokens (a conflict, quarantined). So 245,765 loaded: source rows 1..245,767 but
    # 122,884 and 245,767, summing to 245,767 * 245,768 / 2 - 122,884 - 245,767.
    log = tmp_path / "one.parquet"
    write_parquet(
        log,
        "SELECT CASE range WHEN 122883 THEN 'r0' WHEN 245766 THEN 'r122882' "
        "ELSE 'r' || range END AS request_id, TIMESTAMPTZ '2026-08-27 10:00:00+00' AS ts, "
        "'a' AS account_id, 'm' AS model, "
        "CASE range WHEN 245766 THEN 6 ELSE 5 END AS prompt_tokens "
        "FROM range(245767) ORDER BY range",
        "ROW_GROUP_SIZE 1000000",
    )
    assert _row_groups(log) == 1
    with DuckDBEngine(tmp_path / "c.duckdb", threads=2) as engine:
        engine.execute("CALL enable_logging('QueryLog')")
        report = ingest_into(engine, [log], profile="canonical")
        views = [
            q
            for (q,) in engine.rows("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'")
            if '"_ing_src_0_rows" AS' in q
        ]
        loaded = engine.rows(
            "SELECT count(*), count(DISTINCT source_row), sum(source_row) FROM requests"
        )
        quarantined = engine.rows("SELECT row, reason FROM quarantine")
    assert len(views) == 1 and views[0].count("read_parquet(") == 2  # two scans
    assert [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs] == [
        (245_767, 245_765, 1, 1)
    ]
    assert loaded == [(245_765, 245_765, 30_200_463_377)]
    assert quarantined == [(245_767, "conflicting duplicate")]
