"""The fixture case `tests/fixtures/evidence` (every value derived in its README.md): a copy of
it with an `[uncertainty]` section or other edits, ingested and analysed in DuckDB, and the
engine-log rows of the README's "Engine logs" table written into the engine tables."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from forensics import pipeline
from forensics.case import load_case
from forensics.engines import DuckDBEngine
from forensics.ingest import sglang

EVIDENCE_DIR = Path(__file__).parent / "fixtures" / "evidence"
CASE_FILE = EVIDENCE_DIR / "incident.toml"

# (bootstrap_room, prompt, prefill rejected for capacity): the README's engine-log rows; each
# has a decode leg that finished (output 10 tokens, input_len = the prompt)
ENGINE_ROOMS = (
    (7101, 480, True),  # a17 (band fits): engine-only, not explained
    (7102, 640, True),  # no gateway record: engine-only
    (7103, 900, True),  # a11, excluded account: explained
    (7104, 900, True),  # a12, status 503: explained
    (7105, 600, True),  # a01, exposed: matched
    (7106, 900, True),  # a06, band unknown_capacity: engine-only, not explained
    (7107, 520, False),  # a16: a decode leg only (no signature), its input length known
)


def case_copy(tmp_path: Path, extra: str = "", replace: tuple[str, str] | None = None) -> Path:
    """A copy of the fixture folder under tmp_path; its incident.toml with `replace`
    (old, new) applied and `extra` TOML appended. Returns the copy's case file."""
    folder = tmp_path / "evidence"
    shutil.copytree(EVIDENCE_DIR, folder)
    path = folder / "incident.toml"
    text = path.read_text(encoding="utf-8")
    if replace is not None:
        assert replace[0] in text
        text = text.replace(*replace)
    path.write_text(text + extra, encoding="utf-8")
    return path


def add_engine_rows(engine: DuckDBEngine) -> None:
    """The README's engine-log rows: per room a prefill abort for capacity (when rejected)
    and a finished decode leg."""
    sglang.ensure_tables(engine)
    for i, (room, prompt, rejected) in enumerate(ENGINE_ROOMS, 1):
        if rejected:
            engine.execute(
                "INSERT INTO engine_aborts VALUES ('pf-1', 'prefill', $rid, $room, $tokens, 500, "
                "TIMESTAMPTZ '2026-09-01 02:00:00+00', 'prefill.log', $row, 'kv_capacity')",
                rid=f"p{room}",
                room=room,
                tokens=prompt,
                row=i,
            )
        engine.execute(
            "INSERT INTO engine_requests VALUES ('dc-1', 'decode', $rid, $room, $tokens, 10, "
            "TIMESTAMPTZ '2026-09-01 02:00:05+00', 'decode.log', $row, 'time_stats', NULL)",
            rid=f"d{room}",
            room=room,
            tokens=prompt,
            row=i,
        )


def analyzed(
    case_file: Path = CASE_FILE, *, engine_rows: bool = False, **options: Any
) -> tuple[DuckDBEngine, dict[str, Any]]:
    """An in-memory case database with the case's sources ingested (and the engine rows),
    analysed; returns (engine, summary). Close the engine."""
    case = load_case(case_file)
    engine = DuckDBEngine()
    pipeline.ingest_sources(engine, case)
    if engine_rows:
        add_engine_rows(engine)
    summary, _ = pipeline.analyze_case(engine, case, **options)
    return engine, summary


def range_rows(engine: DuckDBEngine, category: str) -> dict[str, list[Any]]:
    """direction -> the ids behind one category: request_id, else `row` of the quarantined
    record, else the bootstrap_room; sorted."""
    out: dict[str, list[Any]] = {}
    for direction, request_id, row, room in engine.rows(
        "SELECT direction, request_id, row, bootstrap_room FROM exposure_range_requests "
        "WHERE category = $c",
        c=category,
    ):
        key = request_id if request_id is not None else row if row is not None else room
        out.setdefault(direction, []).append(key)
    return {d: sorted(v, key=str) for d, v in out.items()}
