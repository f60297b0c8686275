"""Errors the toolkit raises for bad input; the CLI prints them as one line and exits non-zero.

Messages name the caller's inputs and the steps to run in library terms (`option("db")`,
`command("analyze")`); each front end shows them in its own words (`render_terms`): `--db`
and `forensics analyze` on the command line, `db=` in Python.
"""

from __future__ import annotations

import errno
import io
import os
import re
from collections.abc import Callable

_TERM = re.compile(r"\u27e6(!?)([a-z][a-z_]*)\u27e7")


def option(name: str) -> str:
    """How a message names the caller's input `name` (a command's option, a function's
    argument): `--name` on the command line, `name=` in Python."""
    return f"\u27e6{name}\u27e7"


def command(name: str) -> str:
    """How a message names the step `name` to run (`forensics NAME` on the command line)."""
    return f"\u27e6!{name}\u27e7"


def python_terms(name: str, is_command: bool) -> str:
    """Terms as a Python caller reads them: `name=`, and the command for a step."""
    return f"forensics {name}" if is_command else f"{name}="


def render_terms(text: str, terms: Callable[[str, bool], str] = python_terms) -> str:
    """`text` with every `option`/`command` reference in the words of `terms`."""
    return _TERM.sub(lambda m: terms(m.group(2), bool(m.group(1))), text)


class ForensicsError(Exception):
    """A problem the user can fix: the message says what, where (file, line, key) and how."""

    exit_code = 2

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None):
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.line())

    def line(self, terms: Callable[[str, bool], str] = python_terms) -> str:
        """The one-line message `where: what; fix`, options and steps named by `terms`."""
        text = f"{self.where}: {self.what}" if self.where else self.what
        return render_terms(f"{text}; {self.fix}" if self.fix else text, terms)


class InputError(ForensicsError):
    """A log, mapping or accounts file that cannot be read as asked."""


class CaseError(ForensicsError):
    """A case file (incident.toml) that is invalid."""


class AnalysisError(ForensicsError):
    """The case database does not hold what an analysis step needs."""

    exit_code = 3


def decode_utf8(data: bytes, where: str, error: type[ForensicsError]) -> str:
    """`data` as UTF-8 text without a leading byte order mark (Notepad writes one; it is no
    part of the text), else `error` naming the line and byte and how to fix it."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise error(
            f"not UTF-8 text (byte 0x{data[e.start]:02x} on line {line})",
            where=f"{where}:{line}",
            fix="save the file as UTF-8",
        ) from None


class ResourceError(ForensicsError):
    """The system refused a file or resource: disk full, read-only or forbidden path, memory."""

    exit_code = 4


# Exit codes of the `forensics` command (docs/exit-codes.md).
EXIT_CODES = {
    0: "success",
    1: "internal error, a bug (FORENSICS_DEBUG=1 shows the traceback)",
    2: "bad input (case file, mapping, log, option or path)",
    3: "the case database lacks an earlier step's results",
    4: "the system refused a file or resource (disk full, read-only, permission, memory)",
}

_OUT, _DB = option("out"), option("db")
# errno -> fix: the system refused (exit 4) ...
_FAULTS = {
    errno.ENOSPC: f"free space there, or write to another {_OUT} / {_DB} / {option('temp_dir')}",
    errno.EDQUOT: f"free space within your quota, or write to another {_OUT} / {_DB}",
    errno.EROFS: f"that file system is read-only: write to another {_OUT} / {_DB}",
    errno.EACCES: f"check the permissions of that path, or use another {_OUT} / {_DB}",
    errno.EPERM: f"check the permissions of that path, or use another {_OUT} / {_DB}",
    errno.EFBIG: "the file outgrew the file system's or the process's limit (ulimit -f)",
    errno.EIO: "the device reported an I/O error: check the disk",
}
# ... or the path given is wrong (exit 2)
_PATHS = {
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of that path is a file, not a folder: check the path",
    errno.EISDIR: "that path is a folder, not a file: check the path",
    errno.EEXIST: "that path exists already: choose another",
    errno.ENAMETOOLONG: "shorten the path",
}
_DUCKDB_FILE = re.compile(r'(?:file|directory) "([^"]+)"')


def out_of_memory(e: BaseException, where: str | None = None, why: str = "") -> ResourceError:
    """DuckDB ran out of memory (`e`), in `where` if given: the limit or the spill space is
    the way out, and `why` (after "; ") what needed the memory."""
    fix = (
        f"raise {option('memory_limit')}, or give {option('temp_dir')} on a disk with room to spill"
    )
    return ResourceError(
        f"DuckDB ran out of memory ({first_line(e)})",
        where=where,
        fix=fix + (f"; {why}" if why else ""),
    )


def system_error(exc: BaseException | None, *, faults_only: bool = False) -> ForensicsError | None:
    """The OS error behind `exc` (an OSError, or a DuckDB error reporting one, searched
    through its causes) as one line naming the path, the errno text and the fix: a
    ResourceError when the system refused (disk full, read-only, permission, I/O, memory),
    an InputError for a wrong path; else None. `faults_only`: ResourceErrors only."""
    seen: set[int] = set()
    e = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        found = _system_error(e, faults_only)
        if found is not None and (isinstance(found, ResourceError) or not faults_only):
            return found
        e = e.__cause__ or e.__context__
    return None


def _system_error(e: BaseException, faults_only: bool) -> ForensicsError | None:
    if isinstance(e, OSError):
        paths = [str(p) for p in (e.filename, e.filename2) if p is not None]
        where = " -> ".join(paths) or open_file(e)
        what = e.strerror or str(e)
        if e.errno in _PATHS:
            return InputError(what, where=where, fix=_PATHS[e.errno])
        return ResourceError(what, where=where, fix=_FAULTS.get(e.errno or 0, "check that path"))
    import duckdb  # lazy: keep this module import-light

    if not isinstance(e, duckdb.Error):
        return None
    text = str(e).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    if isinstance(e, duckdb.OutOfMemoryException):
        return out_of_memory(e)
    for table, kind in ((_FAULTS, ResourceError), (_PATHS, InputError)):
        for code, fix in table.items():
            if os.strerror(code) in text:
                found = _DUCKDB_FILE.search(text)
                return kind(os.strerror(code), where=found.group(1) if found else None, fix=fix)
    if isinstance(e, duckdb.IOException) and not faults_only:  # e.g. not a DuckDB file
        return ResourceError(first, fix="check the paths given and their file system")
    return None


def open_file(e: BaseException) -> str | None:
    """The file a failed write or read was using, for an OSError that names none (a full
    disk fails `f.write`, not `open`): the innermost open file among the frames' locals."""
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            name = getattr(value, "name", None)
            if isinstance(value, io.IOBase) and isinstance(name, str | bytes):
                return os.fsdecode(name)
    return None


def first_line(e: BaseException) -> str:
    """The first line of an exception's text (its type's name when it has none)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
