"""The fixture cases of `tests/fixtures/partial` (every value derived in its README.md): one
case file per partial fault, ingested (with any inputs the case does not name) and analysed
in DuckDB."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from forensics import ingest, pipeline
from forensics.case import load_case
from forensics.engines import DuckDBEngine

PARTIAL_DIR = Path(__file__).parent / "fixtures" / "partial"
SGLANG_0518 = Path(__file__).parent / "fixtures" / "sglang" / "0.5.18"


def partial_case(name: str) -> Path:
    """The case file `name`.toml of the fixture."""
    return PARTIAL_DIR / f"{name}.toml"


def partial_copy(tmp_path: Path, name: str, replace: tuple[str, str]) -> Path:
    """A copy of the fixture folder under tmp_path with `replace` (old, new) applied to the
    case file `name`.toml; returns the copy's case file."""
    folder = tmp_path / "partial"
    shutil.copytree(PARTIAL_DIR, folder)
    shutil.copytree(SGLANG_0518, tmp_path / "sglang" / "0.5.18")  # engine.toml's ../sglang
    path = folder / f"{name}.toml"
    text = path.read_text(encoding="utf-8")
    assert replace[0] in text
    path.write_text(text.replace(*replace), encoding="utf-8")
    return path


def other_inputs(engine: DuckDBEngine) -> None:
    """Inputs of another case, ingested into the same database: other.jsonl and the SGLang
    0.5.18 prefill/decode pair."""
    ingest.ingest_into(
        engine, [PARTIAL_DIR / "other.jsonl"], mapping=PARTIAL_DIR / "gateway.mapping.toml"
    )
    ingest.ingest_into(
        engine,
        [SGLANG_0518 / "prefill-0.log", SGLANG_0518 / "decode-0.log"],
        profile="sglang",
    )


def partial_analyzed(
    case_file: Path, *, others: bool = False, **options: Any
) -> tuple[DuckDBEngine, dict[str, Any], list[str]]:
    """An in-memory case database with the case's sources ingested (and, with `others`, the
    inputs of another case), analysed; returns (engine, summary, warnings). Close the
    engine."""
    case = load_case(case_file)
    engine = DuckDBEngine()
    pipeline.ingest_sources(engine, case)
    if others:
        other_inputs(engine)
    summary, warnings = pipeline.analyze_case(engine, case, **options)
    return engine, summary, warnings
