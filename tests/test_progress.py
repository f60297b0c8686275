"""Progress: the library reports each step through the Progress protocol; the command shows it
as a Rich bar on a terminal (once a step has run a second), one line per step when stderr is
not a terminal, nothing with --quiet; --json prints the headline figures for scripts."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys

from case_small_db import CASE_DIR, CASE_FILE
from conftest import PROGRESS_PREFIX, REPO
from rich.console import Console

import forensics.analysis
from forensics import pipeline
from forensics.cli import _TerminalProgress, app
from forensics.engines import DuckDBEngine, SQLEngine

# The steps of `run`, in order (ingest of the one CSV source; no engine logs in case_small)
RUN_STEPS = [
    "ingest: read inputs",
    "ingest: stage inputs",
    "ingest: load",
    "analyze: bands",
    "analyze: data owners",
    "analyze: usage classification",
    "analyze: engine evidence",
    "analyze: blast radius",
    "analyze: summary",
    "analyze: coverage, assumptions, exposure range",
    "analyze: record what it was computed from",
    "analyze: write summary.json, exposed_requests.csv, blast_radius.csv",
    "notify: notification lists",
    "report: page",
    "report: chart export to SVG, PNG",
]


class Recorder:
    """A Progress that keeps what it was told: (event, step, total, unit) tuples."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, float | None, str]] = []
        self.current = ""
        self.advanced: dict[str, float] = {}

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        self.current = step
        self.events.append(("start", step, total, unit))

    def advance(self, amount: float = 1) -> None:
        self.advanced[self.current] = self.advanced.get(self.current, 0) + amount

    def done(self) -> None:
        self.events.append(("done", self.current, None, ""))


def test_run_reports_each_step_started_then_done_in_order(tmp_path):
    rec = Recorder()
    pipeline.run(CASE_FILE, tmp_path / "out", progress=rec)
    starts = [step for event, step, _, _ in rec.events if event == "start"]
    assert starts == RUN_STEPS
    # every step is done before the next one starts
    assert [e[0] for e in rec.events] == ["start", "done"] * len(RUN_STEPS)


class Timeline(Recorder):
    """A Recorder that also keeps, in order, what happened while which step ran (None:
    between steps)."""

    def __init__(self) -> None:
        super().__init__()
        self.running: str | None = None
        self.seen: list[tuple[str, str | None]] = []

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        super().start(step, total, unit)
        self.running = step
        self.seen.append(("start", step))

    def done(self) -> None:
        super().done()
        self.seen.append(("done", self.running))
        self.running = None

    def during(self, what: str) -> None:
        self.seen.append((what, self.running))


def _analysis_span(seen: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """What happened from the start of the first analyze step to the end of the last."""
    marks = [i for i, (_, step) in enumerate(seen) if step and step.startswith("analyze:")]
    return seen[marks[0] : marks[-1] + 1]


def test_every_statement_of_the_analysis_runs_inside_one_of_its_steps(tmp_path, monkeypatch):
    """What `forensics run` shows running is what its time goes to: no statement of the
    analysis runs between two of its steps (the benchmark times the stages by their steps)."""
    rec = Timeline()
    # every method of the engine contract that reaches the database (all but `close`)
    statements = [
        name
        for name, member in vars(SQLEngine).items()
        if callable(member) and not name.startswith("_") and name != "close"
    ]
    assert {"execute", "frame", "materialize", "write_frame"} <= set(statements)
    for name in statements:
        method = getattr(DuckDBEngine, name)

        def recorded(self, *args, _method=method, _name=name, **kwargs):
            rec.during(_name)
            return _method(self, *args, **kwargs)

        monkeypatch.setattr(DuckDBEngine, name, recorded)
    pipeline.run(CASE_FILE, tmp_path / "out", progress=rec)
    span = [(what, step) for what, step in _analysis_span(rec.seen) if what in statements]
    assert span  # the analysis ran its statements through the engine
    assert [s for s in span if s[1] is None] == []


def test_the_classification_imports_scipy_inside_its_own_step(tmp_path, monkeypatch):
    """SciPy (half a second to import) is imported by the usage classification, not by
    notify, and while its step runs."""
    rec = Timeline()

    class Finder:
        def find_spec(self, name, path=None, target=None):
            if name == "forensics.analysis.classify":
                rec.during("import")
            return None

    monkeypatch.delitem(sys.modules, "forensics.analysis.classify", raising=False)
    monkeypatch.delattr(forensics.analysis, "classify", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    pipeline.run(CASE_FILE, tmp_path / "out", progress=rec)
    assert [e for e in rec.seen if e[0] == "import"] == [
        ("import", "analyze: usage classification")
    ]


def test_notify_never_imports_scipy(tmp_path):
    """...so the half second of SciPy's import is the analysis' alone (`forensics notify`
    after `forensics analyze` never pays it)."""
    pipeline.run(CASE_FILE, tmp_path / "out")
    code = (
        "import sys\n"
        "from forensics import pipeline\n"
        f"pipeline.notify({str(CASE_FILE)!r}, {str(tmp_path / 'out' / 'case.duckdb')!r}, "
        f"{str(tmp_path / 'out')!r})\n"
        "assert 'forensics.render.notify' in sys.modules\n"
        "loaded = sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.'))\n"
        "assert not loaded, loaded[:3]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_ingest_reports_the_bytes_of_its_input(tmp_path):
    rec = Recorder()
    pipeline.run(CASE_FILE, tmp_path / "out", progress=rec)
    size = (CASE_DIR / "requests.csv").stat().st_size
    for step in ("ingest: read inputs", "ingest: stage inputs", "ingest: load"):
        assert ("start", step, size, "bytes") in rec.events
        assert rec.advanced[step] == size


def test_piped_run_prints_one_progress_line_per_step(runner, tmp_path):
    result = runner.invoke(app, ["run", str(CASE_FILE), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith(PROGRESS_PREFIX)]
    assert [ln.removeprefix(PROGRESS_PREFIX).split(" (")[0] for ln in lines] == RUN_STEPS
    size = (CASE_DIR / "requests.csv").stat().st_size  # 2,4xx bytes: kB, one decimal
    assert lines[0] == f"{PROGRESS_PREFIX}ingest: read inputs ({size / 1000:.1f} kB)"
    assert "progress" not in result.stdout


def test_quiet_shows_no_progress_but_still_the_warnings(runner, tmp_path):
    result = runner.invoke(app, ["run", str(CASE_FILE), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    assert PROGRESS_PREFIX not in result.stderr
    assert "warning: " in result.stderr  # case_small: acct-erin is not in accounts.csv


def test_json_prints_the_headline_figures_of_summary_json(runner, tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(CASE_FILE), "--out", str(out), "--json", "-q"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    summary = json.loads((out / "summary.json").read_text())
    # case_small/README.md: 8 exposed responses from 4 accounts; 1 + 2 excluded
    assert figures["exposure_count"] == 8
    assert figures["affected_accounts"] == 4
    assert figures["excluded_by_reason"] == {"internal-test": 1, "security-researcher": 2}
    assert figures["outputs"] == str(out)
    for key, value in figures.items():
        if key != "outputs":
            assert summary[key] == value, key
    assert {"bands", "verdict", "data_owners", "ingest", "tool"} <= figures.keys()


def test_json_works_for_analyze_too(runner, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", str(CASE_FILE), "--out", str(out), "-q"]).exit_code == 0
    result = runner.invoke(
        app,
        ["analyze", str(CASE_FILE), "--db", str(out / "case.duckdb"), "--out", str(out), "--json"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["exposure_count"] == 8


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=100, color_system=None), buffer


def test_on_a_terminal_a_running_step_is_drawn_as_a_bar_with_its_bytes():
    console, buffer = _terminal()
    bar = _TerminalProgress(console, delay=0)
    bar.start("ingest: load", total=2_000_000, unit="bytes")
    bar.advance(1_000_000)
    bar.done()
    drawn = buffer.getvalue()
    assert "ingest: load" in drawn
    assert "1.0/2.0 MB" in drawn
    assert "━" in drawn


def test_on_a_terminal_a_step_shorter_than_the_delay_draws_nothing():
    console, buffer = _terminal()
    bar = _TerminalProgress(console, delay=3600)
    bar.start("analyze: bands")
    bar.done()
    assert "analyze: bands" not in buffer.getvalue()


def test_a_run_on_a_real_terminal_prints_no_progress_lines(tmp_path):
    """stderr is a pseudo-terminal: the bar (not the piped lines) is used; stdout, a pipe,
    still gets the plain headline."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "PYTHONPATH": str(REPO)}
    command = ["run", str(CASE_FILE), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from forensics.cli import main; main()", *command],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    assert proc.wait(timeout=120) == 0
    os.close(master)
    assert PROGRESS_PREFIX.encode() not in seen
    assert b"warning: " in seen  # messages still reach the terminal
    # case_small: 8 exposed (its README), the range after it
    assert any(line.startswith("exposed responses: 8 ") for line in stdout.splitlines())
