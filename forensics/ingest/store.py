"""Where ingest's work ends up: a new case database published under its name only when
complete, and the Parquet case store (`export_parquet`) that the spark engine reads."""

from __future__ import annotations

import os
from pathlib import Path

from .. import scratch
from ..engines import DuckDBEngine, queries
from ..errors import InputError, option

NEW_DB = ".forensics-new-"  # a first ingest's database until complete: .DB.forensics-new-PID-X


def new_db_name(db: Path) -> Path:
    """A scratch name beside `db` for a first ingest's database (pid in it, swept when dead)."""
    parent = db.absolute().parent
    if not parent.is_dir():
        raise InputError(
            "the database's folder does not exist",
            where=str(db),
            fix=f"create it, or fix {option('db')}",
        )
    return scratch.make_name(parent, f".{db.name}{NEW_DB}")


def publish_db(new: Path, db: Path) -> None:
    """Give the complete database `new` its name `db`, unless a database appeared there
    meanwhile (never replaced: it is another process's)."""
    try:
        os.link(new, db)  # atomic, and fails if `db` exists
    except FileExistsError:
        raise _created_meanwhile(db) from None
    except OSError:  # a file system without hard links: claim the name, then replace it
        try:
            os.close(os.open(db, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            raise _created_meanwhile(db) from None
        os.replace(new, db)


def _created_meanwhile(db: Path) -> InputError:
    return InputError(
        "another process created this database while this ingest ran; nothing was loaded",
        where=str(db),
        fix=f"run the ingest again to add these logs to it, or use another {option('db')}",
    )


PARQUET_SIDE_TABLES = (
    "inputs",
    "input_duplicates",
    "quarantine",
    "quarantine_values",
    "engine_capacity",
    "engine_faults",
    "engine_requests",
    "engine_aborts",
    "engine_kv_faults",
    "engine_pool_usage",
)


def export_parquet(engine: DuckDBEngine, out_dir: str | Path) -> Path:
    """Write `requests` as Parquet under out_dir, hive-partitioned by day (UTC) and model,
    and the tables of PARQUET_SIDE_TABLES present under OUT_DIR_tables/NAME/ beside it (the
    case store the spark engine reads)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = str(out).replace("'", "''")  # a path, not data: COPY TO takes no parameter
    engine.execute(
        f"COPY ({queries.load('ingest/parquet_export')}) TO '{target}' "
        "(FORMAT parquet, PARTITION_BY (day, model), OVERWRITE_OR_IGNORE)"
    )
    # the small tables beside it (not inside: readers glob out_dir/**/*.parquet)
    for table in PARQUET_SIDE_TABLES:
        if engine.table_exists(table):
            folder = out.parent / f"{out.name}_tables" / table
            folder.mkdir(parents=True, exist_ok=True)
            path = str(folder / "part-0.parquet").replace("'", "''")
            engine.execute(f"COPY (SELECT * FROM {table}) TO '{path}' (FORMAT parquet)")
    return out
