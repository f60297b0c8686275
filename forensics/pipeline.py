"""The end-to-end steps behind the commands: analyze, notify, report, run, demo.

Each step opens the case database, does its work through `forensics.engine.Engine`, writes
its outputs into the `out` folder and returns what the CLI prints. Outputs are
deterministic: re-running into the same folder gives byte-identical files.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import classify, evidence, exposure, integrity, owners, scratch
from . import engine as engines
from . import ingest as ingest_mod
from . import notify as notify_mod
from . import report as report_mod
from .case import Case, load_case
from .engine import Engine
from .errors import AnalysisError, ForensicsError, InputError
from .notify import NotifyResult
from .outputs import printable
from .summary import build_summary, write_summary

DEMO_CASE = Path("sample_logs") / "glm53" / "incident.toml"
CASE_DB = "case.duckdb"
PARQUET_STORE = "requests"  # run --engine spark: the Parquet case store under out/


@dataclass
class AnalysisResult:
    """What one analysis produced: the summary dict, the files written, warnings."""

    summary: dict[str, Any]
    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    out: Path | None = None


@contextlib.contextmanager
def open_engine(
    db: Path,
    engine: str = "duckdb",
    *,
    spark_master: str | None = None,
    memory_limit: str | None = None,
    temp_dir: Path | None = None,
    must_exist: bool = True,
) -> Iterator[Engine]:
    """The SQL engine on the case database `db` (DuckDB: a file; Spark: a Parquet case
    store as `forensics ingest --to-parquet DIR` writes it)."""
    check_engine(engine)
    if must_exist and "://" not in str(db) and not _store_exists(Path(db), engine):
        raise InputError(
            "case database not found",
            where=str(db),
            fix=(
                "load logs first: forensics ingest LOG... --db DB (or use forensics run)"
                if engine == "duckdb"
                else "with --engine spark, --db is the folder of forensics ingest ... "
                "--to-parquet DIR (or use forensics run --engine spark)"
            ),
        )
    eng = engines.open_engine(
        engine, db, spark_master=spark_master, memory_limit=memory_limit, temp_dir=temp_dir
    )
    try:
        yield eng
    finally:
        eng.close()


def _store_exists(db: Path, engine: str) -> bool:
    return db.is_file() if engine == "duckdb" else db.is_dir()


def check_engine(engine: str) -> None:
    """Refuse an engine name this toolkit does not know."""
    if engine not in engines.ENGINES:
        raise ForensicsError(
            f"unknown engine {engine!r}", where="--engine", fix="use duckdb or spark"
        )


def ingest_sources(
    eng: Engine, case: Case, *, temp_dir: str | Path | None = None, progress: bool = False
) -> list[str]:
    """Ingest every `[[source]]` of the case into the open database; returns the warnings."""
    warnings: list[str] = []
    for source in case.sources:
        report_ = ingest_mod.ingest_into(
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


def summarize(eng: Engine, case: Case, exclusions: bool = True) -> tuple[dict[str, Any], list[str]]:
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


def analyze_engine(eng: Engine, case: Case, out: Path, exclusions: bool = True) -> AnalysisResult:
    """Bands, data owners, classification on an open engine; writes summary + exposed CSV
    and records what the analysis was computed from (`forensics.integrity`)."""
    integrity.clear(eng)  # a failed analysis leaves no record: report/notify refuse it
    exposure.compute_bands(eng, case, exclusions)
    summary, warnings = summarize(eng, case, exclusions)
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        write_summary(summary, out / "summary.json"),
        exposure.write_exposed_csv(eng, out / "exposed_requests.csv"),
    ]
    integrity.record(eng, case, exclusions, summary)
    return AnalysisResult(summary=summary, paths=paths, warnings=warnings, out=out)


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
    with open_engine(
        Path(db),
        engine,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=Path(temp_dir) if temp_dir else None,
    ) as eng:
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
    with open_engine(Path(db), engine, spark_master=spark_master) as eng:
        integrity.check(eng, case, db, out=out)
        return notify_mod.write_lists(eng, case, Path(out))


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
    summary_path = out / "summary.json"
    if not summary_path.is_file():
        raise AnalysisError(
            "no summary.json in the output folder",
            where=str(summary_path),
            fix="run forensics analyze with the same --out first",
        )
    import json

    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise AnalysisError(
            f"summary.json cannot be read ({e})",
            where=str(summary_path),
            fix="run forensics analyze with the same --out again",
        ) from None
    with open_engine(Path(db), engine, spark_master=spark_master) as eng:
        integrity.check(eng, case, db, summary=summary, out=out)
        return _render(eng, case, summary, out)


def run(
    case_path: str | Path,
    out: str | Path,
    exclusions: bool = True,
    engine: str = "duckdb",
    spark_master: str | None = None,
    memory_limit: str | None = None,
    temp_dir: str | Path | None = None,
    progress: bool = False,
) -> AnalysisResult:
    """`forensics run`: ingest every [[source]] into out/case.duckdb (made afresh), then
    analyze, notify and report into `out`. Everything is written into a scratch folder
    beside `out` and moved into `out` at the end: a failed run leaves `out` as it was."""
    check_engine(engine)
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
        with open_engine(
            db,
            "duckdb",
            memory_limit=memory_limit,
            temp_dir=Path(temp_dir) if temp_dir else None,
            must_exist=False,
        ) as eng:
            warnings = ingest_sources(eng, case, temp_dir=temp_dir, progress=progress)
            with _analysis_engine(eng, engine, work, spark_master) as analysis:
                result = analyze_engine(analysis, case, work, exclusions)
                result.warnings[:0] = warnings
                lists = notify_mod.write_lists(analysis, case, work)
                result.paths.extend(lists.paths)
                result.warnings.extend(lists.warnings)
                result.paths.extend(_render(analysis, case, result.summary, work))
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


RUN_SCRATCH = ".forensics-run-"  # run's work folder beside --out: .OUT.forensics-run-PID-XXXX


def _work_folder(out: Path) -> Path:
    """A new, empty folder beside `out` (same file system: moving its files is a rename)."""
    parent = out.resolve().parent  # beside the folder a symlinked --out points at
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return scratch.make_dir(parent, f".{out.name}{RUN_SCRATCH}")
    except OSError as e:
        raise _out_error("cannot write beside the output folder", out, e) from None


def _out_error(what: str, out: Path, e: OSError) -> ForensicsError:
    return ForensicsError(
        f"{what} ({e.strerror or e})",
        where=str(out),
        fix="check the folder is writable and has room, or choose another --out",
    )


@contextlib.contextmanager
def _analysis_engine(
    ingested: Engine, engine: str, out: Path, spark_master: str | None
) -> Iterator[Any]:
    """The engine that analyzes what `run` ingested: the same DuckDB database, or (spark)
    a Parquet case store exported from it into out/requests (+ out/requests_tables);
    ingest is DuckDB's job."""
    if engine == "duckdb":
        yield ingested
        return
    store = out / PARQUET_STORE
    for stale in (store, out / f"{PARQUET_STORE}_tables"):
        if stale.exists():
            shutil.rmtree(stale)
    ingest_mod.export_parquet(ingested, store)
    with open_engine(store, engine, spark_master=spark_master) as analysis:
        yield analysis


def demo(out: str | Path = "forensics-demo", progress: bool = False) -> AnalysisResult:
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
        fix="reinstall kv-forensics, or run forensics run CASE.toml --out DIR on your own case",
    )


def headline(result: AnalysisResult) -> str:
    """The figures a responder reads first, as a few plain lines."""
    s = result.summary
    excluded = s.get("excluded_by_reason") or {}
    excluded_text = ", ".join(f"{reason} {n}" for reason, n in sorted(excluded.items())) or "none"
    owners_info = s.get("data_owners") or {}
    owners_text = (
        f"{owners_info.get('accounts', 0)} account(s), {owners_info.get('requests', 0)} "
        f"request(s) ({owners_info.get('policy')}, {owners_info.get('status')})"
    )
    flagged = ", ".join(s.get("flagged_accounts") or [])
    ingest = s.get("ingest") or {}
    lines = [
        f"{s.get('name')}",
        f"exposed responses: {s.get('exposure_count')}",
        f"affected accounts: {s.get('affected_accounts')}",
        f"excluded (by reason): {excluded_text}",
        f"data owners: {owners_text}",
        f"verdict: {s.get('verdict')}" + (f" (flagged: {flagged})" if flagged else ""),
        f"ingest: {ingest.get('rows_read', 0)} record(s) read, {ingest.get('rows_loaded', 0)} "
        f"loaded, {ingest.get('duplicates', 0)} duplicate(s), "
        f"{ingest.get('quarantined', 0)} quarantined"
        + (" (each with its reason in the quarantine table)" if ingest.get("quarantined") else ""),
    ]
    from .evidence import headline_lines

    lines.extend(headline_lines(s))
    if result.out is not None:
        lines.append(f"outputs: {result.out}")
    return "\n".join(printable(line, one_line=True) for line in lines)  # ids and names as data


def _render(eng: Engine, case: Case, summary: dict[str, Any], out: Path) -> list[Path]:
    return list(report_mod.render_report(eng, case, summary, out))
