"""The hand-built fixture case `tests/fixtures/case_small` loaded straight into DuckDB.

Unit tests of the analysis load `requests.csv` with DuckDB's CSV reader (typed columns),
independent of `forensics.ingest`; the `run` tests go through the real ingest.
"""

from __future__ import annotations

from pathlib import Path

from forensics.case import Case, load_case
from forensics.engines import DuckDBEngine
from forensics.schema import REQUESTS_DDL

CASE_DIR = Path(__file__).parent / "fixtures" / "case_small"
CASE_FILE = CASE_DIR / "incident.toml"

_LOAD = """
INSERT INTO requests
SELECT request_id, ts, account_id, model, prompt_tokens, completion_tokens,
       coalesce(status, 200), prefill_node, decode_node, ts_end,
       'requests.csv', row_number() OVER (ORDER BY request_id), NULL
FROM read_csv($path, header = true, columns = {
    'request_id': 'VARCHAR', 'ts': 'TIMESTAMPTZ', 'account_id': 'VARCHAR', 'model': 'VARCHAR',
    'prompt_tokens': 'BIGINT', 'completion_tokens': 'BIGINT', 'status': 'INTEGER',
    'prefill_node': 'VARCHAR', 'decode_node': 'VARCHAR', 'ts_end': 'TIMESTAMPTZ'})
"""


def case_small() -> Case:
    return load_case(CASE_FILE)


def engine_with_requests(path: Path | None = None) -> DuckDBEngine:
    """An engine (in memory unless `path`) holding the fixture's 29 requests."""
    engine = DuckDBEngine(path)
    engine.execute(REQUESTS_DDL)
    engine.execute(_LOAD, path=str(CASE_DIR / "requests.csv"))
    return engine
