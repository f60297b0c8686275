"""Engine logs of vLLM and TensorRT-LLM as evidence (profiles `vllm`, `trtllm`), read into the
tables SGLang's logs fill (docs/engine-logs.md): `engine_startup` -> `engine_capacity`,
`engine_requests`, `engine_aborts` (kind `rejected`), and `engine_kv_faults`,
`engine_pool_usage`.

One reader per engine (`vllm`, `trtllm`: a `LogFormat` naming its queries); this module runs
any of them the way `sglang.ingest_logs` runs SGLang's: each file parsed DuckDB-natively
(`queries/<engine>/parse.sql`), its evidence lines loaded, duplicated or quarantined
(rows_read = rows_loaded + duplicates + quarantined), all files of one call in one
transaction, an input already ingested (same sha256) not read again.

Rules every reader keeps: a number the file cuts short (its last line without a newline) is
quarantined, never read as a figure; lines whose time goes back are counted in the input's
note (`back_in_time=N from line L`); two files of one node whose times interleave are refused
(rotated logs follow one another); `engine_capacity` is rebuilt over every engine after
each ingest (`rebuild_capacity`), so a span ends at the node's next start.
"""

from __future__ import annotations

import gzip
import re
import zoneinfo
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, option
from ..schema import InputStats
from .capacity_spans import ensure_tables, rebuild_capacity, register
from .inputfile import hash_file, literal_path
from .sglang import LINE_DELIM, node_id

_PARSED = "_engine_parsed"


@dataclass(frozen=True)
class LogFormat:
    """One engine's reader: its name (the input format), what it is called in messages,
    whether its lines name no year, and its queries: `parse` (one row per evidence line,
    into _engine_parsed), the inserts into engine_startup / engine_requests /
    engine_aborts, and `role` (the roles its lines give)."""

    name: str
    title: str
    needs_year: bool
    parse: str
    insert_startup: str
    insert_requests: str
    insert_aborts: str
    role: str


register("engine_logs", schema_query="engine_logs/schema", capacity_query=None)


@dataclass(frozen=True)
class Clock:
    """How a log's times become UTC: `year` (the first line's year), else `anchor` (the
    year that puts the first line nearest to it: a case window's start), and the zone the
    engine's clock was in."""

    year: int | None = None
    anchor: datetime | None = None
    timezone: str = "UTC"


def check_timezone(name: str | None) -> str:
    """The IANA zone name, or InputError naming --timezone."""
    zone = name or "UTC"
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown time zone {zone!r}",
            where=option("timezone"),
            fix="use an IANA zone name such as UTC or Europe/Berlin",
        ) from None
    return zone


def torn_row(path: Path, lines: int) -> int:
    """The number of the file's last line when the file ends without a newline (a line cut
    short), else 0. A .zst file is taken as whole (its end is not checked)."""
    if lines == 0:
        return 0
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                last = b""
                while chunk := f.read(1 << 20):
                    last = chunk[-1:]
        elif path.name.endswith(".zst"):
            return 0
        else:
            with path.open("rb") as f:
                f.seek(-1, 2)
                last = f.read(1)
    except (OSError, EOFError):
        return 0
    return 0 if last in (b"\n", b"") else lines


def ingest_logs(
    engine: DuckDBEngine,
    fmt: LogFormat,
    files: list[Path],
    clock: Clock,
    node: str | None = None,
    role: str | None = None,
) -> list[InputStats]:
    """Load one engine's logs into the engine tables; one InputStats per file, in order. All
    files commit in one transaction: a file that cannot be read, a log with no year to read
    it by, or two files of one node that interleave raise InputError and change nothing."""
    if role is not None and role not in (*schema.ROLES, "both"):
        raise InputError(
            f"unknown engine role {role!r}", where=option("role"), fix="use prefill or decode"
        )
    if fmt.needs_year and clock.year is None and clock.anchor is None:
        raise InputError(
            f"{fmt.title} logs name no year",
            where=", ".join(str(f) for f in files),
            fix=f"give {option('year')} YYYY (the year of the log's first line)",
        )
    check_timezone(clock.timezone)
    with engine.transaction():
        ensure_tables(engine)
        out = []
        nodes: set[str] = set()
        for path in files:
            path = Path(path)
            if not path.is_file():
                raise InputError("no such log file", where=str(path), fix="check the path")
            digest = hash_file(path)
            prior = engine.rows(
                "SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs "
                "WHERE sha256 = $sha",
                sha=digest,
            )
            if prior:
                read, loaded, dups, quarantined = prior[0]
                note = (
                    f"already ingested (same sha256): nothing changed (then: {read:,} read, "
                    f"{loaded:,} loaded, {dups:,} duplicates, {quarantined:,} quarantined)"
                )
                out.append(
                    InputStats(str(path), digest, path.stat().st_size, 0, 0, 0, 0, fmt.name, note)
                )
                continue
            this_node = node_id(path, node)
            nodes.add(this_node)
            out.append(_ingest_one(engine, fmt, path, digest, clock, this_node, role))
        _check_interleave(engine, sorted(nodes))
        rebuild_capacity(engine)
        return out


def _ingest_one(
    engine: DuckDBEngine,
    fmt: LogFormat,
    path: Path,
    digest: str,
    clock: Clock,
    node: str,
    role: str | None,
) -> InputStats:
    params = {"path": literal_path(str(path)), "delim": LINE_DELIM}
    try:
        lines = int(engine.scalar(queries.load("engine_logs/lines"), **params))
        engine.execute(
            f"CREATE OR REPLACE TEMP TABLE {_PARSED} AS {queries.load(fmt.parse)}",
            **params,
            year=clock.year,
            anchor=clock.anchor.replace(tzinfo=None) if clock.anchor else None,
            timezone=clock.timezone,
            torn_row=torn_row(path, lines),
        )
    except (duckdb.IOException, duckdb.InvalidInputException, duckdb.ConversionException) as e:
        raise InputError(
            f"cannot read as a {fmt.title} log: {str(e).splitlines()[0]}",
            where=str(path),
            fix="give a text log (.log, .gz or .zst)",
        ) from None
    server_role = role or _role(engine, fmt, path)
    ids = {"node": node, "role": server_role, "source": str(path)}
    loaded, duplicates, quarantined, back, first_back = engine.rows(
        queries.load("engine_logs/counts"), node=node
    )[0]
    for table, query in (
        ("engine_startup", fmt.insert_startup),
        ("engine_requests", fmt.insert_requests),
        ("engine_aborts", fmt.insert_aborts),
        ("engine_kv_faults", "engine_logs/insert_kv_faults"),
        ("engine_pool_usage", "engine_logs/insert_usage"),
        ("quarantine", "engine_logs/insert_quarantine"),
    ):
        engine.execute(f"INSERT INTO {table} BY NAME {queries.load(query)}", **ids)
    read = loaded + duplicates + quarantined
    note = f"lines={lines} other={lines - read}"
    if back:
        note += f" back_in_time={back} from line {first_back}"
    if server_role is None:
        note += " role=unknown (give its role)"
    engine.execute(
        "INSERT INTO inputs (path, sha256, bytes, rows_read, rows_loaded, duplicates, "
        "quarantined, format, note) VALUES ($path, $sha256, $bytes, $rows_read, $rows_loaded, "
        "$duplicates, $quarantined, $format, $note)",
        path=str(path),
        sha256=digest,
        bytes=path.stat().st_size,
        rows_read=read,
        rows_loaded=loaded,
        duplicates=duplicates,
        quarantined=quarantined,
        format=fmt.name,
        note=note,
    )
    engine.execute(f"DROP TABLE IF EXISTS {_PARSED}")
    size = path.stat().st_size
    counts = (read, loaded, duplicates, quarantined)
    return InputStats(str(path), digest, size, *counts, fmt.name, note)


def _role(engine: DuckDBEngine, fmt: LogFormat, path: Path) -> str | None:
    """The role the log's own lines give (vLLM: kv_role of its args dumps); InputError when
    its starts disagree."""
    found = sorted(r for (r,) in engine.rows(queries.load(fmt.role)))
    if len(found) > 1:
        raise InputError(
            f"log holds starts of different roles ({', '.join(found)})",
            where=str(path),
            fix=f"split it per server, or give {option('role')}",
        )
    return found[0] if found else None


def _check_interleave(engine: DuckDBEngine, nodes: list[str]) -> None:
    """InputError when two files of one node cover overlapping times."""
    if not nodes:
        return
    rows = engine.rows(queries.load("engine_logs/span_of_sources"), nodes=nodes)
    last: dict[str, tuple[str, datetime]] = {}
    for node, source, first, end in rows:
        prev = last.get(node)
        if prev is not None and first < prev[1]:
            raise InputError(
                f"two files of node {node} interleave in time ({prev[0]} runs to "
                f"{prev[1].isoformat()}, {source} starts at {first.isoformat()})",
                where=f"{prev[0]}, {source}",
                fix=f"give each server its own {option('node')}, or ingest the logs of "
                "different servers under different file names",
            )
        if prev is None or end > prev[1]:
            last[node] = (source, end)


_SNIFF_LINES = 400
_SNIFF = (
    # (engine, pattern of a line head), checked on the first lines of a file
    ("sglang", re.compile(r"^\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}")),
    (
        "trtllm",
        re.compile(r"^(?:\[\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}\] )?\[(?:TRT-LLM|TensorRT-LLM)\]"),
    ),
    (
        "vllm",
        re.compile(
            r"^(?:\([^()]* pid=\d+\) )?.*?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} "
            r"\d{2}:\d{2}:\d{2}(?:[.,]\d+)? \[?[^\s\]]+\.py:\d+\]"
        ),
    ),
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def detect_engine(path: Path) -> str:
    """Which engine wrote a log, by the heads of its first lines (`sglang`, `vllm`,
    `trtllm`); InputError when none matches."""
    counts = {name: 0 for name, _ in _SNIFF}
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            for _, line in zip(range(_SNIFF_LINES), f, strict=False):
                line = _ANSI.sub("", line)
                for name, pattern in _SNIFF:
                    if pattern.match(line):
                        counts[name] += 1
                        break
    except (OSError, EOFError) as e:
        raise InputError(
            f"cannot read the log ({e})", where=str(path), fix="check the path"
        ) from None
    best = max(counts, key=lambda k: counts[k])
    if counts[best] == 0:
        raise InputError(
            f"cannot tell which engine wrote this log (no SGLang, vLLM or TensorRT-LLM line "
            f"head in its first {_SNIFF_LINES} lines)",
            where=str(path),
            fix=f"give {option('profile')} sglang, vllm or trtllm",
        )
    return best
