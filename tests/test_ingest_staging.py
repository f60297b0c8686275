"""How inputs are staged (issue 24): JSONL lines read first and parsed after, the first
large input read on a second thread while the inputs are hashed and checked, { sql }
sources transforming only the columns they read, and small JSONL and Parquet files read
together. Each must give the records, line numbers, reasons and errors the plain path gives
(expected values written out by hand below)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbrows import rows as db_rows
from dbrows import write_parquet

import forensics.ingest
from forensics.engines import DuckDBEngine
from forensics.errors import InputError
from forensics.ingest import ingest, inputfile
from forensics.ingest.shape import shape_of
from forensics.ingest.staging import STRIDE, ReadAhead, stage, stage_batch
from forensics.mapping import profile


def _rec(rid: str, tokens: int = 100) -> str:
    return json.dumps(
        {
            "request_id": rid,
            "ts": "2026-08-27T10:00:00Z",
            "account_id": "a1",
            "model": "m",
            "prompt_tokens": tokens,
        }
    )


# lines 1..7: a record, a blank line, a line that is not JSON, a record, an empty object,
# a line of spaces, a JSON array (not an object)
LINES = [_rec("r1"), "", '{"broken": ', _rec("r2"), "{}", "   ", "[1, 2]"]
STAGED = [  # (line, is an object, reason, raw) of each record line; blank lines are none
    (1, True, None, None),
    (3, False, "invalid JSON", '{"bytes":11}'),
    (4, True, None, None),
    (5, True, None, None),
    (7, False, "invalid JSON", '{"bytes":6}'),
]


def _staged(engine: DuckDBEngine, table: str) -> list[tuple]:
    return [
        (row % STRIDE, j is not None, err, raw)
        for row, j, err, raw in engine.rows(
            f'SELECT __row, __j, __err, __raw FROM "{table}" ORDER BY __row'
        )
    ]


def test_an_input_read_ahead_is_staged_as_when_read_at_staging(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text("\n".join(LINES) + "\n")
    m = profile("canonical")
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        ahead = ReadAhead(engine, 0, log).start()
        p = inputfile.prepare(log, m, tmp_path)
        ahead.join()
        lines = ahead.take(0, p)
        assert lines == "_ing_ahead_0"
        assert ahead.take(0, p) is None  # taken once
        shape = shape_of(m, engine)
        assert _staged(engine, stage(engine, p, 0, shape, lines=lines)) == STAGED
        assert _staged(engine, stage(engine, p, 1, shape)) == STAGED  # read at staging


def test_a_rewritten_input_is_not_staged_from_its_read_ahead(tmp_path):
    # CR line ends: the input is rewritten before DuckDB reads it, so the lines read ahead
    # (from the original) are not what staging reads
    log = tmp_path / "a.jsonl"
    log.write_bytes(("\r\n".join(LINES) + "\r\n").encode())
    m = profile("canonical")
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        ahead = ReadAhead(engine, 0, log).start()
        p = inputfile.prepare(log, m, tmp_path)
        ahead.join()
        assert p.read_path != str(log)
        assert ahead.take(0, p) is None
        assert _staged(engine, stage(engine, p, 0, shape_of(m, engine))) == STAGED


def test_inputs_staged_one_by_one_are_loaded_with_their_lines(tmp_path, monkeypatch):
    # every input staged alone (none batched): the first is read ahead, the CRLF one rewritten
    monkeypatch.setattr(forensics.ingest, "BATCH_BYTES", 0)
    first, crlf, gz = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    first.write_text("\n".join(LINES) + "\n")
    crlf.write_bytes((_rec("r3") + "\r\n\r\n" + _rec("r1", 7) + "\r\n").encode())
    gz.write_text(_rec("r4") + "\n" + _rec("r2") + "\n")
    db = tmp_path / "c.duckdb"
    report = ingest([first, crlf, gz], db, profile="canonical")
    got = [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs]
    # a: r1, r2 loaded; lines 3 and 7 not JSON, line 5 ({}) has no request_id
    # b: r3 loaded; r1 with other tokens conflicts with a's; c: r4 loaded, r2 a duplicate
    assert got == [(5, 2, 0, 3), (2, 1, 0, 1), (2, 1, 1, 0)]
    assert db_rows(db, "SELECT request_id, source_row FROM requests ORDER BY 1") == [
        ("r1", 1),
        ("r2", 4),
        ("r3", 1),
        ("r4", 1),
    ]
    assert db_rows(db, "SELECT row, reason FROM quarantine ORDER BY source, row") == [
        (3, "invalid JSON"),
        (5, "missing required field request_id"),
        (7, "invalid JSON"),
        (3, "conflicting duplicate"),
    ]


def test_a_failed_input_while_another_is_read_ahead_leaves_no_database(tmp_path, monkeypatch):
    monkeypatch.setattr(forensics.ingest, "BATCH_BYTES", 0)
    big, empty = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    big.write_text("".join(_rec(f"r{n}") + "\n" for n in range(20_000)))
    empty.write_bytes(b"")
    db = tmp_path / "c.duckdb"
    with pytest.raises(InputError) as e:
        ingest([big, empty], db, profile="canonical")
    assert e.value.where == str(empty)
    assert "the file is empty" in str(e.value)
    assert not db.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]


MAPPING = """\
format = "jsonl"

[fields]
request_id = "id"
ts = "timestamp"
account_id = "account.id"
model = "model"
prompt_tokens = "usage.prompt_tokens"
ts_end = {{ sql = "{ts_end}" }}

[extra]
double = {{ sql = "usage.prompt_tokens * 2" }}
"""


def _gateway(tmp_path: Path, ts_end: str) -> tuple[Path, Path]:
    log = tmp_path / "g.jsonl"
    rows = [
        {
            "id": f"q{n}",
            "timestamp": "2026-08-27T10:00:00Z",
            "colo": "NRT",
            "account": {"id": "a1"},
            "model": "m",
            "usage": {"prompt_tokens": 10 * n, "cached": 1},
            "latency_ms": 1500 * n,
        }
        for n in (1, 2)
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mapping = tmp_path / "g.mapping.toml"
    mapping.write_text(MAPPING.format(ts_end=ts_end))
    return log, mapping


def test_sql_sources_read_their_columns_and_nested_ones(tmp_path):
    log, mapping = _gateway(tmp_path, "timestamp::TIMESTAMPTZ + to_milliseconds(latency_ms)")
    db = tmp_path / "c.duckdb"
    ingest(log, db, mapping=mapping)
    assert db_rows(
        db,
        "SELECT request_id, strftime(ts_end, '%H:%M:%S.%g'), extra->>'double' "
        "FROM requests ORDER BY 1",
    ) == [("q1", "10:00:01.500", "20"), ("q2", "10:00:03.000", "40")]


def test_a_sql_source_naming_a_missing_column_is_told_every_column(tmp_path):
    # the expression is bound on the columns it reads; when that fails the error lists every
    # column of the records, also those no expression reads (colo)
    log, mapping = _gateway(tmp_path, "timestamp::TIMESTAMPTZ + to_milliseconds(latncy_ms)")
    with pytest.raises(InputError) as e:
        ingest(log, tmp_path / "c.duckdb", mapping=mapping)
    assert "sql of fields.ts_end names a column" in str(e.value)
    assert e.value.fix is not None
    assert e.value.fix.startswith("refer only to the source's columns: ")
    listed = e.value.fix.removeprefix("refer only to the source's columns: ").split(", ")
    assert {"id", "timestamp", "colo", "account", "usage", "latency_ms"} <= set(listed)


def test_small_inputs_are_staged_in_one_batch(tmp_path):
    # read together (one view for all), not one by one: each input's lines by its index
    paths = []
    for n in range(3):
        path = tmp_path / f"h{n}.jsonl"
        path.write_text(_rec(f"r{n}a") + "\n\n" + _rec(f"r{n}b") + "\n")
        paths.append(path)
    m = profile("canonical")
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        items = [(n, inputfile.prepare(path, m, tmp_path)) for n, path in enumerate(paths)]
        stage_batch(engine, items, shape_of(m, engine))
        assert [p.table for _, p in items] == ["_ing_batch_0"] * 3
        rows = engine.rows('SELECT __row, __j IS NOT NULL FROM "_ing_batch_0" ORDER BY 1')
    assert rows == [(n * STRIDE + line, True) for n in range(3) for line in (1, 3)]


def _parquet(path: Path, rows: str, columns: str = "request_id, ts, account_id, model, n") -> Path:
    """A Parquet file of the VALUES `rows` (canonical fields; n: prompt_tokens), by DuckDB."""
    return write_parquet(
        path, f"SELECT * RENAME (n AS prompt_tokens) FROM (VALUES {rows}) AS v({columns})"
    )


T = "TIMESTAMPTZ '2026-08-27 10:00:00+00'"


def test_small_parquet_inputs_are_staged_in_one_batch_per_schema(tmp_path):
    # one table for the files of one schema, each row's __row its input's index and row; a
    # file of another schema (a column more) between them starts a batch of its own
    paths = [
        _parquet(tmp_path / "p0.parquet", f"('r0a', {T}, 'a', 'm', 1), ('r0b', {T}, 'a', 'm', 2)"),
        _parquet(tmp_path / "p1.parquet", f"('r1a', {T}, 'a', 'm', 1)"),
        _parquet(
            tmp_path / "p2.parquet",
            f"('r2a', {T}, 'a', 'm', 1, 'x')",
            "request_id, ts, account_id, model, n, note",
        ),
        _parquet(tmp_path / "p3.parquet", f"('r3a', {T}, 'a', 'm', 1), ('r3b', {T}, 'a', 'm', 2)"),
        _parquet(tmp_path / "p4.parquet", f"('r4a', {T}, 'a', 'm', 1)"),
    ]
    m = profile("canonical")
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        items = [(n, inputfile.prepare(path, m, tmp_path)) for n, path in enumerate(paths)]
        stage_batch(engine, items, shape_of(m, engine))
        assert [p.table for _, p in items] == [
            "_ing_batch_0",
            "_ing_batch_0",
            "_ing_src_2",
            "_ing_batch_3",
            "_ing_batch_3",
        ]
        rows = engine.rows(
            'SELECT __row, request_id FROM "_ing_batch_0" UNION ALL '
            'SELECT __row, request_id FROM "_ing_batch_3" ORDER BY 1'
        )
    assert rows == [
        (1, "r0a"),
        (2, "r0b"),
        (STRIDE + 1, "r1a"),
        (3 * STRIDE + 1, "r3a"),
        (3 * STRIDE + 2, "r3b"),
        (4 * STRIDE + 1, "r4a"),
    ]


def test_parquet_files_batched_keep_each_files_exact_accounting(tmp_path):
    # by hand: p0 loads both; p1's r0a repeats p0's (a duplicate); p2 (a column more: its own
    # batch) has a negative count at row 1; p3 conflicts with p1's r1a (999 tokens) at row 2;
    # p4 holds r4a twice, the same; p5 is p4's bytes (skipped); p6 loads both
    files = {
        "p0": f"('r0a', {T}, 'a', 'm', 1), ('r0b', {T}, 'a', 'm', 2)",
        "p1": f"('r1a', {T}, 'a', 'm', 5), ('r0a', {T}, 'a', 'm', 1)",
        "p3": f"('r3a', {T}, 'a', 'm', 1), ('r1a', {T}, 'a', 'm', 999)",
        "p4": f"('r4a', {T}, 'a', 'm', 1), ('r4a', {T}, 'a', 'm', 1)",
        "p6": f"('r6a', {T}, 'a', 'm', 1), ('r6b', {T}, 'a', 'm', 2)",
    }
    paths = {name: _parquet(tmp_path / f"{name}.parquet", rows) for name, rows in files.items()}
    paths["p2"] = _parquet(
        tmp_path / "p2.parquet",
        f"('r2a', {T}, 'a', 'm', -1, 'x'), ('r2b', {T}, 'a', 'm', 1, 'y')",
        "request_id, ts, account_id, model, n, note",
    )
    paths["p5"] = tmp_path / "p5.parquet"
    paths["p5"].write_bytes(paths["p4"].read_bytes())
    db = tmp_path / "c.duckdb"
    report = ingest([paths[f"p{n}"] for n in range(7)], db, profile="canonical")
    assert [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs] == [
        (2, 2, 0, 0),
        (2, 1, 1, 0),
        (2, 1, 0, 1),
        (2, 1, 0, 1),
        (2, 1, 1, 0),
        (0, 0, 0, 0),
        (2, 2, 0, 0),
    ]
    loaded = db_rows(db, "SELECT request_id, source, source_row FROM requests ORDER BY 1")
    assert [(rid, Path(source).stem, row) for rid, source, row in loaded] == [
        ("r0a", "p0", 1),
        ("r0b", "p0", 2),
        ("r1a", "p1", 1),
        ("r2b", "p2", 2),
        ("r3a", "p3", 1),
        ("r4a", "p4", 1),
        ("r6a", "p6", 1),
        ("r6b", "p6", 2),
    ]
    quarantined = db_rows(db, "SELECT source, row, reason FROM quarantine ORDER BY 1, 2")
    assert [(Path(source).stem, row, reason) for source, row, reason in quarantined] == [
        ("p2", 1, "negative token count prompt_tokens"),
        ("p3", 2, "conflicting duplicate"),
    ]


def test_an_unreadable_file_among_batched_parquet_is_refused_by_name(tmp_path):
    good = [_parquet(tmp_path / f"p{n}.parquet", f"('r{n}', {T}, 'a', 'm', 1)") for n in range(3)]
    bad = tmp_path / "p1b.parquet"
    bad.write_text("not parquet\n")
    with pytest.raises(InputError) as e:
        ingest([good[0], good[1], bad, good[2]], tmp_path / "c.duckdb", profile="canonical")
    assert str(e.value).startswith(f"{bad}: ")
    assert not (tmp_path / "c.duckdb").exists()


def test_an_ingest_of_small_parquet_files_reads_them_in_one_statement(tmp_path):
    # DuckDB's own query log: the three files are read together, not one by one
    from forensics.ingest import ingest_into

    paths = [_parquet(tmp_path / f"p{n}.parquet", f"('r{n}', {T}, 'a', 'm', 1)") for n in range(3)]
    with DuckDBEngine(tmp_path / "c.duckdb") as engine:
        engine.execute("CALL enable_logging('QueryLog')")
        report = ingest_into(engine, paths, profile="canonical")
        logged = [
            q for (q,) in engine.rows("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'")
        ]
    assert [(s.rows_read, s.rows_loaded) for s in report.inputs] == [(1, 1)] * 3
    reads = [q for q in logged if "read_parquet(" in q and "CREATE" in q]
    assert len(reads) == 1 and "$paths" in reads[0]
