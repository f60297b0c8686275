"""The one error boundary: real faults (a full disk, a read-only folder, undecodable or
unrepresentable case files, bugs) end in one stderr line and a documented exit code."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
import typer
from conftest import messages
from typer.testing import CliRunner

from forensics.cli import _Commands, app
from forensics.engines import DuckDBEngine
from forensics.errors import EXIT_CODES, InputError

CASE = Path(__file__).parent / "fixtures" / "case_small"
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


@dataclass
class Place:
    """A folder where writes fail for real, and how to run the CLI so that they do."""

    folder: Path
    how: str  # "inproc": CliRunner; "rlimit" / "no-override": a subprocess so limited

    def forensics(self, *args: str) -> Outcome:
        if self.how == "inproc":
            res = CliRunner().invoke(app, list(args))
            return Outcome(res.exit_code, res.stdout, res.stderr)
        proc = subprocess.run(
            [sys.executable, "-c", "from forensics.cli import main; main()", *args],
            capture_output=True,
            text=True,
            preexec_fn=_no_file_growth if self.how == "rlimit" else _no_dac_override,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            check=False,
        )
        return Outcome(proc.returncode, proc.stdout, proc.stderr)


def _no_file_growth() -> None:
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG (File too large)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


def _no_dac_override() -> None:
    # root keeps its uid (it can still run the venv's Python) but, without the capability
    # to override file modes after exec, meets a mode 0555 folder like any user
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _mount(*args: str) -> bool:
    if shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def _with_case_db(work: Path) -> tuple[Path, Path]:
    """The fixture case copied into `work`, and its requests ingested into work/case.duckdb."""
    case_dir = work / "case"
    shutil.copytree(CASE, case_dir)
    db = work / "case.duckdb"
    res = CliRunner().invoke(
        app, ["ingest", str(case_dir / "requests.csv"), "--db", str(db), "--profile", "canonical"]
    )
    assert res.exit_code == 0, res.output
    return case_dir / "incident.toml", db


@pytest.fixture(params=["mount", "rlimit"])
def full_disk(request, tmp_path) -> Iterator[Place]:
    """A folder on a file system with no room: a 4 KiB tmpfs filled up, or (where mounting
    is not allowed) any folder with the CLI run under RLIMIT_FSIZE = 0."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    if request.param == "mount" and _mount("-t", "tmpfs", "-o", "size=4k", "tmpfs", str(mnt)):
        try:
            with contextlib.suppress(OSError):
                (mnt / "filler").write_bytes(b"\0" * 65536)
            yield Place(mnt, "inproc")
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
    else:
        yield Place(mnt, "rlimit")


@pytest.fixture(params=["mount", "chmod"])
def read_only(request, tmp_path) -> Iterator[Place]:
    """A read-only folder: a read-only bind mount, or (where mounting is not allowed) a
    mode 0555 folder, with the CLI run without root's override of file modes."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if request.param == "mount" and _mount("--bind", str(ro), str(ro)):
        try:
            assert _mount("-o", "remount,bind,ro", str(ro))
            yield Place(ro, "inproc")
        finally:
            subprocess.run(["umount", str(ro)], check=True)
    else:
        ro.chmod(0o555)
        try:
            yield Place(ro, "no-override" if os.geteuid() == 0 else "inproc")
        finally:
            ro.chmod(0o755)


def _one_error_line(out: Outcome, code: int) -> str:
    assert out.code == code, out
    lines = messages(out.stderr)
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in out.stderr
    return lines[0]


DISK_FULL = ("No space left on device", "File too large")


def test_disk_full_while_writing_the_outputs_is_one_line_and_exit_4(full_disk):
    case, db = _with_case_db(full_disk.folder.parent)
    out_dir = full_disk.folder / "out"
    line = _one_error_line(
        full_disk.forensics("analyze", str(case), "--db", str(db), "--out", str(out_dir)), 4
    )
    if full_disk.how == "rlimit":  # the limit stops every file: the database's first
        assert "File too large" in line
        assert str(full_disk.folder.parent) in line
        return
    assert str(out_dir) in line
    assert "No space left on device; free space there" in line


def test_disk_full_while_writing_the_database_is_one_line_and_exit_4(full_disk):
    case, _ = _with_case_db(full_disk.folder.parent)
    db = full_disk.folder / "new.duckdb"
    out = full_disk.forensics(
        "ingest", str(case.parent / "requests.csv"), "--db", str(db), "--profile", "canonical"
    )
    line = _one_error_line(out, 4)
    assert str(full_disk.folder) in line
    assert any(text in line for text in DISK_FULL)
    assert not db.exists()


def test_a_read_only_out_folder_is_one_line_and_exit_4(read_only):
    case, db = _with_case_db(read_only.folder.parent)
    out_dir = read_only.folder / "out"
    line = _one_error_line(
        read_only.forensics("analyze", str(case), "--db", str(db), "--out", str(out_dir)), 4
    )
    assert str(out_dir) in line
    assert "Read-only file system" in line or "Permission denied" in line


def test_a_database_in_a_read_only_folder_is_one_line_and_exit_4(read_only):
    case, _ = _with_case_db(read_only.folder.parent)
    db = read_only.folder / "case.duckdb"
    out = read_only.forensics(
        "ingest", str(case.parent / "requests.csv"), "--db", str(db), "--profile", "canonical"
    )
    line = _one_error_line(out, 4)
    assert str(read_only.folder) in line
    assert "Read-only file system" in line or "Permission denied" in line


# --- case files no step could represent: one line, exit 2 -----------------------------------


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ('lookback = "1h"', 'lookback = "100000000000d"', "is longer than 36500 days"),
        ('start = "2026-09-01T00:00:00Z"', 'start = "0001-01-01T00:00:00Z"', "is outside"),
        ('end = "2026-09-02T00:00:00Z"', 'end = "9999-12-31T23:59:59Z"', "is outside"),
        ("context_window = 1000", f"context_window = {2**64}", "number too large"),
        ('name = "Fixture', 'name = "Fixture \udcff', "not UTF-8 text (byte 0xff on line 2)"),
    ],
)
def test_an_unrepresentable_case_file_is_one_line_and_exit_2(tmp_path, old, new, said):
    case, db = _with_case_db(tmp_path)
    text = case.read_text(encoding="utf-8")
    assert old in text
    case.write_bytes(text.replace(old, new, 1).encode("utf-8", "surrogateescape"))
    res = CliRunner().invoke(app, ["analyze", str(case), "--db", str(db), "--out", str(tmp_path)])
    line = _one_error_line(Outcome(res.exit_code, res.stdout, res.stderr), 2)
    assert said in line


# --- whatever else escapes the library: one line, never a silent success ---------------------

bug = typer.Typer(cls=_Commands)


@bug.command()
def lookup() -> None:
    """A real bug: a KeyError from a dict lookup."""
    print({}["missing"])


@bug.command()
def query() -> None:
    """A DuckDB error that is not an I/O fault (a query naming no such column)."""
    duckdb.connect().execute("SELECT no_such_column")


@bug.command()
def panic() -> None:
    """A Rust panic inside Polars (pyo3_runtime.PanicException derives from BaseException
    only): a frame of no rows from a relation with two columns of one name."""
    import polars as pl

    pl.DataFrame(duckdb.connect().sql("SELECT 1 AS a, 2 AS a WHERE false"))


@bug.command()
def read(path: Path) -> None:
    """An OSError for a wrong path that nothing in between caught."""
    path.read_text(encoding="utf-8")


@bug.command()
def wrapped(path: Path) -> None:
    """A ForensicsError raised over a DuckDB error that is no system fault."""
    try:
        duckdb.connect(str(path))
    except duckdb.Error:
        raise InputError("not a DuckDB database", where=str(path)) from None


def test_an_error_raised_over_a_duckdb_error_that_is_no_system_fault_keeps_its_code(tmp_path):
    path = tmp_path / "notes.duckdb"
    path.write_text("not a database\n" * 500, encoding="utf-8")
    res = CliRunner().invoke(bug, ["wrapped", str(path)])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"error: {path}: not a DuckDB database"]


def test_an_unexpected_exception_is_one_internal_error_line_and_exit_1():
    res = CliRunner().invoke(bug, ["lookup"])
    assert res.exit_code == 1
    assert res.stderr.strip().splitlines() == [
        "internal error: KeyError: 'missing' "
        "(run with FORENSICS_DEBUG=1 for the traceback, and report it)"
    ]


def test_forensics_debug_shows_the_traceback_of_a_bug(monkeypatch):
    monkeypatch.setenv("FORENSICS_DEBUG", "1")
    res = CliRunner().invoke(bug, ["lookup"])
    assert isinstance(res.exception, KeyError)


def test_a_duckdb_error_escaping_the_library_is_one_line_not_a_traceback():
    res = CliRunner().invoke(bug, ["query"])
    assert res.exit_code == 1
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("internal error: BinderException: Binder Error: ")
    assert line.endswith("(run with FORENSICS_DEBUG=1 for the traceback, and report it)")


def test_a_rust_panic_escaping_a_library_is_one_internal_error_line_and_exit_1():
    res = CliRunner().invoke(bug, ["panic"])
    assert res.exit_code == 1
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("internal error: PanicException: ")
    assert line.endswith("(run with FORENSICS_DEBUG=1 for the traceback, and report it)")


def test_a_failure_inside_settings_in_an_aborted_transaction_raises_that_failure():
    # the setting cannot be restored inside the aborted transaction ("transaction is
    # aborted"): the error raised is the block's own, and the setting is back after ROLLBACK
    engine = DuckDBEngine()
    with (
        pytest.raises(duckdb.ConversionException, match="'x'"),
        engine.transaction(),
        engine.settings(disabled_optimizers="filter_pushdown"),
    ):
        engine.execute("SELECT CAST('x' AS INTEGER)")
    assert engine.scalar("SELECT current_setting('disabled_optimizers')") == ""


def test_an_oserror_for_a_missing_path_names_it_with_exit_2(tmp_path):
    missing = tmp_path / "nope.txt"
    res = CliRunner().invoke(bug, ["read", str(missing)])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        f"error: {missing}: No such file or directory; check the path"
    ]


def test_the_exit_codes_are_listed_in_help():
    res = CliRunner().invoke(app, ["--help"], terminal_width=400)
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    for code, meaning in EXIT_CODES.items():
        assert f"{code} {meaning}" in text
