"""Engine server logs as evidence: one reader loop for every engine (SGLang, vLLM,
TensorRT-LLM; docs/engine-logs.md), each engine a `LogFormat` naming its own queries.

`ingest_logs(engine, fmt, files, clock, node=, role=)` reads each log DuckDB-natively (whole
lines, numbered from 1, matched with regular expressions in `queries/<engine>/parse.sql`) into
the engine tables (`queries/engine_logs/schema.sql`): the engine's own inserts
(`engine_startup`, `engine_requests`, `engine_aborts`), then, for every engine alike,
`engine_kv_faults`, `engine_pool_usage`, `quarantine`, `engine_sources` (per log: node, first
and last evidence line time, startup lines) and `engine_time_steps` (evidence lines more than
a second before the line above them). Then `engine_starts`, `engine_capacity` and
`engine_faults` are rebuilt over every engine (`capacity_spans`), since a span ends at the
node's next start.

Rules every engine keeps: rows_read = evidence lines = rows_loaded + duplicates + quarantined
(other output is counted in the note, `lines=N other=K`); the last line of a file that ends
without a newline is cut short and gives no figure (`torn_row`); two logs of one node id
that both start a server and whose lines interleave in time are refused, naming both and the
node rule that tells them apart (`_refuse_clashes`); a log going back in time, a quarantined
startup line, pool figures of one start that disagree and a start without a readable pool
are `engine_faults`. All files of one call commit in one transaction (a failure changes
nothing); a file already in `inputs` (same sha256) is not read again.

The node id is `node`, or the file name without `.log`/`.gz`/`.zst`/`.txt` (a metrics export
named by the hour only, `sglang-request-metrics-YYYYMMDD_HH.log`, takes its folder's name); a
`node` holding `{name}` or `{folder}` is a rule filled per file (`{folder}/{name}`). The role
is `role`, else the one the log's lines give (`LogFormat.role`), else the one role the
node's other inputs name.
"""

from __future__ import annotations

import calendar
import dataclasses
import gzip
import re
import zlib
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import zstandard

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, option
from ..formats import iso_z
from ..schema import InputStats
from .capacity_spans import rebuild_capacity, register
from .inputfile import hash_file, literal_path

_PARSED = "_engine_parsed"
_SUFFIXES = (".gz", ".zst", ".log", ".txt")
_UNKNOWN_ROLE = " role=unknown (give its role)"
# SGLang's metrics exporter's hourly file (request_metrics_exporter.py): named by the hour only
_METRICS_FILE = re.compile(r"^sglang-request-metrics-\d{8}_\d{2}$")

# the tables every engine's parsed lines feed, after the engine's own (engine_startup first)
_SHARED_INSERTS = (
    ("engine_kv_faults", "engine_logs/insert_kv_faults"),
    ("engine_pool_usage", "engine_logs/insert_usage"),
    ("quarantine", "engine_logs/insert_quarantine"),
    ("engine_sources", "engine_logs/insert_source"),
    ("engine_time_steps", "engine_logs/time_steps"),
)

register(faults="engine_logs/faults")


@dataclass(frozen=True)
class LogFormat:
    """One engine's reader: its name (the input format), what messages call it, and its
    queries: `parse` (one row per evidence line into _engine_parsed, with at least
    source_row, kind, ts, reason, raw, rid, usage_pct), `inserts` ((table, query) pairs over
    _engine_parsed, engine_startup first), `role` (one row per role its lines give; None: they
    give none), `counts` (loaded, duplicates, quarantined; None: KV fault repeats are the
    duplicates) and `finish` (run once after all files of a call). `roles`: what `role` may
    be given as; `needs_year`: its lines name no year (a `Clock` gives it), and `clock` the
    query giving a log's first and last month-day and its new years (`_chain_years`).
    `role_fix`: what a refusal for a node of unknown role adds after "give --role" (the
    lines that would tell it, or that the engine's logs tell none)."""

    name: str
    title: str
    parse: str
    inserts: tuple[tuple[str, str], ...]
    role: str | None = None
    counts: str | None = None
    finish: tuple[str, ...] = ()
    roles: tuple[str, ...] = (*schema.ROLES, "both")
    needs_year: bool = False
    clock: str | None = None
    role_fix: str = ""


@dataclass(frozen=True)
class Clock:
    """How a log's times become UTC: `year` (the year of its node's first line), else
    `anchor` and `window_end` (a case window: the year that puts the most of the node's lines
    in it, else its first line nearest to `anchor`), and the zone the engine's clock was in.
    The logs of one node are one clock, in time order across files (`_chain_years`)."""

    year: int | None = None
    anchor: datetime | None = None
    timezone: str = "UTC"
    window_end: datetime | None = None


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


# --- node ids ----------------------------------------------------------------------------------


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


# --- the files ---------------------------------------------------------------------------------


def torn_row(path: Path, lines: int) -> int:
    """The number of the file's last line when its (decompressed) text ends without a newline
    (a line cut short: its last figure may be incomplete), else 0; a compressed stream that
    breaks off ends without one."""
    if lines == 0:
        return 0
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
        else:
            with path.open("rb") as plain:
                plain.seek(-1, 2)
                last = plain.read(1)
    except (OSError, EOFError, zlib.error, zstandard.ZstdError):
        return lines
    return 0 if last == b"\n" else lines


def ensure_tables(engine: DuckDBEngine) -> None:
    """Create the bookkeeping and engine evidence tables if missing."""
    engine.execute(schema.INPUTS_DDL)
    engine.execute(schema.QUARANTINE_DDL)
    engine.run("engine_logs/schema")


# --- the reader loop ---------------------------------------------------------------------------


def ingest_logs(
    engine: DuckDBEngine,
    fmt: LogFormat,
    files: list[Path],
    clock: Clock | None = None,
    node: str | None = None,
    role: str | None = None,
) -> list[InputStats]:
    """Load one engine's logs into the engine tables; one InputStats per file, in order. All
    files commit in one transaction: a file that cannot be read, a log with no year to read
    it by, contradictory roles or two logs of one node that interleave raise InputError and
    change nothing."""
    clock = clock or Clock()
    if role is not None and role not in fmt.roles:
        raise InputError(
            f"unknown engine role {role!r}",
            where=option("role"),
            fix=f"use {' or '.join(', '.join(fmt.roles).rsplit(', ', 1))}",
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
        todo: list[tuple[Path, str, InputStats | None]] = []
        for path in files:
            path = Path(path)
            if not path.is_file():
                raise InputError("no such log file", where=str(path), fix="check the path")
            digest = hash_file(path)
            todo.append((path, digest, _already(engine, fmt, path, digest)))
        years = _chain_years(
            engine, fmt, [(p, node_id(p, node)) for p, _, s in todo if s is None], clock
        )
        for path, digest, stats in todo:
            if stats is None:
                year, note = years.get(path, (clock.year, None))
                one = dataclasses.replace(clock, year=year) if year is not None else clock
                stats = _ingest_one(engine, fmt, path, digest, one, node_id(path, node), role)
                if note:
                    engine.run("engine_logs/set_year_note", source=str(path), note=note)
            out.append(stats)
        _refuse_clashes(engine)
        for query in fmt.finish:
            engine.run(query)
        engine.run("engine_logs/fill_roles")
        rebuild_capacity(engine)  # every engine's starts, spans and faults
        return [_role_note(engine, s) for s in out]


# --- the year of logs that print none (vLLM) ---------------------------------------------------

_HALF_YEAR = timedelta(days=183)
_LEAP_YEAR = timedelta(days=366)


@dataclass(frozen=True)
class _Span:
    """A log's month-day clock: its first and last headed line in a leap year (2000), and how
    many new years it crosses (a month-day more than half a year below the line before)."""

    path: Path
    first: datetime
    last: datetime
    wraps: int


def _chain_years(
    engine: DuckDBEngine, fmt: LogFormat, files: list[tuple[Path, str]], clock: Clock
) -> dict[Path, tuple[int, str | None]]:
    """The year of each log's first line, for logs whose lines print none, and a warning for a
    log whose lines lie more than half a year outside the case window. The logs of one node
    are one clock in time order: they are ordered on the year's circle of month-days and
    start after its largest gap (rotated logs follow each other; the gap before the first is
    the rest of the year), and a log whose first line falls more than half a year below the
    last line of the log before it starts the next year, as a line within a log does. The
    first log's year is `clock.year`, else the year (of the window's, the one before or
    after) that puts the most of the node's time in the case window, else its first line
    nearest to the window's start."""
    if fmt.clock is None or (clock.year is None and clock.anchor is None):
        return {}
    nodes: dict[str, list[_Span]] = {}
    for path, node in files:
        first, last, wraps = engine.rows(queries.load(fmt.clock), path=literal_path(str(path)))[0]
        if first is not None:
            nodes.setdefault(node, []).append(_Span(path, first, last, int(wraps)))
    years: dict[Path, tuple[int, str | None]] = {}
    for spans in nodes.values():
        chain = _in_time_order(spans)
        starts = [clock.year] if clock.year is not None else _candidates(clock)
        best = max(starts, key=lambda y: (_in_window(chain, y, clock), -_distance(chain, y, clock)))
        for span, (year, first, last) in zip(chain, _dated(chain, best, clock), strict=True):
            years[span.path] = (year, _year_note(first, last, clock))
    return years


def _in_time_order(spans: list[_Span]) -> list[_Span]:
    """The logs of one node in time order: by first month-day, starting after the largest gap
    between one log's last line and the next one's first (ties: the earliest log)."""
    spans = sorted(spans, key=lambda s: (s.first, str(s.path)))

    def gap(before: _Span, after: _Span) -> timedelta:
        step = after.first - before.last
        return step + _LEAP_YEAR if step < -_HALF_YEAR else step

    gaps = [gap(spans[i - 1], spans[i]) for i in range(len(spans))]
    start = max(range(len(spans)), key=lambda i: (gaps[i], -i))
    return spans[start:] + spans[:start]


def _dated(chain: list[_Span], year: int, clock: Clock) -> list[tuple[int, datetime, datetime]]:
    """Each log's first-line year and its first and last line in UTC (approximate where a
    month-day does not exist in the year: 02-29 is read as 02-28), when the first log's first
    line is in `year`."""
    out = []
    prev: _Span | None = None
    for span in chain:
        if prev is not None:
            year += prev.wraps + (1 if span.first < prev.last - _HALF_YEAR else 0)
        out.append((year, _utc(span.first, year, clock), _utc(span.last, year + span.wraps, clock)))
        prev = span
    return out


def _utc(md: datetime, year: int, clock: Clock) -> datetime:
    day = md.day if not (md.month == 2 and md.day == 29 and not calendar.isleap(year)) else 28
    local = md.replace(year=year, day=day, tzinfo=zoneinfo.ZoneInfo(clock.timezone))
    return local.astimezone(UTC)


def _candidates(clock: Clock) -> list[int]:
    assert clock.anchor is not None
    return [clock.anchor.year - 1, clock.anchor.year, clock.anchor.year + 1]


def _window(clock: Clock) -> tuple[datetime, datetime] | None:
    if clock.anchor is None or clock.window_end is None:
        return None
    return _aware(clock.anchor), _aware(clock.window_end)


def _aware(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _in_window(chain: list[_Span], year: int, clock: Clock) -> float:
    """Seconds of the logs' first-to-last-line spans inside the case window."""
    window = _window(clock)
    if window is None:
        return 0.0
    start, end = window
    return sum(
        max(0.0, (min(last, end) - max(first, start)).total_seconds())
        for _, first, last in _dated(chain, year, clock)
    )


def _distance(chain: list[_Span], year: int, clock: Clock) -> float:
    """Seconds between the first log's first line and the window's start."""
    if clock.anchor is None:
        return 0.0
    first = _dated(chain, year, clock)[0][1]
    return abs((first - _aware(clock.anchor)).total_seconds())


def _year_note(first: datetime, last: datetime, clock: Clock) -> str | None:
    """Why a log's year may be wrong: its lines lie more than half a year outside the case
    window (None when they do not, or without a window)."""
    window = _window(clock)
    if window is None:
        return None
    start, end = window
    if first >= start - _HALF_YEAR and last <= end + _HALF_YEAR:
        return None
    return (
        f"its lines run from {iso_z(first)} to {iso_z(last)}, more than half a year outside "
        f"the case window ({iso_z(start)} .. {iso_z(end)}): the log prints no year, so its "
        "year is the one that puts the most of its node's log time in the window (new years "
        "counted in time order); check the dates"
    )


def _already(engine: DuckDBEngine, fmt: LogFormat, path: Path, digest: str) -> InputStats | None:
    """The InputStats of a log already ingested (same sha256): zeros, as this call read and
    loaded nothing of it, with the earlier figures in the note; None for a new log."""
    prior = engine.rows(
        "SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs WHERE sha256 = $sha",
        sha=digest,
    )
    if not prior:
        return None
    read, loaded, duplicates, quarantined = prior[0]
    note = (
        f"already ingested (same sha256): nothing changed (then: {read:,} read, "
        f"{loaded:,} loaded, {duplicates:,} duplicates, {quarantined:,} quarantined)"
    )
    return InputStats(str(path), digest, path.stat().st_size, 0, 0, 0, 0, fmt.name, note)


def _ingest_one(
    engine: DuckDBEngine,
    fmt: LogFormat,
    path: Path,
    digest: str,
    clock: Clock,
    node: str,
    role: str | None,
) -> InputStats:
    literal = literal_path(str(path))
    try:
        lines = int(engine.scalar(queries.load("engine_logs/lines"), path=literal))
        engine.execute(
            f"CREATE OR REPLACE TEMP TABLE {_PARSED} AS {queries.load(fmt.parse)}",
            path=literal,
            year=clock.year,
            anchor=clock.anchor.replace(tzinfo=None) if clock.anchor else None,
            timezone=clock.timezone,
            torn_row=torn_row(path, lines),
        )
    except (duckdb.IOException, duckdb.InvalidInputException, duckdb.ConversionException) as e:
        raise InputError(
            f"cannot read as {_article(fmt.title)} {fmt.title} log: {str(e).splitlines()[0]}",
            where=str(path),
            fix="give a text log (.log, .gz or .zst)",
        ) from None
    server_role = role or _role(engine, fmt, path)
    ids = {"node": node, "role": server_role, "source": str(path)}
    loaded, duplicates, quarantined = engine.rows(
        queries.load(fmt.counts or "engine_logs/counts"), node=node
    )[0]
    for table, query in (*fmt.inserts, *_SHARED_INSERTS):
        engine.execute(f"INSERT INTO {table} BY NAME {queries.load(query)}", **ids)
    read = loaded + duplicates + quarantined
    note = f"lines={lines} other={lines - read}"
    if server_role is None:
        note += _UNKNOWN_ROLE
    size = path.stat().st_size
    engine.run(
        "engine_logs/record_input",
        path=str(path),
        sha256=digest,
        bytes=size,
        rows_read=read,
        rows_loaded=loaded,
        duplicates=duplicates,
        quarantined=quarantined,
        format=fmt.name,
        note=note,
    )
    engine.execute(f"DROP TABLE IF EXISTS {_PARSED}")
    return InputStats(
        str(path), digest, size, read, loaded, duplicates, quarantined, fmt.name, note
    )


def _article(word: str) -> str:
    return "an" if word[:1].upper() in "AEIOS" else "a"


def _role(engine: DuckDBEngine, fmt: LogFormat, path: Path) -> str | None:
    """The role the parsed log's own lines give (None when they give none); InputError when
    they give more than one."""
    if fmt.role is None:
        return None
    found = sorted(r for (r,) in engine.rows(queries.load(fmt.role)))
    if len(found) > 1:
        raise InputError(
            f"log holds lines of both roles ({', '.join(found)})",
            where=str(path),
            fix=f"split it per server, or give {option('role')}",
        )
    return found[0] if found else None


def _refuse_clashes(engine: DuckDBEngine) -> None:
    """InputError when two logs of one node id both start servers and their lines interleave
    in time: two servers (or two copies of one log) that a merge would make one."""
    clashes = engine.rows(queries.load("engine_logs/clashes"))
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
    roleless, with_role = engine.rows(queries.load("engine_logs/roleless"), source=stats.path)[0]
    if roleless or not with_role:
        return stats
    note = stats.note[: -len(_UNKNOWN_ROLE)] + " role=from its node"
    engine.run("engine_logs/set_note", note=note, sha256=stats.sha256)
    return dataclasses.replace(stats, note=note)


# --- which engine wrote a log ------------------------------------------------------------------

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
