"""SGLang server logs as evidence (profile `sglang`): capacity lines, per-request lines,
rejections; every spelling of SGLang 0.4.10 .. 0.5.23 (docs/engine-logs.md).

`ingest_logs(engine, files, node=, role=)` reads each log DuckDB-natively (whole lines,
numbered from 1, matched with regular expressions in `queries/sglang/parse.sql`) into:

- `engine_startup` (server_args, KV pool allocation, sliding-window pool, max_total_num_tokens
  and engine pre-flight lines; a quarantined one too, with its reason and no figures),
  `engine_starts` (one row per server start: `queries/sglang/starts.sql` holds the span
  rules), `engine_capacity` (one span per start with a readable pool, with the admission
  limit `reject_from`) and `engine_faults` (what the timeline could not take as written: pool
  figures of one start that disagree, a pool below one page, a start without a readable
  pool, quarantined startup lines, a log going back in time); the last three are rebuilt
  after each ingest, since a span ends at the node's next start,
- `engine_sources` (per log: node, first and last line time, startup lines) and
  `engine_time_steps` (lines more than a second before the line above them in their log),
- `engine_requests` (ReqTimeStats / Req Time Stats, Finish and Receive lines in text or JSON,
  and the records of a `--export-metrics-to-file` export; `kind` says which, `finish_reason`
  the finish_reason type),
- `engine_aborts` (`kind`: input_length = scheduler "Input length (N tokens) exceeds the
  maximum allowed length (M tokens) ..., self.rid='R'", truncated = the same check under
  --allow-auto-truncate, kv_capacity = "Request R exceeds the maximum number of tokens",
  context_length = tokenizer "The input (N tokens) is longer than the model's context
  length", transfer_failed = "Decode transfer failed for request ...").

Accounting per input (the `inputs` row): a line is an evidence record when it looks like one
of the lines above; `rows_read` = evidence records = `rows_loaded` + `duplicates` +
`quarantined`, as for every input. A duplicate is an `[http_server] Error:` line that repeats
an abort message the scheduler or the Finish line already carries (it names no rid). Every
other line (progress, uvicorn, blank lines) is not a record: the note says how many lines
the file held and how many were other output, e.g. `lines=120 other=97`. Nothing is lost
silently; a number too large for a 64-bit integer quarantines its line, as does a figure cut
mid-field (not followed by the separator SGLang's format string puts after it, or ending an
unterminated last line) and a figure SGLang never starts with (a pool of 0, an admission
limit below 1).

Times in the `[YYYY-MM-DD HH:MM:SS …]` envelope carry no zone and are read as UTC. The node
id is `node`, or the file name without `.log`/`.gz`/`.zst`/`.txt` (for a metrics export,
`sglang-request-metrics-YYYYMMDD_HH.log`, named by the hour only: its folder's name); a
`node` holding `{name}` or `{folder}` is a rule filled per file (`{folder}/{name}`). Two logs
of one node id that each start a server and whose lines interleave in time are refused
(InputError naming both): two servers, or two copies of one log, are never merged. The
role is `role`, else the `disaggregation_mode` in the server_args line, else the `type=` of
its ReqTimeStats lines, else the one role the node's other inputs name. Inputs are keyed on
sha256: a file already in `inputs` is not read again. All files of one call are committed in
one transaction, as gateway ingest does: a failure changes nothing.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import zlib
from pathlib import Path

import duckdb
import zstandard

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, option
from ..formats import iso_z
from ..schema import ROLES, InputStats
from .capacity_spans import rebuild_capacity, register
from .inputfile import hash_file, literal_path

# read each line whole: a 4-byte delimiter that never occurs in a log, no quoting
LINE_DELIM = "\x1e\x1f\x1e\x1f"
_SUFFIXES = (".gz", ".zst", ".log", ".txt")
_UNKNOWN_ROLE = " role=unknown (give its role)"
_PARSED = "_sglang_parsed"
# the metrics exporter's hourly file (request_metrics_exporter.py): named by the hour only
_METRICS_FILE = re.compile(r"^sglang-request-metrics-\d{8}_\d{2}$")


register(
    "sglang",
    schema_query="sglang/schema",
    capacity_query="sglang/capacity",
    before=(("engine_starts", "sglang/starts"),),
    after=(("engine_faults", "sglang/faults"),),
)


def node_from_path(path: Path) -> str:
    """The node id a log's file name implies: its name without .log/.gz/.zst/.txt; for a
    metrics export (`sglang-request-metrics-YYYYMMDD_HH.log`), the name of its folder."""
    name = _stem(path)
    if _METRICS_FILE.match(name) and path.parent.name:
        return path.parent.name
    return name


def _stem(path: Path) -> str:
    """A log's file name without .log/.gz/.zst/.txt."""
    name = path.name
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                changed = True
    return name


def node_id(path: Path, node: str | None = None) -> str:
    """The node id of a log: `node` as given, or filled per file where it holds `{name}` (what
    the file name implies, `node_from_path`) or `{folder}` (the name of the folder that holds
    the file, or a metrics export's node folder); the file name's node without `node`."""
    name = node_from_path(path)
    if node is None:
        return name
    if "{" not in node and "}" not in node:
        return node
    holder = Path(path).absolute().parent
    if _METRICS_FILE.match(_stem(path)) and Path(path).parent.name:
        holder = holder.parent  # a metrics export: its folder names the node
    try:
        return node.format_map({"name": name, "folder": holder.name})
    except (KeyError, ValueError, IndexError, AttributeError) as e:
        raise InputError(
            f"node rule {node!r} cannot be filled ({type(e).__name__}: {e})",
            where=option("node"),
            fix="use {name} (the file name) and {folder} (its folder), e.g. '{folder}/{name}'",
        ) from None


def _ends_with_newline(path: Path) -> bool:
    """Whether the (decompressed) text of a log ends with a newline; a compressed stream that
    breaks off does not."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".gz", ".zst"):
            last = b""
            with path.open("rb") as raw:
                text: gzip.GzipFile | zstandard.ZstdDecompressionReader = (
                    gzip.GzipFile(fileobj=raw)
                    if suffix == ".gz"
                    else zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
                )
                while chunk := text.read(1 << 20):
                    last = chunk[-1:]
            return last == b"\n"
        with path.open("rb") as plain:
            if plain.seek(0, 2) == 0:
                return False
            plain.seek(-1, 2)
            return plain.read(1) == b"\n"
    except (EOFError, zlib.error, zstandard.ZstdError, gzip.BadGzipFile):
        return False


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
    for kind in ("server_args", "time_stats"):
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
            "SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs "
            "WHERE sha256 = $sha",
            sha=digest,
        )
        if prior:
            read, loaded, duplicates, quarantined = prior[0]
            # this call read and loaded nothing of it: zeros, the earlier figures in the note
            note = (
                f"already ingested (same sha256): nothing changed (then: {read:,} read, "
                f"{loaded:,} loaded, {duplicates:,} duplicates, {quarantined:,} quarantined)"
            )
            out.append(InputStats(str(path), digest, size, 0, 0, 0, 0, "sglang", note))
            continue
        out.append(_ingest_one(engine, path, digest, size, node, role))
    _refuse_clashes(engine)
    engine.run("sglang/fill_abort_rooms")
    engine.run("sglang/fill_roles")
    rebuild_capacity(engine)  # every engine's spans (and SGLang's starts and faults)
    return [_role_note(engine, s) for s in out]


def _refuse_clashes(engine: DuckDBEngine) -> None:
    """InputError when two logs of one node id both start servers and their lines interleave
    in time: two servers (or two copies of one log) that a merge would make one."""
    clashes = engine.rows(queries.load("sglang/clashes"))
    if not clashes:
        return
    node, a, a_first, a_last, b, b_first, b_last = clashes[0]
    more = f" (and {len(clashes) - 1} more such pair(s))" if len(clashes) > 1 else ""
    raise InputError(
        f"both logs give node {node!r} and their lines interleave in time "
        f"({iso_z(a_first)} .. {iso_z(a_last)} and {iso_z(b_first)} .. {iso_z(b_last)}): two "
        f"servers, or two copies of one log, would be merged into one{more}",
        where=f"{a}, {b}",
        fix=f"tell them apart by a node-id rule that matches the gateway's node names, e.g. "
        f"{option('node')} '{{folder}}/{{name}}' (in a case file: node = \"{{folder}}/{{name}}\" "
        "in the [[source]]), or give one copy of a log only",
    )


def _role_note(engine: DuckDBEngine, stats: InputStats) -> InputStats:
    """The note of an input whose role stayed unknown (nor its node's other inputs tell)."""
    if not stats.note or not stats.note.endswith(_UNKNOWN_ROLE):
        return stats
    roleless, with_role = engine.rows(queries.load("sglang/roleless"), source=stats.path)[0]
    if roleless or not with_role:
        return stats
    note = stats.note[: -len(_UNKNOWN_ROLE)] + " role=from its node"
    engine.run("sglang/set_note", note=note, sha256=stats.sha256)
    return dataclasses.replace(stats, note=note)


def _ingest_one(
    engine: DuckDBEngine,
    path: Path,
    digest: str,
    size: int,
    node: str | None,
    role: str | None,
) -> InputStats:
    params = {"path": literal_path(str(path)), "delim": LINE_DELIM}
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
    if engine.rows(
        "SELECT 1 FROM _sglang_parsed WHERE source_row = $row AND open_end AND reason IS NULL",
        row=lines,
    ) and not _ends_with_newline(path):
        engine.run("sglang/cut_last_line", row=lines)
    server_role = _role(engine, path, role)
    ids = {"node": node_id(path, node), "role": server_role, "source": str(path)}
    for table, query in (
        ("engine_startup", "sglang/insert_startup"),
        ("engine_requests", "sglang/insert_requests"),
        ("engine_aborts", "sglang/insert_aborts"),
        ("quarantine", "sglang/insert_quarantine"),
        ("engine_sources", "sglang/insert_source"),
        ("engine_time_steps", "sglang/time_steps"),
    ):
        engine.execute(f"INSERT INTO {table} BY NAME {queries.load(query)}", **ids)
    loaded, duplicates, quarantined = engine.rows(queries.load("sglang/counts"))[0]
    read = loaded + duplicates + quarantined
    note = f"lines={lines} other={lines - read}"
    if server_role is None:
        note += _UNKNOWN_ROLE
    engine.run(
        "sglang/record_input",
        path=str(path),
        sha256=digest,
        bytes=size,
        rows_read=read,
        rows_loaded=loaded,
        duplicates=duplicates,
        quarantined=quarantined,
        note=note,
    )
    engine.execute(f"DROP TABLE IF EXISTS {_PARSED}")
    return InputStats(
        str(path), digest, size, read, loaded, duplicates, quarantined, "sglang", note
    )
