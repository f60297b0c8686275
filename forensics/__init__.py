"""kv-forensics: investigate cross-session KV-cache exposure incidents from request logs."""

from __future__ import annotations

__version__ = "0.1.0"
