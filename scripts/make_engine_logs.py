"""Write SGLang prefill/decode server logs for the bundled GLM-5.3 case from its gateway log.

Usage: .venv/bin/python scripts/make_engine_logs.py [sample_logs/glm53]

Startup lines at the window start (prefill pool 681,280), the 14:52 reconfiguration of every
prefill node (pool 2,039,808), and per-request lines for prompts over 131,072 tokens only
(queries/sglang_bundle_lines.sql), one file per node under engine/. Deterministic.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from forensics import queries
from forensics.case import load_case
from forensics.engine import Engine


def main(folder: Path) -> None:
    case = load_case(folder / "incident.toml")
    prefill = [c for c in case.capacity if c.role == "prefill"]
    decode = [c for c in case.capacity if c.role == "decode"]
    out = folder / "engine"
    out.mkdir(exist_ok=True)
    with Engine() as engine:
        rows = engine.rows(
            queries.load("sglang_bundle_lines"),
            gateway=str(folder / "gateway.jsonl.gz"),
            model=case.models[0],
            min_tokens=case.baseline.min_prompt_tokens,
            context_window=case.context_window,
            prefill_nodes=["prefill-a1", "prefill-a2", "prefill-a3", "prefill-a4"],
            decode_nodes=["decode-b1", "decode-b2", "decode-b3", "decode-b4"],
            boot=prefill[0].start,
            switch=prefill[1].start,
            old_tokens=prefill[0].tokens,
            new_tokens=prefill[1].tokens,
            decode_tokens=decode[0].tokens,
        )
    files: dict[str, list[str]] = {}
    for node, _ts, _ord, line in rows:  # a few thousand lines: the bundled sample only
        files.setdefault(node, []).append(line)
    for node, lines in sorted(files.items()):
        data = ("\n".join(lines) + "\n").encode("utf-8")
        path = out / f"{node}.log.gz"
        path.write_bytes(gzip.compress(data, mtime=0))
        print(f"{path}: {len(lines)} lines")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "sample_logs/glm53"))
