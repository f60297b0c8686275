"""Errors the toolkit raises for bad input; the CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import errno
import os
import re


class ForensicsError(Exception):
    """A problem the user can fix: the message says what, where (file, line, key) and how."""

    exit_code = 2

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None):
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line message: `where: what (fix)`."""
        text = f"{self.where}: {self.what}" if self.where else self.what
        return f"{text}; {self.fix}" if self.fix else text


class InputError(ForensicsError):
    """A log, mapping or accounts file that cannot be read as asked."""


class CaseError(ForensicsError):
    """A case file (incident.toml) that is invalid."""


class AnalysisError(ForensicsError):
    """The case database does not hold what an analysis step needs."""

    exit_code = 3


def decode_utf8(data: bytes, where: str, error: type[ForensicsError]) -> str:
    """`data` as UTF-8 text, else `error` naming the line and byte and how to fix it."""
    try:
        return data.decode("utf-8")
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


# Exit codes of the `forensics` command (README "Errors and exit codes").
EXIT_CODES = {
    0: "success",
    1: "internal error, a bug (FORENSICS_DEBUG=1 shows the traceback)",
    2: "bad input (case file, mapping, log, option or path)",
    3: "the case database lacks an earlier step's results",
    4: "the system refused a file or resource (disk full, read-only, permission, memory)",
}

_FIXES = {
    errno.ENOSPC: "free space there, or write to another --out / --db / --temp-dir",
    errno.EDQUOT: "free space within your quota, or write to another --out / --db",
    errno.EROFS: "that file system is read-only: write to another --out / --db",
    errno.EACCES: "check the permissions of that path, or use another --out / --db",
    errno.EPERM: "check the permissions of that path, or use another --out / --db",
    errno.EFBIG: "the file outgrew the file system's or the process's limit (ulimit -f)",
    errno.EIO: "the device reported an I/O error: check the disk",
}
_DUCKDB_FILE = re.compile(r'(?:file|directory) "([^"]+)"')


def resource_error(exc: BaseException) -> ResourceError | None:
    """The system fault behind `exc` (an OSError, or a DuckDB error reporting one, searched
    through its causes) as one line naming the path, the errno text and the fix; else None."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        found = _resource_error(e)
        if found is not None:
            return found
        e = e.__cause__ or e.__context__
    return None


def _resource_error(e: BaseException) -> ResourceError | None:
    if isinstance(e, OSError):
        paths = [str(p) for p in (e.filename, e.filename2) if p is not None]
        what = e.strerror or str(e)
        fix = _FIXES.get(e.errno or 0, "check that path and its file system")
        return ResourceError(what, where=" -> ".join(paths) or None, fix=fix)
    import duckdb  # lazy: keep this module import-light

    if not isinstance(e, duckdb.Error):
        return None
    text = str(e).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    if isinstance(e, duckdb.OutOfMemoryException):
        return ResourceError(
            f"DuckDB ran out of memory ({first})",
            fix="raise --memory-limit, or give --temp-dir on a disk with room to spill",
        )
    for code, fix in _FIXES.items():
        if os.strerror(code) in text:
            found = _DUCKDB_FILE.search(text)
            return ResourceError(
                os.strerror(code), where=found.group(1) if found else None, fix=fix
            )
    if isinstance(e, duckdb.IOException):
        return ResourceError(first, fix="check the paths given and their file system")
    return None
