"""The one sequencer: the end-to-end steps behind the commands and the notebook (run, analyze,
notify, report, demo, capacity).

Each step opens the case store through `forensics.engines`, calls the stages in order
(ingest -> analysis -> render) and returns what the front ends show. Outputs are
deterministic: re-running into the same folder gives byte-identical files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import engines, ingest, scratch
from .analysis import (
    assumptions,
    blast_radius,
    coverage,
    evidence,
    exposure,
    integrity,
    owners,
    scope,
    truncation,
    uncertainty,
)
from .analysis import capacity as capacity_timeline
from .analysis.summary import build_summary, write_summary
from .case import Case, Source, load_case
from .engines import DuckDBEngine, EngineOptions, SQLEngine
from .errors import (
    AnalysisError,
    ForensicsError,
    InputError,
    command,
    open_file,
    option,
    render_terms,
)
from .formats import relative_path
from .ingest import engine_logs
from .mapping import ENGINE_FORMATS
from .progress import SILENT, Progress, step
from .render import capacity_entries
from .render import notify as notify_lists
from .render.notify import NotifyResult
from .schema import InputStats

DEMO_CASE = Path("sample_logs") / "glm53" / "incident.toml"
# the bundled cases `forensics demo --case NAME` runs (the first is the default)
DEMO_CASES = {
    "glm53": DEMO_CASE,
    "vllm-pd": Path("sample_logs") / "vllm-pd" / "incident.toml",
}
CASE_DB = "case.duckdb"
PARQUET_STORE = "requests"  # run on an exported store: the Parquet case store under out/
RUN_SCRATCH = ".forensics-run-"  # run's work folder beside out: .OUT.forensics-run-PID-XXXX


@dataclass
class AnalysisResult:
    """What one analysis produced: the summary dict, the files written, warnings."""

    summary: dict[str, Any]
    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    out: Path | None = None
    inputs: list[InputStats] = field(default_factory=list)  # what `run` ingested


@dataclass
class CapacityResult:
    """The capacity timeline derived from engine logs, the pre-flight findings, the input
    accounting, and the `[[capacity]]` file written (when asked)."""

    entries: list[dict[str, Any]]
    preflight: list[dict[str, Any]]
    inputs: list[InputStats] = field(default_factory=list)
    context_window: int | None = None
    out: Path | None = None
    faults: list[dict[str, Any]] = field(default_factory=list)  # none of them refuses
    engines: dict[str, str] = field(default_factory=dict)  # node -> the engine its log is of

    def toml(self) -> str:
        """The entries as `[[capacity]]` tables for a case file; an entry that ends where a
        start whose pool the logs do not prove begins (a launch line quarantined, a pool line
        cut) names that fault above its end."""
        ends = {
            (f["node"], f["ts"]): capacity_timeline.fault_text(f)
            # a start without a proven pool before the quarantined line that placed it
            for f in sorted(self.faults, key=lambda f: f["kind"] == "no_capacity")
            if f["kind"] in ("no_capacity", "quarantined") and f["ts"] is not None
        }
        return capacity_entries.to_toml(self.entries, ends)

    def fault_texts(self) -> list[str]:
        """Each fault as a sentence naming its lines."""
        return [capacity_timeline.fault_text(f) for f in self.faults]


# --- steps on an open engine (the notebook uses these too) ---------------------------------


def ingest_sources(
    eng: DuckDBEngine,
    case: Case,
    *,
    temp_dir: str | Path | None = None,
    progress: Progress = SILENT,
    allow_empty: bool = False,
) -> ingest.IngestReport:
    """Ingest every `[[source]]` of the case into the open database; returns what each input
    loaded (with its top quarantine reasons) and the warnings. A request log that loads no
    record is refused unless `allow_empty`."""
    report_ = ingest.IngestReport()
    for source in case.sources:
        one = ingest.ingest_into(
            eng,
            [source.path],
            mapping=source.mapping,
            profile=source.profile,
            node=source.node,
            role=source.role,
            # engine logs without a year (vLLM) take it from the case window
            clock=ingest.Clock(
                anchor=case.window_start,
                window_end=case.window_end,
                timezone=source.timezone or "UTC",
            ),
            temp_dir=temp_dir,
            progress=progress,
            allow_empty=allow_empty,
        )
        report_.inputs.extend(one.inputs)
        report_.warnings.extend(one.warnings)
    return report_


def summarize(
    eng: SQLEngine, case: Case, exclusions: bool = True, progress: Progress = SILENT
) -> tuple[dict[str, Any], list[str]]:
    """The analysis steps after the bands (data owners, classification, engine evidence) and
    the summary dict; needs `bands` and the case tables. Returns (summary, warnings)."""
    with step(progress, "analyze: data owners"):
        attribution = owners.attribute(eng, case)
    with step(progress, "analyze: usage classification"):
        # SciPy: imported where a step classifies (not by notify), inside the step: its
        # half second is the classification's own time, shown as such
        from .analysis import classify

        classification = classify.classify(eng, case, exclusions).to_summary()
    with step(progress, "analyze: engine evidence"):
        engine_evidence = evidence.engine_evidence(eng, case)
    with step(progress, "analyze: blast radius"):
        radius = blast_radius.blast_radius(eng, case)
    with step(progress, "analyze: summary"):
        summary = build_summary(
            eng,
            case,
            exclusions=exclusions,
            owners=attribution,
            classification=classification,
            evidence=engine_evidence,
        )
        summary["blast_radius"] = radius.models
        warnings: list[str] = evidence.warnings(engine_evidence)
        if attribution.reason:
            warnings.append(f"data owners {attribution.status}: {attribution.reason}")
        if summary["bands"]["unknown_capacity"]:
            warnings.append(
                f"{summary['bands']['unknown_capacity']} request(s) matched no [[capacity]] "
                "entry (band unknown_capacity): add entries for their prefill nodes and times"
            )
        unnamed = set(scope.unnamed_inputs(eng))  # another case's engine logs: not this one's
        warnings.extend(
            capacity_timeline.fault_text(f, lambda src: relative_path(src, case.folder))
            for f in capacity_timeline.faults(eng)
            if f["source"] not in unnamed
        )
        warnings.extend(radius.warnings)
    with step(progress, "analyze: coverage, assumptions, exposure range"):
        warnings.extend(evidence_of(eng, case, summary))
    summary["warnings"] = [render_terms(w) for w in warnings]  # no option names in files
    return summary, list(summary["warnings"])


def evidence_of(eng: SQLEngine, case: Case, summary: dict[str, Any]) -> list[str]:
    """The evidence behind the figures, into `summary`: coverage, assumptions and the
    exposure range (its requests in `exposure_range_requests`); returns their warnings
    (a zero scope, case-file ids that match nothing, ...)."""
    warnings: list[str] = []
    cov = coverage.coverage(eng, case)
    if not cov.in_scope:
        warnings.append(f"{scope.empty_scope(eng, case)}: the count of zero was accepted")
    assumed = assumptions.assumptions(cov)
    exposure_range, range_warnings = uncertainty.exposure_range(
        eng, case, summary["exposure_count"], assumed.status_assumed
    )
    warnings.extend(scope.unmatched(eng, case))
    warnings.extend(exposure.undelivered_statuses_warning(eng, case, summary["bands"]))
    warnings.extend(scope.unnamed_warning(eng, case))
    warnings.extend(cov.warnings())
    warnings.extend(assumed.warnings)
    warnings.extend(range_warnings)
    summary["exposure_range"] = exposure_range.to_summary()
    summary["assumptions"] = assumed.entries
    summary["coverage"] = cov.to_summary()
    cut = truncation.cut_inputs(eng, case)  # no count from a cut input is exact
    summary["cut_inputs"] = [c.path for c in cut]
    warnings.extend(truncation.warnings(cut))
    return warnings


def summarize_stored(
    eng: SQLEngine, case: Case, exclusions: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """`summarize` on an analysis already in the case database (its `bands`): the case
    tables and the capacity in force are written again first, as the steps after the bands
    read them."""
    exposure.load_case_tables(eng, case, exclusions, source_files())
    exposure.capacity_in_force(eng)
    return summarize(eng, case, exclusions)


def analyze_case(
    eng: SQLEngine,
    case: Case,
    exclusions: bool = True,
    allow_empty: bool = False,
    progress: Progress = SILENT,
    files: scope.SourceFiles | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The whole analysis on an open engine (bands, data owners, classification, engine
    evidence, coverage, assumptions, exposure range), recorded with what it was computed
    from; returns (summary, warnings). A scope with no request (no request of the case's
    models in the window) is refused unless `allow_empty`. Each step is reported to
    `progress`. `files`: the sources' files on disk (`source_files`; the command's own when
    `require_sources` hashed some already)."""
    # every statement of the analysis runs inside one of its steps: what `progress` shows
    # running is what the time goes to
    with step(progress, "analyze: bands"):
        integrity.clear(eng)  # a failed analysis leaves no record: report/notify refuse it
        exposure.compute_bands(eng, case, exclusions, files or source_files())
        scope.require_scope(eng, case, sum(exposure.band_counts(eng).values()), allow_empty)
        checked = exposure.check_exclusions(eng, case) if exclusions else []
    summary, _ = summarize(eng, case, exclusions, progress)
    with step(progress, "analyze: record what it was computed from"):
        summary["warnings"][:0] = [render_terms(w) for w in checked]  # in summary.json too
        integrity.record(eng, case, exclusions, summary)
    return summary, list(summary["warnings"])


def analyze_engine(
    eng: SQLEngine,
    case: Case,
    out: Path,
    exclusions: bool = True,
    allow_empty: bool = False,
    progress: Progress = SILENT,
    files: scope.SourceFiles | None = None,
) -> AnalysisResult:
    """`analyze_case`, then summary.json, exposed_requests.csv and blast_radius.csv written into
    folder `out` (the commands write into a staging folder and publish it: `publish`)."""
    summary, warnings = analyze_case(eng, case, exclusions, allow_empty, progress, files)
    out.mkdir(parents=True, exist_ok=True)
    with step(progress, "analyze: write summary.json, exposed_requests.csv, blast_radius.csv"):
        paths = [
            write_summary(summary, out / "summary.json"),
            exposure.write_exposed_csv(eng, out / "exposed_requests.csv"),
            blast_radius.write_blast_radius_csv(eng, out / "blast_radius.csv"),
        ]
    return AnalysisResult(summary=summary, paths=paths, warnings=warnings, out=out)


def publish(
    eng: SQLEngine,
    case: Case,
    work: Path,
    out: Path,
    written: dict[str, list[Path]],
    *,
    db: Path | None = None,
    close: Callable[[], None] | None = None,
    hashes: Mapping[str, tuple[int, str]] | None = None,
) -> tuple[list[Path], list[str]]:
    """Move what the steps wrote into the staging folder `work` (`written`: step -> its
    files, or folders standing for the files under them) into `out` as one analysis, with
    manifest.json: the files of `out`'s manifest that belong to another analysis, or to a
    step written now, are deleted first (journaled: a killed publish is undone by the next),
    those of this analysis' other steps stay and are hashed again. Files the manifest does not
    list are not the toolkit's and stay, in every folder; so does a case database or store
    (`db`, when inside `out`, is listed: it holds this analysis). `hashes` (path as written ->
    (size, sha256)) are listed as they are, those files not read again. Returns (the paths in
    `out` of what was published, manifest.json last; a warning naming files of an earlier
    analysis removed and not written again): the paths are those of `written`, in its order,
    as in `out`. `close` (e.g. closing the database staged in `work`) is called once the
    manifest is built, before anything moves."""
    hashes = hashes or {}
    prefix = f"{work}{os.sep}"
    cut = len(prefix)
    # thousands of notices: their paths as strings (no Path each), relative, POSIX
    sources: dict[str, tuple[str, str]] = {}  # -> (the file as staged, the step)
    for name, paths in written.items():
        for p in paths:
            for f in integrity.files_under(p):
                rel = f[cut:] if f.startswith(prefix) else Path(f).relative_to(work).as_posix()
                sources[rel if os.sep == "/" else rel.replace(os.sep, "/")] = (f, name)
    staged = {rel: name for rel, (_, name) in sources.items()}
    units = {p.relative_to(work).as_posix(): "ingest" for p in _stores(work)}
    for unit in units:
        staged = {k: v for k, v in staged.items() if not k.startswith(f"{unit}/")}
    steps = set(staged.values()) | set(units.values())
    with scratch.publishing(out):
        previous_id, previous = integrity.listed_outputs(out)
        same = previous_id == integrity.analysis_id(eng)
        kept = {
            rel: by
            for rel, by in previous.items()
            if same and by not in steps and rel not in staged and (out / rel).is_file()
        }
        held = _inside(db, out) if db is not None else None
        if held is not None and held not in staged and (out / held).exists():
            held += "/" if (out / held).is_dir() else ""
            kept[held] = "ingest"
        removed = {
            rel: by for rel, by in previous.items() if rel not in kept and not _is_store(rel)
        }
        stays = [integrity.Output(rel, out / rel, by) for rel, by in kept.items()]
        outputs = [
            *(
                integrity.Output(rel, f, by, hashes.get(f))
                for rel, (f, by) in sources.items()
                if not units or rel in staged
            ),
            *(integrity.Output(f"{rel}/", work / rel, by) for rel, by in units.items()),
            *stays,
        ]
        with (work / MANIFEST).open("wb") as sink:
            integrity.write_manifest(eng, case, outputs, sink)
        fallback = integrity.manifest(eng, case, stays)
        companions = [f"{rel}.wal" for rel in staged if rel.endswith(".duckdb")]
        if close is not None:
            close()
        try:
            scratch.move_in(
                work,
                out,
                remove_paths=[*removed, *companions],
                units=units,
                last=MANIFEST,
                restore={MANIFEST: fallback if kept else None},
            )
        except OSError as e:
            raise _out_error("cannot move the outputs into place", out, e) from None
    paths = [out / p.relative_to(work) for ps in written.values() for p in ps]
    paths.append(out / MANIFEST)
    gone = {rel: by for rel, by in removed.items() if by not in steps and rel not in staged}
    return paths, _removed_warning(out, gone)


MANIFEST = integrity.MANIFEST


def _stores(work: Path) -> list[Path]:
    """The Parquet case store folders `run` exported into `work` (published whole)."""
    return [
        work / name for name in (PARQUET_STORE, f"{PARQUET_STORE}_tables") if (work / name).is_dir()
    ]


def _is_store(rel: str) -> bool:
    """A case database, its log or a Parquet case store: never deleted by a publish that does
    not replace it (no process deletes a database it did not just make)."""
    return rel.endswith(("/", ".duckdb", ".duckdb.wal"))


def _inside(path: Path, folder: Path) -> str | None:
    """`path` relative to `folder` (POSIX), None when it lies outside."""
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None


def _removed_warning(out: Path, gone: dict[str, str]) -> list[str]:
    """The warning naming the files of an earlier analysis a publish deleted (a folder as
    `notify/ (N files)`), and the commands that write them again."""
    if not gone:
        return []
    groups: dict[str, int] = {}
    for rel in sorted(gone):
        top = rel.split("/", 1)[0] + ("/" if "/" in rel else "")
        groups[top] = groups.get(top, 0) + 1
    shown = ", ".join(f"{g} ({n} files)" if g.endswith("/") else g for g, n in groups.items())
    again = [command(s) for s in ("analyze", "notify", "report") if s in gone.values()]
    return [
        f"removed {shown} from {out}: they showed an earlier analysis; run "
        + (" and ".join(again) if again else "the commands that wrote them")
        + " again"
    ]


# --- the commands ----------------------------------------------------------------------------


def analyze(
    case_path: str | Path,
    db: str | Path,
    out: str | Path,
    exclusions: bool = True,
    engine: str = "duckdb",
    spark_master: str | None = None,
    memory_limit: str | None = None,
    temp_dir: str | Path | None = None,
    allow_empty: bool = False,
    progress: Progress = SILENT,
) -> AnalysisResult:
    """`forensics analyze`: summary.json, exposed_requests.csv and blast_radius.csv published
    into `out` (the files of an earlier analysis there removed, with a warning: `publish`).
    Refused when a case `[[source]]` is not in the database, or (unless `allow_empty`) when no
    request of the case's models is inside the window."""
    case = load_case(case_path)
    out = out_folder(out)
    refuse_out_in_sources(case, out)
    options = EngineOptions(memory_limit=memory_limit, temp_dir=temp_dir, spark_master=spark_master)
    with engines.connect(engine, db, options) as eng:
        files = source_files()  # each source file hashed once: the check, then the scope
        require_sources(eng, case, db, files)
        with _staging(out) as work:
            result = analyze_engine(eng, case, work, exclusions, allow_empty, progress, files)
            result.paths, removed = publish(
                eng, case, work, out, {"analyze": result.paths}, db=Path(db)
            )
    result.warnings.extend(removed)
    result.out = out
    return result


def notify(
    case_path: str | Path,
    db: str | Path,
    out: str | Path,
    engine: str = "duckdb",
    spark_master: str | None = None,
    progress: Progress = SILENT,
) -> NotifyResult:
    """`forensics notify`: the lists, notices and README under out/notify/ (needs a prior
    analyze of this case file on the database's current inputs; refused otherwise), and
    regulator_summary.md from out/summary.json when that analyze wrote one there (refused
    when it is of another analysis)."""
    case = load_case(case_path)
    out = out_folder(out)
    summary = _summary_of(out, case.path, db) if (out / "summary.json").is_file() else None
    with engines.connect(engine, db, EngineOptions(spark_master=spark_master)) as eng:
        require_sources(eng, case, db)
        integrity.check(eng, case, db, summary=summary, out=out)
        with _staging(out) as work:
            with step(progress, "notify: notification lists"):
                result = notify_lists.write_lists(eng, case, work, summary)
            result.paths, removed = publish(
                eng, case, work, out, {"notify": result.paths}, db=Path(db), hashes=result.hashes
            )
    result.warnings.extend(removed)
    if summary is None:
        result.warnings.append(
            f"no summary.json in {out}: notify/regulator_summary.md not written (run "
            f"{command('analyze')} {case.path} {option('db')} {db} {option('out')} {out} first)"
        )
    return result


def report(
    case_path: str | Path,
    db: str | Path,
    out: str | Path,
    engine: str = "duckdb",
    spark_master: str | None = None,
    progress: Progress = SILENT,
) -> list[Path]:
    """`forensics report`: report.html and the timeline charts (needs a prior analyze of this
    case file, on the database's current inputs, that wrote out/summary.json; refused
    otherwise)."""
    from .render import report as report_page  # Altair: imported where a report is drawn

    case = load_case(case_path)
    out = out_folder(out)
    with engines.connect(engine, db, EngineOptions(spark_master=spark_master)) as eng:
        require_sources(eng, case, db)
        summary = _summary_of(out, case.path, db)
        integrity.check(eng, case, db, summary=summary, out=out)
        with _staging(out) as work:
            paths = report_page.render_report(eng, case, summary, work, progress=progress)
            published, _ = publish(eng, case, work, out, {"report": paths}, db=Path(db))
        return published


def require_sources(
    eng: SQLEngine, case: Case, db: str | Path, files: scope.SourceFiles | None = None
) -> None:
    """Refuse (exit 2) a case database that lacks a file of a case `[[source]]` (figures on
    part of the logs, named as if on all of them), or whose content loaded from a source
    file's path is not the file on disk now (a log re-exported under its name since: figures
    of the old export, named as if of this one), or that holds a file ingested from a source
    folder or glob which no longer holds it (`scope.gone_source`). A file counts as there
    when `inputs` holds its path or, for a moved copy, its sha256. The files are `files`
    (`source_files`, whose hashes the command's scope then reuses), each hashed at most
    once."""
    files = files or source_files()
    held = scope.input_paths(eng)
    missing = scope.missing_source(case, held, files)
    if missing is None:
        changed = scope.changed_source(case, held, files)
        if changed is not None:
            raise _changed_source(case, db, *changed)
        gone = scope.gone_source(case, held, files)
        if gone is not None:
            raise _gone_source(case, db, *gone)
        return
    names = sorted({p for p, _ in held})
    shown = ", ".join(names[: scope.MAX_LISTED]) + (
        f" and {len(names) - scope.MAX_LISTED} more" if len(names) > scope.MAX_LISTED else ""
    )
    raise InputError(
        f"[[source]] {missing} is not in the case database's inputs (it holds "
        + (f"{len(names)} input(s): {shown})" if names else "none)"),
        where=str(case.path),
        fix=f"ingest it into {db} ({command('ingest')} with its mapping), use {command('run')}, "
        "or remove the [[source]] from the case file",
    )


def _changed_source(
    case: Case, db: str | Path, source: Source, file: str, now: str, loaded: list[str]
) -> InputError:
    engine_log = _source_format(source) in ENGINE_FORMATS  # ingest --force refuses these
    fix = (
        f"ingest the case's logs into a new {option('db')} ({command('run')} does)"
        if engine_log
        else f"re-ingest it with its mapping and {option('force')} ({command('ingest')} {file} "
        f"{option('db')} {db} ... {option('force')}), which replaces what was loaded from it"
    )
    return InputError(
        f"[[source]] file {file} changed since it was ingested (sha256 now {now[:16]}, "
        f"loaded from its path: {', '.join(s[:16] for s in loaded)}): the database's figures "
        "would be of other content than the file",
        where=str(case.path),
        fix=fix,
    )


def _gone_source(case: Case, db: str | Path, source: Source, file: str, now: int) -> InputError:
    return InputError(
        f"{file} was ingested from [[source]] {source.path}, which no longer holds it (it holds "
        f"{now} file(s) now, none with its path or content): the database's figures would "
        "count records of a file that is no longer part of the source",
        where=str(case.path),
        fix=f"put the file back, or ingest the case's logs into a new {option('db')} "
        f"({command('run')} does; {command('ingest')} {option('force')} replaces only what "
        "was loaded from a file still there)",
    )


def source_files() -> scope.SourceFiles:
    """The files of the case's `[[source]]`s on disk as ingest reads them (`_source_files`)
    and their sha256, each file hashed at most once for as long as the returned object is
    used (one command: `require_sources`, then the scope's search for moved copies)."""
    hashes: dict[Path, str] = {}

    def sha256_of(f: Path) -> str:
        if f not in hashes:
            hashes[f] = ingest.hash_file(f)
        return hashes[f]

    return scope.SourceFiles(_source_files, sha256_of)


def _source_files(source: Source) -> list[Path]:
    """The files a `[[source]]` names on disk, as ingest reads them: its file, the files of
    its glob, or its folder's logs of the source's format (an engine's logs for an engine
    profile); none when it names nothing there."""
    try:
        return ingest.resolve_inputs([source.path], _source_format(source))
    except (InputError, OSError):
        return []


def _source_format(source: Source) -> str | None:
    """The format ingest reads a `[[source]]` as (None when its mapping cannot be read)."""
    try:
        return ingest.resolve_mapping(source.mapping, source.profile).format
    except ForensicsError:
        return None


def _summary_of(out: Path, case_path: Path, db: str | Path) -> dict[str, Any]:
    """The summary.json an earlier analyze wrote into `out`."""
    summary_path = out / "summary.json"
    fix = f"run {command('analyze')} {case_path} {option('db')} {db} {option('out')} {out} first"
    if not summary_path.is_file():
        raise AnalysisError(
            "no summary.json in the output folder", where=str(summary_path), fix=fix
        )
    try:
        summary: dict[str, Any] = json.loads(summary_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise AnalysisError(
            f"summary.json cannot be read ({e})", where=str(summary_path), fix=fix
        ) from None
    return summary


def run(
    case_path: str | Path,
    out: str | Path,
    exclusions: bool = True,
    engine: str = "duckdb",
    spark_master: str | None = None,
    memory_limit: str | None = None,
    temp_dir: str | Path | None = None,
    progress: Progress = SILENT,
    allow_empty: bool = False,
) -> AnalysisResult:
    """`forensics run`: ingest every [[source]] into out/case.duckdb (made afresh), then
    analyze, notify and report into `out`, with manifest.json listing them. Everything is
    written into a scratch folder beside `out` and moved into `out` at the end: a failed run
    leaves `out` as it was. `allow_empty` accepts an input that loads no record and a scope
    with no request."""
    from .render import report as report_page  # Altair: imported where a report is drawn

    chosen = engines.kind(engine)
    case = load_case(case_path)
    if not case.sources:
        raise ForensicsError(
            "the case file names no [[source]] to ingest",
            where=str(case.path),
            fix='add [[source]] entries (path plus mapping or profile = "canonical")',
        )
    out = out_folder(out)
    refuse_out_in_sources(case, out)
    with _staging(out) as work:
        db = work / CASE_DB
        with contextlib.ExitStack() as engines_open:
            eng = engines_open.enter_context(
                DuckDBEngine(db, memory_limit=memory_limit, temp_dir=temp_dir)
            )
            loaded = ingest_sources(
                eng, case, temp_dir=temp_dir, progress=progress, allow_empty=allow_empty
            )
            options = EngineOptions(spark_master=spark_master)
            analysis = engines_open.enter_context(
                _analysis_engine(eng, chosen, work, options, progress)
            )
            result = analyze_engine(analysis, case, work, exclusions, allow_empty, progress)
            result.warnings[:0] = loaded.warnings
            result.inputs = loaded.inputs
            with step(progress, "notify: notification lists"):
                lists = notify_lists.write_lists(analysis, case, work, result.summary)
            result.warnings.extend(lists.warnings)
            pictures = report_page.render_report(
                analysis, case, result.summary, work, progress=progress
            )
            written = {
                "ingest": [db],
                "analyze": result.paths,
                "notify": lists.paths,
                "report": pictures,
            }
            # the databases close (their last writes land) before their files move
            # run writes every step: what it removed of an earlier analysis needs no re-run
            result.paths, _ = publish(
                analysis, case, work, out, written, close=engines_open.close, hashes=lists.hashes
            )
    result.out = out
    return result


def refuse_out_in_sources(case: Case, out: Path) -> None:
    """Refuse an output folder inside a `[[source]]` folder (or the folder a source glob
    reads): the next ingest of the case would read the outputs (CSV, JSON) as its logs."""
    for source in case.sources:
        base = Path(source.path)
        glob = next((i for i, part in enumerate(base.parts) if any(c in part for c in "*?[")), None)
        folder = Path(*base.parts[:glob]) if glob is not None else base
        if folder.is_dir() and _inside(out, folder) is not None:
            raise InputError(
                f"the output folder is inside the folder of [[source]] {source.path}: the "
                "next ingest of the case would read its outputs as logs",
                where=str(out),
                fix=f"give {option('out')} a folder outside {folder}",
            )


def out_folder(out: str | Path) -> Path:
    """`out` as the output folder, refused (naming what is wrong) when it, or a folder on its
    path, is a file (it is made when a command publishes into it); what a killed publish left
    in it is undone first, before a command reads it (`scratch.recover`)."""
    path = Path(out)
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            what = "the output folder is a file" if part == path else f"{part} is a file"
            raise InputError(
                what,
                where=str(path),
                fix=f"give {option('out')} a folder (it is made when missing), not a file",
            )
    if path.is_dir():
        scratch.recover(path)
    return path


@contextlib.contextmanager
def _staging(out: Path) -> Iterator[Path]:
    """A staging folder beside `out` for a command's files (`publish` moves them in), removed
    at the end; an OSError on a file in it names the file's path in `out`, the one the user
    knows."""
    work = _work_folder(out)
    try:
        yield work
    except OSError as e:
        name = e.filename if isinstance(e.filename, str) else open_file(e)
        if name is not None and Path(name).is_relative_to(work):
            e.filename = str(out / Path(name).relative_to(work))
        raise
    finally:
        scratch.remove(work)


def _work_folder(out: Path) -> Path:
    """A new, empty folder beside `out` (same file system: moving its files is a rename)."""
    parent = out.resolve().parent  # beside the folder a symlinked out points at
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return scratch.make_dir(parent, f".{out.name}{RUN_SCRATCH}")
    except OSError as e:
        raise _out_error("cannot write beside the output folder", out, e) from None


def _out_error(what: str, out: Path, e: OSError) -> ForensicsError:
    return ForensicsError(
        f"{what} ({e.strerror or e})",
        where=str(out),
        fix=f"check the folder is writable and has room, or choose another {option('out')}",
    )


@contextlib.contextmanager
def _analysis_engine(
    ingested: DuckDBEngine,
    chosen: engines.EngineKind,
    out: Path,
    options: EngineOptions,
    progress: Progress = SILENT,
) -> Iterator[SQLEngine]:
    """The engine that analyzes what `run` ingested: the same DuckDB database, or a
    Parquet case store exported from it into out/requests (+ out/requests_tables) for an
    engine that reads one; ingest is DuckDB's job."""
    if not chosen.exported:
        yield ingested
        return
    store = out / PARQUET_STORE
    for stale in _stores(out):
        if stale.exists():
            shutil.rmtree(stale)
    with step(progress, "export the requests as Parquet"):
        ingest.export_parquet(ingested, store)
    with engines.connect(chosen.name, store, options) as analysis:
        yield analysis


def demo(
    out: str | Path = "forensics-demo", progress: Progress = SILENT, case: str = "glm53"
) -> AnalysisResult:
    """`forensics demo`: `run` on a bundled case (`glm53`, the GLM-5.3 SGLang case, or
    `vllm-pd`, a vLLM prefill/decode deployment with NixlConnector)."""
    return run(demo_case(case), out, progress=progress)


def demo_case(name: str = "glm53") -> Path:
    """A bundled case file: beside the installed package, or in the repo's sample_logs/."""
    if name not in DEMO_CASES:
        raise InputError(
            f"no bundled case {name!r}",
            where=option("case"),
            fix=f"use one of {', '.join(DEMO_CASES)}",
        )
    here = Path(__file__).resolve().parent
    for base in (here, here.parent):
        candidate = base / DEMO_CASES[name]
        if candidate.is_file():
            return candidate
    raise InputError(
        "the bundled demo case is missing",
        where=str(here.parent / DEMO_CASES[name]),
        fix=f"reinstall kv-forensics, or run {command('run')} CASE.toml {option('out')} DIR on "
        "your own case",
    )


def capacity(
    logs: list[str] | list[Path],
    db: str | Path,
    context_window: int | None = None,
    out: str | Path | None = None,
    node: str | None = None,
    role: str | None = None,
    year: int | None = None,
    timezone: str | None = None,
    progress: Progress = SILENT,
) -> CapacityResult:
    """`forensics capacity`: ingest engine logs into `db` (the engine told per file: SGLang,
    vLLM or TensorRT-LLM); the capacity timeline, pre-flight findings, and the
    `[[capacity]]` entries written to `out` (when given). `year`/`timezone`: the clock of
    logs that print no year or zone (vLLM)."""
    files = ingest.resolve_inputs(logs, "sglang")
    where = ", ".join(str(f) for f in files)
    by_engine: dict[str, list[Path]] = {}
    for f in files:
        by_engine.setdefault(engine_logs.detect_engine(Path(f)), []).append(Path(f))
    clock = ingest.Clock(year=year, timezone=engine_logs.check_timezone(timezone))
    with DuckDBEngine(db) as eng:
        loaded = ingest.IngestReport()
        for name, group in sorted(by_engine.items()):
            one = ingest.ingest_into(
                eng, group, profile=name, node=node, role=role, clock=clock, progress=progress
            )
            loaded.inputs.extend(one.inputs)
        entries = capacity_timeline.timeline(eng)
        findings = capacity_timeline.preflight(eng, context_window)
        faults = capacity_timeline.faults(eng)
        engines = capacity_timeline.engines(eng)
    refusing = [f for f in faults if f["refuses"]]
    if refusing:
        more = f" (and {len(refusing) - 1} more such start(s))" if len(refusing) > 1 else ""
        raise InputError(
            capacity_timeline.fault_text(refusing[0]) + more,
            fix=f"then give {command('capacity')} the other logs alone for their entries",
        )
    unknown = sorted({e["node"] for e in entries if e["role"] is None})
    if unknown:
        raise InputError(
            f"cannot tell the role (prefill or decode) of node(s) {', '.join(unknown)}",
            where=where,
            fix=f"give {option('role')}"
            + "".join(ingest.ENGINE_READERS[name].role_fix for name in sorted(by_engine)),
        )
    if not entries:
        cut = [capacity_timeline.fault_text(f) for f in faults if f["kind"] == "quarantined"]
        raise InputError(
            "no capacity line (KV Cache is allocated / max_total_num_tokens, KV cache size, "
            "# GPU blocks, KV cache primary pool) in the logs"
            + (f" that could be read ({'; '.join(cut[:3])})" if cut else ""),
            where=where,
            fix="give the server logs from startup on",
        )
    result = CapacityResult(entries, findings, loaded.inputs, context_window, None, faults, engines)
    if out is not None:
        path = Path(out)
        path.write_text(result.toml(), encoding="utf-8")
        result.out = path
    return result
