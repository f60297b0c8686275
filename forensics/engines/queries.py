"""The query loader: SQL lives in `queries/CONCEPT/NAME.sql` (one folder per concept, read
only by the module or package of that name), with named `$parameters`; a query's name is
`CONCEPT/NAME`. Values are bound (`bind`), never formatted into the text."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

_PARAM = re.compile(r"(?<![$\w])\$([A-Za-z_]\w*)")


@functools.cache
def queries_dir() -> Path:
    """The folder of `.sql` files: beside the installed package, or the repo's `queries/`."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "queries", package.parent / "queries"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("queries/ folder not found beside the forensics package")


@functools.cache
def load(name: str) -> str:
    """The text of `queries/CONCEPT/NAME.sql` (`name` = "CONCEPT/NAME"), without a trailing `;`."""
    path = queries_dir() / f"{name}.sql"
    return path.read_text(encoding="utf-8").strip().rstrip(";")


def bind(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    """The subset of `params` the SQL text refers to; a missing one is a programming error."""
    names = parameters(sql)
    missing = [n for n in names if n not in params]
    if missing:
        raise KeyError(f"query needs parameters {missing}")
    return {n: params[n] for n in names}


def parameters(sql: str) -> list[str]:
    """The `$name` parameters a query text refers to, in order of first use."""
    seen: dict[str, None] = {}
    for match in _PARAM.finditer(_strip_comments_and_strings(sql)):
        seen.setdefault(match.group(1), None)
    return list(seen)


def _strip_comments_and_strings(sql: str) -> str:
    sql = re.sub(r"--[^\n]*", "", sql)
    return re.sub(r"'(?:[^']|'')*'", "''", sql)
