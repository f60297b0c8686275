"""The SQL engines behind one contract (`SQLEngine`), found by name in a registry.

`connect(kind, store, options)` opens the engine registered as `kind` on its case store: a
DuckDB case database file (`duckdb`), or a Parquet case store on Apache Spark (`spark`).
Nothing outside this package asks which engine it has: what differs between them is said
once, in their `EngineKind`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ForensicsError, InputError, command, option
from .contract import SQLEngine, TableMissing, needing
from .duckdb import DEFAULT_MEMORY_LIMIT, DuckDBEngine

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "KINDS",
    "DuckDBEngine",
    "EngineKind",
    "EngineOptions",
    "SQLEngine",
    "TableMissing",
    "connect",
    "kind",
    "needing",
    "register",
]


@dataclass(frozen=True)
class EngineOptions:
    """How to open an engine; each kind uses the options that apply to it."""

    memory_limit: str | None = None
    temp_dir: str | Path | None = None
    spark_master: str | None = None


@dataclass(frozen=True)
class EngineKind:
    """One registered engine: how to open it on a case store, and what that store is."""

    name: str
    open: Callable[[str | Path, EngineOptions], SQLEngine]
    store: str  # what the case store is, for messages
    exists: Callable[[Path], bool]  # whether a local store is there
    missing_fix: str  # how to make a missing store
    # the store is a Parquet export of the DuckDB case database that ingest wrote, so `run`
    # exports one before it analyzes (`forensics.ingest.export_parquet`)
    exported: bool = False


KINDS: dict[str, EngineKind] = {}


def register(engine_kind: EngineKind) -> EngineKind:
    """Make `engine_kind` available under its name."""
    KINDS[engine_kind.name] = engine_kind
    return engine_kind


def kind(name: str) -> EngineKind:
    """The engine registered as `name`; ForensicsError naming the known ones otherwise."""
    if name not in KINDS:
        raise ForensicsError(
            f"unknown engine {name!r}", where=option("engine"), fix=f"use {' or '.join(KINDS)}"
        )
    return KINDS[name]


@contextlib.contextmanager
def connect(
    name: str,
    store: str | Path,
    options: EngineOptions | None = None,
    *,
    must_exist: bool = True,
) -> Iterator[SQLEngine]:
    """The engine `name` on its case store `store`, closed after the block. A local store
    that does not exist is refused (InputError saying how to make one) when `must_exist`."""
    chosen = kind(name)
    if must_exist and "://" not in str(store) and not chosen.exists(Path(store)):
        raise InputError("case database not found", where=str(store), fix=chosen.missing_fix)
    engine = chosen.open(store, options or EngineOptions())
    try:
        yield engine
    finally:
        engine.close()


def _open_duckdb(store: str | Path, options: EngineOptions) -> SQLEngine:
    return DuckDBEngine(store, memory_limit=options.memory_limit, temp_dir=options.temp_dir)


def _open_spark(store: str | Path, options: EngineOptions) -> SQLEngine:
    try:
        from .spark import SparkEngine
    except ImportError as e:
        raise ForensicsError(
            f"the spark engine needs PySpark and SQLGlot ({e.name} is missing)",
            where=option("engine"),
            fix="pip install 'kv-forensics[spark]' (and a Java runtime)",
        ) from None
    return SparkEngine(str(store), master=options.spark_master)


register(
    EngineKind(
        name="duckdb",
        open=_open_duckdb,
        store="a DuckDB case database file",
        exists=Path.is_file,
        missing_fix=f"load logs first: {command('ingest')} LOG... {option('db')} DB "
        f"(or use {command('run')})",
    )
)
register(
    EngineKind(
        name="spark",
        open=_open_spark,
        store="a Parquet case store folder",
        exists=Path.is_dir,
        missing_fix=f"with the spark engine, {option('db')} is the folder that "
        f"{command('ingest')} ... {option('to_parquet')} DIR wrote (or use {command('run')})",
        exported=True,
    )
)
