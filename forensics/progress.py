"""How long steps report how far they are. The library only reports; each front end decides
how to show it (a bar on a terminal, a line per step in a log, nothing at all)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol


class Progress(Protocol):
    """A receiver of progress reports: one step at a time, started, advanced, done."""

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        """A step begins; `total` is its size in `unit` (bytes, requests) when known."""

    def advance(self, amount: float = 1) -> None:
        """The current step did `amount` more of its work."""

    def done(self) -> None:
        """The current step ended (also when it failed)."""


class Silent:
    """Reports nothing: the default where no front end asked for progress."""

    def start(self, step: str, total: float | None = None, unit: str = "") -> None:
        pass

    def advance(self, amount: float = 1) -> None:
        pass

    def done(self) -> None:
        pass


SILENT: Progress = Silent()


@contextlib.contextmanager
def step(
    progress: Progress, name: str, total: float | None = None, unit: str = ""
) -> Iterator[Progress]:
    """Report step `name` around the block: started before it, done after it (even on error)."""
    progress.start(name, total, unit)
    try:
        yield progress
    finally:
        progress.done()
