"""The load transaction: every prepared input of one ingest call is loaded, its records
accounted for, in one transaction (a failure leaves the database as it was).

Inputs load in runs (`_load_run`): one input, or consecutive inputs staged in one batch
whose mapping compiles alike; a record's __row is its input's index * STRIDE + its line,
so a run's records meet in input order as if each input loaded after the one before, and
each input's figures are counted by GROUP BY. Per run: each record's mapped request_id is
hashed once (`ids.sql`); ids that repeat in the run or are already in `requests`
(`keys.sql`) have their records typed and compared by content first (`classify.sql`); then
every other valid record and the first of each repeated id are loaded straight from the
source in one pass (`load_direct.sql`); records left over are found (`rest.sql`) and typed
again for their reason. rows_read = rows_loaded + duplicates + quarantined per input, or
the load raises (a bug, never the input's fault).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from .. import schema
from ..engines import DuckDBEngine, queries
from ..errors import InputError, first_line, option
from ..mapping import Mapping, mapping_digest
from ..progress import Progress
from ..schema import InputStats
from .compile import Compiled, compile_mapping, input_structures, signature
from .inputfile import Prepared
from .staging import STRIDE, memory_error, read_error, temp_table, temp_table_sql

RAW_LIMIT = 2048
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def load_all(
    engine: DuckDBEngine,
    prepared: list[Prepared],
    m: Mapping,
    stats: list[InputStats],
    progress: Progress,
    allow_empty: bool = False,
) -> list[str]:
    """Load every staged input in one transaction, appending each one's accounting to
    `stats` (bytes reported to `progress`); returns the warnings. An input none of whose
    records can be read as mapped (every one quarantined for a failed check) is refused
    (InputError naming its top reasons; the transaction rolls back) unless `allow_empty`.

    Inputs staged in one batch whose mapping compiles alike (`signature`) load as one run:
    each statement runs once for the run, and each input's figures are counted by its
    index (__row // STRIDE). Records meet in the order of input, then line, as when each
    input loads after the one before: the first record of an id in the run is loaded."""
    warnings: list[str] = []
    failures: list[_SqlFailures] = []
    with engine.transaction():
        for ddl in (
            schema.REQUESTS_DDL,
            schema.INPUTS_DDL,
            schema.INPUTS_MIGRATE,
            schema.INPUTS_MIGRATE_FIELDS,
            schema.QUARANTINE_DDL,
            schema.QUARANTINE_VALUES_DDL,
            schema.INPUT_DUPLICATES_DDL,
        ):
            engine.execute(ddl)
        engine.run("ingest/macro_time")
        engine.run("ingest/macro_int")
        # [timestamp] origin: what epoch numbers count from (the time macros read it)
        origin = None if m.time_origin is None else m.time_origin - _EPOCH
        engine.execute(
            "SET VARIABLE _ing_origin_us = CAST($us AS BIGINT)",
            us=None if origin is None else origin // timedelta(microseconds=1),
        )
        seen: dict[str, str] = {}
        # the inputs loaded before this call, read once: sha256 -> figures, mapping unrecorded
        before = {
            sha: tuple(rest) for sha, *rest in engine.rows(queries.load("ingest/inputs_before"))
        }
        for run in _runs(engine, prepared, m):
            if len(run) == 1 and _skip(engine, run[0][1], seen, before, warnings, stats):
                progress.advance(run[0][1].size)
                continue
            stats.extend(_load_run(engine, run, m, seen, warnings, failures, allow_empty))
            progress.advance(sum(p.size for _, p in run))
    # after the commit: a statement that fails inside a transaction aborts it
    for failed in failures:
        warnings.extend(failed.explain(engine))
    return warnings


def _runs(
    engine: DuckDBEngine, prepared: list[Prepared], m: Mapping
) -> Iterator[list[tuple[int, Prepared]]]:
    """The inputs in order, as runs loaded together: consecutive inputs of one staged batch
    whose mapping compiles alike; every other input alone."""
    batches: dict[str, list[int]] = {}
    for i, p in enumerate(prepared):
        if p.table is not None and _batched(p):
            batches.setdefault(p.table, []).append(i)
    signatures: dict[int, Any] = {}
    for table, members in batches.items():
        if prepared[members[0]].fmt == "parquet":  # files of one schema: they compile alike
            signatures.update((i, ("parquet",)) for i in members)
            continue
        structures = input_structures(engine, table, STRIDE)
        for i in members:
            signatures[i] = signature(structures.get(i), m, i)
    run: list[tuple[int, Prepared]] = []
    for i, p in enumerate(prepared):
        if run and (
            i not in signatures
            or p.table != run[-1][1].table
            or signatures[i] != signatures.get(run[-1][0])
        ):
            yield run
            run = []
        run.append((i, p))
        if i not in signatures:
            yield run
            run = []
    if run:
        yield run


def _batched(p: Prepared) -> bool:
    """Whether p was staged in a batch (`staging.stage_batch`) and is to be loaded."""
    return p.table is not None and p.table.startswith("_ing_batch_") and p.replaces is None


def _skip(
    engine: DuckDBEngine,
    p: Prepared,
    seen: dict[str, str],
    before: dict[str, tuple[Any, ...]],
    warnings: list[str],
    stats: list[InputStats],
) -> bool:
    """Whether input p is not loaded now (same content loaded before this call, `before`,
    or earlier in it, `seen`): then its zeros are appended to `stats`, the earlier figures in
    its note. An input to re-ingest (`force`) has what its earlier load left deleted here."""
    if p.replaces is not None and p.sha256 not in seen:
        _forget(engine, p)
        warnings.append(f"{p.path}: re-ingested ({option('force')}): its earlier load was replaced")
        return False
    if p.sha256 in seen:
        prior = engine.rows(queries.load("ingest/input_figures"), sha256=p.sha256)
        note = f"same content as {seen[p.sha256]} (same sha256): nothing changed"
    elif p.sha256 in before:
        *figures, unrecorded = before[p.sha256]
        prior = [tuple(figures)]
        note = "already ingested (same sha256): nothing changed"
        if unrecorded:
            note = (
                "already ingested (same sha256; its mapping was not recorded): nothing "
                f"changed; {option('force')} re-ingests it with this mapping"
            )
    else:
        return False
    read, loaded, dups, quarantined = prior[0] if prior else (0, 0, 0, 0)
    # this call read and loaded nothing of it: zeros, and the earlier figures in the note
    note += f" (then: {read:,} read, {loaded:,} loaded, {dups:,} duplicates, "
    note += f"{quarantined:,} quarantined)"
    warnings.append(f"{p.path}: {note}")
    stats.append(InputStats(p.path, p.sha256, p.size, 0, 0, 0, 0, p.fmt, note))
    return True


def _refuse_empty(stats: InputStats, m: Mapping, allow_empty: bool, warnings: list[str]) -> None:
    """An input none of whose records could be read as mapped loads nothing: refused, naming
    its top quarantine reasons, unless a zero is deliberate (`allow_empty`). (An input whose
    records are all duplicates or conflicting duplicates of loaded ones is read fine: its
    content is in the database already, and conflicts are judged by the exposure range.)"""
    reasons = "; ".join(f"{reason} {n:,}" for reason, n in stats.reasons)
    what = (
        f"loads no record: {stats.quarantined:,} of {stats.rows_read:,} record(s) quarantined "
        f"(top reasons: {reasons})"
    )
    if allow_empty:
        warnings.append(f"{stats.path}: {what}")
        return
    raise InputError(
        what,
        where=stats.path,
        fix=f"fix the mapping ({m.origin}) for these reasons, or give {option('allow_empty')} "
        "to load it with no record",
    )


def _load_run(
    engine: DuckDBEngine,
    run: list[tuple[int, Prepared]],
    m: Mapping,
    seen: dict[str, str],
    warnings: list[str],
    failures: list[_SqlFailures],
    allow_empty: bool = False,
) -> list[InputStats]:
    """Load a run of staged inputs (`_runs`; most often one input) and account for each."""
    first, p = run[0]
    for _, q in run:
        seen[q.sha256] = q.path
    src = f'SELECT * FROM "{p.table}"'
    if _batched(p):  # the run's inputs of the batch: its rows by index
        src += f" WHERE __row >= {first * STRIDE} AND __row < {(run[-1][0] + 1) * STRIDE}"
    _source(engine, p, first, src)
    compiled = compile_mapping(engine, p, m)
    params = dict(compiled.params)
    raw_sql = compiled.raw_select
    params.update(
        id_mapped="request_id" in compiled.fields,
        id_prefixes=[q.sha256[:16] for _, q in run],
        sources=[q.source for _, q in run],
        stride=STRIDE,
        base=first,
        unit=m.unit,
        tz=m.timezone,
        max_text_bytes=schema.MAX_TEXT_BYTES,
        max_tokens=schema.MAX_TOKENS,
    )
    mapped = f"WITH _ing_mapped AS NOT MATERIALIZED ({compiled.select}) "
    typed = f"SELECT * FROM ({queries.load('ingest/typed')})"
    with _load_threads(engine, p), _mapping_errors(m, p):
        # 1. the ids to compare by content (they repeat, or were loaded before), and their
        # records, typed and compared; 2. every other valid record and the first of each
        # repeated id, loaded straight from the source in one pass (no staged copy);
        # 3. when records are left over, those (each has a reason), typed again: few
        counts = dict(engine.rows(queries.load("ingest/read_counts"), stride=STRIDE))
        for i, q in run:
            if not counts.get(i):
                raise InputError(
                    "the file holds no records", where=q.path, fix="check the export; remove it"
                )
        read = sum(counts.values())
        temp_table(engine, "_ing_run", "ingest/run_inputs", inps=[i for i, _ in run], **params)
        ids = f"WITH _ing_mapped AS NOT MATERIALIZED ({compiled.ids}) "
        temp_table_sql(engine, "_ing_ids", ids + _select("ingest/ids"), params)
        with _aggregate_threads(engine):
            temp_table(engine, "_ing_keys", "ingest/keys")
        temp_table(engine, "_ing_cand", "ingest/candidates")
        engine.execute('DROP TABLE temp."_ing_ids"')  # 16 bytes a record: not kept for the load
        _source(engine, p, first, src, "SELECT __row FROM _ing_cand")
        temp_table_sql(engine, "_ing_typed", mapped + typed, params)
        temp_table(engine, "_ing_special", "ingest/classify", default_status=schema.DEFAULT_STATUS)
        temp_table(engine, "_ing_prior", "ingest/prior")
        _source(engine, p, first, src)
        direct = mapped + f", _ing_all AS ({typed}) " + _select("ingest/load_direct")
        # DuckDB pushes `failed IS NULL` below the typed projection by inlining the whole
        # check (time parsing included), so every value was typed twice; off for this one
        # statement, the filter runs on the typed values (1M records: 1.85 -> 1.45 s CPU)
        with engine.settings(disabled_optimizers="filter_pushdown"):
            loaded = engine.rows(f"INSERT INTO requests {direct}", **params)[0][0]
        skipped = engine.scalar("SELECT count(*) FROM _ing_special WHERE outcome <> 'load'")
        loaded_by: dict[int, int] = {first: loaded}
        if read != loaded + skipped or len(run) > 1:
            temp_table(engine, "_ing_loaded", "ingest/loaded", stride=STRIDE)
            loaded_by = dict(engine.rows(queries.load("ingest/loaded_counts"), stride=STRIDE))
        if read != loaded + skipped:
            temp_table(engine, "_ing_rest", "ingest/rest")
            _source(
                engine,
                p,
                first,
                src,
                "SELECT __row FROM _ing_rest EXCEPT SELECT __row FROM _ing_cand",
            )
            engine.execute(f"INSERT INTO _ing_typed {mapped}{typed}", **params)
            _source(engine, p, first, src)
        # reason texts for the records that failed a check (planning the _why macros costs
        # ~50 ms: only when there is a record to explain)
        if engine.scalar("SELECT count(*) FROM _ing_typed WHERE failed IS NOT NULL"):
            temp_table(
                engine,
                "_ing_reasons",
                "ingest/reasons",
                unit=m.unit,
                tz=m.timezone,
                max_text_bytes=schema.MAX_TEXT_BYTES,
                max_tokens_text=schema.MAX_TOKENS_TEXT,
            )
        else:
            engine.execute(
                'CREATE OR REPLACE TEMP TABLE "_ing_reasons" '
                "(source_row BIGINT, raw VARCHAR, reason VARCHAR)"
            )
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_out" AS {queries.load("ingest/out")}')
    outcomes = {
        int(i): (int(d), int(q), int(c))
        for i, d, q, c in engine.rows(queries.load("ingest/counts"), stride=STRIDE)
    }
    for i, q in run:
        dups, quarantined, _ = outcomes.get(i, (0, 0, 0))
        if counts[i] != loaded_by.get(i, 0) + dups + quarantined:  # a bug, never the input's
            raise RuntimeError(
                f"{q.path}: {counts[i]} records read but {loaded_by.get(i, 0)} loaded, {dups} "
                f"duplicates and {quarantined} quarantined"
            )
    reasons: dict[int, list[tuple[str, int]]] = {}
    if any(q for _, q, _ in outcomes.values()):
        # raw values of the records quarantined (ingest_insert_quarantine joins `_ing_raw`
        # on __row); `raw_sql` reads `_ing_src`, pointed at those only
        _source(engine, p, first, src, queries.load("ingest/quarantined_rows"))
        engine.execute(f'CREATE OR REPLACE TEMP TABLE "_ing_raw" AS {raw_sql}', **params)
        _source(engine, p, first, src)
        engine.run("ingest/insert_quarantine", raw_limit=RAW_LIMIT, **params)
        engine.run("ingest/insert_quarantine_values", **params)
        for i, reason, n in engine.rows(queries.load("ingest/top_reasons"), stride=STRIDE):
            reasons.setdefault(int(i), []).append((str(reason), int(n)))
        if compiled.sql_checks:
            by_input: dict[int, list[tuple[Any, ...]]] = {}
            for i, *failed in engine.rows(queries.load("ingest/sql_failed"), stride=STRIDE):
                by_input.setdefault(int(i), []).append(tuple(failed))
            for i, q in run:
                if i in by_input:
                    failures.append(_SqlFailures(q, compiled, params, by_input[i]))
    out = []
    for i, q in run:
        dups, quarantined, conflicts = outcomes.get(i, (0, 0, 0))
        loaded_i = loaded_by.get(i, 0)
        stats = InputStats(
            q.path,
            q.sha256,
            q.size,
            counts[i],
            loaded_i,
            dups,
            quarantined,
            q.fmt,
            q.note,
            tuple(reasons.get(i, ())),
        )
        if loaded_i == 0 and quarantined == counts[i] and not conflicts:
            _refuse_empty(stats, m, allow_empty, warnings)
        out.append(stats)
    _record_duplicates(engine, run)
    engine.run(
        "ingest/insert_input",
        paths=[q.source for _, q in run],
        sha256s=[q.sha256 for _, q in run],
        bytes=[q.size for _, q in run],
        rows_read=[s.rows_read for s in out],
        rows_loaded=[s.rows_loaded for s in out],
        duplicates=[s.duplicates for s in out],
        quarantined=[s.quarantined for s in out],
        formats=[q.fmt for _, q in run],
        notes=[q.note for _, q in run],
        mapping_sha256=mapping_digest(m),
        fields=",".join(f.name for f in schema.REQUEST_FIELDS if f.name in compiled.fields),
    )
    return out


def _record_duplicates(engine: DuckDBEngine, run: list[tuple[int, Prepared]]) -> None:
    """`input_duplicates`: per input of the run, its records not loaded as duplicates of
    another input's (`ingest/duplicate_sources`), by that input's path."""
    by_index = {i: q for i, q in run}
    rows = []
    for inp, of_source, of_inp, n in engine.rows(
        queries.load("ingest/duplicate_sources"), stride=STRIDE
    ):
        q = by_index[int(inp)]
        of_path = of_source if of_source is not None else by_index[int(of_inp)].source
        rows.append((q.source, q.sha256, str(of_path), int(n)))
    if rows:
        engine.run(
            "ingest/insert_duplicates",
            paths=[r[0] for r in rows],
            sha256s=[r[1] for r in rows],
            of_paths=[r[2] for r in rows],
            records=[r[3] for r in rows],
        )


@contextlib.contextmanager
def _mapping_errors(m: Mapping, p: Prepared) -> Iterator[None]:
    """A DuckDB error while the mapping is applied -> one InputError naming mapping and file
    (for Parquet, read here rather than staged, an I/O error is the file's); running out of
    memory -> a ResourceError naming the file and the memory limit."""
    try:
        yield
    except duckdb.OutOfMemoryException as e:
        raise memory_error(p, e) from None
    except (duckdb.IOException, duckdb.InvalidInputException) as e:
        if p.fmt != "parquet":
            raise _mapping_error(m, p, e) from None
        raise read_error(p, e) from None
    except duckdb.Error as e:
        raise _mapping_error(m, p, e) from None


def _source(
    engine: DuckDBEngine, p: Prepared, first: int, src: str, rows: str | None = None
) -> None:
    """Point view `_ing_src` (what the mapped SELECT reads) at the input (`src`), or at the
    rows whose __row is in `rows` (a SELECT of one column); `first`: the index of the run's
    first input. A Parquet input staged alone (a view over its file) has its rows picked by
    the file's row number (`stage`'s view `<table>_rows`), a filter the scan applies before
    reading the other columns; on __row, computed from it, every row is read. A batch of
    Parquet inputs is a table: __row is stored."""
    if rows is None:
        sql = src
    elif p.fmt == "parquet" and not _batched(p):
        sql = (
            f'SELECT * EXCLUDE (__fr) FROM "{p.table}_rows" '
            f"WHERE __fr IN (SELECT __r - {first * STRIDE + 1} FROM ({rows}) AS _(__r))"
        )
    else:
        sql = f"SELECT * FROM ({src}) WHERE __row IN ({rows})"
    engine.execute(f'CREATE OR REPLACE TEMP VIEW "_ing_src" AS {sql}')


def spare_thread(row_groups: int, threads: int) -> int | None:
    """The threads for loading a Parquet file of `row_groups` on `threads` cores; None keeps
    them. DuckDB reads one row group per thread, so when a few row groups do not divide among
    the threads (5 on 2: 3 and 2), some cores idle while the last ones are read. With
    ceil(row_groups / k) threads, k = row_groups // threads, no thread takes more than k, an
    even share at most, and the cores share the tail (5 on 2: 3 threads of 2, 2 and 1). From
    four row groups a thread on, the tail is short and the threads stay as they are."""
    if threads < row_groups < 4 * threads and row_groups % threads:
        return -(-row_groups // (row_groups // threads))
    return None


def _load_threads(engine: DuckDBEngine, p: Prepared) -> contextlib.AbstractContextManager[None]:
    """DuckDB's threads for the statements that load `p` (`spare_thread`; a Parquet input
    staged alone, whose row groups staging read from its footer)."""
    row_groups = p.row_groups
    if row_groups is None:
        return contextlib.nullcontext()
    return _threads(engine, lambda threads: spare_thread(row_groups, threads))


def aggregate_threads(threads: int) -> int | None:
    """The threads for grouping the ids' hashes (`keys.sql`, nearly all distinct) when DuckDB
    runs `threads`; None keeps them. On 2 threads DuckDB's hash aggregate of 5M of them took
    1.6x the CPU of 1 thread and twice that of 3 or 4, and was slower than sorting them; on 3
    it takes half the time of the sort from 1M to 20M ids. So 2 become 3."""
    return 3 if threads == 2 else None


def _aggregate_threads(engine: DuckDBEngine) -> contextlib.AbstractContextManager[None]:
    """DuckDB's threads for the ids' aggregate (`aggregate_threads`), set back after it."""
    return _threads(engine, aggregate_threads)


def _threads(
    engine: DuckDBEngine, rule: Callable[[int], int | None]
) -> contextlib.AbstractContextManager[None]:
    """DuckDB's threads set by `rule` (of the threads it runs; None keeps them) for a block,
    and set back after it."""
    threads = rule(int(engine.scalar("SELECT current_setting('threads')")))
    if threads is None:
        return contextlib.nullcontext()
    return engine.settings(threads=str(threads))


def _select(query: str) -> str:
    """A query file as a subquery, to follow the caller's WITH (its CTEs stay visible)."""
    return f"SELECT * FROM ({queries.load(query)})"


@dataclass
class _SqlFailures:
    """The { sql } sources that failed on some records of one input: (reason, records, first
    row) each, explained once the load has committed."""

    p: Prepared
    compiled: Compiled
    params: dict[str, Any]
    failed: list[tuple[Any, ...]]

    def explain(self, engine: DuckDBEngine) -> list[str]:
        """One warning per source: how many records it failed on, and the error of the first
        (the expression run again, unguarded, on that one record)."""
        warnings = []
        for reason, count, row in self.failed:
            label = reason.removeprefix("sql of ").removesuffix(" failed on this record")
            sql = self.compiled.sql_checks[label]
            src = f'SELECT * FROM "{self.p.table}"'
            _source(engine, self.p, int(row) // STRIDE, src, f"SELECT {int(row)}")
            try:
                engine.rows(f"SELECT (\n{sql}\n) FROM {self.compiled.sql_source}", **self.params)
                columns = ", ".join(self.compiled.sql_mixed.get(label, [])) or "its input"
                why = f"{columns}: a value of another JSON type than most records hold there"
            except duckdb.Error as e:
                why = first_line(e)
            warnings.append(
                f"{self.p.path}: sql of {label} failed on {count:,} record(s), quarantined; "
                f"row {int(row) % STRIDE}: {why}"
            )
        return warnings


def _mapping_error(m: Mapping, p: Prepared, e: Exception) -> InputError:
    return InputError(
        f"the mapping cannot be applied ({first_line(e).replace(p.read_path, p.path)})",
        where=f"{m.origin} on {p.path}",
        fix="check the sql expressions and paths in [fields]/[extra] against the source",
    )


@dataclass(frozen=True)
class StoredInputs:
    """The inputs already ingested, read once for the `already` checks of one call."""

    by_sha: dict[str, tuple[str, str | None]]  # sha256 -> (path, mapping digest or None)
    by_path: dict[str, set[str]]  # path -> the sha256s loaded under it


def stored_inputs(engine: DuckDBEngine) -> StoredInputs:
    """Every input already ingested: by sha256 (its path and mapping digest, None when not
    recorded) and by path."""
    if not engine.table_exists("inputs"):
        return StoredInputs({}, {})
    has_mapping = "mapping_sha256" in dict(engine.describe("SELECT * FROM inputs"))
    rows = engine.rows(
        "SELECT sha256, path, "
        + ("mapping_sha256" if has_mapping else "NULL::VARCHAR")
        + " FROM inputs"
    )
    by_path: dict[str, set[str]] = {}
    for sha, path, _ in rows:
        by_path.setdefault(path, set()).add(sha)
    return StoredInputs({sha: (path, digest) for sha, path, digest in rows}, by_path)


def already(
    p: Prepared,
    earlier: set[str],
    stored: StoredInputs,
    m: Mapping,
    force: bool = False,
) -> bool:
    """Whether this input's content was ingested before (`stored`, from `stored_inputs`) or
    is earlier in this call (its sha256 in `earlier`), and is to be skipped. Loaded with
    another mapping, or its path loaded with other content (a log re-exported under its
    name): InputError, unless `force`, which marks it to be re-ingested (`p.replaces`: every
    path whose earlier load it replaces, its own and that of its content)."""
    if p.sha256 in earlier:
        return True
    prior = stored.by_sha.get(p.sha256)
    other = sorted(stored.by_path.get(p.source, set()) - {p.sha256})
    if force and (prior is not None or other):
        paths = ([prior[0]] if prior is not None else []) + ([p.source] if other else [])
        p.replaces = tuple(dict.fromkeys(paths))
        return False
    if other:
        raise InputError(
            f"the case database holds other content loaded from this path (sha256 "
            f"{', '.join(s[:16] for s in other)}; the file's is now {p.sha256[:16]}): a log "
            "re-exported under its name would be counted beside its earlier load",
            where=p.path,
            fix=f"give {option('force')} to replace what was loaded from it (its requests and "
            "quarantine rows) with this content, or give the new export another file name to "
            "keep both",
        )
    if prior is None:
        return False
    path, stored_mapping = prior
    if stored_mapping is not None and stored_mapping != mapping_digest(m):
        raise InputError(
            f"already ingested (as {path}) with another mapping, which this one would not replace",
            where=p.path,
            fix=f"give {option('force')} to re-ingest it with this mapping (its loaded records "
            "and quarantine rows are replaced), or give the mapping it was loaded with",
        )
    return True


def _forget(engine: DuckDBEngine, p: Prepared) -> None:
    """Delete what earlier loads left under the paths this input replaces (`force`: its own
    path, whatever content was loaded from it, and the path its content was loaded under),
    inside the transaction: their requests, quarantine rows and `inputs` rows."""
    assert p.replaces is not None
    for path in p.replaces:
        for query in (
            "ingest/forget_requests",
            "ingest/forget_quarantine",
            "ingest/forget_quarantine_values",
            "ingest/forget_duplicates",
            "ingest/forget_input",
        ):
            engine.run(query, path=path)
    engine.run("ingest/forget_content", sha256=p.sha256)
