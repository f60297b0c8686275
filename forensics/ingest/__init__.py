"""Lossless ingest of request logs into a case database (docs: "Ingest rules").

Every input record is loaded, counted as a duplicate, or quarantined with its reason:
rows_read = rows_loaded + duplicates + quarantined, per input and in total. The work is
DuckDB-native (no per-record Python); Python only resolves paths, hashes inputs and checks
compressed streams (`inputfile`). Inputs are staged (`staging`), the mapping compiled to SQL
(`compile`), and all inputs of one call loaded in one transaction (`load`): a bad input
leaves the database unchanged. SGLang, vLLM and TensorRT-LLM server logs are engine
evidence (`sglang`, `vllm`, `trtllm`: `ENGINE_READERS`).

Duplicates: the first occurrence (lowest line/row) of a request_id is loaded; later records
with the same content (every loaded column but provenance) are duplicates, later ones with
different content are quarantined as `conflicting duplicate`. A request_id already loaded by
an earlier input makes every record of it a duplicate or a conflict likewise.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from .. import scratch
from ..engines import DuckDBEngine, queries
from ..errors import InputError, option
from ..mapping import Mapping, load_mapping, profile
from ..progress import SILENT, Progress, step
from ..schema import INGEST_KEYS, InputStats
from . import engine_logs, inputfile, sglang, trtllm, vllm
from .engine_logs import Clock
from .inputfile import Prepared, hash_file, resolve_inputs
from .load import already, load_all, stored_inputs
from .shape import shape_of
from .staging import ReadAhead, batchable, drop_scratch, stage, stage_batch
from .store import export_parquet, new_db_name, publish_db

__all__ = [
    "Clock",
    "IngestReport",
    "InputStats",
    "export_parquet",
    "hash_file",
    "ingest",
    "ingest_into",
    "resolve_inputs",
    "resolve_mapping",
]

# the readers of engine logs, by input format
ENGINE_READERS = {f.name: f for f in (sglang.FORMAT, vllm.FORMAT, trtllm.FORMAT)}
SCRATCH_PREFIX = "forensics-ingest-"  # decompressed prefixes: TEMP/forensics-ingest-PID-XXXX


@dataclass
class IngestReport:
    """What one ingest did: per-input accounting and warnings (truncation, re-ingest)."""

    inputs: list[InputStats] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        """Sums over inputs: rows_read, rows_loaded, duplicates, quarantined."""
        return {k: sum(getattr(s, k) for s in self.inputs) for k in INGEST_KEYS}


def ingest(
    paths: list[str] | list[Path] | str | Path,
    db: str | Path,
    *,
    mapping: str | Path | None = None,
    profile: str | None = None,
    node: str | None = None,
    role: str | None = None,
    to_parquet: str | Path | None = None,
    memory_limit: str | None = None,
    temp_dir: str | Path | None = None,
    progress: Progress = SILENT,
    force: bool = False,
    allow_empty: bool = False,
    clock: Clock | None = None,
) -> IngestReport:
    """Ingest `paths` (files, globs, folders) into the case database file `db`; `force`
    re-ingests inputs already loaded, `allow_empty` loads an input none of whose records can
    be loaded (see `ingest_into`).

    A database held by another process is refused (DuckDB's file lock). A new database is
    built under a scratch name beside `db` and linked into place only when complete, so a
    failed or killed first ingest leaves no database, and no ingest ever deletes a database
    another process made (when two create `db` at once, the later one is refused).
    """
    m = resolve_mapping(mapping, profile)
    files = resolve_inputs(paths, m.format)  # a wrong path is refused before a database is made
    db_path = Path(db)
    new = None if db_path.exists() else new_db_name(db_path)
    # the first input, if Parquet, is hashed while DuckDB opens (only that start overlaps: the
    # inputs after it are prepared as fast as they are hashed)
    prehash = inputfile.Prehash(files[:1], m)
    try:
        with DuckDBEngine(new or db_path, memory_limit=memory_limit, temp_dir=temp_dir) as engine:
            report = ingest_into(
                engine,
                paths,
                mapping=m,
                node=node,
                role=role,
                to_parquet=to_parquet,
                temp_dir=temp_dir,
                progress=progress,
                force=force,
                allow_empty=allow_empty,
                clock=clock,
                _prehash=prehash,
            )
        if new is not None:
            publish_db(new, db_path)
        return report
    finally:
        prehash.close()
        if new is not None:  # only files this process created, under its own scratch name
            for part in (new, new.with_name(new.name + ".wal")):
                scratch.remove(part)


def ingest_into(
    engine: DuckDBEngine,
    paths: list[str] | list[Path] | str | Path,
    *,
    mapping: Mapping | str | Path | None = None,
    profile: str | None = None,
    node: str | None = None,
    role: str | None = None,
    to_parquet: str | Path | None = None,
    temp_dir: str | Path | None = None,
    progress: Progress = SILENT,
    force: bool = False,
    allow_empty: bool = False,
    clock: Clock | None = None,
    _prehash: inputfile.Prehash | None = None,
) -> IngestReport:
    """Ingest `paths` into an open case database; all inputs commit together or not at all.

    A request log that loads no record while some are quarantined (a mapping that reads
    every time in the wrong unit, say) is refused, naming its top quarantine reasons, and
    nothing is written; `allow_empty` loads it anyway (its quarantine rows kept) with a
    warning. Each input's top three quarantine reasons are in its `InputStats.reasons`.

    An input already loaded (same sha256) is skipped, unless this mapping differs from the
    one it was loaded with: that is refused (InputError naming the file), as is a file at a
    path the database holds other content from (a log re-exported under its name). With
    `force`, such inputs are re-ingested: what was loaded from their path (whatever its
    sha256) and from their content (requests, quarantine rows, `inputs` rows) is deleted and
    the file is loaded, in the same transaction. (`_prehash`: `ingest`'s hashes of the
    inputs, begun before it opened the database.)
    """
    m = mapping if isinstance(mapping, Mapping) else resolve_mapping(mapping, profile)
    notes: list[str] = []
    files = resolve_inputs(paths, m.format, notes)
    if m.format in ENGINE_READERS:
        if force:
            raise InputError(
                f"{option('force')} does not apply to engine logs (profile {m.format})",
                where=option("force"),
                fix=f"ingest the engine logs into a new {option('db')}",
            )
        with step(progress, "ingest: engine logs", _bytes(files), "bytes") as bar:
            loaded = engine_logs.ingest_logs(
                engine, ENGINE_READERS[m.format], files, clock, node, role
            )
            stats = [_with_reasons(engine, s) for s in loaded]
            bar.advance(sum(s.bytes for s in stats))
        report = IngestReport(inputs=stats, warnings=notes)
        report.warnings.extend(s.note for s in stats if s.note and "already" in s.note)
        return report

    report = IngestReport(warnings=notes)
    # pid in the name: a killed ingest's copies are swept by the next one
    scratch_dir = scratch.make_dir(temp_dir, SCRATCH_PREFIX)
    try:
        prepared = []
        ahead = _read_ahead(engine, files, m)
        with step(progress, "ingest: read inputs", _bytes(files), "bytes") as bar:
            try:
                for f in files:
                    prepared.append(inputfile.prepare(f, m, scratch_dir, _prehash))
                    bar.advance(prepared[-1].size)
            except BaseException:
                if ahead is not None:
                    ahead.join(cancel=True)
                raise
            if ahead is not None:
                ahead.join()
        for p in prepared:
            if p.note:
                report.warnings.append(f"{p.path}: {p.note}")
        # staging runs outside the transaction: rowids of committed temp tables are the
        # line order; nothing is written to the database file yet
        with step(progress, "ingest: stage inputs", sum(p.size for p in prepared), "bytes") as bar:
            _stage_all(engine, prepared, m, force, bar, ahead)
        with step(progress, "ingest: load", sum(p.size for p in prepared), "bytes") as bar:
            report.warnings.extend(
                load_all(engine, prepared, m, report.inputs, bar, allow_empty=allow_empty)
            )
    finally:
        drop_scratch(engine)
        scratch.remove(scratch_dir)  # ignores errors: cleanup never fails the ingest
    if to_parquet is not None:
        export_parquet(engine, to_parquet)
    return report


BATCH_BYTES = 16 << 20  # inputs below this size are staged in batches (one read for many)


def _read_ahead(engine: DuckDBEngine, files: list[Path], m: Mapping) -> ReadAhead | None:
    """The read-ahead (`staging.ReadAhead`) of the first JSONL input staged alone (of at
    least BATCH_BYTES), started; None when there is none."""
    for i, f in enumerate(files):
        try:
            size = f.stat().st_size
        except OSError:
            return None  # prepare reports it
        if (m.format or inputfile.suffix_format(f)) == "jsonl" and size >= BATCH_BYTES:
            return ReadAhead(engine, i, f).start()
    return None


def _stage_all(
    engine: DuckDBEngine,
    prepared: list[Prepared],
    m: Mapping,
    force: bool,
    bar: Progress,
    ahead: ReadAhead | None = None,
) -> None:
    """Stage each input to load (`stage`), in order; consecutive small JSONL or Parquet
    inputs together (`stage_batch`: one read rather than a few statements each). An input
    already ingested is skipped (`already`); its refusal is raised after the inputs before it
    are staged, so that an earlier input's read error comes first, as when each is staged in
    turn. The input read ahead (`ahead`) is staged from the lines read."""
    stored = stored_inputs(engine)
    earlier: set[str] = set()
    batch: list[tuple[int, Prepared]] = []
    batch_bytes = 0  # of the inputs in `batch` (summed as they join: 10,000 files)
    shape = shape_of(m, engine)  # what each JSONL record's __shape holds

    def flush() -> None:
        nonlocal batch_bytes
        if batch:
            stage_batch(engine, batch, shape)
            bar.advance(batch_bytes)
            batch.clear()
            batch_bytes = 0

    for i, p in enumerate(prepared):
        try:
            skip = already(p, earlier, stored, m, force)
        except InputError:
            flush()
            raise
        earlier.add(p.sha256)
        if skip:
            bar.advance(p.size)
        elif batchable(p) and p.replaces is None and p.size < BATCH_BYTES:
            # a batch is of one format; a Parquet batch, copied into a table, of BATCH_BYTES
            if batch and (
                batch[-1][1].fmt != p.fmt
                or (p.fmt == "parquet" and batch_bytes + p.size > BATCH_BYTES)
            ):
                flush()
            batch.append((i, p))
            batch_bytes += p.size
        else:
            flush()
            lines = ahead.take(i, p) if ahead is not None else None
            p.table = stage(engine, p, i, shape, m.csv, lines=lines)
            bar.advance(p.size)
    flush()


def _bytes(files: list[Path]) -> int:
    """The size of the inputs, for progress (0 for one that cannot be read: reading it
    reports why)."""
    total = 0
    for f in files:
        with contextlib.suppress(OSError):
            total += f.stat().st_size
    return total


def _with_reasons(engine: DuckDBEngine, stats: InputStats) -> InputStats:
    """An engine log's accounting with its top quarantine reasons (when it loaded now)."""
    if not stats.quarantined or (stats.note and "already" in stats.note):
        return stats
    rows = engine.rows(queries.load("ingest/source_reasons"), source=stats.path)
    return dataclasses.replace(stats, reasons=tuple((str(r), int(n)) for r, n in rows))


def resolve_mapping(mapping: str | Path | None, profile_name: str | None) -> Mapping:
    """The mapping file `mapping` or the built-in profile `profile_name` (exactly one)."""
    if mapping is not None and profile_name is not None:
        raise InputError(
            f"both {option('mapping')} and {option('profile')} given",
            fix=f"give one of {option('mapping')} FILE or {option('profile')} NAME",
        )
    if mapping is not None:
        # each { sql } is checked on the case database before it runs (validate_sql): not
        # here as well, which would open a second DuckDB just to parse it (~25 ms)
        return load_mapping(mapping, check_sql=False)
    if profile_name is not None:
        return profile(profile_name)
    raise InputError(
        "no mapping given",
        fix=f"give {option('mapping')} FILE.mapping.toml or {option('profile')} "
        "canonical|openai|sglang|vllm|trtllm",
    )
