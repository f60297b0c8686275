"""The one sequencer: the end-to-end steps behind the commands and the notebook (run, analyze,
notify, report, demo, capacity).

Each step opens the case store through `forensics.engines`, calls the stages in order
(ingest -> analysis -> render) and returns what the front ends show. Outputs are
deterministic: re-running into the same folder gives byte-identical files.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import engines, ingest, scratch
from .analysis import (
    assumptions,
    blast_radius,
    classify,
    coverage,
    evidence,
    exposure,
    integrity,
    owners,
    scope,
    uncertainty,
)
from .analysis import capacity as capacity_timeline
from .analysis.summary import build_summary, write_summary
from .case import Case, load_case
from .engines import DuckDBEngine, EngineOptions, SQLEngine
from .errors import AnalysisError, ForensicsError, InputError, command, option, render_terms
from .progress import SILENT, Progress, step
from .render import capacity_entries
from .render import notify as notify_lists
from .render import report as report_page
from .render.notify import NotifyResult
from .schema import InputStats

DEMO_CASE = Path("sample_logs") / "glm53" / "incident.toml"
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

    def toml(self) -> str:
        """The entries as `[[capacity]]` tables for a case file."""
        return capacity_entries.to_toml(self.entries)


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
    warnings: list[str] = []
    if attribution.reason:
        warnings.append(f"data owners {attribution.status}: {attribution.reason}")
    if summary["bands"]["unknown_capacity"]:
        warnings.append(
            f"{summary['bands']['unknown_capacity']} request(s) matched no [[capacity]] entry "
            "(band unknown_capacity): add entries for their prefill nodes and times"
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
    warnings.extend(
        f"[[source]] {s['source']}: no record in the window" for s in cov.sources if not s["total"]
    )
    warnings.extend(assumed.warnings)
    warnings.extend(range_warnings)
    summary["exposure_range"] = exposure_range.to_summary()
    summary["assumptions"] = assumed.entries
    summary["coverage"] = cov.to_summary()
    return warnings


def summarize_stored(
    eng: SQLEngine, case: Case, exclusions: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """`summarize` on an analysis already in the case database (its `bands`): the case
    tables are written again first, as the steps after the bands read them."""
    exposure.load_case_tables(eng, case, exclusions)
    return summarize(eng, case, exclusions)


def analyze_case(
    eng: SQLEngine,
    case: Case,
    exclusions: bool = True,
    allow_empty: bool = False,
    progress: Progress = SILENT,
) -> tuple[dict[str, Any], list[str]]:
    """The whole analysis on an open engine (bands, data owners, classification, engine
    evidence, coverage, assumptions, exposure range), recorded with what it was computed
    from; returns (summary, warnings). A scope with no request (no request of the case's
    models in the window) is refused unless `allow_empty`. Each step is reported to
    `progress`."""
    integrity.clear(eng)  # a failed analysis leaves no record: report/notify refuse it
    with step(progress, "analyze: bands"):
        exposure.compute_bands(eng, case, exclusions)
    scope.require_scope(eng, case, sum(exposure.band_counts(eng).values()), allow_empty)
    checked = exposure.check_exclusions(eng, case) if exclusions else []
    summary, warnings = summarize(eng, case, exclusions, progress)
    integrity.record(eng, case, exclusions, summary)
    return summary, checked + warnings


def analyze_engine(
    eng: SQLEngine,
    case: Case,
    out: Path,
    exclusions: bool = True,
    allow_empty: bool = False,
    progress: Progress = SILENT,
) -> AnalysisResult:
    """`analyze_case`, then summary.json, exposed_requests.csv and blast_radius.csv in `out`.
    The lists and the report an earlier analysis left in `out` are removed when this one's
    summary differs from the summary.json there (with a warning): `out` never holds figures
    of two analyses."""
    summary, warnings = analyze_case(eng, case, exclusions, allow_empty, progress)
    out.mkdir(parents=True, exist_ok=True)
    before = _read_bytes(out / "summary.json")
    with step(progress, "analyze: write summary.json, exposed_requests.csv, blast_radius.csv"):
        paths = [
            write_summary(summary, out / "summary.json"),
            exposure.write_exposed_csv(eng, out / "exposed_requests.csv"),
            blast_radius.write_blast_radius_csv(eng, out / "blast_radius.csv"),
        ]
    if before != _read_bytes(out / "summary.json"):
        removed = _remove_stale(out)
        if removed:
            warnings.append(
                f"removed {', '.join(removed)} from {out}: they showed an earlier analysis; "
                f"run {command('notify')} and {command('report')} again"
            )
    return AnalysisResult(summary=summary, paths=paths, warnings=warnings, out=out)


# What report writes from an analysis (never other files a user keeps in --out)
REPORT_OUTPUTS = ("report.html", "timeline.png", "timeline.svg")


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _remove_stale(out: Path) -> list[str]:
    """Remove the notify lists and the report present in `out`; the names removed."""
    try:
        removed = notify_lists.remove_outputs(out)
        for name in REPORT_OUTPUTS:
            if (out / name).is_file():
                (out / name).unlink()
                removed.append(name)
    except OSError as e:
        raise _out_error("cannot remove the outputs of an earlier analysis", out, e) from None
    return removed


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
    """`forensics analyze`: summary.json, exposed_requests.csv and blast_radius.csv in `out`.
    Refused when a case `[[source]]` is not in the database, or (unless `allow_empty`) when
    no request of the case's models is inside the window."""
    case = load_case(case_path)
    out = out_folder(out)
    options = EngineOptions(memory_limit=memory_limit, temp_dir=temp_dir, spark_master=spark_master)
    with engines.connect(engine, db, options) as eng:
        require_sources(eng, case, db)
        result = analyze_engine(eng, case, out, exclusions, allow_empty, progress)
        result.paths.append(integrity.write_manifest(eng, case, out, result.paths))
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
        with step(progress, "notify: notification lists"):
            result = notify_lists.write_lists(eng, case, out, summary)
        result.paths.append(integrity.write_manifest(eng, case, out, result.paths))
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
    case = load_case(case_path)
    out = out_folder(out)
    with engines.connect(engine, db, EngineOptions(spark_master=spark_master)) as eng:
        require_sources(eng, case, db)
        summary = _summary_of(out, case.path, db)
        integrity.check(eng, case, db, summary=summary, out=out)
        paths = report_page.render_report(eng, case, summary, out, progress=progress)
        return [*paths, integrity.write_manifest(eng, case, out, paths)]


def require_sources(eng: SQLEngine, case: Case, db: str | Path) -> None:
    """Refuse (exit 2) a case database that lacks a file of a case `[[source]]`: figures on
    part of the logs, named as if on all of them. A file counts as there when `inputs` holds
    its path or, for a moved copy, its sha256."""
    held = scope.input_paths(eng)
    missing = scope.missing_source(case, held, _source_files, ingest.hash_file)
    if missing is None:
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


def _source_files(path: str) -> list[Path]:
    """The files a `[[source]]` path names on disk (none when it names nothing there)."""
    try:
        return ingest.resolve_inputs([path])
    except InputError:
        return []


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
    chosen = engines.kind(engine)
    case = load_case(case_path)
    if not case.sources:
        raise ForensicsError(
            "the case file names no [[source]] to ingest",
            where=str(case.path),
            fix='add [[source]] entries (path plus mapping or profile = "canonical")',
        )
    out = out_folder(out)
    work = _work_folder(out)
    try:
        db = work / CASE_DB
        with DuckDBEngine(db, memory_limit=memory_limit, temp_dir=temp_dir) as eng:
            loaded = ingest_sources(
                eng, case, temp_dir=temp_dir, progress=progress, allow_empty=allow_empty
            )
            options = EngineOptions(spark_master=spark_master)
            with _analysis_engine(eng, chosen, work, options, progress) as analysis:
                result = analyze_engine(analysis, case, work, exclusions, allow_empty, progress)
                result.warnings[:0] = loaded.warnings
                result.inputs = loaded.inputs
                with step(progress, "notify: notification lists"):
                    lists = notify_lists.write_lists(analysis, case, work, result.summary)
                result.paths.extend(lists.paths)
                result.warnings.extend(lists.warnings)
                result.paths.extend(
                    report_page.render_report(
                        analysis, case, result.summary, work, progress=progress
                    )
                )
                manifest = integrity.write_manifest(analysis, case, work, [db, *result.paths])
        result.paths.insert(0, db)
        result.paths.append(manifest)
        try:
            scratch.publish(work, out, companions={CASE_DB: (f"{CASE_DB}.wal",)})
        except OSError as e:
            raise _out_error("cannot move the outputs into place", out, e) from None
    finally:
        scratch.remove(work)
    result.out = out
    result.paths = [out / p.relative_to(work) for p in result.paths]
    return result


def out_folder(out: str | Path) -> Path:
    """`out` as the output folder, refused (naming what is wrong) when it, or a folder on its
    path, is a file; it is made when missing."""
    path = Path(out)
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            what = "the output folder is a file" if part == path else f"{part} is a file"
            raise InputError(
                what,
                where=str(path),
                fix=f"give {option('out')} a folder (it is made when missing), not a file",
            )
    return path


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
    for stale in (store, out / f"{PARQUET_STORE}_tables"):
        if stale.exists():
            shutil.rmtree(stale)
    with step(progress, "export the requests as Parquet"):
        ingest.export_parquet(ingested, store)
    with engines.connect(chosen.name, store, options) as analysis:
        yield analysis


def demo(out: str | Path = "forensics-demo", progress: Progress = SILENT) -> AnalysisResult:
    """`forensics demo`: `run` on the bundled GLM-5.3 case."""
    return run(demo_case(), out, progress=progress)


def demo_case() -> Path:
    """The bundled case file: beside the installed package, or in the repo's sample_logs/."""
    here = Path(__file__).resolve().parent
    for base in (here, here.parent):
        candidate = base / DEMO_CASE
        if candidate.is_file():
            return candidate
    raise InputError(
        "the bundled demo case is missing",
        where=str(here.parent / DEMO_CASE),
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
    progress: Progress = SILENT,
) -> CapacityResult:
    """`forensics capacity`: ingest SGLang logs into `db`; the capacity timeline, pre-flight
    findings, and the `[[capacity]]` entries written to `out` (when given)."""
    files = ingest.resolve_inputs(logs, "sglang")
    where = ", ".join(str(f) for f in files)
    with DuckDBEngine(db) as eng:
        loaded = ingest.ingest_into(
            eng, files, profile="sglang", node=node, role=role, progress=progress
        )
        entries = capacity_timeline.timeline(eng)
        findings = capacity_timeline.preflight(eng, context_window)
    unknown = sorted({e["node"] for e in entries if e["role"] is None})
    if unknown:
        raise InputError(
            f"cannot tell the role (prefill or decode) of node(s) {', '.join(unknown)}",
            where=where,
            fix=f"give {option('role')}, or ingest logs that hold server_args or ReqTimeStats "
            "lines",
        )
    if not entries:
        raise InputError(
            "no capacity line (KV Cache is allocated / max_total_num_tokens) in the logs",
            where=where,
            fix="give the server logs from startup on",
        )
    result = CapacityResult(entries, findings, loaded.inputs, context_window, None)
    if out is not None:
        path = Path(out)
        path.write_text(result.toml(), encoding="utf-8")
        result.out = path
    return result
