"""Errors the toolkit raises for bad input; the CLI prints them as one line and exits non-zero."""

from __future__ import annotations


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
