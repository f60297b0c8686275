"""Read a case database in tests: rows of one query, the file opened read-only and closed."""

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
