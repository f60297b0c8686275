"""`engine_capacity` over every engine's startup lines (SGLang, vLLM, TensorRT-LLM): one span
per server start and node, rebuilt after each ingest of engine logs (a span ends at the
node's next start). Each engine's reader registers its table schema and its capacity query
here when imported (`register`), so this module names no engine."""

from __future__ import annotations

from .. import schema
from ..engines import DuckDBEngine, queries

_SCHEMAS: dict[str, str] = {}  # engine -> its tables' query
_CAPACITY: dict[str, str] = {}  # engine -> its spans' query (over its own startup kinds)
Steps = tuple[tuple[str, str], ...]  # (table, query) pairs, materialized in order
_BEFORE: dict[str, Steps] = {}  # engine -> tables its capacity query reads
_AFTER: dict[str, Steps] = {}  # engine -> tables read from engine_capacity (its faults)


def register(
    engine_name: str,
    *,
    schema_query: str | None,
    capacity_query: str | None,
    before: Steps = (),
    after: Steps = (),
) -> None:
    """An engine reader's schema query and capacity query (either may be None), and the
    tables materialized before its capacity query (`before`) and after engine_capacity is
    rebuilt (`after`)."""
    if schema_query is not None:
        _SCHEMAS[engine_name] = schema_query
    if capacity_query is not None:
        _CAPACITY[engine_name] = capacity_query
    _BEFORE[engine_name] = before
    _AFTER[engine_name] = after


def ensure_tables(engine: DuckDBEngine) -> None:
    """The bookkeeping and engine evidence tables (every registered engine's)."""
    engine.execute(schema.INPUTS_DDL)
    engine.execute(schema.QUARANTINE_DDL)
    for name in sorted(_SCHEMAS, key=lambda n: (n != "sglang", n)):  # sglang's tables first
        engine.run(_SCHEMAS[name])


def rebuild_capacity(engine: DuckDBEngine) -> None:
    """`engine_capacity` from every engine's startup lines. Other engines' startup kinds are
    named `<engine>_<kind>`; SGLang's spans keep to the inputs that have none of them."""
    ensure_tables(engine)
    for name in sorted(_BEFORE):
        for table, query in _BEFORE[name]:
            engine.materialize(table, query)
    parts = []
    others = [n for n in _CAPACITY if n != "sglang"]
    for name in sorted(_CAPACITY, key=lambda n: (n != "sglang", n)):
        sql = queries.load(_CAPACITY[name])
        if name == "sglang" and others:
            prefixes = " OR ".join(f"starts_with(kind, '{n}_')" for n in sorted(others))
            sql = (
                f"SELECT * FROM ({sql}) WHERE source NOT IN "
                f"(SELECT source FROM engine_startup WHERE {prefixes})"
            )
        parts.append(f"SELECT * FROM ({sql})")
    engine.execute(
        "CREATE OR REPLACE TABLE engine_capacity AS "
        "SELECT node, role, tokens, context_len, start_ts, end_ts, source, source_row, "
        "reject_from, note, engine_warned FROM (" + " UNION ALL BY NAME ".join(parts) + ")"
    )
    for name in sorted(_AFTER):
        for table, query in _AFTER[name]:
            engine.materialize(table, query)
