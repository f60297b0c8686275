"""Case databases and Parquet inputs in tests: the rows of one query on a database file (opened
read-only and closed), and a Parquet file written by DuckDB from a query."""

from __future__ import annotations

from pathlib import Path

import duckdb


def rows(db: Path, sql: str) -> list[tuple]:
    """All rows of `sql` on the database file `db`."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def write_parquet(path: Path, select: str, options: str = "") -> Path:
    """The rows of the DuckDB query `select` (time zone UTC) written to the Parquet file
    `path`; `options` are added to COPY's own (`ROW_GROUP_SIZE 2048`, say)."""
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        extra = f", {options}" if options else ""
        con.execute(f"COPY ({select}) TO '{path}' (FORMAT parquet{extra})")
    finally:
        con.close()
    return path
