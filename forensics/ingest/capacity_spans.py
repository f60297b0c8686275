"""The capacity timeline over every engine's startup lines, rebuilt after each ingest of engine
logs (a span ends at the node's next start): `engine_starts` (one row per server start and
node), `engine_capacity` (one span per start with a pool) and `engine_faults` (what the
timeline could not take as the logs wrote it). Each engine reader registers its queries here
when imported (`register`); each keeps to that engine's own rows by data (the startup kinds it
owns, the inputs read in its format), so this module names no engine."""

from __future__ import annotations

from ..engines import DuckDBEngine, queries

# table -> the queries whose rows make it, in the order they are rebuilt
_TABLES = ("engine_starts", "engine_capacity", "engine_faults")
_QUERIES: dict[str, set[str]] = {table: set() for table in _TABLES}


def register(
    *, starts: str | None = None, capacity: str | None = None, faults: str | None = None
) -> None:
    """A reader's query for its server starts (rows of engine_starts), for its spans (rows of
    engine_capacity, read from engine_starts) and for faults (rows of engine_faults, read from
    engine_starts and the startup lines); each may be None."""
    for table, query in zip(_TABLES, (starts, capacity, faults), strict=True):
        if query is not None:
            _QUERIES[table].add(query)


def rebuild_capacity(engine: DuckDBEngine) -> None:
    """`engine_starts`, `engine_capacity` and `engine_faults` from every engine's startup
    lines: each table the rows of its registered queries (in the order of their names)."""
    for table in _TABLES:
        parts = [f"SELECT * FROM ({queries.load(q)})" for q in sorted(_QUERIES[table])]
        engine.execute(f"CREATE OR REPLACE TABLE {table} AS " + " UNION ALL BY NAME ".join(parts))
