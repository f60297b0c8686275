"""SGLang server logs as evidence (profile `sglang`): capacity lines, per-request stats, aborts.

`ingest_logs(engine, files, node=, role=)` reads each log DuckDB-natively (whole lines,
numbered from 1, matched with regular expressions in `queries/sglang/parse.sql`) into:

- `engine_startup` (every capacity line) and `engine_capacity` (one span per server start,
  rebuilt after each ingest: a span ends at the node's next start),
- `engine_requests` (ReqTimeStats / Req Time Stats, Finish and Receive lines; `kind` says
  which, `finish_reason` the Finish line's finish_reason type),
- `engine_aborts` (`kind`: kv_capacity = "Request R exceeds the maximum number of tokens",
  input_length = scheduler "Input length (N tokens) exceeds the maximum allowed length",
  context_length = tokenizer "The input (N tokens) is longer than the model's context length").

Accounting per input (the `inputs` row): a line is an evidence record when it looks like one
of the lines above; `rows_read` = evidence records, `rows_loaded` = those loaded,
`quarantined` = malformed ones (reason in `quarantine`), so rows_read = rows_loaded +
quarantined as for every input. Every other line (startup chatter, progress, server_args,
blank lines) is not a record: the note says how many lines the file held and how many
were other output, e.g. `lines=120 other=97`. Nothing is lost silently.

Times in the `[YYYY-MM-DD HH:MM:SS …]` envelope carry no zone and are read as UTC. The node
id is `node` or the file name without `.log`/`.gz`/`.zst`/`.txt`; the role is `role`, else the
`disaggregation_mode` in the server_args line, else the `type=` of its ReqTimeStats lines.
Inputs are keyed on sha256: a file already in `inputs` is not read again. All files of one
call are committed in one transaction, as gateway ingest does: a failure changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, option
from ..schema import ROLES, InputStats
from .inputfile import hash_file

# read each line whole: a 4-byte delimiter that never occurs in a log, no quoting
LINE_DELIM = "\x1e\x1f\x1e\x1f"
_SUFFIXES = (".gz", ".zst", ".log", ".txt")
_PARSED = "_sglang_parsed"


def node_from_path(path: Path) -> str:
    """The node id a log's file name implies: its name without .log/.gz/.zst/.txt."""
    name = path.name
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                changed = True
    return name


def ensure_tables(engine: DuckDBEngine) -> None:
    """Create the bookkeeping and engine evidence tables if missing."""
    engine.execute(schema.INPUTS_DDL)
    engine.execute(schema.QUARANTINE_DDL)
    engine.run("sglang/schema")


def _role(engine: DuckDBEngine, path: Path, role: str | None) -> str | None:
    """The server role of the parsed log: `role`, else its lines; InputError if they disagree."""
    if role is not None:
        if role not in ROLES:
            raise InputError(
                f"unknown engine role {role!r}", where=option("role"), fix="use prefill or decode"
            )
        return role
    found = engine.rows(queries.load("sglang/role"))
    for kind in ("role_marker", "time_stats"):
        legs = sorted({leg for k, leg, _ in found if k == kind})
        if len(legs) == 1:
            return legs[0]
        if len(legs) > 1:
            raise InputError(
                f"log holds lines of both roles ({', '.join(legs)}) by {kind}",
                where=str(path),
                fix=f"split it per server, or give {option('role')}",
            )
    return None


def ingest_logs(
    engine: DuckDBEngine,
    files: list[Path],
    node: str | None = None,
    role: str | None = None,
) -> list[InputStats]:
    """Load SGLang server logs into the engine tables; one InputStats per file, in order.

    All files of one call commit in one transaction: a file that cannot be read (or whose
    role is contradictory) raises InputError and leaves the database unchanged.
    """
    with engine.transaction():
        return _ingest_all(engine, files, node, role)


def _ingest_all(
    engine: DuckDBEngine, files: list[Path], node: str | None, role: str | None
) -> list[InputStats]:
    ensure_tables(engine)
    out = []
    for path in files:
        path = Path(path)
        if not path.is_file():
            raise InputError("no such log file", where=str(path), fix="check the path")
        digest = hash_file(path)
        size = path.stat().st_size
        prior = engine.rows(
            "SELECT rows_read, rows_loaded, quarantined FROM inputs WHERE sha256 = $sha",
            sha=digest,
        )
        if prior:
            read, loaded, quarantined = prior[0]
            out.append(
                InputStats(
                    str(path),
                    digest,
                    size,
                    read,
                    loaded,
                    0,
                    quarantined,
                    "sglang",
                    "already ingested (same sha256): nothing changed",
                )
            )
            continue
        out.append(_ingest_one(engine, path, digest, size, node, role))
    engine.run("sglang/fill_abort_rooms")
    engine.materialize("engine_capacity", "sglang/capacity")
    return out


def _ingest_one(
    engine: DuckDBEngine,
    path: Path,
    digest: str,
    size: int,
    node: str | None,
    role: str | None,
) -> InputStats:
    params = {"path": str(path), "delim": LINE_DELIM}
    try:
        engine.execute(
            f"CREATE OR REPLACE TEMP TABLE {_PARSED} AS {queries.load('sglang/parse')}", **params
        )
        lines = engine.scalar(queries.load("sglang/lines"), **params)
    except (duckdb.IOException, duckdb.InvalidInputException, duckdb.ConversionException) as e:
        raise InputError(
            f"cannot read as an SGLang log: {str(e).splitlines()[0]}",
            where=str(path),
            fix="give a text log (.log, .gz or .zst)",
        ) from None
    server_role = _role(engine, path, role)
    ids = {"node": node or node_from_path(path), "role": server_role, "source": str(path)}
    for table, query in (
        ("engine_startup", "sglang/insert_startup"),
        ("engine_requests", "sglang/insert_requests"),
        ("engine_aborts", "sglang/insert_aborts"),
        ("quarantine", "sglang/insert_quarantine"),
    ):
        engine.execute(f"INSERT INTO {table} {queries.load(query)}", **ids)
    loaded, quarantined = engine.rows(queries.load("sglang/counts"))[0]
    read = loaded + quarantined
    note = f"lines={lines} other={lines - read}"
    if server_role is None:
        note += " role=unknown (give its role)"
    engine.run(
        "sglang/record_input",
        path=str(path),
        sha256=digest,
        bytes=size,
        rows_read=read,
        rows_loaded=loaded,
        quarantined=quarantined,
        note=note,
    )
    engine.execute(f"DROP TABLE IF EXISTS {_PARSED}")
    return InputStats(str(path), digest, size, read, loaded, 0, quarantined, "sglang", note)
