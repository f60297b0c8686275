"""The case's scope against the logs: no figure on a scope that holds nothing, and no case-file
id that silently matches nothing (docs: "Evidence and uncertainty").

- `require_scope`: an analysis whose scope (the requests of the case's models inside the
  window: `bands`) is empty is refused, naming the models the logs do hold, with their counts
  and time spans, unless the zero is deliberate (`allow_empty`); so is one where a case model
  has no request in the window (naming it and the closest models the logs hold), or where no
  request in scope has a prefill `[[capacity]]` entry in force (naming the entries and the
  nodes and times of the requests).
- `missing_source`: a case `[[source]]` whose files the database's `inputs` do not hold;
  `changed_source`: one whose file on disk is not the content loaded from its path. Both,
  and `define_scope`'s search for moved copies, see the files on disk through `SourceFiles`:
  the pipeline's, which lists a source's files as ingest reads them and hashes each file
  once a command.
- `unmatched`: the warnings for an exclusion account with no request in scope and a
  `[[capacity]]` `nodes` glob matching no node of its role in scope.
- `define_scope`: the inputs of the case store that no case `[[source]]` names are out of
  scope: stored as `case_unnamed_inputs`, left out of the views `case_requests`,
  `case_engine_requests`, `case_engine_aborts` and `case_engine_kv_faults` that the analysis
  reads, and named in a warning (`unnamed_warning`).
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import glob
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..case import Case, Source
from ..engines import SQLEngine, TableMissing, needing
from ..errors import ForensicsError, option
from ..formats import iso_z, relative_path
from ..schema import shown_id

MAX_LISTED = 5  # models, inputs or nodes named in one message
UNNAMED_TABLE = "case_unnamed_inputs"
# the tables the analysis reads through a view of the case's inputs only: (table, view, the
# query defining it without the inputs the case does not name, the one when there are none)
SCOPED_VIEWS = (
    ("requests", "case_requests", "scope/case_requests", "scope/case_requests_all"),
    (
        "engine_requests",
        "case_engine_requests",
        "scope/case_engine_requests",
        "scope/case_engine_requests_all",
    ),
    (
        "engine_aborts",
        "case_engine_aborts",
        "scope/case_engine_aborts",
        "scope/case_engine_aborts_all",
    ),
    (
        "engine_kv_faults",
        "case_engine_kv_faults",
        "scope/case_engine_kv_faults",
        "scope/case_engine_kv_faults_all",
    ),
)


def empty_scope(engine: SQLEngine, case: Case) -> str:
    """What an empty scope is, in one line: the case's models and window, and what the logs
    hold instead (each model with its count and time span, busiest first)."""
    models = ", ".join(case.models)
    window = f"{iso_z(case.window_start)} .. {iso_z(case.window_end)}"
    return (
        f"no request of the case's models ({models}) in the window {window}; "
        f"the logs hold {_held(engine)}"
    )


def _held(engine: SQLEngine) -> str:
    try:
        with needing(engine, "requests"):
            rows = engine.frame("scope/held").rows()
    except TableMissing:
        return "no requests table"
    if not rows:
        return "no request at all"
    total = sum(int(r[1]) for r in rows)
    first = min(r[2] for r in rows)
    last = max(r[3] for r in rows)
    parts = [
        f"{model} {int(n):,} ({iso_z(lo)} .. {iso_z(hi)})" for model, n, lo, hi in rows[:MAX_LISTED]
    ]
    if len(rows) > MAX_LISTED:
        parts.append(f"and {len(rows) - MAX_LISTED} more model(s)")
    return f"{total:,} request(s) from {iso_z(first)} to {iso_z(last)}, by model: " + ", ".join(
        parts
    )


def require_scope(engine: SQLEngine, case: Case, in_scope: int, allow_empty: bool = False) -> None:
    """Refuse (exit 2), unless `allow_empty`, an analysis whose scope holds no request, a case
    model with no request in the window, or a scope no prefill `[[capacity]]` entry covers
    (needs `bands`)."""
    if allow_empty:
        return
    if not in_scope:
        raise ForensicsError(
            empty_scope(engine, case),
            where=str(case.path),
            fix="check models and [window] in the case file against the logs, or give "
            f"{option('allow_empty')} to accept a count of zero",
        )
    missing = empty_models(engine, case)
    if missing:
        raise ForensicsError(
            "; ".join(missing),
            where=str(case.path),
            fix="correct models in the case file (names are compared exactly), or give "
            f"{option('allow_empty')} to accept a count of zero for them",
        )
    uncovered = uncovered_scope(engine, case)
    if uncovered:
        raise ForensicsError(
            uncovered,
            where=str(case.path),
            fix="correct the [[capacity]] entries' nodes and times (forensics capacity derives "
            f"them from engine logs), or give {option('allow_empty')} to accept the count",
        )


def empty_models(engine: SQLEngine, case: Case) -> list[str]:
    """One line per case model with no request in the window (none when the scope is empty
    as a whole: `empty_scope` says so), naming what the logs hold of it, or the models the
    logs hold whose names are closest to it."""
    counts = dict(engine.frame("scope/models").rows())
    missing = [m for m in case.models if not counts.get(m)]
    if not missing or not counts:
        return []
    window = f"{iso_z(case.window_start)} .. {iso_z(case.window_end)}"
    held = {str(m): (int(n), lo, hi) for m, n, lo, hi in engine.frame("scope/held_models").rows()}
    lines = []
    for model in missing:
        line = f"no request of the case's model {model!r} in the window {window}; "
        if model in held:
            n, lo, hi = held[model]
            line += f"the logs hold {n:,} of it, from {iso_z(lo)} to {iso_z(hi)}"
        else:
            names = sorted(held, key=lambda m: (-held[m][0], m))
            close = difflib.get_close_matches(model, names, n=MAX_LISTED, cutoff=0.6)
            shown = close or names[:MAX_LISTED]
            line += ("the closest models the logs hold: " if close else "the logs hold: ") + (
                ", ".join(
                    f"{m!r} {held[m][0]:,} ({iso_z(held[m][1])} .. {iso_z(held[m][2])})"
                    for m in shown
                )
            )
        lines.append(line)
    return lines


def uncovered_scope(engine: SQLEngine, case: Case) -> str | None:
    """What a scope no prefill `[[capacity]]` entry covers is, in one line (None when some
    request in scope has one in force): the entries, and the prefill nodes and times of the
    requests."""
    covered, unknown, first, last = engine.frame("scope/capacity_cover").row(0)
    if covered or not unknown:
        return None
    entries = [
        f"{i} (nodes {c.nodes!r}, from {iso_z(c.start)} to {iso_z(c.end) or 'open'})"
        for i, c in enumerate(case.capacity, 1)
        if c.role == "prefill"
    ]
    seen = engine.frame("scope/nodes", role="prefill").rows()
    nodes = ", ".join(f"{n} ({int(k):,})" for n, k in seen) or "none named"
    if not entries:
        named = "the case file has none for"
    elif len(entries) == 1:
        named = f"entry {entries[0]} matches none of"
    else:
        named = f"entries {'; '.join(entries)} match none of"
    return (
        f"no request in scope has a prefill [[capacity]] entry in force: {named} the "
        f"{int(unknown):,} request(s) in band unknown_capacity, whose prefill nodes are "
        f"{nodes} and times run from {iso_z(first)} to {iso_z(last)}"
    )


@dataclass(frozen=True)
class SourceFiles:
    """The files of a case `[[source]]` on disk: `files_of(source)` lists them (none when its
    path names nothing there), `sha256_of(file)` gives one's sha256. The pipeline's lists them
    as ingest reads the source and hashes each file at most once a command
    (`pipeline.source_files`); `NO_FILES` lists none, so inputs are matched to the sources
    by their paths alone (no moved copy is looked for)."""

    files_of: Callable[[Source], list[Path]]
    sha256_of: Callable[[Path], str]


def _no_hash(file: Path) -> str:
    raise AssertionError(f"NO_FILES lists no file to hash: {file}")


NO_FILES = SourceFiles(lambda source: [], _no_hash)


def input_paths(engine: SQLEngine) -> list[tuple[str, str]]:
    """(path, sha256) of every input the case store holds (none without an `inputs` table)."""
    try:
        with needing(engine, "inputs"):
            return [(str(p), str(s)) for p, s in engine.frame("scope/inputs").rows()]
    except TableMissing:
        return []


def missing_source(case: Case, inputs: list[tuple[str, str]], files: SourceFiles) -> str | None:
    """The first file (or, when none is on disk, path) of a case `[[source]]` that is not
    among `inputs` ((path, sha256) pairs); None when every source is there. A file counts as
    there when an input has its path, else its sha256 (a moved or renamed copy)."""
    resolved = {_resolved(p) for p, _ in inputs}
    shas = {s for _, s in inputs}
    for source in case.sources:
        on_disk = files.files_of(source)
        if not on_disk:
            if not any(_belongs(p, source.path) for p, _ in inputs):
                return source.path
            continue
        for f in on_disk:
            if _resolved(str(f)) not in resolved and files.sha256_of(f) not in shas:
                return str(f)
    return None


def changed_source(
    case: Case, inputs: list[tuple[str, str]], files: SourceFiles
) -> tuple[Source, str, str, list[str]] | None:
    """The first file of a case `[[source]]` whose path is among `inputs` ((path, sha256)
    pairs) but whose content on disk is not what was loaded from that path (a log
    re-exported under its name since): (its source, the file, its sha256 now, the sha256s
    loaded from its path); None when every such file is as ingested. Files at no input's
    path are `missing_source`'s (a moved copy, or not ingested)."""
    loaded: dict[str, set[str]] = {}
    for path, sha in inputs:
        loaded.setdefault(_resolved(path), set()).add(sha)
    for source in case.sources:
        for f in files.files_of(source):
            shas = loaded.get(_resolved(str(f)))
            if shas is None:
                continue
            now = files.sha256_of(f)
            if shas != {now}:
                return source, str(f), now, sorted(shas)
    return None


def source_label(case: Case, path: str) -> str | None:
    """The case `[[source]]` (its path as the case file gives it, relative to the case
    folder) that an input path belongs to: the same file, a file under its folder, or a file
    its glob matches; None when none does."""
    for source in case.sources:
        if _belongs(path, source.path):
            return relative_path(source.path, case.folder)
    return None


def _belongs(path: str, source_path: str) -> bool:
    p = _resolved(path)
    s = _resolved(source_path)
    if p == s or p.startswith(s.rstrip("/") + "/"):
        return True
    return glob.has_magic(source_path) and fnmatch.fnmatchcase(p, s)


def _resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):
        return path


def unmatched(engine: SQLEngine, case: Case) -> list[str]:
    """Warnings for case-file ids that match nothing in scope (see the module doc), and for
    what `require_scope` refuses when the analysis accepted it (`allow_empty`): a case model
    with no request in the window, a scope no prefill `[[capacity]]` entry covers."""
    rows = engine.frame("scope/unmatched").rows(named=True)
    warnings = [
        f"{line}: the count of zero for it was accepted" for line in empty_models(engine, case)
    ]
    uncovered = uncovered_scope(engine, case)
    if uncovered:
        warnings.append(f"{uncovered}: the count was accepted")
    for row in sorted((r for r in rows if r["kind"] == "capacity"), key=lambda r: int(r["id"])):
        seen = _nodes(engine, row["role"])
        warnings.append(
            f"[[capacity]] entry {row['id']} ({row['role']}, nodes {row['detail']!r}) matches "
            f"no {row['role']} node of the case's requests in the window "
            + (f"(nodes seen: {', '.join(seen)})" if seen else "(they name none)")
        )
    by_reason: dict[str, list[str]] = {}
    for row in rows:
        if row["kind"] == "exclusion":
            by_reason.setdefault(str(row["detail"]), []).append(str(row["id"]))
    for reason, accounts in sorted(by_reason.items()):
        listed = sorted(accounts)
        shown = ", ".join(shown_id(a) for a in listed[:MAX_LISTED]) + (
            f" and {len(listed) - MAX_LISTED} more" if len(listed) > MAX_LISTED else ""
        )
        warnings.append(
            f"[[exclude]] {reason}: {len(listed)} account(s) with no request of the case's "
            f"models in the window: {shown}"
        )
    return warnings


def _nodes(engine: SQLEngine, role: Any) -> list[str]:
    return [str(n) for n, _ in engine.frame("scope/nodes", role=str(role)).rows()]


def case_inputs(
    case: Case, inputs: list[tuple[str, str]], files: SourceFiles = NO_FILES
) -> tuple[list[str], list[str]]:
    """(named, unnamed): the paths of `inputs` ((path, sha256) pairs) that a case `[[source]]`
    names, and the others. An input is named when its path is a source's file, lies under its
    folder or matches its glob, or when its sha256 is that of a source's file on disk that no
    input holds by path (a copy moved or renamed since ingest; a file that cannot be read is
    none). A case without `[[source]]` names every input (the case store is its evidence)."""
    paths = sorted({p for p, _ in inputs})
    if not case.sources:
        return paths, []
    named = {p for p in paths if any(_belongs(p, s.path) for s in case.sources)}
    if len(named) < len(paths):  # moved copies: hash only the source files no input has
        resolved = {_resolved(p) for p in paths}
        by_sha: dict[str, set[str]] = {}
        for p, digest in inputs:
            by_sha.setdefault(digest, set()).add(p)
        for source in case.sources:
            for f in files.files_of(source):
                if _resolved(str(f)) not in resolved:
                    with contextlib.suppress(OSError):  # unreadable: no copy of anything
                        named |= by_sha.get(files.sha256_of(f), set())
    return sorted(named), [p for p in paths if p not in named]


def define_scope(engine: SQLEngine, case: Case, files: SourceFiles = NO_FILES) -> list[str]:
    """Store the inputs no case `[[source]]` names (`case_unnamed_inputs`; moved copies are
    looked for among `files`) and define the views of the case's own records
    (`SCOPED_VIEWS`) over the tables the store holds; returns the unnamed inputs' paths."""
    _, unnamed = case_inputs(case, input_paths(engine), files)
    frame = pl.DataFrame({"path": unnamed}, schema={"path": pl.String})
    engine.write_frame(UNNAMED_TABLE, frame, "path")
    for table, _, filtered, whole in SCOPED_VIEWS:
        if engine.table_exists(table):
            engine.run(filtered if unnamed else whole)
    return unnamed


def ensure_scope(engine: SQLEngine, case: Case) -> None:
    """`define_scope` unless the views are there (an analysis step run on its own)."""
    if not all(
        engine.table_exists(view)
        for table, view, _, _ in SCOPED_VIEWS
        if engine.table_exists(table)
    ):
        define_scope(engine, case)


def unnamed_inputs(engine: SQLEngine) -> list[str]:
    """The inputs `define_scope` left out of the analysis (none before it ran)."""
    if not engine.table_exists(UNNAMED_TABLE):
        return []
    return [str(p) for p in engine.read_table(UNNAMED_TABLE)["path"].to_list()]


def unnamed_warning(engine: SQLEngine, case: Case) -> list[str]:
    """The warning naming the inputs of the case store that no case `[[source]]` names."""
    unnamed = [relative_path(p, case.folder) for p in unnamed_inputs(engine)]
    if not unnamed:
        return []
    shown = ", ".join(unnamed[:MAX_LISTED]) + (
        f" and {len(unnamed) - MAX_LISTED} more" if len(unnamed) > MAX_LISTED else ""
    )
    return [
        f"the case database holds {len(unnamed)} input(s) that no [[source]] of the case file "
        f"names, left out of every figure: {shown} (name them in a [[source]] to count them)"
    ]
