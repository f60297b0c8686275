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
from .analysis import capacity as capacity_timeline
from .analysis import classify, evidence, exposure, integrity, owners
from .analysis.summary import build_summary, write_summary
from .case import Case, load_case
from .engines import DuckDBEngine, EngineOptions, SQLEngine
from .errors import AnalysisError, ForensicsError, InputError, command, option
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
) -> list[str]:
    """Ingest every `[[source]]` of the case into the open database; returns the warnings."""
    warnings: list[str] = []
    for source in case.sources:
        report_ = ingest.ingest_into(
            eng,
            [source.path],
            mapping=source.mapping,
            profile=source.profile,
            node=source.node,
            role=source.role,
            temp_dir=temp_dir,
            progress=progress,
        )
        warnings.extend(report_.warnings)
    return warnings


def summarize(
    eng: SQLEngine, case: Case, exclusions: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """The analysis steps after the bands (data owners, classification, engine evidence) and
    the summary dict; needs `bands` and the case tables. Returns (summary, warnings)."""
    attribution = owners.attribute(eng, case)
    summary = build_summary(
        eng,
        case,
        exclusions=exclusions,
        owners=attribution,
        classification=classify.classify(eng, case, exclusions).to_summary(),
        evidence=evidence.engine_evidence(eng, case),
    )
    warnings: list[str] = []
    if attribution.reason:
        warnings.append(f"data owners {attribution.status}: {attribution.reason}")
    if summary["bands"]["unknown_capacity"]:
        warnings.append(
            f"{summary['bands']['unknown_capacity']} request(s) matched no [[capacity]] entry "
            "(band unknown_capacity): add entries for their prefill nodes and times"
        )
    return summary, warnings


def summarize_stored(
    eng: SQLEngine, case: Case, exclusions: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """`summarize` on an analysis already in the case database (its `bands`): the case
    tables are written again first, as the steps after the bands read them."""
    exposure.load_case_tables(eng, case, exclusions)
    return summarize(eng, case, exclusions)


def analyze_case(
    eng: SQLEngine, case: Case, exclusions: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """The whole analysis on an open engine (bands, data owners, classification, engine
    evidence), recorded with what it was computed from; returns (summary, warnings)."""
    integrity.clear(eng)  # a failed analysis leaves no record: report/notify refuse it
    exposure.compute_bands(eng, case, exclusions)
    summary, warnings = summarize(eng, case, exclusions)
    integrity.record(eng, case, exclusions, summary)
    return summary, warnings


def analyze_engine(
    eng: SQLEngine, case: Case, out: Path, exclusions: bool = True
) -> AnalysisResult:
    """`analyze_case`, then summary.json and exposed_requests.csv in `out`."""
    summary, warnings = analyze_case(eng, case, exclusions)
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        write_summary(summary, out / "summary.json"),
        exposure.write_exposed_csv(eng, out / "exposed_requests.csv"),
    ]
    return AnalysisResult(summary=summary, paths=paths, warnings=warnings, out=out)


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
) -> AnalysisResult:
    """`forensics analyze`: summary.json and exposed_requests.csv in `out`."""
    case = load_case(case_path)
    options = EngineOptions(memory_limit=memory_limit, temp_dir=temp_dir, spark_master=spark_master)
    with engines.connect(engine, db, options) as eng:
        return analyze_engine(eng, case, Path(out), exclusions)


def notify(
    case_path: str | Path,
    db: str | Path,
    out: str | Path,
    engine: str = "duckdb",
    spark_master: str | None = None,
) -> NotifyResult:
    """`forensics notify`: the lists under out/notify/ (needs a prior analyze of this case
    file on the database's current inputs; refused otherwise)."""
    case = load_case(case_path)
    with engines.connect(engine, db, EngineOptions(spark_master=spark_master)) as eng:
        integrity.check(eng, case, db, out=out)
        return notify_lists.write_lists(eng, case, Path(out))


def report(
    case_path: str | Path,
    db: str | Path,
    out: str | Path,
    engine: str = "duckdb",
    spark_master: str | None = None,
) -> list[Path]:
    """`forensics report`: report.html and the timeline charts (needs a prior analyze of this
    case file, on the database's current inputs, that wrote out/summary.json; refused
    otherwise)."""
    case = load_case(case_path)
    out = Path(out)
    summary = _summary_of(out, case.path, db)
    with engines.connect(engine, db, EngineOptions(spark_master=spark_master)) as eng:
        integrity.check(eng, case, db, summary=summary, out=out)
        return report_page.render_report(eng, case, summary, out)


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
) -> AnalysisResult:
    """`forensics run`: ingest every [[source]] into out/case.duckdb (made afresh), then
    analyze, notify and report into `out`. Everything is written into a scratch folder
    beside `out` and moved into `out` at the end: a failed run leaves `out` as it was.
    Each stage is a step reported to `progress`: "ingest" (one per [[source]]), "parquet
    export" (engines that read one), "analyze", "notify", "report", "chart export"."""
    chosen = engines.kind(engine)
    case = load_case(case_path)
    if not case.sources:
        raise ForensicsError(
            "the case file names no [[source]] to ingest",
            where=str(case.path),
            fix='add [[source]] entries (path plus mapping or profile = "canonical")',
        )
    out = Path(out)
    work = _work_folder(out)
    try:
        db = work / CASE_DB
        with DuckDBEngine(db, memory_limit=memory_limit, temp_dir=temp_dir) as eng:
            warnings = ingest_sources(eng, case, temp_dir=temp_dir, progress=progress)
            options = EngineOptions(spark_master=spark_master)
            with _analysis_engine(eng, chosen, work, options, progress) as analysis:
                with step(progress, "analyze"):
                    result = analyze_engine(analysis, case, work, exclusions)
                result.warnings[:0] = warnings
                with step(progress, "notify"):
                    lists = notify_lists.write_lists(analysis, case, work)
                result.paths.extend(lists.paths)
                result.warnings.extend(lists.warnings)
                result.paths.extend(
                    report_page.render_report(
                        analysis, case, result.summary, work, progress=progress
                    )
                )
        result.paths.insert(0, db)
        try:
            scratch.publish(work, out, companions={CASE_DB: (f"{CASE_DB}.wal",)})
        except OSError as e:
            raise _out_error("cannot move the outputs into place", out, e) from None
    finally:
        scratch.remove(work)
    result.out = out
    result.paths = [out / p.relative_to(work) for p in result.paths]
    return result


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
    with step(progress, "parquet export"):
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
) -> CapacityResult:
    """`forensics capacity`: ingest SGLang logs into `db`; the capacity timeline, pre-flight
    findings, and the `[[capacity]]` entries written to `out` (when given)."""
    files = ingest.resolve_inputs(logs)
    where = ", ".join(str(f) for f in files)
    with DuckDBEngine(db) as eng:
        loaded = ingest.ingest_into(eng, files, profile="sglang", node=node, role=role)
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
