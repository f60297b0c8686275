"""Staging: each input made readable to the load as temp view or table `_ing_src_<i>`
(__row, __err, __raw and the source's columns), before the transaction; and the cleanup of
every temp object ingest made (names start with `_ing_`)."""

from __future__ import annotations

import contextlib
from typing import Any

import duckdb

from ..engines import DuckDBEngine, queries
from ..errors import InputError, first_line
from ..mapping import CsvDialect
from . import inputfile
from .inputfile import Prepared


def stage(engine: DuckDBEngine, p: Prepared, i: int, dialect: CsvDialect | None = None) -> str:
    """Stage input i as temp table or view `_ing_src_i`: __row, __err, __raw, source columns
    (JSONL: __j, __shape; a view over the staged lines. Parquet: a view over the file. CSV:
    a table, read in `dialect`, the mapping's; RFC 4180 by default)."""
    # a rewritten input (inputfile._normalize) has no line over MAX_LINE_SIZE: DuckDB's own
    # limit is only a backstop; it reads in buffers of two lines' worth, at least 32 MiB
    # (its default of 16 lines is more than a modest memory limit allows)
    read_limit = inputfile.MAX_LINE_SIZE + 1024
    sizes = {"max_line_size": read_limit, "buffer_size": max(2 * read_limit, 32 << 20)}
    try:
        side = f"_ing_side_{i}"
        if p.side is not None:
            temp_table(engine, side, "ingest/side_lines", path=p.side)
        else:
            engine.execute(
                f'CREATE OR REPLACE TEMP TABLE "{side}" (line BIGINT, reason VARCHAR, bytes BIGINT)'
            )
        if p.fmt == "jsonl":
            stage = f"_ing_json_{i}"
            # rowids of the staged table are the line order
            with engine.settings(preserve_insertion_order=True):
                temp_table(
                    engine,
                    stage,
                    "ingest/json_records",
                    path=p.read_path,
                    delim=inputfile.LINE_DELIM,
                    **sizes,
                )
            # rowid is the 0-based line number (blank lines kept in the table, not records);
            # a line a rewrite replaced takes its reason and length from the side table
            table = f"_ing_src_{i}"
            if p.side is None:
                engine.execute(
                    f'CREATE OR REPLACE TEMP VIEW "{table}" AS SELECT rowid + 1 AS __row, '
                    f'__j, __shape, __err, __raw FROM "{stage}" WHERE NOT __blank'
                )
            else:
                engine.execute(
                    f'CREATE OR REPLACE TEMP VIEW "{table}" AS SELECT j.rowid + 1 AS __row, '
                    "j.__j, j.__shape, coalesce(s.reason, j.__err) AS __err, "
                    "CASE WHEN s.line IS NULL THEN j.__raw "
                    "ELSE CAST(json_object('bytes', s.bytes) AS VARCHAR) END AS __raw "
                    f'FROM "{stage}" AS j LEFT JOIN "{side}" AS s ON s.line = j.rowid + 1 '
                    "WHERE NOT j.__blank"
                )
            return table
        elif p.fmt == "csv":
            d = dialect or CsvDialect()
            engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_side" AS SELECT * FROM "{side}"')
            if p.gaps is not None:
                temp_table(engine, "_ing_csv_gaps", "ingest/csv_gaps", path=p.gaps)
            else:
                engine.execute(
                    'CREATE OR REPLACE TEMP TABLE "_ing_csv_gaps" (line BIGINT, duckdb_line BIGINT)'
                )
            with engine.settings(preserve_insertion_order=True):
                temp_table(
                    engine,
                    "_ing_csv",
                    "ingest/csv_rows",
                    path=p.read_path,
                    header=d.header,
                    skip=d.skip,
                    delim=d.delimiter,
                    quote=d.quote,
                    escape=d.escape_char,
                    **sizes,
                )
            columns = len(engine.describe('SELECT * FROM "_ing_csv"'))
            temp_table(
                engine,
                "_ing_csv_rejects",
                "ingest/csv_rejects",
                max_line_size=inputfile.MAX_LINE_SIZE,
                header_lines=d.header_lines,
                columns=columns,
            )
            temp_table(engine, "_ing_csv_valid", "ingest/csv_records", header_lines=d.header_lines)
            engine.execute(
                'CREATE OR REPLACE TEMP TABLE "_ing_src" AS SELECT * FROM _ing_csv_valid '
                "UNION ALL BY NAME SELECT * EXCLUDE (__q) FROM _ing_csv_rejects"
            )
        else:
            # a view over the file: the typed pass reads it once, no staged copy (at 20M rows
            # that copy spilled); the path is bound through a session variable (views take no
            # parameters); binding the view checks the file is Parquet
            table = f"_ing_src_{i}"
            engine.execute(f"SET VARIABLE _ing_path_{i} = $path", path=p.read_path)
            sql = queries.load("ingest/parquet_records").replace("_ing_path_N", f"_ing_path_{i}")
            engine.execute(f'CREATE OR REPLACE TEMP VIEW "{table}" AS {sql}')
            return table
        table = f"_ing_src_{i}"
        engine.execute(f'DROP TABLE IF EXISTS temp."{table}"')
        engine.execute(f'ALTER TABLE temp."_ing_src" RENAME TO "{table}"')
        return table
    except duckdb.Error as e:
        raise read_error(p, e) from None


def temp_table(engine: DuckDBEngine, table: str, query: str, **params: Any) -> None:
    """Temp table `table` from `queries/QUERY.sql`."""
    temp_table_sql(engine, table, queries.load(query), params)


def temp_table_sql(engine: DuckDBEngine, table: str, sql: str, params: dict[str, Any]) -> None:
    """Temp table `table` from a SQL text."""
    engine.execute(f'CREATE OR REPLACE TEMP TABLE "{table}" AS {sql}', **params)


def read_error(p: Prepared, e: Exception) -> InputError:
    """The input cannot be read as its format: one line naming it."""
    return InputError(
        f"cannot read as {p.fmt} ({first_line(e)})",
        where=p.path,
        fix="check the file is complete and of the format its name or mapping says",
    )


def drop_scratch(engine: DuckDBEngine) -> None:
    """Drop every temp view and table this module staged (names start with `_ing_`)."""
    for kind in ("VIEW", "TABLE"):
        source = "duckdb_views()" if kind == "VIEW" else "duckdb_tables()"
        names = engine.rows(
            f"SELECT {'view_name' if kind == 'VIEW' else 'table_name'} FROM {source} "
            "WHERE temporary AND starts_with("
            + ("view_name" if kind == "VIEW" else "table_name")
            + ", '_ing_')"
        )
        for (name,) in names:
            with contextlib.suppress(duckdb.Error):
                engine.execute(f'DROP {kind} IF EXISTS temp."{name}"')
    for (name,) in engine.rows(
        "SELECT name FROM duckdb_variables() WHERE starts_with(name, '_ing_')"
    ):
        with contextlib.suppress(duckdb.Error):
            engine.execute(f"RESET VARIABLE {name}")
