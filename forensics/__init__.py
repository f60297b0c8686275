"""kv-forensics: investigate cross-session KV-cache exposure incidents from request logs.

`forensics.open_case("incident.toml")` opens a case for investigation in a notebook (see
`forensics.notebook`); it is imported on first use, so `import forensics` stays light.
`forensics.versions()` names the code behind every figure (the toolkit's and DuckDB's
versions); `forensics.__version__` is the toolkit's, read from pyproject.toml's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import versions

__all__ = ["open_case", "versions"]

if TYPE_CHECKING:
    from .notebook import open_case

    __version__: str


def __getattr__(name: str) -> Any:
    if name == "open_case":
        from .notebook import open_case

        return open_case
    if name == "__version__":
        from .version import tool_version

        return tool_version()
    raise AttributeError(f"module 'forensics' has no attribute {name!r}")
