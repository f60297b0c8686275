"""The `forensics` command: a thin layer over the library.

Each command parses options, calls one library function and prints. Data goes to stdout,
messages to stderr; `_Commands.invoke` is the one error handler and `errors.EXIT_CODES` the
exit codes (listed in `forensics --help`). All terminal presentation lives here: the tables
of ingest and capacity, the progress bars, options and steps named as the command line
names them (`cli_terms`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
import typer.core
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import EXIT_CODES, ForensicsError, ResourceError, render_terms, system_error

if TYPE_CHECKING:
    from .ingest import IngestReport, InputStats
    from .pipeline import CapacityResult
    from .progress import Progress
    from .synth.sample import SampleResult


def cli_terms(name: str, is_command: bool) -> str:
    """Options and steps as the command line names them: `--memory-limit`, `forensics run`."""
    return f"forensics {name}" if is_command else "--" + name.replace("_", "-")


def _say(text: str) -> str:
    """A library message in the command line's terms."""
    return render_terms(text, cli_terms)


class _Commands(typer.core.TyperGroup):
    """The one error boundary: every failure is one line on stderr and an exit code from
    `EXIT_CODES`. A `ForensicsError` has its own (4 when raised over a system fault: disk
    full, read-only, permission); an OSError, or a DuckDB error reporting one, is 4 (2 for
    a wrong path); anything else is a bug: 1, with the traceback under FORENSICS_DEBUG=1."""

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except ForensicsError as e:
            err.print(f"error: {e.line(cli_terms)}", markup=False)
            fault = system_error(e.__context__, faults_only=True)
            raise typer.Exit(ResourceError.exit_code if fault else e.exit_code) from None
        except Exception as e:
            if type(e).__module__.split(".")[0] in ("click", "typer"):
                raise  # usage errors, --help, typer.Exit: click prints and exits
            if os.environ.get("FORENSICS_DEBUG"):
                raise
            known = system_error(e)
            if known is not None:
                err.print(f"error: {known.line(cli_terms)}", markup=False)
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
        # literal, not engines.DEFAULT_MEMORY_LIMIT: the CLI imports no engine at start-up
        help="DuckDB memory limit, e.g. 8GB (default 1.5GB; spills past it).",
    ),
]
TempOpt = Annotated[
    Path | None, typer.Option("--temp-dir", help="Where DuckDB spills when over the limit.")
]
AllowEmptyOpt = Annotated[
    bool,
    typer.Option(
        "--allow-empty",
        help="Accept a deliberate zero: an input none of whose records loads, or no request "
        "of the case's models in the window (refused otherwise, exit 2).",
    ),
]


def _progress() -> Progress:
    """A Rich progress bar on stderr when it is a terminal; silent otherwise."""
    from .progress import SILENT

    return _RichProgress() if err.is_terminal else SILENT


class _RichProgress:
    """The library's progress reports as a transient Rich bar on stderr."""

    def __init__(self) -> None:
        from rich.progress import Progress as Bar

        self.bar: Bar | None = None
        self.task: object = None

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        columns = [TextColumn(step), BarColumn()]
        if unit == "bytes":
            columns.append(DownloadColumn())
        self.bar = Progress(*columns, console=err, transient=True)
        self.bar.start()
        self.task = self.bar.add_task(step, total=total)

    def advance(self, amount: float = 1) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, amount)  # type: ignore[arg-type]

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        self.bar = None


def _warn(warnings: list[str], shown: list[str] | None = None) -> None:
    """Warnings on stderr, but those the headline already shows (`shown`)."""
    for warning in warnings:
        if warning not in (shown or []):
            err.print(f"warning: {_say(warning)}", markup=False)


def _reasons_text(inputs: list[InputStats]) -> str:
    """Each input's top quarantine reasons with counts, one line per input (none when no
    input quarantined a record)."""
    lines = [
        f"quarantined in {s.path}: "
        + "; ".join(f"{reason} {n:,}" for reason, n in s.reasons)
        + (f" (of {s.quarantined:,})" if s.quarantined > sum(n for _, n in s.reasons) else "")
        for s in inputs
        if s.reasons
    ]
    from .formats import printable  # lazy: formats imports Polars (start-up time)

    return "\n".join(printable(line, one_line=True) for line in lines)


def _ingest_table(report: IngestReport) -> Table:
    """One row per input, then the totals."""
    table = Table(title="ingest", show_footer=False)
    table.add_column("input", overflow="fold")
    for name in ("rows read", "loaded", "duplicates", "quarantined"):
        table.add_column(name, justify="right")
    table.add_column("note")
    for s in report.inputs:
        table.add_row(
            Text(s.path),  # Text: a path such as logs/[x].jsonl is not Rich markup
            f"{s.rows_read:,}",
            f"{s.rows_loaded:,}",
            f"{s.duplicates:,}",
            f"{s.quarantined:,}",
            Text(s.note or ""),
        )
    t = report.totals()
    table.add_section()
    table.add_row(
        "total",
        f"{t['rows_read']:,}",
        f"{t['rows_loaded']:,}",
        f"{t['duplicates']:,}",
        f"{t['quarantined']:,}",
        "",
    )
    return table


def _capacity_text(result: CapacityResult) -> str:
    """A plain-text table of the spans, their notes, then the findings (deterministic)."""
    head = ("role", "node", "tokens", "reject_from", "context_len", "start", "end")
    rows = [
        (
            e["role"],
            e["node"],
            str(e["tokens"]),
            "" if e["reject_from"] is None else str(e["reject_from"]),
            "" if e["context_len"] is None else str(e["context_len"]),
            e["start"],
            e["end"] or "(open)",
        )
        for e in result.entries
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [head, *rows]
    ]
    lines += [
        f"  note: {e['role']} {e['node']} from {e['start']}: {e['note']}"
        for e in result.entries
        if e.get("note")
    ]
    lines.append("")
    if result.preflight:
        lines.append(f"pre-flight: {len(result.preflight)} span(s) with pool < context window")
        for f in result.preflight:
            band = f["danger_band"]
            lines.append(
                f"  {f['role']} {f['node']} from {f['start']}: pool {f['tokens']} < window "
                f"{f['context_window']}; prompts of {band['from']}..{band['to']} tokens pass "
                "the tokenizer but the scheduler refuses them (SGLang up to 0.5.18 in "
                "disaggregated mode serves them from a one-token placeholder)"
                + ("; the engine warned at startup" if f.get("engine_warned") else "")
            )
    else:
        lines.append("pre-flight: every pool holds the context window")
    if result.out is not None:
        lines.append(f"wrote {len(result.entries)} [[capacity]] entries to {result.out}")
    return "\n".join(lines)


def _sample_text(result: SampleResult) -> str:
    """The files written and the case's true figures."""
    tr = result.truth
    lines = [f"case: {result.out / 'incident.toml'}"]
    lines += [f"  {p.relative_to(result.out).as_posix()}" for p in result.files]
    lines.append(
        f"requests: {tr['requests']}  exposure_count: {tr['exposure_count']}  "
        f"affected_accounts: {tr['affected_accounts']}"
    )
    lines.append("bands: " + ", ".join(f"{k} {v}" for k, v in tr["bands"].items()))
    lines.append(
        "excluded_by_reason: " + ", ".join(f"{k} {v}" for k, v in tr["excluded_by_reason"].items())
    )
    return "\n".join(lines)


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
    allow_empty: AllowEmptyOpt = False,
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
        allow_empty=allow_empty,
    )
    out.print(_ingest_table(report))
    reasons = _reasons_text(report.inputs)
    if reasons:
        out.print(reasons, markup=False)
    _warn(report.warnings)


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
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """Bands, exposure count, exclusions, data owners, usage classification.

    Writes summary.json and exposed_requests.csv.

    Example:

        forensics analyze incident.toml --db case.duckdb --out results/
    """
    from . import pipeline
    from .render.headline import headline

    result = pipeline.analyze(
        case,
        db,
        out_dir,
        exclusions=not no_exclusions,
        engine=engine,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        allow_empty=allow_empty,
    )
    out.print(headline(result.summary, result.out), markup=False)
    _warn(result.warnings, result.summary.get("warnings"))


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
    """Write the notification lists, notices and regulator summary under OUT/notify/.

    Example:

        forensics notify incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    result = pipeline.notify(case, db, out_dir, engine=engine, spark_master=spark_master)
    for p in result.paths:
        out.print(str(p))
    _warn(result.warnings)


@app.command()
def run(
    case: CaseArg,
    out_dir: OutOpt,
    no_exclusions: NoExclOpt = False,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """Ingest every [[source]], analyze, notify and report, into one folder.

    Example:

        forensics run sample_logs/glm53/incident.toml --out results/
    """
    from . import pipeline
    from .render.headline import headline

    result = pipeline.run(
        case,
        out_dir,
        exclusions=not no_exclusions,
        engine=engine,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        progress=_progress(),
        allow_empty=allow_empty,
    )
    reasons = _reasons_text(result.inputs)
    if reasons:
        out.print(reasons, markup=False)
    out.print(headline(result.summary, result.out), markup=False)
    _warn(result.warnings, result.summary.get("warnings"))


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
    from .render.headline import headline

    result = pipeline.demo(out_dir, progress=_progress())
    reasons = _reasons_text(result.inputs)
    if reasons:
        out.print(reasons, markup=False)
    out.print(headline(result.summary, result.out), markup=False)


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
    from .synth import sample as sample_mod

    written = sample_mod.generate(
        out_dir, requests=requests, seed=seed, fmt=fmt, progress=_progress()
    )
    out.print(_sample_text(written))


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
    """Derive the KV pool capacity timeline per node, with each server start's admission
    limit (reject_from: the smallest prompt the engine refuses), from SGLang server logs.

    Example:

        forensics capacity logs/prefill-*.log --db case.duckdb --context-window 1048576
    """
    from . import pipeline

    result = pipeline.capacity(
        logs, db, context_window=context_window, out=out_file, node=node, role=role
    )
    out.print(_capacity_text(result), markup=False)  # plain text: [[capacity]] is not markup


def main() -> None:
    """Entry point of the `forensics` console script."""
    app()
