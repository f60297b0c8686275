"""Many small inputs in one ingest call (hourly exports per host and rank): each file keeps
its own exact accounting, sha256, source and source_row although small JSONL files are
staged in one read and loaded together (outcomes derived by hand from the files below).

The 50 files h00..h49 (profile canonical) hold, unless listed, two valid records
r<NN>a and r<NN>b on lines 1 and 2, of the fields request_id, ts, account_id, model and
prompt_tokens (100). The exceptions, and what each gives (read, loaded, duplicates,
quarantined):

- h03: r03a, a line that is not JSON, r03b -> (3, 2, 0, 1), line 2 "invalid JSON"
- h05: r05a with prompt_tokens -1 only -> (1, 0, 0, 1), line 1 negative tokens; allowed by
  allow_empty (it loads nothing)
- h06: r06a, r05a valid -> (2, 2, 0, 0): the first valid r05a is h06's line 2
- h07: r07a, r07b, r00a as in h00 -> (3, 2, 1, 0): a duplicate of another file's record
- h11: r11a, r11b, r01a with prompt_tokens 999 -> (3, 2, 0, 1), line 3 "conflicting
  duplicate" (h01 loaded r01a with 100)
- h17: r17a, a blank line, r17b -> (2, 2, 0, 0): r17b at line 3 (blank lines are counted)
- h19.jsonl.gz: gzip of the two default records -> (2, 2, 0, 0)
- h23: r23a twice, the same -> (2, 1, 1, 0)
- h29: r29a, r29b without model -> (2, 1, 0, 1), line 2 "missing required field model"
- h31: its records also have completion_tokens 10 and status 200 (another structure: the
  mapping compiles otherwise for it) -> (2, 2, 0, 0)
- h41: the same bytes as h40 -> (0, 0, 0, 0), skipped as the same content as h40
- h43: CRLF line ends (rewritten before it is read) -> (2, 2, 0, 0)
- h47: no newline after its last line -> (2, 2, 0, 0)
- h49: r49a, r48b as in h48 -> (2, 1, 1, 0)

Every other file: (2, 2, 0, 0). Totals: read 2*50 = 100 for the defaults, less h05's 1
(1 instead of 2), plus 1 each for h03, h07, h11 (3 instead of 2), less h41's 2 -> 100 - 1 + 3
- 2 = 100; quarantined 4 (h03, h05, h11, h29); duplicates 3 (h07, h23, h49); loaded
100 - 4 - 3 = 93.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from dbrows import rows as db_rows

from forensics.errors import InputError
from forensics.ingest import ingest

FILES = 50


def _rec(rid: str, tokens: int = 100, **more: object) -> bytes:
    rec: dict[str, object] = {
        "request_id": rid,
        "ts": "2026-08-27T10:00:00Z",
        "account_id": "a1",
        "model": "m",
        "prompt_tokens": tokens,
        **more,
    }
    return json.dumps(rec).encode()


def _lines(*lines: bytes, end: bytes = b"\n") -> bytes:
    return b"".join(line + end for line in lines)


def _write(folder: Path) -> list[Path]:
    """The 50 files of the module doc, in order."""
    special: dict[int, bytes] = {
        3: _lines(_rec("r03a"), b'{"broken": ', _rec("r03b")),
        5: _lines(_rec("r05a", -1)),
        6: _lines(_rec("r06a"), _rec("r05a")),
        7: _lines(_rec("r07a"), _rec("r07b"), _rec("r00a")),
        11: _lines(_rec("r11a"), _rec("r11b"), _rec("r01a", 999)),
        17: _lines(_rec("r17a"), b"", _rec("r17b")),
        23: _lines(_rec("r23a"), _rec("r23a")),
        29: _lines(
            _rec("r29a"),
            json.dumps(
                {
                    "request_id": "r29b",
                    "ts": "2026-08-27T10:00:00Z",
                    "account_id": "a1",
                    "prompt_tokens": 1,
                }
            ).encode(),
        ),
        31: _lines(
            _rec("r31a", completion_tokens=10, status=200),
            _rec("r31b", completion_tokens=10, status=200),
        ),
        41: _lines(_rec("r40a"), _rec("r40b")),
        43: _lines(_rec("r43a"), _rec("r43b"), end=b"\r\n"),
        47: _rec("r47a") + b"\n" + _rec("r47b"),
        49: _lines(_rec("r49a"), _rec("r48b")),
    }
    paths = []
    for n in range(FILES):
        body = special.get(n, _lines(_rec(f"r{n:02d}a"), _rec(f"r{n:02d}b")))
        path = folder / f"h{n:02d}.jsonl"
        if n == 19:
            path = folder / "h19.jsonl.gz"
            path.write_bytes(gzip.compress(body, mtime=0))
        else:
            path.write_bytes(body)
        paths.append(path)
    return paths


EXPECTED = {
    3: (3, 2, 0, 1),
    5: (1, 0, 0, 1),
    7: (3, 2, 1, 0),
    11: (3, 2, 0, 1),
    23: (2, 1, 1, 0),
    29: (2, 1, 0, 1),
    41: (0, 0, 0, 0),
    49: (2, 1, 1, 0),
}


def test_fifty_small_files_in_one_call_keep_each_files_exact_accounting(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    paths = _write(folder)
    db = tmp_path / "c.duckdb"
    report = ingest(paths, db, profile="canonical", allow_empty=True)

    got = [(s.rows_read, s.rows_loaded, s.duplicates, s.quarantined) for s in report.inputs]
    assert got == [EXPECTED.get(n, (2, 2, 0, 0)) for n in range(FILES)]
    assert report.totals() == {
        "rows_read": 100,
        "rows_loaded": 93,
        "duplicates": 3,
        "quarantined": 4,
    }
    assert [s.path for s in report.inputs] == [str(p) for p in paths]
    # each file's own sha256, and h41 skipped as the same content as h40
    assert [s.sha256 for s in report.inputs][40] == [s.sha256 for s in report.inputs][41]
    assert len({s.sha256 for s in report.inputs}) == FILES - 1
    assert any(w.startswith(f"{paths[41]}: same content as {paths[40]}") for w in report.warnings)
    assert dict(report.inputs[3].reasons) == {"invalid JSON": 1}
    assert dict(report.inputs[11].reasons) == {"conflicting duplicate": 1}

    def source(n: int) -> str:
        return str(paths[n].resolve())

    assert db_rows(db, "SELECT source, row, reason FROM quarantine ORDER BY source, row") == [
        (source(3), 2, "invalid JSON"),
        (source(5), 1, "negative token count prompt_tokens"),
        (source(11), 3, "conflicting duplicate"),
        (source(29), 2, "missing required field model"),
    ]
    assert db_rows(db, "SELECT source, row, request_id FROM quarantine_values ORDER BY 1, 2") == [
        (source(3), 2, None),
        (source(5), 1, "r05a"),
        (source(11), 3, "r01a"),
        (source(29), 2, "r29b"),
    ]
    placed = dict(
        ((rid), (src, row))
        for rid, src, row in db_rows(db, "SELECT request_id, source, source_row FROM requests")
    )
    assert len(placed) == 93
    assert placed["r00a"] == (source(0), 1)  # h07's copy is the duplicate
    assert placed["r01a"] == (source(1), 1)  # h11's differing copy is the conflict
    assert placed["r05a"] == (source(6), 2)  # h05's copy failed its check
    assert placed["r17b"] == (source(17), 3)  # after the blank line 2
    assert placed["r19b"] == (source(19), 2)  # the gzip file
    assert placed["r23a"] == (source(23), 1)
    assert placed["r43b"] == (source(43), 2)  # the CRLF file
    assert placed["r47b"] == (source(47), 2)  # no newline after it
    assert placed["r48b"] == (source(48), 2)  # h49's copy is the duplicate
    assert placed["r31b"] == (source(31), 2)
    assert "r40a" in placed and "r03b" in placed and "r29b" not in placed
    inputs = db_rows(
        db,
        "SELECT path, rows_read, rows_loaded, duplicates, quarantined FROM inputs ORDER BY path",
    )
    # 49 rows (h41 is not recorded again), each as its InputStats
    assert inputs == sorted(
        (str(Path(s.path).resolve()), s.rows_read, s.rows_loaded, s.duplicates, s.quarantined)
        for n, s in enumerate(report.inputs)
        if n != 41
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [(b"", "the file is empty"), (b"\n\n", "the file holds no records")],
)
def test_a_file_without_records_among_many_is_refused_by_name(tmp_path, body, message):
    # h20 of 50 default files holds nothing: the call is refused naming it, no database made
    folder = tmp_path / "logs"
    folder.mkdir()
    paths = [folder / f"h{n:02d}.jsonl" for n in range(FILES)]
    for n, path in enumerate(paths):
        path.write_bytes(body if n == 20 else _lines(_rec(f"r{n:02d}a"), _rec(f"r{n:02d}b")))
    db = tmp_path / "c.duckdb"
    with pytest.raises(InputError) as e:
        ingest(paths, db, profile="canonical")
    assert e.value.where == str(paths[20])
    assert message in str(e.value)
    assert not db.exists()
