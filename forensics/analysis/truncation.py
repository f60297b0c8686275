"""Inputs cut short: a request log whose gzip or zstd stream breaks off (docs: "Evidence and
uncertainty").

Ingest reads the records before the break and quarantines the one the break cuts, but the
requests logged after it are in no figure: no count from such an input is exact, and the
maximum of the exposure range may be higher than the range says. `cut_inputs` lists them
(summary.json `cut_inputs`), `warnings` says so for each.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..case import Case
from ..engines import SQLEngine, TableMissing, needing
from ..formats import relative_path


@dataclass(frozen=True)
class CutInput:
    path: str  # relative to the case folder, as summary.json's `inputs` shows it
    stream: str  # gzip | zstd


def cut_inputs(engine: SQLEngine, case: Case) -> list[CutInput]:
    """The inputs of the case store whose compressed stream was cut short, by path."""
    try:
        with needing(engine, "inputs"):
            found = engine.frame("truncation/cut_inputs").rows()
    except TableMissing:
        return []
    cut = [CutInput(relative_path(str(path), case.folder), str(stream)) for path, stream in found]
    return sorted(cut, key=lambda c: c.path)


def warnings(cut: list[CutInput]) -> list[str]:
    """One warning per input cut short."""
    return [
        f"{c.path}: the {c.stream} stream is cut short (truncated): requests logged after the "
        "break are in no figure, and the maximum of the exposure range may be higher; get a "
        "complete copy of the file"
        for c in cut
    ]
