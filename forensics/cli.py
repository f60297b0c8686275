"""The `forensics` command: a thin layer over the library.

Each command parses options, calls one library function and prints. Data goes to stdout,
messages to stderr; `_Commands.invoke` is the one error handler and `errors.EXIT_CODES` the
exit codes (listed in `forensics --help`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
import typer.core
from rich.console import Console

from .errors import EXIT_CODES, ForensicsError, ResourceError, system_error


class _Commands(typer.core.TyperGroup):
    """The one error boundary: every failure is one line on stderr and an exit code from
    `EXIT_CODES`. A `ForensicsError` has its own (4 when raised over a system fault: disk
    full, read-only, permission); an OSError, or a DuckDB error reporting one, is 4 (2 for
    a wrong path); anything else is a bug: 1, with the traceback under FORENSICS_DEBUG=1."""

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except ForensicsError as e:
            err.print(f"error: {e.line()}", markup=False)
            fault = system_error(e.__context__, faults_only=True)
            raise typer.Exit(ResourceError.exit_code if fault else e.exit_code) from None
        except Exception as e:
            if type(e).__module__.split(".")[0] in ("click", "typer"):
                raise  # usage errors, --help, typer.Exit: click prints and exits
            if os.environ.get("FORENSICS_DEBUG"):
                raise
            known = system_error(e)
            if known is not None:
                err.print(f"error: {known.line()}", markup=False)
                raise typer.Exit(known.exit_code) from None
            text = str(e).strip().splitlines()
            err.print(
                f"internal error: {type(e).__name__}: {text[0] if text else ''} "
                "(run with FORENSICS_DEBUG=1 for the traceback, and report it)",
                markup=False,
            )
            raise typer.Exit(1) from None


app = typer.Typer(
    name="forensics",
    cls=_Commands,
    help="Investigate cross-session KV-cache exposure incidents from request logs.",
    epilog="Exit codes: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()) + ".",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

CaseArg = Annotated[Path, typer.Argument(help="The case file (incident.toml).", show_default=False)]
DbOpt = Annotated[Path, typer.Option("--db", help="The case database (a DuckDB file).")]
OutOpt = Annotated[Path, typer.Option("--out", help="Folder for the outputs.")]
NoExclOpt = Annotated[
    bool,
    typer.Option("--no-exclusions", help="Keep every account (show what exclusions change)."),
]
EngineOpt = Annotated[str, typer.Option("--engine", help="SQL engine: duckdb (default) or spark.")]
SparkMasterOpt = Annotated[
    str | None,
    typer.Option("--spark-master", help="Spark master URL (default: SPARK_MASTER or local[*])."),
]
MemOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        # literal, not engine.DEFAULT_MEMORY_LIMIT: the CLI imports no engine at start-up
        help="DuckDB memory limit, e.g. 8GB (default 1.5GB; spills past it).",
    ),
]
TempOpt = Annotated[
    Path | None, typer.Option("--temp-dir", help="Where DuckDB spills when over the limit.")
]


def _progress() -> bool:
    return err.is_terminal


@app.command()
def ingest(
    logs: Annotated[list[str], typer.Argument(help="Log files, globs or folders.")],
    db: DbOpt,
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="A *.mapping.toml file.")
    ] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", help="Built-in mapping: canonical, openai, sglang.")
    ] = None,
    node: Annotated[
        str | None, typer.Option("--node", help="Engine node id (sglang; default: file name).")
    ] = None,
    role: Annotated[
        str | None, typer.Option("--role", help="Engine role: prefill or decode (sglang).")
    ] = None,
    to_parquet: Annotated[
        Path | None,
        typer.Option(
            "--to-parquet", help="Also write requests as Parquet partitioned by day, model."
        ),
    ] = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Re-ingest inputs already loaded (e.g. with a changed mapping): their "
            "records and quarantine rows are replaced.",
        ),
    ] = False,
) -> None:
    """Load request logs into the case database, accounting for every record.

    Examples:

        forensics ingest gateway.jsonl.gz --db case.duckdb --mapping gateway.mapping.toml

        forensics ingest 'exports/*.parquet' --db case.duckdb --profile canonical

        forensics ingest gateway.jsonl.gz --db case.duckdb --mapping fixed.mapping.toml --force
    """
    from . import ingest as ingest_mod

    report = ingest_mod.ingest(
        logs,
        db,
        mapping=mapping,
        profile=profile,
        node=node,
        role=role,
        to_parquet=to_parquet,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        progress=_progress(),
        force=force,
    )
    out.print(report.render())
    for warning in report.warnings:
        err.print(f"warning: {warning}", markup=False)


@app.command()
def analyze(
    case: CaseArg,
    db: DbOpt,
    out_dir: OutOpt,
    no_exclusions: NoExclOpt = False,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
) -> None:
    """Bands, exposure count, exclusions, data owners, usage classification.

    Writes summary.json and exposed_requests.csv.

    Example:

        forensics analyze incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    result = pipeline.analyze(
        case,
        db,
        out_dir,
        exclusions=not no_exclusions,
        engine=engine,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
    )
    out.print(pipeline.headline(result), markup=False)
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False)


@app.command()
def report(
    case: CaseArg,
    db: DbOpt,
    out_dir: OutOpt,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
) -> None:
    """Render report.html, timeline.png and timeline.svg from the analysis results.

    Example:

        forensics report incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    paths = pipeline.report(case, db, out_dir, engine=engine, spark_master=spark_master)
    for p in paths:
        out.print(str(p))


@app.command()
def notify(
    case: CaseArg,
    db: DbOpt,
    out_dir: OutOpt,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
) -> None:
    """Write the notification lists under OUT/notify/.

    Example:

        forensics notify incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    result = pipeline.notify(case, db, out_dir, engine=engine, spark_master=spark_master)
    for p in result.paths:
        out.print(str(p))
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False)


@app.command()
def run(
    case: CaseArg,
    out_dir: OutOpt,
    no_exclusions: NoExclOpt = False,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
) -> None:
    """Ingest every [[source]], analyze, notify and report, into one folder.

    Example:

        forensics run sample_logs/glm53/incident.toml --out results/
    """
    from . import pipeline

    result = pipeline.run(
        case,
        out_dir,
        exclusions=not no_exclusions,
        engine=engine,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        progress=_progress(),
    )
    out.print(pipeline.headline(result), markup=False)
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False)


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the outputs.")] = Path(
        "forensics-demo"
    ),
) -> None:
    """Run the bundled GLM-5.3 case end to end and print the headline figures.

    Example:

        forensics demo --out /tmp/glm53
    """
    from . import pipeline

    result = pipeline.demo(out_dir, progress=_progress())
    out.print(pipeline.headline(result), markup=False)


@app.command()
def sample(
    out_dir: OutOpt,
    requests: Annotated[int, typer.Option("--requests", help="How many requests.")] = 100_000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 1,
    fmt: Annotated[str, typer.Option("--format", help="parquet or jsonl (gzip).")] = "parquet",
) -> None:
    """Write a synthetic case of any size, with its true exposure count beside it.

    Example:

        forensics sample --out /tmp/case --requests 1000000 --seed 7
    """
    from . import sample as sample_mod

    written = sample_mod.generate(
        out_dir, requests=requests, seed=seed, fmt=fmt, progress=_progress()
    )
    out.print(written.render())


@app.command()
def capacity(
    logs: Annotated[list[str], typer.Argument(help="SGLang server logs (files, globs, folders).")],
    db: DbOpt,
    context_window: Annotated[
        int | None, typer.Option("--context-window", help="Advertised context window (tokens).")
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the [[capacity]] entries to this file.")
    ] = None,
    node: Annotated[
        str | None, typer.Option("--node", help="Node id (default: file name).")
    ] = None,
    role: Annotated[str | None, typer.Option("--role", help="prefill or decode.")] = None,
) -> None:
    """Derive the KV pool capacity timeline per node from SGLang server logs.

    Example:

        forensics capacity logs/prefill-*.log --db case.duckdb --context-window 1048576
    """
    from . import capacity as capacity_mod

    result = capacity_mod.derive(
        logs, db, context_window=context_window, out=out_file, node=node, role=role
    )
    out.print(result.render(), markup=False)  # plain text: [[capacity]] is not markup


def main() -> None:
    """Entry point of the `forensics` console script."""
    app()
