"""Which code made a figure: the toolkit's version and DuckDB's, as summary.json, the case
database's analysis record, the report and `forensics --version` state them (`versions`).

The one source of the toolkit's version is `[project] version` in pyproject.toml: read from
that file in a source checkout (beside this package; it is what an editable install or a
`PYTHONPATH` run executes), else from the installed distribution's metadata, which the build
copied from it.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "kv-forensics"
UNKNOWN = "0+unknown"  # neither a checkout nor an installed distribution (a copied folder)


@functools.cache
def tool_version() -> str:
    """The toolkit's version, e.g. `0.1.0`."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        project = {}
    if project.get("name") == DISTRIBUTION and isinstance(project.get("version"), str):
        return str(project["version"])
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN


def duckdb_version() -> str:
    """The DuckDB library's version, e.g. `1.3.2` (imported on first use)."""
    import duckdb

    return str(duckdb.__version__)


def versions() -> dict[str, str]:
    """The code behind every figure: `{"name": "kv-forensics", "version": ..., "duckdb": ...}`
    (summary.json's `tool`, the analysis record, the report's footer)."""
    return {"name": DISTRIBUTION, "version": tool_version(), "duckdb": duckdb_version()}
