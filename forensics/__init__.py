"""kv-forensics: investigate cross-session KV-cache exposure incidents from request logs.

`forensics.open_case("incident.toml")` opens a case for investigation in a notebook (see
`forensics.notebook`); it is imported on first use, so `import forensics` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["open_case"]

if TYPE_CHECKING:
    from .notebook import open_case


def __getattr__(name: str) -> Any:
    if name == "open_case":
        from .notebook import open_case

        return open_case
    raise AttributeError(f"module 'forensics' has no attribute {name!r}")
