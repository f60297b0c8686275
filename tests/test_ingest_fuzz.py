"""Ingest fuzz: over a million records mixing every value and line form, valid and not, with
duplicates and conflicts, give exactly the counts a plain-Python oracle expects.

The generator knows each record's outcome by construction: every form below carries the
value it must load as (written out by hand) or the reason it must be quarantined with; the
oracle then applies the duplicate rule (first occurrence loaded, identical later ones
duplicates, differing ones conflicts) in plain Python. Nothing here re-runs the ingest SQL.
"""

from __future__ import annotations

import gzip
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from forensics.ingest import ingest, inputfile

N_JSONL = 1_000_000
N_CSV = 60_000
MAX_LINE = 2048  # lines longer than this are quarantined (inputfile.MAX_LINE_SIZE, patched)


def _us(*args: int) -> int:
    """Epoch microseconds of a UTC date-time."""
    delta = datetime(*args, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


TEN = _us(2026, 8, 27, 10)  # 2026-08-27T10:00:00Z = 1787824800 s

# time forms: (JSON text of the value, epoch us it loads as | reason)
TIMES_OK = [
    (b'"2026-08-27T10:00:00Z"', TEN),
    (b'"2026-08-27T12:00:00+02:00"', TEN),
    (b'"2026-08-27T05:30:00-0430"', TEN),
    (b'"2026-08-28T04:00:00+18:00"', TEN),
    (b'"2026-08-27t10:00:01z"', TEN + 1_000_000),
    (b'"2026-08-27T10:00:02,5Z"', TEN + 2_500_000),
    (b'"2026-08-27 10:00:03 UTC"', TEN + 3_000_000),
    (b'"2026-08-27T10:00:04.123456789Z"', TEN + 4_123_456),
    (b'"2026-08-27T10:00:05"', TEN + 5_000_000),  # naive: [timestamp] timezone UTC
    (b'"2026-08-27T23:59:60Z"', _us(2026, 8, 27, 23, 59, 59, 999_999)),  # leap second
    (b'"2026-08-28T01:59:60.5+02:00"', _us(2026, 8, 27, 23, 59, 59, 999_999)),
    (b'"0001-01-01T00:00:00Z"', _us(1, 1, 1)),
    (b'"9999-12-31T23:59:59.999999Z"', _us(9999, 12, 31, 23, 59, 59, 999_999)),
]
ZONE = "time zone name in ts (use a UTC offset or [timestamp] timezone)"
OFFSET = "invalid UTC offset in ts"
UNPARSABLE = "unparsable time ts"
TIMES_BAD = [
    (b'"2026-08-27 10:00:00 EST"', ZONE),
    (b'"2026-08-27T10:00:00 America/New_York"', ZONE),
    (b'"2026-08-27T10:00:00+05:45:30"', OFFSET),
    (b'"2026-08-27T10:00:00+99:99"', OFFSET),
    (b'"2026-08-27T10:00:00+24:00"', OFFSET),
    (b'"infinity"', UNPARSABLE),
    (b'"-infinity"', UNPARSABLE),
    (b'"epoch"', UNPARSABLE),
    (b'"now"', UNPARSABLE),
    (b'"today"', UNPARSABLE),
    (b'"2026-02-30T10:00:00Z"', UNPARSABLE),
    (b'"9999-12-31T23:00:00-05:00"', "time out of range ts (years 0001-9999 UTC)"),
    (b"1787824800", "epoch number in ts but [timestamp] unit is iso8601"),
]
TOKENS_OK = [
    (b"700000", 700000),
    (b'"12"', 12),
    (b"12.0", 12),
    (b'"1e3"', 1000),
    (b'" 42 "', 42),
    (b"1099511627775", 2**40 - 1),  # the largest count below the bound
]
TOKENS_BAD = [
    (b"681280.5", "fractional token count prompt_tokens"),
    (b'"681280.5"', "fractional token count prompt_tokens"),
    (b'"0x10"', "non-numeric token count prompt_tokens"),
    (b'"1_000"', "non-numeric token count prompt_tokens"),
    (b'"NaN"', "non-numeric token count prompt_tokens"),
    (b"true", "non-numeric token count prompt_tokens"),
    (b"1099511627776", "implausible token count prompt_tokens (2^40 or more)"),
    (b"9223372036854775807", "implausible token count prompt_tokens (2^40 or more)"),
    (b"9223372036854775808", "out-of-range token count prompt_tokens"),
    (b"-5", "negative token count prompt_tokens"),
]
STATUS_OK = [(b"", 200), (b',"status":404', 404), (b',"status":"503"', 503)]
STATUS_BAD = [
    (b',"status":200.5', "fractional status"),
    (b',"status":"0x1F"', "non-numeric status"),
    (b',"status":2147483648', "out-of-range status"),
]
# a record: id, time, account, tokens, status, prompt (never loaded)
RECORD = (
    b'{"id":"%s","timestamp":%s,"account":{"id":"a%d"},"model":"m",'
    b'"usage":{"prompt_tokens":%s,"completion_tokens":5}%s,"prompt":"secret %d"}'
)
MAPPING = """format = "jsonl"
[fields]
request_id = "id"
ts = "timestamp"
account_id = "account.id"
model = "model"
prompt_tokens = "usage.prompt_tokens"
completion_tokens = "usage.completion_tokens"
status = "status"
ts_end = "end"
[timestamp]
unit = "{unit}"
timezone = "UTC"
"""
CSV_MAPPING = MAPPING.replace('format = "jsonl"', 'format = "csv"').replace(
    'account_id = "account.id"', 'account_id = "account"'
)
CSV_MAPPING = CSV_MAPPING.replace('"usage.prompt_tokens"', '"prompt_tokens"').replace(
    '"usage.completion_tokens"', '"completion_tokens"'
)
CSV_MAPPING = CSV_MAPPING.replace('ts_end = "end"\n', "")


@dataclass
class Oracle:
    """What ingest must report, by construction."""

    read: int = 0
    loaded: int = 0
    duplicates: int = 0
    reasons: Counter = field(default_factory=Counter)
    times: Counter = field(default_factory=Counter)  # epoch us of loaded records
    tokens: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    content: dict = field(default_factory=dict)  # request_id -> loaded (ts, tokens, ...)

    def valid(self, rid: str, content: tuple) -> None:
        self.read += 1
        first = self.content.get(rid)
        if first is None:
            self.content[rid] = content
            self.loaded += 1
            ts, tokens, status = content[0], content[1], content[3]
            self.times[ts] += 1
            self.tokens[tokens] += 1
            self.statuses[status] += 1
        elif first == content:
            self.duplicates += 1
        else:
            self.reasons["conflicting duplicate"] += 1

    def repeat(self, identical: bool) -> None:
        """A record repeating one an earlier input loaded."""
        self.read += 1
        if identical:
            self.duplicates += 1
        else:
            self.reasons["conflicting duplicate"] += 1

    def bad(self, reason: str) -> None:
        self.read += 1
        self.reasons[reason] += 1


NFC_E, NFD_E = "\u00e9".encode(), "e\u0301".encode()  # é, composed and decomposed
UNICODE = "request_id differs from an earlier record's only by Unicode normalization"


def _jsonl(rng: random.Random, oracle: Oracle) -> bytes:
    lines: list[bytes] = []
    valid: list[tuple[bytes, tuple]] = []  # (id, content) of valid records so far
    accented: list[tuple] = []  # the valid records whose id holds a composed é
    line = 0
    while oracle.read < N_JSONL:
        line += 1
        end = b"\r\n" if line % 7 == 0 else b"\n"  # mixed LF/CRLF
        kind = rng.random()
        acct = line % 50
        if kind < 0.002:  # a blank line: not a record
            lines.append(end)
            continue
        if kind < 0.72 or not valid:
            t, t_us = TIMES_OK[line % len(TIMES_OK)]
            n, n_v = TOKENS_OK[(line // 3) % len(TOKENS_OK)]
            s, s_v = STATUS_OK[(line // 5) % len(STATUS_OK)]
            rid = b"u%d" % line + NFC_E if line % 13 == 0 else b"r%d" % line
            text = RECORD % (rid, t, acct, n, s, line)
            if line % 11 == 0:  # a lone CR as JSON whitespace
                text = text.replace(b',"model"', b',\r"model"', 1)
            if line % 17 == 0:  # an unmapped key twice: not read, so not ambiguous
                text = text.replace(b',"prompt":', b',"prompt":"x","prompt":', 1)
            content = (t_us, n_v, f"a{acct}", s_v)
            oracle.valid(rid.decode(), content)
            valid.append((rid, content, t, n, s, acct))
            if NFC_E in rid:
                accented.append(valid[-1])
        elif kind < 0.80:  # a repeat of an earlier valid record: same content or not
            rid, content, t, n, s, a = valid[rng.randrange(max(0, len(valid) - 1000), len(valid))]
            if rng.random() < 0.5:
                text = RECORD % (rid, t, a, n, s, line)  # other prompt: still identical
                oracle.valid(rid.decode(), content)
            else:
                text = RECORD % (rid, t, a, b"777", s, line)
                oracle.valid(rid.decode(), (content[0], 777, *content[2:]))
        else:
            rid = b"x%d" % line
            fault = rng.randrange(18)
            t, n, s = TIMES_OK[0][0], TOKENS_OK[0][0], STATUS_OK[0][0]
            if fault < 3:
                t, reason = TIMES_BAD[line % len(TIMES_BAD)]
            elif fault < 5:
                n, reason = TOKENS_BAD[line % len(TOKENS_BAD)]
            elif fault == 5:
                s, reason = STATUS_BAD[line % len(STATUS_BAD)]
            text = RECORD % (rid, t, acct, n, s, line)
            if fault == 6:
                text, reason = text[: len(text) // 2], "invalid JSON"  # torn
            elif fault == 7:
                text, reason = text.replace(b"secret", b"secr\xff\xfet"), "invalid UTF-8"
            elif fault == 8:
                text = text.replace(b"secret", b"s" * MAX_LINE)
                reason = f"line longer than {MAX_LINE} bytes"
            elif fault == 9:
                text, reason = (
                    text.replace(b'"account":{"id":"a%d"},' % acct, b""),
                    ("missing required field account_id"),
                )
            elif fault == 10:
                text, reason = (
                    text.replace(b'"timestamp":%s,' % t, b""),
                    ("missing required field ts"),
                )
            elif fault == 11:
                text, reason = b"[1, 2]", "invalid JSON"
            elif fault == 12:  # a mapped key twice: 900 to one reader, 100 to another
                text = text.replace(b'"model":"m"', b'"model":"m","model":"m2"')
                reason = "duplicate JSON key model"
            elif fault == 13:
                text = text.replace(b'"usage":{', b'"usage":{"prompt_tokens":1,')
                reason = "duplicate JSON key usage.prompt_tokens"
            elif fault == 14:  # the second spelled with an escape
                text = text.replace(b'"model":"m"', b'"model":"m","\\u006dodel":"m"')
                reason = "duplicate JSON key model"
            elif fault == 15:
                text = text.replace(b'"id":"a%d"' % acct, b'"id":"%s"' % (b"a" * 1025))
                reason = "account_id longer than 1024 bytes"
            elif fault == 16:  # ends an hour before it starts (TIMES_OK[0]: 10:00Z)
                text = text.replace(b',"model"', b',"end":"2026-08-27T09:00:00Z","model"')
                reason = "ts_end before ts"
            elif fault == 17 and accented:  # an earlier loaded id, decomposed: é as e + U+0301
                rid, _c, t, n, s, a = accented[rng.randrange(len(accented))]
                text = RECORD % (rid.replace(NFC_E, NFD_E), t, a, n, s, line)
                reason = UNICODE
            elif fault == 17:
                text, reason = b"[3]", "invalid JSON"
            oracle.bad(reason)
        lines.append(text + end)
    return b"".join(lines)


def _csv(rng: random.Random, oracle: Oracle, jsonl: Oracle) -> bytes:
    """Epoch seconds under unit s; some rows repeat JSONL ids (same content or not); blank
    lines and quoted prompts spanning lines between them (a record's row is the physical line
    it starts on)."""
    rows = [b"id,timestamp,account,model,prompt_tokens,completion_tokens,status,prompt\n"]
    same = [(rid, c) for rid, c in jsonl.content.items() if c[0] == TEN and c[1] == 700000][:2000]
    line = 1  # physical line of the last row written
    for k in range(N_CSV):
        if k % 97 == 0:  # a blank line: not a record
            rows.append(b"\n" if k % 2 else b"\r\n")
            line += 1
        line += 1
        kind = rng.random()
        if kind < 0.65:
            sec = 1787824800 + k
            rid = f"c{line}"
            account = "a#1" if k % 5 == 0 else "a1"  # a # is data (no comment character)
            text = f"{rid},{sec},{account},m,{k},5,,secret".encode()
            oracle.valid(rid, (sec * 1_000_000, k, account, 200))
        elif kind < 0.7:  # a quoted prompt spanning two lines: the record starts on `line`
            sec = 1787824800 + k
            rid = f"c{line}"
            text = f'{rid},{sec},a1,m,{k},5,,"secret\nmore, ""quoted"""'.encode()
            oracle.valid(rid, (sec * 1_000_000, k, "a1", 200))
            line += 1
        elif kind < 0.75:
            rid = f"c{line}"
            text = f"{rid},1787824800.25,a1,m,{k},5,,secret".encode()
            oracle.valid(rid, (TEN + 250_000, k, "a1", 200))
        elif kind < 0.85 and same:
            rid, c = same[k % len(same)]
            tokens = 700000 if k % 2 else 700001  # identical to the JSONL record, or not
            text = f"{rid},1787824800,{c[2]},m,{tokens},5,{c[3]},x".encode()
            oracle.repeat(identical=tokens == 700000)
        elif kind < 0.9:
            # 1e13 s is beyond BIGINT microseconds: quarantined like the rest, not an abort
            value = (1787824800123, 0, -1787824800, 17878248, 10000000000000)[k % 5]
            text = f"e{line},{value},a1,m,5,5,,secret".encode()
            oracle.bad("implausible epoch ts for unit s (not within 2000-2100 UTC)")
        elif kind < 0.95:
            text = f"e{line},1787824800,a1,m,5,5,,secr\xff".encode("latin-1")
            oracle.bad("invalid UTF-8")
        elif kind < 0.97:
            text = f"e{line},1787824800,a1,m,5,5,,secret,extra column".encode()
            oracle.bad("invalid CSV row (9 fields where the header has 8)")
        elif kind < 0.985:  # a single quote is data: 'a,1' is two fields
            text = f"e{line},1787824800,'a,1',m,5,5,,secret".encode()
            oracle.bad("invalid CSV row (9 fields where the header has 8)")
        else:
            text = f"e{line},1787824800,a1,m,5,5,".encode()
            oracle.bad("invalid CSV row (7 fields where the header has 8)")
        rows.append(text + b"\n")
    return b"".join(rows)


def _counts(con: duckdb.DuckDBPyConnection, sql: str) -> Counter:
    return Counter(dict(con.execute(sql).fetchall()))


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory) -> tuple[Path, Oracle, Oracle, list]:
    folder = tmp_path_factory.mktemp("fuzz")
    rng = random.Random(13)
    jsonl, csv = Oracle(), Oracle()
    log = folder / "gateway.jsonl.gz"
    log.write_bytes(gzip.compress(_jsonl(rng, jsonl), compresslevel=1))
    table = folder / "trace.csv"
    table.write_bytes(_csv(rng, csv, jsonl))
    (folder / "gateway.mapping.toml").write_text(MAPPING.format(unit="iso8601"))
    (folder / "trace.mapping.toml").write_text(CSV_MAPPING.format(unit="s"))
    db = folder / "fuzz.duckdb"
    patch = pytest.MonkeyPatch()
    patch.setattr(inputfile, "MAX_LINE_SIZE", MAX_LINE)
    try:
        first = ingest([log], db, mapping=folder / "gateway.mapping.toml")
        second = ingest([table], db, mapping=folder / "trace.mapping.toml")
    finally:
        patch.undo()
    return db, jsonl, csv, [first.totals(), second.totals()]


def test_fuzz_counts_per_input_are_exact(fuzzed):
    _db, jsonl, csv, totals = fuzzed
    assert jsonl.read >= N_JSONL
    for oracle, got in zip((jsonl, csv), totals, strict=True):
        assert got == {
            "rows_read": oracle.read,
            "rows_loaded": oracle.loaded,
            "duplicates": oracle.duplicates,
            "quarantined": sum(oracle.reasons.values()),
        }


def test_fuzz_quarantine_reasons_are_exact(fuzzed):
    db, jsonl, csv, _totals = fuzzed
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = _counts(con, "SELECT reason, count(*) FROM quarantine GROUP BY reason")
        leaked = con.execute("SELECT count(*) FROM quarantine WHERE raw LIKE '%secr%'").fetchone()
    finally:
        con.close()
    assert got == jsonl.reasons + csv.reasons
    assert leaked == (0,)  # prompt text is never kept


def test_fuzz_loaded_values_are_exact(fuzzed):
    db, jsonl, csv, _totals = fuzzed
    con = duckdb.connect(str(db), read_only=True)
    try:
        times = _counts(con, "SELECT epoch_us(ts), count(*) FROM requests GROUP BY 1")
        tokens = _counts(con, "SELECT prompt_tokens, count(*) FROM requests GROUP BY 1")
        # a missing status is stored NULL; the oracle holds the 200 it is read (and compared) as
        statuses = _counts(con, "SELECT coalesce(status, 200), count(*) FROM requests GROUP BY 1")
        # a loaded JSONL record's id is r<its physical line> (or u<line>é), a CSV one's
        # c<the line it starts on>
        misplaced = con.execute(
            "SELECT count(*) FROM requests WHERE (CASE WHEN source LIKE '%.csv' THEN 'c' "
            "ELSE 'r' END) || source_row NOT IN (request_id, 'r' || regexp_extract(request_id, "
            "'^u([0-9]+)', 1))"
        ).fetchone()
    finally:
        con.close()
    assert times == jsonl.times + csv.times
    assert tokens == jsonl.tokens + csv.tokens
    assert statuses == jsonl.statuses + csv.statuses
    assert misplaced == (0,)
