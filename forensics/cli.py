"""The `forensics` command: a thin layer over the library.

Each command parses options, calls one library function and prints. Data goes to stdout,
messages to stderr; `_Commands.invoke` is the one error handler and `errors.EXIT_CODES` the
exit codes (listed in `forensics --help` and each command's). All terminal presentation
lives here: the tables of ingest and capacity (plain text when stdout is not a terminal),
the progress (a Rich bar on a terminal, one line per step otherwise, none with --quiet),
the headline or its --json figures, usage lines as conventions have them (`_Command`),
options and steps named as the command line names them (`cli_terms`).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import EXIT_CODES, ForensicsError, ResourceError, render_terms, system_error

if TYPE_CHECKING:
    from .ingest import IngestReport, InputStats
    from .pipeline import AnalysisResult, CapacityResult
    from .progress import Progress
    from .synth.sample import SampleResult


def cli_terms(name: str, is_command: bool) -> str:
    """Options and steps as the command line names them: `--memory-limit`, `forensics run`."""
    return f"forensics {name}" if is_command else "--" + name.replace("_", "-")


def _say(text: str) -> str:
    """A library message in the command line's terms."""
    return render_terms(text, cli_terms)


def _conventional(params: list[Any]) -> list[Any]:
    """Parameters shown as command lines conventionally show them: an argument by its name in
    capitals (`CASE`, `LOGS...`) without a type, a flag without a value (`--force`, not
    `--force <bool>`)."""
    for p in params:
        if isinstance(p, typer.core.TyperArgument):
            if p.metavar is None and p.name is not None:
                p.metavar = p.name.upper() + ("..." if p.nargs != 1 else "")
            setattr(p, "display_type_rich", _no_type)  # noqa: B010 (an instance's own)
        elif isinstance(p, typer.core.TyperOption) and p.is_flag and p.metavar is None:
            p.metavar = ""
    return params


def _no_type(ctx: object) -> None:
    return None


class _Command(typer.core.TyperCommand):
    """A command whose usage line reads `forensics run [OPTIONS] CASE`, `LOGS...` (not
    `{case}`, `{logs}...`) and whose flags take no value in the help."""

    def get_params(self, ctx: typer.Context) -> list[Any]:  # type: ignore[override]
        return _conventional(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        pieces = [self.options_metavar] if self.options_metavar else []
        for p in self.get_params(ctx):
            if isinstance(p, typer.core.TyperArgument) and p.metavar:
                pieces.append(p.metavar if p.required else f"[{p.metavar}]")
        return pieces


class _Commands(typer.core.TyperGroup):
    """The one error boundary: every failure is one line on stderr and an exit code from
    `EXIT_CODES`. A `ForensicsError` has its own (4 when raised over a system fault: disk
    full, read-only, permission); an OSError, or a DuckDB error reporting one, is 4 (2 for
    a wrong path); anything else is a bug (a Rust panic in a library too): 1, with the
    traceback under FORENSICS_DEBUG=1."""

    def get_params(self, ctx: typer.Context) -> list[Any]:  # type: ignore[override]
        return _conventional(super().get_params(ctx))

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except ForensicsError as e:
            err.print(f"error: {e.line(cli_terms)}", markup=False)
            fault = system_error(e.__context__, faults_only=True)
            raise typer.Exit(ResourceError.exit_code if fault else e.exit_code) from None
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as e:  # also what derives from BaseException only, such as a
            # Rust panic inside Polars (pyo3_runtime.PanicException): a bug, one line
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
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)
# soft_wrap: lines are never folded (a piped path stays whole); emoji=False: an id such as
# ":smile:" is printed as written
out = Console(soft_wrap=True, highlight=False, emoji=False)
err = Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)


def _print_version(value: bool) -> None:
    if value:
        from .version import versions

        v = versions()
        out.print(f"{v['name']} {v['version']} (DuckDB {v['duckdb']})", markup=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the toolkit's version and DuckDB's, and exit.",
        ),
    ] = False,
) -> None:
    """Investigate cross-session KV-cache exposure incidents from request logs."""


class Engine(StrEnum):
    """--engine: the SQL engines of `forensics.engines` (a test keeps the two lists equal;
    literal here, as the CLI imports no engine at start-up)."""

    duckdb = "duckdb"
    spark = "spark"


class Profile(StrEnum):
    """--profile: the built-in mappings of `forensics.mapping.PROFILES`."""

    canonical = "canonical"
    openai = "openai"
    sglang = "sglang"
    vllm = "vllm"
    trtllm = "trtllm"


YearOpt = Annotated[
    int | None,
    typer.Option(
        "--year",
        metavar="YYYY",
        min=1970,
        max=9999,
        help="Year of the first line of each node's vLLM logs (vLLM prints none).",
    ),
]
TimezoneOpt = Annotated[
    str | None,
    typer.Option(
        "--timezone",
        metavar="ZONE",
        help="IANA zone of an engine log's clock when it prints none (default UTC).",
    ),
]


class DemoCase(StrEnum):
    """--case: the bundled cases of `forensics.pipeline.DEMO_CASES`."""

    glm53 = "glm53"
    vllm_pd = "vllm-pd"


class Role(StrEnum):
    """--role: the server roles of `forensics.schema.ROLES`."""

    prefill = "prefill"
    decode = "decode"


class SampleFormat(StrEnum):
    """sample --format: the gateway log formats of `forensics.synth.sample.FORMATS`."""

    parquet = "parquet"
    jsonl = "jsonl"


def _exits(**meaning: str) -> str:
    """A command's help epilog: the exit codes it can end with, and what each means for it
    (`meaning` overrides the general text, e.g. `_3=...`; codes not given: 0, 1, 2, 4)."""
    codes = {0, 1, 2, 4} | {int(k[1:]) for k in meaning}
    parts = [f"{code} {meaning.get(f'_{code}', EXIT_CODES[code])}" for code in sorted(codes)]
    return "Exit codes: " + "; ".join(parts) + "."


CaseArg = Annotated[
    Path, typer.Argument(metavar="CASE", help="The case file (incident.toml).", show_default=False)
]
DbOpt = Annotated[
    Path, typer.Option("--db", metavar="DB", help="The case database (a DuckDB file).")
]
OutOpt = Annotated[Path, typer.Option("--out", metavar="DIR", help="Folder for the outputs.")]
NoExclOpt = Annotated[
    bool,
    typer.Option("--no-exclusions", help="Keep every account (show what exclusions change)."),
]
EngineOpt = Annotated[Engine, typer.Option("--engine", help="SQL engine.")]
SparkMasterOpt = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        metavar="URL",
        help="Spark master URL (default: SPARK_MASTER or local[*]).",
    ),
]
MemOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        metavar="SIZE",
        # literal, not engines.DEFAULT_MEMORY_LIMIT: the CLI imports no engine at start-up
        help="DuckDB memory limit, e.g. 8GB (default 1.5GB; spills past it).",
    ),
]
TempOpt = Annotated[
    Path | None,
    typer.Option("--temp-dir", metavar="DIR", help="Where DuckDB spills when over the limit."),
]
AllowEmptyOpt = Annotated[
    bool,
    typer.Option(
        "--allow-empty",
        help="Accept a deliberate zero: an input none of whose records loads, or no request "
        "of the case's models in the window (refused otherwise, exit 2).",
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Show no progress (warnings and errors are still printed)."),
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print summary.json's headline figures as one JSON object on stdout (instead "
        "of the headline), for scripts.",
    ),
]
_ANALYSIS_STALE = (
    "the case database holds no analysis of this case file on its current inputs, or "
    "summary.json in --out is not from it: re-run forensics analyze"
)


def _progress(quiet: bool = False) -> Progress:
    """How the library's steps are shown: a Rich bar on stderr when it is a terminal (for a
    step still running after a second), one line per step when it is not, nothing with
    --quiet."""
    from .progress import SILENT

    if quiet:
        return SILENT
    return _TerminalProgress(err) if err.is_terminal else _LineProgress(err)


def _size(total: float | None, unit: str) -> str:
    """A step's size as a progress line shows it: `12.3 MB`, `100,000 requests`, or ''."""
    if total is None:
        return ""
    if unit == "bytes":
        from rich.filesize import decimal

        return decimal(int(total))
    return f"{int(total):,} {unit}".strip()


class _LineProgress:
    """One line on stderr per step as it starts (a log shows what is running):
    `progress: analyze: bands`, with the step's size when known."""

    PREFIX = "progress: "

    def __init__(self, console: Console) -> None:
        self.console = console

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        size = _size(total, unit)
        line = f"{self.PREFIX}{step}" + (f" ({size})" if size else "")
        self.console.print(line, markup=False)

    def advance(self, amount: float = 1) -> None:
        pass

    def done(self) -> None:
        pass


class _TerminalProgress:
    """Each step as a transient Rich bar on stderr (spinner, bar, size done, time elapsed),
    drawn only once the step has run for `delay` seconds: short steps leave no flicker."""

    def __init__(self, console: Console, delay: float = 1.0) -> None:
        self.console = console
        self.delay = delay
        self.bar: Any = None
        self.task: Any = None

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.done()
        columns: list[ProgressColumn] = [
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
        ]
        if unit == "bytes":
            columns.append(DownloadColumn())
        elif total is not None:
            columns.append(MofNCompleteColumn())
        columns.append(TimeElapsedColumn())
        self.bar = _delayed_bar_class()(*columns, console=self.console, transient=True)
        self.bar.delay = self.delay
        self.bar.start()
        self.task = self.bar.add_task(step, total=total)

    def advance(self, amount: float = 1) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, amount)

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        self.bar = None


@functools.cache
def _delayed_bar_class() -> type:
    from rich.progress import Progress as Bar

    class DelayedBar(Bar):
        """A Rich progress display that leaves out tasks younger than `delay` seconds."""

        delay = 1.0

        def get_renderables(self) -> Any:
            shown = [t for t in self.tasks if t.visible and (t.elapsed or 0.0) >= self.delay]
            yield self.make_tasks_table(shown)

    return DelayedBar


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


def _print_ingest(report: IngestReport) -> None:
    """The per-input accounting: a Rich table on a terminal; plain aligned text otherwise,
    whatever the width (piped output never folds a file name)."""
    if out.is_terminal:
        out.print(_ingest_table(report))
    else:
        out.print(_ingest_text(report), markup=False)


_INGEST_HEAD = ("input", "rows read", "loaded", "duplicates", "quarantined", "note")


def _ingest_rows(report: IngestReport) -> list[tuple[str, ...]]:
    """(input, rows read, loaded, duplicates, quarantined, note) per input, then the totals."""
    rows: list[tuple[str, ...]] = [
        (
            s.path,
            f"{s.rows_read:,}",
            f"{s.rows_loaded:,}",
            f"{s.duplicates:,}",
            f"{s.quarantined:,}",
            s.note or "",
        )
        for s in report.inputs
    ]
    t = report.totals()
    keys = ("rows_read", "rows_loaded", "duplicates", "quarantined")
    rows.append(("total", *(f"{t[k]:,}" for k in keys), ""))
    return rows


def _ingest_text(report: IngestReport) -> str:
    """The ingest table as plain text: columns two spaces apart, counts right-aligned."""
    return _plain_table(_INGEST_HEAD, _ingest_rows(report), right=(1, 2, 3, 4))


def _plain_table(
    head: Sequence[str], rows: Sequence[Sequence[str]], right: tuple[int, ...] = ()
) -> str:
    """Aligned plain-text columns (two spaces apart), no line folded at any width; control
    characters in a cell shown as escapes (a file name may hold a newline)."""
    from .formats import printable  # lazy: formats imports Polars

    cells = [tuple(head), *[tuple(printable(c, one_line=True) for c in r) for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in cells
    )


def _ingest_table(report: IngestReport) -> Table:
    """One row per input, then the totals (on a terminal)."""
    table = Table(title="ingest", show_footer=False)
    table.add_column("input", overflow="fold")
    for name in ("rows read", "loaded", "duplicates", "quarantined"):
        table.add_column(name, justify="right")
    table.add_column("note")
    from .formats import printable

    *inputs, total = _ingest_rows(report)
    for path, *counts, note in inputs:
        # Text: a path such as logs/[x].jsonl is not Rich markup
        table.add_row(Text(printable(path, one_line=True)), *counts, Text(note))
    table.add_section()
    table.add_row(*total)
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
    lines = [_plain_table(head, rows)]
    lines += [
        f"  note: {e['role']} {e['node']} from {e['start']}: {e['note']}"
        for e in result.entries
        if e.get("note")
    ]
    lines += [f"  fault: {text}" for text in result.fault_texts()]
    lines.append("")
    if result.preflight:
        lines.append(f"pre-flight: {len(result.preflight)} span(s) with pool < context window")
        for f in result.preflight:
            band = f["danger_band"]
            engine = result.engines.get(f["node"], "sglang")
            lines.append(
                f"  {f['role']} {f['node']} from {f['start']}: pool {f['tokens']} < window "
                f"{f['context_window']}; "
                + (
                    f"no prompt size lies between the pool and the engine's own context limit "
                    f"({band['to'] + 1}): the engine refuses every prompt the pool cannot hold"
                    if band["from"] > band["to"]
                    else f"prompts of {band['from']}..{band['to']} tokens pass the tokenizer but "
                    "the scheduler refuses them (SGLang up to 0.5.18 in disaggregated mode "
                    "serves them from a one-token placeholder)"
                    if engine == "sglang"
                    else f"prompts of {band['from']}..{band['to']} tokens are larger than the "
                    f"pool ({_ENGINE_NAMES.get(engine, engine)} log: SGLang's one-token "
                    "placeholder does not apply; whether they were refused or served is not "
                    "known from the pool alone)"
                )
                + ("; the engine warned at startup" if f.get("engine_warned") else "")
            )
    else:
        lines.append("pre-flight: every pool holds the context window")
    if result.out is not None:
        lines.append(f"wrote {len(result.entries)} [[capacity]] entries to {result.out}")
    return "\n".join(lines)


_ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM", "trtllm": "TensorRT-LLM"}


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


@app.command(cls=_Command, epilog=_exits())
def ingest(
    logs: Annotated[list[str], typer.Argument(help="Log files, globs or folders.")],
    db: DbOpt,
    mapping: Annotated[
        Path | None, typer.Option("--mapping", metavar="FILE", help="A *.mapping.toml file.")
    ] = None,
    profile: Annotated[
        Profile | None, typer.Option("--profile", help="Built-in mapping (instead of --mapping).")
    ] = None,
    node: Annotated[
        str | None,
        typer.Option(
            "--node",
            metavar="NODE",
            help="Engine node id, or a rule such as '{folder}/{name}' (engine logs; default: "
            "file name).",
        ),
    ] = None,
    role: Annotated[Role | None, typer.Option("--role", help="Engine role (engine logs).")] = None,
    year: YearOpt = None,
    timezone: TimezoneOpt = None,
    to_parquet: Annotated[
        Path | None,
        typer.Option(
            "--to-parquet",
            metavar="DIR",
            help="Also write requests as Parquet partitioned by day, model.",
        ),
    ] = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Re-ingest inputs already loaded (e.g. with a changed mapping), or a log "
            "re-exported at a path already loaded: what was loaded from it (records, "
            "quarantine rows) is replaced.",
        ),
    ] = False,
    allow_empty: AllowEmptyOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Load request logs into the case database, accounting for every record.

    Examples:

        forensics ingest gateway.jsonl.gz --db case.duckdb --mapping gateway.mapping.toml

        forensics ingest 'exports/*.parquet' --db case.duckdb --profile canonical

        forensics ingest gateway.jsonl.gz --db case.duckdb --mapping fixed.mapping.toml --force

        forensics ingest vllm-logs/ --db case.duckdb --profile vllm --year 2026
    """
    from . import ingest as ingest_mod
    from .ingest.engine_logs import check_timezone

    clock = ingest_mod.Clock(year=year, timezone=check_timezone(timezone))
    report = ingest_mod.ingest(
        logs,
        db,
        mapping=mapping,
        profile=_value(profile),
        node=node,
        role=_value(role),
        to_parquet=to_parquet,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        progress=_progress(quiet),
        force=force,
        allow_empty=allow_empty,
        clock=clock,
    )
    _print_ingest(report)
    reasons = _reasons_text(report.inputs)
    if reasons:
        out.print(reasons, markup=False)
    _warn(report.warnings)


@app.command(cls=_Command, epilog=_exits(_3="the case database holds no requests table"))
def analyze(
    case: CaseArg,
    db: DbOpt,
    out_dir: OutOpt,
    no_exclusions: NoExclOpt = False,
    engine: EngineOpt = Engine.duckdb,
    spark_master: SparkMasterOpt = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
    allow_empty: AllowEmptyOpt = False,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Bands, exposure count, exclusions, data owners, usage classification.

    Writes summary.json, exposed_requests.csv and blast_radius.csv.

    Example:

        forensics analyze incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    result = pipeline.analyze(
        case,
        db,
        out_dir,
        exclusions=not no_exclusions,
        engine=engine.value,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        allow_empty=allow_empty,
        progress=_progress(quiet),
    )
    _print_result(result, as_json)


@app.command(cls=_Command, epilog=_exits(_3=_ANALYSIS_STALE))
def report(
    case: CaseArg,
    db: DbOpt,
    out_dir: OutOpt,
    engine: EngineOpt = Engine.duckdb,
    spark_master: SparkMasterOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Render report.html, timeline.png and timeline.svg from the analysis results.

    Example:

        forensics report incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    paths = pipeline.report(
        case,
        db,
        out_dir,
        engine=engine.value,
        spark_master=spark_master,
        progress=_progress(quiet),
    )
    for p in paths:
        out.print(str(p), markup=False)


@app.command(cls=_Command, epilog=_exits(_3=_ANALYSIS_STALE))
def notify(
    case: CaseArg,
    db: DbOpt,
    out_dir: OutOpt,
    engine: EngineOpt = Engine.duckdb,
    spark_master: SparkMasterOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Write the notification lists, one notice per account (Markdown, and an e-mail message
    ready to send), the regulator summary and incident.json under OUT/notify/.

    Example:

        forensics notify incident.toml --db case.duckdb --out results/
    """
    from . import pipeline

    result = pipeline.notify(
        case,
        db,
        out_dir,
        engine=engine.value,
        spark_master=spark_master,
        progress=_progress(quiet),
    )
    for p in result.paths:
        out.print(str(p), markup=False)
    _warn(result.warnings)


@app.command(cls=_Command, epilog=_exits(_3="no [[source]] loaded a requests table"))
def run(
    case: CaseArg,
    out_dir: OutOpt,
    no_exclusions: NoExclOpt = False,
    engine: EngineOpt = Engine.duckdb,
    spark_master: SparkMasterOpt = None,
    memory_limit: MemOpt = None,
    temp_dir: TempOpt = None,
    allow_empty: AllowEmptyOpt = False,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
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
        engine=engine.value,
        spark_master=spark_master,
        memory_limit=memory_limit,
        temp_dir=temp_dir,
        allow_empty=allow_empty,
        progress=_progress(quiet),
    )
    _print_result(result, as_json, reasons=True)


@app.command(cls=_Command, epilog=_exits())
def demo(
    out_dir: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Folder for the outputs.")
    ] = Path("forensics-demo"),
    case: Annotated[
        DemoCase,
        typer.Option(
            "--case",
            help="Bundled case: glm53 (SGLang) or vllm-pd (vLLM prefill/decode, NixlConnector).",
        ),
    ] = DemoCase.glm53,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a bundled case end to end (by default the GLM-5.3 case) and print the headline
    figures.

    Example:

        forensics demo --out /tmp/glm53

        forensics demo --case vllm-pd --out /tmp/vllm-pd
    """
    from . import pipeline

    result = pipeline.demo(out_dir, progress=_progress(quiet), case=case.value)
    _print_result(result, as_json, warnings=False, reasons=True)


@app.command(cls=_Command, epilog=_exits())
def sample(
    out_dir: OutOpt,
    requests: Annotated[
        int, typer.Option("--requests", metavar="N", help="How many requests.")
    ] = 100_000,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Random seed.")] = 1,
    fmt: Annotated[
        SampleFormat, typer.Option("--format", help="Gateway log format (jsonl: gzip).")
    ] = SampleFormat.parquet,
    quiet: QuietOpt = False,
) -> None:
    """Write a synthetic case of any size, with its true exposure count beside it.

    Example:

        forensics sample --out /tmp/case --requests 1000000 --seed 7
    """
    from .synth import sample as sample_mod

    written = sample_mod.generate(
        out_dir, requests=requests, seed=seed, fmt=fmt.value, progress=_progress(quiet)
    )
    out.print(_sample_text(written), markup=False)


@app.command(cls=_Command, epilog=_exits())
def capacity(
    logs: Annotated[
        list[str],
        typer.Argument(help="SGLang, vLLM or TensorRT-LLM server logs (files, globs, folders)."),
    ],
    db: DbOpt,
    context_window: Annotated[
        int | None,
        typer.Option(
            "--context-window", metavar="TOKENS", help="Advertised context window (tokens)."
        ),
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="Write the [[capacity]] entries to this file."),
    ] = None,
    node: Annotated[
        str | None,
        typer.Option(
            "--node",
            metavar="NODE",
            help="Node id, or a rule such as '{folder}/{name}' (default: file name).",
        ),
    ] = None,
    role: Annotated[Role | None, typer.Option("--role", help="Server role.")] = None,
    year: YearOpt = None,
    timezone: TimezoneOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Derive the KV pool capacity timeline per node, with each server start's admission
    limit (reject_from: the smallest prompt the engine refuses), from server logs; the engine
    that wrote each file (SGLang, vLLM, TensorRT-LLM) is told by its line heads.

    Example:

        forensics capacity logs/prefill-*.log --db case.duckdb --context-window 1048576

        forensics capacity vllm/*.log --db case.duckdb --year 2026
    """
    from . import pipeline

    result = pipeline.capacity(
        logs,
        db,
        context_window=context_window,
        out=out_file,
        node=node,
        role=_value(role),
        year=year,
        timezone=timezone,
        progress=_progress(quiet),
    )
    out.print(_capacity_text(result), markup=False)  # plain text: [[capacity]] is not markup


def _print_result(
    result: AnalysisResult, as_json: bool, warnings: bool = True, reasons: bool = False
) -> None:
    """An analysis on stdout: (with `reasons`, each input's top quarantine reasons, then) the
    headline, or with --json its figures as one JSON object (the reasons then on stderr);
    then its warnings on stderr, but those the headline shows."""
    from .render.headline import headline, headline_figures

    why = _reasons_text(result.inputs) if reasons else ""
    if as_json:
        figures = headline_figures(result.summary, result.out)
        out.out(json.dumps(figures, sort_keys=True, indent=2, ensure_ascii=False), highlight=False)
        if why:
            err.print(why, markup=False)
    else:
        if why:  # what the logs lost comes before the figures built on what they kept
            out.print(why, markup=False)
        out.print(headline(result.summary, result.out), markup=False)
    if warnings:
        _warn(result.warnings, None if as_json else result.summary.get("warnings"))


def _value(choice: Enum | None) -> str | None:
    """The text of a choice option (None when not given)."""
    return None if choice is None else str(choice.value)


def main() -> None:
    """Entry point of the `forensics` console script."""
    app()


if __name__ == "__main__":  # python -m forensics.cli
    main()
