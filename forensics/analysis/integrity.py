"""What an analysis was computed from, so no step shows figures of another case file.

After each analysis, `record` writes `analysis_meta` (key, value) into the case database (or
the Spark case store): the digest of the case file's effective content (`case_digest`: every
parsed value but `[notify]`, which only notify reads, each source mapping's `mapping_digest`,
the accounts read from exclusion files; not comments, layout or key order), the digest of
the inputs it read (`inputs` rows: sha256 and mapping of each), the exclusion setting, the
digest of the summary, and the code that computed it (`tool_version`, `duckdb_version`:
`forensics.versions()`).
`check` refuses with one line (`AnalysisError`, fix: re-run `forensics analyze`) when any
differs from now; `report` and `notify` call it, `open_case` re-runs the analysis instead.
`clear` empties the record before an analysis starts, so a failed one leaves none.

`manifest` builds `manifest.json` for the output folder, for a custodian to check what was
handed over: every output file of one analysis (`analysis_id`, the digest of its record)
with its bytes, sha256 and the step that wrote it; the inputs' sha256, the case file's digest
and sha256, the analysis record and the versions. It is deterministic: sorted, no wall-clock
time; so a case database, whose bytes differ between runs of the same analysis (DuckDB's page
layout), is listed under `not_hashed` with that reason, and manifest.json does not list itself
(a file cannot hold its own sha256). `listed_outputs` reads an earlier one back: what the
toolkit wrote in the folder, and of which analysis (`forensics.pipeline` publishes with it).
"""

from __future__ import annotations

import hashlib
import io
import json
import operator
import os
from collections.abc import Iterator
from dataclasses import asdict, is_dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any, NamedTuple

import polars as pl

from ..case import Case
from ..engines import SQLEngine, TableMissing, needing
from ..errors import AnalysisError, ForensicsError, command, option
from ..formats import digest, relative_path
from ..mapping import load_mapping, mapping_digest, profile
from ..version import versions
from .summary import ingest_figures

META_TABLE = "analysis_meta"
MANIFEST = "manifest.json"
# outputs whose bytes are not reproducible, listed with why instead of a sha256
NOT_HASHED = {
    ".duckdb": "a DuckDB file's bytes differ between runs of the same analysis (its page "
    "layout); its content is identified by the inputs' sha256 and its analysis record "
    "(table analysis_meta, copied under analysis)",
    ".wal": "DuckDB's write-ahead log of the case database (see the .duckdb entry)",
    "/": "a Parquet case store (a folder): its files' bytes differ between runs of the same "
    "analysis; its content is identified by the inputs' sha256 and its analysis record",
}
_ABOUT = (
    "sha256 and size of every output file in this folder (paths relative to it), all of one "
    "analysis (analysis_id), each with the step that wrote it; the inputs they were computed "
    "from, the case file and the code; manifest.json does not list itself: a file cannot hold "
    "its own sha256. Files it does not list are not the toolkit's"
)
_SCHEMA = {"key": pl.String, "value": pl.String}


def case_digest(case: Case, *, analysis_only: bool = False) -> str:
    """sha256 of the case file's effective content (see the module doc); paths count relative
    to the case file, so moving the case folder keeps it. `analysis_only` leaves out what no
    analysis reads (`[notify]`, `[[exclude]] notify`, `[[event]] audience`: the notices'
    texts and readers), so rewording a notice needs no re-analysis."""
    body = _plain(asdict(case), case.folder)
    body.pop("path", None)
    if analysis_only:  # what only notify reads: who is notified, who reads an event
        body.pop("notify", None)
        for exclusion in body["exclusions"]:
            exclusion.pop("notify", None)
        for event in body["events"]:
            event.pop("audience", None)
    for exclusion in body["exclusions"]:  # where ids are written: lines move with comments
        exclusion.pop("places", None)
        exclusion.pop("comments", None)
    for source in body["sources"]:
        source["path"] = relative_path(source["path"], case.folder)
    for entry in body["capacity"]:  # `models` counts only when set: older cases keep theirs
        if entry.get("models") is None:
            entry.pop("models", None)
    body["source_mappings"] = [_source_mapping(s.mapping, s.profile) for s in case.sources]
    return digest(body)


def summary_digest(summary: dict[str, Any]) -> str:
    """sha256 of a summary's content as summary.json holds it (layout aside)."""
    return digest(json.loads(json.dumps(summary, ensure_ascii=False, default=str)))


def inputs_digest(engine: SQLEngine) -> str:
    """sha256 of the inputs an analysis reads: (sha256, mapping) of every `inputs` row."""
    try:
        with needing(engine, "inputs"):
            frame = engine.frame("integrity/inputs")
    except TableMissing:
        return digest([])
    mappings = (
        frame["mapping_sha256"].to_list()
        if "mapping_sha256" in frame.columns
        else [None] * frame.height
    )
    rows = sorted(zip(frame["sha256"].to_list(), mappings, strict=True), key=str)
    return digest(rows)


def clear(engine: SQLEngine) -> None:
    """Forget the recorded analysis (before one starts: a failed analysis leaves none)."""
    engine.write_frame(META_TABLE, pl.DataFrame(schema=_SCHEMA), order_by="key")


def record(engine: SQLEngine, case: Case, exclusions: bool, summary: dict[str, Any]) -> None:
    """Record what the analysis now in the database was computed from."""
    tool = versions()
    values = {
        **_expected(engine, case, exclusions),
        "summary": summary_digest(summary),
        "tool_version": tool["version"],
        "duckdb_version": tool["duckdb"],
    }
    frame = pl.DataFrame(list(values.items()), schema=_SCHEMA, orient="row")
    engine.write_frame(META_TABLE, frame, order_by="key")


def stored(engine: SQLEngine) -> dict[str, str]:
    """The recorded analysis as key -> value (empty when none)."""
    if not engine.table_exists(META_TABLE):
        return {}
    return dict(engine.frame("integrity/analysis_meta").iter_rows())


def stale_reason(
    engine: SQLEngine,
    case: Case,
    exclusions: bool | None = None,
    summary: dict[str, Any] | None = None,
) -> str | None:
    """Why the analysis in the database does not belong to this case file, these inputs
    (this exclusion setting, this summary, when given); None when it does."""
    meta = stored(engine)
    if not meta:
        return "the case database holds no recorded analysis"
    expected = _expected(engine, case, exclusions if exclusions is not None else None)
    if meta.get("case") != expected["case"]:
        return (
            "the analysis in the case database was computed from another version of the case "
            "file (or of a mapping it names)"
        )
    if meta.get("inputs") != expected["inputs"]:
        return "logs were ingested or re-ingested since the analysis"
    if exclusions is not None and meta.get("exclusions") != expected["exclusions"]:
        return "the analysis was computed with the other exclusion setting"
    if summary is not None and meta.get("summary") != summary_digest(summary):
        return "summary.json in the output folder is not from the case database's last analysis"
    return None


def check(
    engine: SQLEngine,
    case: Case,
    db: str | Path,
    *,
    summary: dict[str, Any] | None = None,
    out: str | Path | None = None,
) -> None:
    """Raise AnalysisError (one line) unless the database's analysis is of this case file,
    its inputs as they are now (and, when given, produced this summary.json)."""
    reason = stale_reason(engine, case, summary=summary)
    if reason is None:
        return
    raise AnalysisError(
        reason,
        where=str(db),
        fix=f"re-run {command('analyze')} {case.path} {option('db')} {db} {option('out')} "
        + (str(out) if out is not None else "DIR"),
    )


class Output(NamedTuple):
    """One file (or a folder kept whole, such as a Parquet case store) of an analysis'
    outputs: its `path` relative to the output folder, where its bytes are now (`source`: the
    staging folder, or the output folder for a file kept) and the step that wrote it
    (`analyze`, `notify`, `report`, `ingest`); `digest`: its (size, sha256) when the step
    took them as it wrote the file (it is not read again). A tuple: hundreds of thousands
    of notices are made one each."""

    path: str
    source: str | Path
    written_by: str
    digest: tuple[int, str] | None = None


def analysis_id(engine: SQLEngine) -> str:
    """The id of the analysis now in the case database: sha256 of its record (what it was
    computed from, its summary, the code). Every output of that analysis carries it, through
    the manifest; the same analysis has the same id."""
    return digest(stored(engine))


def listed_outputs(out: Path) -> tuple[str | None, dict[str, str]]:
    """(analysis id, {path: the step that wrote it}) of the outputs out/manifest.json lists;
    (None, {}) without a readable one. A manifest written before ids were recorded gives the
    id of its analysis record and "" for the step."""
    try:
        body = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        entries = [*body.get("files", []), *body.get("not_hashed", [])]
        listed = {
            e["path"]: str(e.get("written_by", ""))
            for e in entries
            if isinstance(e.get("path"), str)
        }
        ident = body.get("analysis_id")
        if not isinstance(ident, str):
            ident = digest(body["analysis"]) if isinstance(body.get("analysis"), dict) else None
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError):
        return None, {}
    return ident, listed


def manifest(engine: SQLEngine, case: Case, outputs: list[Output]) -> bytes:
    """manifest.json (see the module doc) listing `outputs`, each hashed where its bytes are
    now; all of the analysis now in the case database (`analysis_id`)."""
    sink = io.BytesIO()
    write_manifest(engine, case, outputs, sink)
    return sink.getvalue()


def write_manifest(engine: SQLEngine, case: Case, outputs: list[Output], sink: IO[bytes]) -> None:
    """`manifest` written into `sink`, its file rows as they are made (hundreds of thousands
    of notices: no list of them is held, only the outputs)."""
    hashed, not_hashed = [], []
    for output in sorted(outputs, key=_path_of):
        path = output.path
        # splitext only for a name ending as NOT_HASHED's do (not hundreds of thousands of notices)
        ends = path.endswith(_NOT_HASHED_ENDINGS)
        reason = NOT_HASHED.get(os.path.splitext(path)[1]) if ends else None
        if output.digest is not None and reason is None:
            hashed.append(output)
            continue
        if path.endswith("/") or os.path.isdir(output.source):
            reason = NOT_HASHED["/"]
        if reason is not None:
            not_hashed.append({"path": path, "written_by": output.written_by, "reason": reason})
        else:
            hashed.append(output)

    def rows() -> Iterator[dict[str, Any]]:
        for output in hashed:
            size, sha = output.digest or _file_hash(Path(output.source)).values()
            yield {
                "path": output.path,
                "written_by": output.written_by,
                "bytes": size,
                "sha256": sha,
            }

    _, inputs = ingest_figures(engine, case.folder)
    record = stored(engine)
    body = {
        "about": _ABOUT,
        "analysis_id": digest(record),
        "case": {
            "file": case.path.name,
            "digest": case_digest(case),
            **_file_hash(case.path),
        },
        "files": rows(),
        "not_hashed": not_hashed,
        "inputs": [
            {k: row.get(k) for k in ("path", "bytes", "sha256", "format")} for row in inputs
        ],
        "analysis": dict(sorted(record.items())),
        "tool": versions(),
    }
    for text in _chunks(body, bool(hashed)):
        sink.write(text.encode())
    sink.write(b"\n")


_ROWS = "\ue000files\ue001"  # where `_dumps` puts the files (a value no path holds)
_NOT_HASHED_ENDINGS = tuple(ext for ext in NOT_HASHED if ext != "/")
_path_of = operator.attrgetter("path")
_quote = json.encoder.encode_basestring  # as json.dumps(ensure_ascii=False) writes a string


_FILE_ROW = {"path", "written_by", "bytes", "sha256"}


def _row_text(row: dict[str, Any]) -> str:
    """A flat row of `files` as the indenting encoder writes it (keys sorted); a file's row
    (`_FILE_ROW`, the notices') made in one piece, for hundreds of thousands of them."""
    if row.keys() == _FILE_ROW:
        size, path, sha, by = row["bytes"], row["path"], row["sha256"], row["written_by"]
        if type(size) is int and type(path) is str and type(sha) is str and type(by) is str:
            return (
                f'    {{\n      "bytes": {int.__repr__(size)},\n      "path": {_quote(path)},\n'
                f'      "sha256": {_quote(sha)},\n      "written_by": {_quote(by)}\n    }}'
            )
    return (
        "    {\n"
        + ",\n".join(
            f"      {_quote(k)}: {_quote(v) if type(v) is str else int.__repr__(v)}"
            for k, v in sorted(row.items())
        )
        + "\n    }"
    )


def _dumps(body: dict[str, Any]) -> str:
    """`json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False)`, its `files` (flat
    rows of text and whole numbers: thousands of notices) written row by row, as the
    indenting encoder (Python, not C) would write them."""
    files = body["files"]
    if not all(row and all(type(v) in (str, int) for v in row.values()) for row in files):
        return json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False)
    return "".join(_chunks(body, bool(files)))


def _chunks(body: dict[str, Any], any_rows: bool) -> Iterator[str]:
    """`_dumps(body)` in pieces, its `files` (an iterable of flat rows, none empty; `any_rows`:
    whether it holds one) read once, a row a piece."""
    whole = json.dumps(body | {"files": _ROWS}, sort_keys=True, indent=2, ensure_ascii=False)
    mark = f'"files": {_quote(_ROWS)}'
    if not any_rows or whole.count(mark) != 1:
        yield json.dumps(
            body | {"files": list(body["files"])}, sort_keys=True, indent=2, ensure_ascii=False
        )
        return
    head, tail = whole.split(mark)
    yield head + '"files": [\n'
    for at, row in enumerate(body["files"]):
        yield f",\n{_row_text(row)}" if at else _row_text(row)
    yield "\n  ]" + tail


def files_under(path: str | Path) -> list[str]:
    """`path`, or every file under it when it is a folder (e.g. notify/notices/), sorted; as
    strings (thousands of notices: no Path each)."""
    if not os.path.isdir(path):
        return [str(path)]
    walked = list(os.walk(path))
    if len(walked) == 1:  # no subfolder (a notice folder): the names' order is the paths'
        folder, _, files = walked[0]
        return [os.path.join(folder, name) for name in sorted(files)]
    found = [os.path.join(folder, name) for folder, _, files in walked for name in files]
    return sorted(found, key=lambda f: f.split(os.sep))


def _file_hash(path: Path) -> dict[str, Any]:
    """{"bytes": size, "sha256": hex digest} of a file, read in chunks."""
    sha = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            sha.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": sha.hexdigest()}


def _expected(engine: SQLEngine, case: Case, exclusions: bool | None) -> dict[str, str]:
    return {
        "case": case_digest(case, analysis_only=True),
        "exclusions": "on" if exclusions else "off",
        "inputs": inputs_digest(engine),
    }


def _source_mapping(mapping: Path | None, profile_name: str | None) -> str:
    try:
        # no { sql } check for a digest: ingest checks each one before it runs it
        m = (
            load_mapping(mapping, check_sql=False)
            if mapping is not None
            else profile(profile_name or "")
        )
    except (ForensicsError, OSError, UnicodeDecodeError) as e:
        return f"unreadable: {type(e).__name__}"  # still counted: it changes when fixed
    return mapping_digest(m)


def _plain(value: Any, folder: Path) -> Any:
    """JSON-ready form: paths relative to the case folder, times in ISO 8601."""
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    if isinstance(value, dict):
        return {str(k): _plain(v, folder) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, folder) for v in value]
    if isinstance(value, Path):
        return relative_path(value, folder)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return value
