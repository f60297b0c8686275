"""The case's scope against the logs: no figure on a scope that holds nothing, and no case-file
id that silently matches nothing (docs: "Evidence and uncertainty").

- `require_scope`: an analysis whose scope (the requests of the case's models inside the
  window: `bands`) is empty is refused, naming the models the logs do hold, with their counts
  and time spans, unless the zero is deliberate (`allow_empty`).
- `missing_source`: a case `[[source]]` whose files the database's `inputs` do not hold;
  `changed_source`: one whose file on disk is not the content loaded from its path.
- `unmatched`: the warnings for an exclusion account with no request in scope and a
  `[[capacity]]` `nodes` glob matching no node of its role in scope.
"""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..case import Case, Source
from ..engines import SQLEngine, TableMissing, needing
from ..errors import ForensicsError, option
from ..formats import iso_z, relative_path
from ..schema import shown_id

MAX_LISTED = 5  # models, inputs or nodes named in one message


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
    """Refuse (exit 2) an analysis whose scope holds no request, unless `allow_empty`."""
    if in_scope or allow_empty:
        return
    raise ForensicsError(
        empty_scope(engine, case),
        where=str(case.path),
        fix="check models and [window] in the case file against the logs, or give "
        f"{option('allow_empty')} to accept a count of zero",
    )


def input_paths(engine: SQLEngine) -> list[tuple[str, str]]:
    """(path, sha256) of every input the case store holds (none without an `inputs` table)."""
    try:
        with needing(engine, "inputs"):
            return [(str(p), str(s)) for p, s in engine.frame("scope/inputs").rows()]
    except TableMissing:
        return []


def missing_source(
    case: Case,
    inputs: list[tuple[str, str]],
    files_of: Callable[[str], list[Path]],
    sha256_of: Callable[[Path], str],
) -> str | None:
    """The first file (or, when none is on disk, path) of a case `[[source]]` that is not
    among `inputs` ((path, sha256) pairs); None when every source is there. A file counts as
    there when an input has its path, else its sha256 (a moved or renamed copy);
    `files_of(source path)` lists a source's files on disk (empty when it names none)."""
    resolved = {_resolved(p) for p, _ in inputs}
    shas = {s for _, s in inputs}
    for source in case.sources:
        files = files_of(source.path)
        if not files:
            if not any(_belongs(p, source.path) for p, _ in inputs):
                return source.path
            continue
        for f in files:
            if _resolved(str(f)) not in resolved and sha256_of(f) not in shas:
                return str(f)
    return None


def changed_source(
    case: Case,
    inputs: list[tuple[str, str]],
    files_of: Callable[[str], list[Path]],
    sha256_of: Callable[[Path], str],
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
        for f in files_of(source.path):
            shas = loaded.get(_resolved(str(f)))
            if shas is None:
                continue
            now = sha256_of(f)
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
    """Warnings for case-file ids that match nothing in scope (see the module doc)."""
    rows = engine.frame("scope/unmatched").rows(named=True)
    warnings: list[str] = []
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
