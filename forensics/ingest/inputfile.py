"""An input file as bytes, before DuckDB reads it: its format by name, sha256, checks of
compressed streams, and the line checks that decide whether it is rewritten first.

Everything here is streaming I/O in chunks (no file is held in memory). `prepare` returns
what `ingest` stages: the path DuckDB reads (the file itself, a decompressed prefix of a
truncated stream, or a rewrite whose line n is physical line n of the input) and, for a
rewrite, a side CSV of the lines it replaced with their reasons.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import glob
import hashlib
import io
import itertools
import json
import os
import threading
import zlib
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from ..errors import InputError
from ..mapping import CsvDialect, Mapping

LINE_DELIM = "\x1f\x1e\x1d\x1c"  # never occurs in JSON text: read each line whole
MAX_LINE_SIZE = 64 * 1024 * 1024  # longest record line; a 1M-token prompt is ~8 MB of JSON
_CHUNK = 1 << 20
_KNOWN = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".log": "sglang",
    ".txt": "sglang",
}
_COMPRESSED = {".gz": "gzip", ".zst": "zstd"}
_GAPS = itertools.count()  # names of the CSV gap files of one process
# byte order marks of encodings a log must not be in (checked longest first)
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)


@dataclass
class Prepared:
    path: str  # as the caller named it (messages, the ingest table)
    read_path: str  # what DuckDB reads (a decompressed prefix for a truncated stream)
    sha256: str
    size: int
    fmt: str
    note: str | None = None
    table: str | None = None  # the staged temp table of its records
    replaces: tuple[str, ...] | None = None  # force: the paths whose earlier load it replaces
    side: str | None = None  # rewritten input (_normalize): CSV of the lines it replaced
    gaps: str | None = None  # CSV: file of the lines that start no record (_CsvLines)
    row_groups: int | None = None  # Parquet staged alone: its row groups (the footer's)

    @property
    def source(self) -> str:
        """The path recorded in the case database (`inputs.path`, `requests.source`):
        absolute, so that it names this file whatever folder the command ran in (two
        `gw.jsonl` of two folders stay apart; summaries show it relative to the case)."""
        return os.path.abspath(self.path)


def literal_path(path: str) -> str:
    """`path` as DuckDB's file readers take it literally. They read every path as a glob
    pattern (a file named log[1].parquet was read as log1.parquet, a*b.jsonl as every file
    a...b.jsonl), so each of `*`, `?` and `[` goes in brackets of its own."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def suffix_format(path: Path) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    return _KNOWN.get(suffixes[-1]) if suffixes else None


def _compression(path: Path) -> str | None:
    return _COMPRESSED.get(path.suffix.lower())


class Prehash:
    """The sha256 of Parquet inputs (`ingest` gives it its first), hashed in order on a
    thread of its own from before the case database opens: DuckDB's start and the hashing
    each take a core for ~25 ms at 1M records. `take(path)` waits for an input's; None when
    it was not hashed here (not given, not Parquet, unreadable, or stopped), and `prepare`
    hashes it itself."""

    def __init__(self, files: Sequence[Path], m: Mapping):
        self._todo = [
            f
            for f in files
            if (m.format or suffix_format(f)) == "parquet" and _compression(f) is None
        ]
        self._wanted = set(self._todo)  # 10,000 inputs: take() looks each up
        self._done: dict[Path, str | None] = {}
        self._finished = not self._todo
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if self._todo:
            try:
                self._thread.start()
            except RuntimeError:  # no thread to be had: prepare hashes every input
                self._finished = True

    def _run(self) -> None:
        try:
            for f in self._todo:
                try:
                    digest: str | None = hash_file(f, stop=self._stop)
                except Exception:  # prepare hashes it again and says what went wrong
                    digest = None
                with self._cond:
                    self._done[f] = digest
                    self._cond.notify_all()
                if self._stop.is_set():
                    break
        finally:  # take() never waits for a thread that has ended
            with self._cond:
                self._finished = True
                self._cond.notify_all()

    def take(self, path: Path) -> str | None:
        """The sha256 of `path` (waiting for it), or None."""
        if path not in self._wanted:
            return None
        with self._cond:
            self._cond.wait_for(lambda: path in self._done or self._finished)
            return self._done.pop(path, None)

    def close(self) -> None:
        """Stop hashing (within a chunk) and wait for the thread."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def prepare(path: Path, m: Mapping, scratch: Path, prehash: Prehash | None = None) -> Prepared:
    where = str(path)
    fmt = m.format or suffix_format(path)
    if fmt is None or fmt == "sglang":
        raise InputError(
            "cannot tell the input format from the file name",
            where=where,
            fix='name it .jsonl/.ndjson/.csv/.parquet (optionally .gz/.zst) or set format = "..."'
            " in the mapping",
        )
    check = _LineCheck(MAX_LINE_SIZE) if fmt in ("jsonl", "csv") else None
    gaps = scratch / f"{next(_GAPS)}.gaps"
    if check is not None and fmt == "csv":
        check.csv = _CsvLines(m.csv.quote, m.csv.escape_char, gaps, m.csv.delimiter)
    comp = _compression(path)
    try:
        size = path.stat().st_size
        known = prehash.take(path) if prehash is not None else None
        sha256 = known or hash_file(
            path, check.feed if check is not None and comp is None else None
        )
    except OSError as e:
        raise InputError(
            f"cannot read the file ({e.strerror})", where=where, fix="check the file's permissions"
        ) from None
    if size == 0:
        raise InputError("the file is empty", where=where, fix="check the export; remove it")
    prepared = Prepared(where, where, sha256, size, fmt)
    if comp is not None:
        if fmt == "parquet":
            raise InputError(
                f"Parquet inside {comp} is not supported",
                where=where,
                fix="decompress it (Parquet compresses its own pages)",
            )
        out_bytes, truncated, padding = _check_stream(path, comp, check)
        if padding and not truncated:
            # DuckDB's own gzip reader refuses the padding: it reads a decompressed copy
            target = scratch / f"{prepared.sha256[:16]}.plain"
            with target.open("wb") as sink:
                _check_stream(path, comp, None, sink)
            prepared.read_path = str(target)
            prepared.note = f"ignored {padding:,} zero bytes after the last {comp} member"
        if truncated:
            assert check is not None  # a request log (Parquet inside gzip/zstd is refused)
            if check.csv is not None:  # a record may span lines: cut where the last began
                out_bytes = _torn(
                    prepared, comp, scratch, check.csv.record_line, check.csv.record_start
                )
            else:
                out_bytes = _torn(prepared, comp, scratch, check.lf + 1)
        if out_bytes == 0 and truncated:
            raise InputError(
                f"the {comp} stream is cut short (truncated) before its first complete "
                "record: nothing in it can be read",
                where=where,
                fix="get a complete copy of the file",
            )
        if out_bytes == 0:
            raise InputError(
                "the file is empty once decompressed", where=where, fix="check the export"
            )
    if check is not None:
        _check_encoding(check.head, where)
    if check is not None and check.csv is not None and check.csv.lone_cr is not None:
        line = check.csv.lone_cr
        raise InputError(
            "a carriage return (CR) outside a quoted value and not before a line feed: RFC "
            "4180 allows one only inside quotes or in a CRLF line end, and whether it ends a "
            "record or is part of a value cannot be told",
            where=f"{where}:{line}",
            fix="quote that value or remove the CR (a file whose lines end with CR alone, "
            "as old Mac programs wrote, converts with tr '\\r' '\\n')",
        )
    if check is not None and check.finish(fmt):
        _normalize(prepared, comp if prepared.read_path == where else None, scratch, check.mixed)
    if check is not None and check.csv is not None and check.csv.close():
        prepared.gaps = str(gaps)
        header = m.csv.header_lines
        early = check.csv.first_gap
        if early is not None and early <= header:
            raise InputError(
                f"line {early} is blank or inside a quoted value, but the first "
                f"{header} line(s) must be the {'preamble and ' if m.csv.skip else ''}header",
                where=where,
                fix="remove blank lines before the header (or declare a preamble: [csv] skip "
                "in the mapping)",
            )
    return prepared


def csv_header(path: str, dialect: CsvDialect) -> list[str]:
    """The column names of a CSV file's header (physical line `dialect.skip` + 1), split as
    `dialect` says (RFC 4180 by default), as written: a repeated name is there twice. [] for
    a file without that line."""
    source = Path(path)
    comp = _compression(source)
    head = b""
    chunks = _decompress(source, comp, {}) if comp else _plain_chunks(source)
    with contextlib.closing(chunks):
        for chunk in chunks:
            head += chunk
            if head.count(b"\n") > dialect.skip or len(head) > MAX_LINE_SIZE:
                break
    lines = head.split(b"\n")[dialect.skip :]
    text = b"\n".join(lines).decode("utf-8", errors="replace")
    if dialect.skip == 0:
        text = text.removeprefix("\ufeff")
    escape = dialect.escape_char
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=dialect.delimiter,
        quotechar=dialect.quote or None,
        quoting=csv.QUOTE_MINIMAL if dialect.quote else csv.QUOTE_NONE,
        doublequote=escape == dialect.quote,
        escapechar=escape if escape and escape != dialect.quote else None,
    )
    return next(reader, [])


def _check_encoding(head: bytes, where: str) -> None:
    """Refuse a log in UTF-16/32 (a byte order mark, or a NUL in every other byte of its
    start): read as UTF-8 its every line would be quarantined, one record too many."""
    name = next((n for bom, n in _BOMS if head.startswith(bom)), None)
    if name is None and len(head) >= 8:
        if all(b == 0 for b in head[1:8:2]) and all(head[0:8:2]):
            name = "UTF-16 (little-endian, without a byte order mark)"
        elif all(b == 0 for b in head[0:8:2]) and all(head[1:8:2]):
            name = "UTF-16 (big-endian, without a byte order mark)"
    if name is not None:
        raise InputError(
            f"the file is {name} text, not UTF-8",
            where=where,
            fix=f"save it as UTF-8 (e.g. iconv -f {name.split()[0]} -t UTF-8)",
        )


def hash_file(
    path: Path, feed: Callable[[bytes], None] | None = None, stop: threading.Event | None = None
) -> str:
    """The sha256 of a file, read once in chunks (each also given to `feed`); InterruptedError
    once `stop` is set."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            if stop is not None and stop.is_set():
                raise InterruptedError(f"{path}: hashing stopped")
            digest.update(chunk)
            if feed is not None:
                feed(chunk)
    return digest.hexdigest()


def _check_stream(
    path: Path, comp: str, check: _LineCheck | None = None, sink: Any = None
) -> tuple[int, bool, int]:
    """Decompress `path` in chunks (to `check` and `sink`): (bytes out, truncated?, zero bytes
    of padding after the last member). Corrupt data -> InputError."""
    total = 0
    state: dict[str, int] = {}
    for data in _decompress(path, comp, state):
        total += len(data)
        if check is not None:
            check.feed(data)
        if sink is not None:
            sink.write(data)
    return total, bool(state["truncated"]), state.get("padding", 0)


def _decompress(path: Path, comp: str, state: dict[str, int]) -> Generator[bytes, None, None]:
    """The decompressed bytes of `path` in chunks; then state["truncated"] says whether the
    stream broke off inside a member/frame, state["padding"] how many zero bytes followed
    the last member (as GNU gzip, they are ignored: tape and block devices pad files).
    Corrupt data -> InputError."""
    fed = False  # the current decompressor has taken input since its member began
    try:
        with path.open("rb") as fh:
            dec = _decompressor(comp)
            chunk = fh.read(_CHUNK)
            while chunk:
                data = dec.decompress(chunk)
                fed = True
                if data:
                    yield data
                if dec.eof:  # a member/frame ended: the rest may start another
                    chunk = dec.unused_data or fh.read(_CHUNK)
                    dec, fed = _decompressor(comp), False
                    if chunk and not chunk.strip(b"\0"):  # zeros: padding, if only zeros follow
                        zeros = len(chunk)
                        while (more := fh.read(_CHUNK)) and not more.strip(b"\0"):
                            zeros += len(more)
                        if not more:
                            state["padding"] = zeros
                            break
                        chunk += more  # data after the zeros: a corrupt member
                else:
                    chunk = fh.read(_CHUNK)
            state["truncated"] = fed
    except (zlib.error, zstandard.ZstdError, OSError) as e:
        tool = "gzip -t" if comp == "gzip" else "zstd -t"
        raise InputError(
            f"unreadable {comp} data ({e})",
            where=str(path),
            fix=f"re-export the file (check it with `{tool}`)",
        ) from None


def _decompressor(comp: str) -> Any:
    if comp == "gzip":
        return zlib.decompressobj(wbits=31)
    return zstandard.ZstdDecompressor().decompressobj()


TORN = "truncated record: the {comp} stream breaks off inside it"  # its quarantine reason


def _torn(p: Prepared, comp: str, scratch: Path, line: int, start: int | None = None) -> int:
    """Read input `p`, whose `comp` stream breaks off, through a decompressed copy of what is
    there (`p.read_path`): its whole records, then, when the break cuts a record (the text
    after the last line end, or from offset `start` where the last record began, is not
    blank), PLACEHOLDER on that record's `line`, its reason and
    length in a side CSV (`p.side`; never its text: it may hold a prompt), so that it is
    quarantined and counted. The copy's size (0: nothing there). Records after the break are
    not in the file: `p.note` says so, and the analysis warns of it."""
    target = scratch / f"{p.sha256[:16]}.prefix"
    with target.open("wb") as sink:
        _check_stream(Path(p.path), comp, None, sink)
    kept, tail = _cut_at_last_newline(target, start)
    before = f"truncated {comp} stream: the records before the break ({kept:,} decompressed bytes)"
    p.read_path = str(target)
    if not tail:
        p.note = f"{before} are read; the break falls between records"
        return kept
    side = scratch / f"{p.sha256[:16]}.torn.csv"
    side.write_text(f"line,reason,bytes\n{line},{TORN.format(comp=comp)},{tail}\n")
    with target.open("ab") as out:
        out.write(PLACEHOLDER + b"\n")
    p.side = str(side)
    p.note = (
        f"{before} are read; the record the break cuts (line {line}, {tail:,} bytes) is quarantined"
    )
    return kept + len(PLACEHOLDER) + 1


def _cut_at_last_newline(path: Path, at: int | None = None) -> tuple[int, int]:
    """Truncate a file after its last newline (or at offset `at`): (the size kept, the bytes
    cut when they are not blank, else 0)."""
    size = path.stat().st_size
    keep = 0 if at is None else at
    with path.open("rb+") as fh:
        pos = size if at is None else 0
        while pos > 0:
            step = min(_CHUNK, pos)
            fh.seek(pos - step)
            block = fh.read(step)
            idx = block.rfind(b"\n")
            if idx >= 0:
                keep = pos - step + idx + 1
                break
            pos -= step
        fh.seek(keep)
        blank = all(not chunk.strip() for chunk in iter(lambda: fh.read(_CHUNK), b""))
        fh.truncate(keep)
    return keep, 0 if blank else size - keep


class _LineCheck:
    """Watches an input's (decompressed) bytes for what DuckDB's line reader gets wrong or
    refuses: a CR (DuckDB also ends lines at a lone CR, and miscounts mixed LF/CRLF files),
    bytes that are not UTF-8 and lines longer than `max_line` (either refuses the whole
    file), and the JSONL reader's delimiter (it would cut the line)."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self.run = 0  # bytes since the last LF
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.cr = self.bad_utf8 = self.long = self.delim = False
        self.csv: _CsvLines | None = None
        self.head = b""  # the first bytes (their encoding is checked)
        self.lf = self.crlf = 0  # line breaks, and those that are CRLF
        self.last_cr = False

    def feed(self, data: bytes) -> None:
        self.lf += data.count(b"\n")
        self.crlf += data.count(b"\r\n") + (self.last_cr and data[:1] == b"\n")
        self.last_cr = data.endswith(b"\r")
        if len(self.head) < 8:
            self.head += data[: 8 - len(self.head)]
        if self.csv is not None:
            self.csv.feed(data)
        self.cr = self.cr or b"\r" in data
        self.delim = self.delim or _DELIM_BYTES[:1] in data
        if not self.bad_utf8 and (not data.isascii() or self.decoder.getstate()[0]):
            try:
                self.decoder.decode(data)
            except UnicodeDecodeError:
                self.bad_utf8 = True
        first = data.find(b"\n")
        if first < 0:
            self.run += len(data)
        else:
            self.long = self.long or self.run + first > self.max_line
            if len(data) > self.max_line and not self.long:  # only with a small limit
                self.long = max(map(len, data.split(b"\n"))) > self.max_line
            self.run = len(data) - data.rfind(b"\n") - 1
        self.long = self.long or self.run > self.max_line

    def finish(self, fmt: str) -> bool:
        """Whether the input must be rewritten (`_normalize`) before DuckDB reads it."""
        try:
            self.decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            self.bad_utf8 = True
        if fmt == "csv":  # CSV: DuckDB handles CR and quotes itself, but not mixed line ends
            return self.bad_utf8 or self.long or self.mixed
        return self.bad_utf8 or self.long or self.cr or self.delim

    @property
    def mixed(self) -> bool:
        """Some lines end with CRLF and some with LF alone: DuckDB's strict CSV reader stops
        on such a file ("invalid state"); the rewrite ends every line with LF."""
        return 0 < self.crlf < self.lf


class _CsvLines:
    """The physical lines of a CSV input that start no record, found while its bytes are
    hashed: blank lines (DuckDB's reader skips them) and the lines a quoted value spanning
    lines continues on. Written to `path` as `line,duckdb_line` (the line as DuckDB numbers
    its rejects: it counts blank lines but not continued ones; empty for a continued line),
    so that staging gives each record its physical line. Vectorized per chunk (NumPy), and a
    chunk without a quote or a blank line only counts its line breaks: no per-line Python."""

    def __init__(self, quote: str, escape: str, path: Path, delimiter: str = ",") -> None:
        self.quote = quote.encode()[0] if quote else None
        self.escape = escape.encode() if escape and escape != quote else None
        self.delim = delimiter.encode()[0]
        self.path = path
        self.out: Any = None
        self.line = 1  # physical line of the next byte
        self.duck = 1  # DuckDB's number of the line the next line break ends
        self.in_quote = False  # the next byte is inside a quoted value
        self.continued = False  # the current line began inside a quoted value
        self.length = 0  # bytes of the current line so far
        self.last = -1  # the last byte seen (-1: none)
        self.escapes = 0  # escape characters just before the next byte
        self.first_gap: int | None = None
        self.run_toggles = False  # the last run of quotes opened or closed values (`_inside`)
        self.offset = 0  # bytes seen
        self.record_start = 0  # the offset and physical line of the last record's first byte
        self.record_line = 1
        self.lone_cr: int | None = None  # the first line with a lone CR outside quotes
        self.cr_pending: int | None = None  # such a CR ended the last chunk: on this line

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self.cr_pending is not None:  # the CR that ended the last chunk: a line end?
            if data[:1] != b"\n" and self.lone_cr is None:
                self.lone_cr = self.cr_pending
            self.cr_pending = None
        quoted = self.quote is not None and (self.in_quote or self.quote in data)
        if (
            not quoted
            and not self.continued
            and (self.lone_cr is not None or data.count(b"\r") == data.count(b"\r\n"))
            and b"\n\n" not in data
            and b"\n\r\n" not in data
            and not (self.length == 0 or (self.length == 1 and self.last == 13))
        ):
            breaks = data.count(b"\n")  # no quote, no blank line: only the count moves on
            self.duck += breaks
            if breaks:  # the line after the last break starts a record
                self.record_start = self.offset + data.rfind(b"\n") + 1
                self.record_line = self.line + breaks
        else:
            breaks = self._lines(data, quoted)
        self.line += breaks
        self.offset += len(data)
        cut = data.rfind(b"\n")
        self.length = len(data) - cut - 1 if cut >= 0 else self.length + len(data)
        self.last = data[-1]
        if self.escape is not None:
            tail = len(data) - len(data.rstrip(self.escape))
            self.escapes = self.escapes + tail if tail == len(data) else tail

    def _lines(self, data: bytes, quoted: bool) -> int:
        """Find the gaps among the lines that end in `data`; the number of line breaks."""
        import numpy as np

        arr = np.frombuffer(data, dtype=np.uint8)
        nl = np.flatnonzero(arr == 10)
        crs = np.flatnonzero(arr == 13) if self.lone_cr is None else nl[:0]
        if len(crs):  # CRs not before an LF (at the chunk's end: decided by the next byte)
            crs = crs[(arr[np.minimum(crs + 1, len(arr) - 1)] != 10) | (crs == len(arr) - 1)]
        at = np.concatenate((nl, crs))
        inside_at = np.zeros(len(at), dtype=bool)  # each position lies inside a quoted value
        if quoted:
            q = np.flatnonzero(arr == self.quote)
            if self.escape is not None and len(q):
                q = q[~self._escaped(arr, q)]
            inside_at = self._inside(arr, q, at)
        inside = inside_at[: len(nl)]
        lone = crs[~inside_at[len(nl) :]]
        if len(lone):
            lines = self.line + np.searchsorted(nl, lone)
            if lone[0] < len(arr) - 1:
                self.lone_cr = int(lines[0])
            else:
                self.cr_pending = int(lines[0])
        if not len(nl):
            return 0
        starts = np.flatnonzero(~inside)  # line breaks after which a record starts
        if len(starts):
            self.record_start = self.offset + int(nl[starts[-1]]) + 1
            self.record_line = self.line + int(starts[-1]) + 1
        lengths = nl - np.concatenate(([0], nl[:-1] + 1))
        lengths[0] += self.length
        before = np.where(nl > 0, arr[np.maximum(nl - 1, 0)], max(self.last, 0))
        empty = (lengths == 0) | ((lengths == 1) & (before == 13))
        continued = np.concatenate(([self.continued], inside[:-1]))
        counted = ~continued
        duck = self.duck + np.cumsum(counted) - 1
        gap = continued | empty
        if gap.any():
            lines = self.line + np.flatnonzero(gap)
            self._write(lines, np.where(continued[gap], -1, duck[gap]))
        self.duck += int(counted.sum())
        self.continued = bool(inside[-1])
        return len(nl)

    def _inside(self, arr: Any, q: Any, at: Any) -> Any:
        """Whether each position `at` (line breaks, CRs) lies inside a quoted value, as an
        RFC 4180 reader
        (DuckDB's) splits the data, given the quotes at `q` (escaped ones left out); the
        state carried to the next chunk moves on. A quote opens a value only at a field's
        start (after the delimiter or a line break, or at the input's start): elsewhere
        outside a value it is data (`a"b`), so a stray quote never makes the lines after it
        a value's continuation. Adjacent quotes act as a run: at a field's start or inside a
        value each of them opens or closes (`""`: an empty value, or an escaped quote);
        elsewhere the run is data, and ends a value it is inside of when odd (its closing
        quote, then what follows it)."""
        import numpy as np

        carried = self.in_quote
        if not len(q):
            return np.full(len(at), carried)
        first = np.concatenate(([True], np.diff(q) != 1))  # each quote that starts a run
        starts = q[first]
        ends = np.concatenate((q[np.flatnonzero(first)[1:] - 1], q[-1:]))
        odd = (ends - starts) % 2 == 0  # runs of an odd number of quotes
        prev = np.where(starts > 0, arr[np.maximum(starts - 1, 0)].astype(int), self.last)
        at_start = (prev == self.delim) | (prev == 10) | (prev == -1)
        if starts[0] == 0 and self.last == self.quote:  # a run going on from the last chunk
            at_start[0] = self.run_toggles
        # after each run: an odd run at a field's start toggles, an odd run elsewhere closes
        # (or stays out), an even run changes nothing
        closes = ~at_start & odd
        toggled = np.cumsum(at_start & odd)
        idx = np.arange(len(starts))
        last_close = np.maximum.accumulate(np.where(closes, idx, -1))
        since = toggled - np.where(last_close >= 0, toggled[np.maximum(last_close, 0)], 0)
        state = (since + np.where(last_close >= 0, 0, int(carried))) % 2 == 1
        before_last = bool(state[-2]) if len(state) > 1 else carried
        self.run_toggles = bool(at_start[-1]) or before_last
        self.in_quote = bool(state[-1])
        runs = np.searchsorted(ends, at)  # the runs that end before each position
        return np.where(runs > 0, state[np.maximum(runs - 1, 0)], carried)

    def _escaped(self, arr: Any, q: Any) -> Any:
        """Which quotes at `q` follow an odd run of escape characters (counted across
        chunks): those are data, not quotes."""
        import numpy as np

        assert self.escape is not None
        idx = np.arange(len(arr))
        # the last position at or before i that holds no escape character (-1: none)
        plain = np.maximum.accumulate(np.where(arr == self.escape[0], -1, idx))
        prev = plain[np.maximum(q - 1, 0)]
        run = np.where(prev >= 0, q - 1 - prev, q + self.escapes)
        run = np.where(q == 0, self.escapes, run)
        return run % 2 == 1

    def _write(self, lines: Any, duck: Any) -> None:
        if self.out is None:
            self.out = self.path.open("w", encoding="utf-8")
            self.out.write("line,duckdb_line\n")
            self.first_gap = int(lines[0])
        self.out.writelines(
            f"{p},{'' if d < 0 else d}\n"
            for p, d in zip(lines.tolist(), duck.tolist(), strict=True)
        )

    def close(self) -> bool:
        """Whether any line starts no record (`path` then lists them)."""
        if self.out is None:
            return False
        self.out.close()
        return True


PLACEHOLDER = b"-"  # stands for an unreadable line in a rewritten input: not JSON, one field
_DELIM_BYTES = LINE_DELIM.encode()


def _utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _normalize(p: Prepared, comp: str | None, scratch: Path, mixed: bool = False) -> None:
    """Rewrite input `p` into `scratch` as lines DuckDB reads exactly, streaming: line n of
    the copy is physical line n (ended by LF) of the input. A line that is not UTF-8 or is
    longer than MAX_LINE_SIZE bytes becomes PLACEHOLDER, its reason and length (without the
    line end) in a side CSV (`p.side`). JSONL also: CRLF -> LF, a lone CR -> TAB (both JSON
    whitespace; inside a string both invalid), a line holding LINE_DELIM -> PLACEHOLDER.
    CSV: CRLF kept, unless the line ends are `mixed` (then CRLF -> LF, also inside a quoted
    value spanning lines)."""
    out_path = scratch / f"{p.sha256[:16]}.lines"
    side_path = scratch / f"{p.sha256[:16]}.side.csv"
    jsonl = p.fmt == "jsonl"
    keep_cr = not jsonl and not mixed  # CSV lines keep a CRLF end
    limit = MAX_LINE_SIZE
    too_long = f"line longer than {limit} bytes"
    source = Path(p.read_path)
    state: dict[str, int] = {}
    chunks = _decompress(source, comp, state) if comp else _plain_chunks(source)
    line_no = 1
    with out_path.open("wb") as out, side_path.open("w", encoding="utf-8") as side:
        side.write("line,reason,bytes\n")
        if p.side is not None:  # a record torn by a cut stream (`_torn`) keeps its line
            side.writelines(Path(p.side).read_text(encoding="utf-8").splitlines(True)[1:])

        def bad(reason: str, size: int, cr: bool = False) -> None:
            nonlocal line_no
            side.write(f"{line_no},{reason},{size}\n")
            out.write(PLACEHOLDER + (b"\r\n" if cr else b"\n"))  # CSV: keep its line end
            line_no += 1

        def emit_line(line: bytes) -> None:
            nonlocal line_no
            cr = line.endswith(b"\r")
            if cr:
                line = line[:-1]
            if len(line) > limit:
                bad(too_long, len(line), cr and keep_cr)
            elif not _utf8(line):
                bad("invalid UTF-8", len(line), cr and keep_cr)
            elif jsonl and _DELIM_BYTES in line:
                bad("invalid JSON", len(line))
            elif jsonl:
                out.write(line.replace(b"\r", b"\t") + b"\n")
                line_no += 1
            else:
                out.write(line + (b"\r\n" if cr and keep_cr else b"\n"))
                line_no += 1

        def emit_block(block: bytes) -> None:  # whole lines, each ended by LF
            nonlocal line_no
            if not keep_cr and b"\r" in block:
                block = block.replace(b"\r\n", b"\n")
            clean = len(block) <= limit or max(map(len, block.split(b"\n"))) <= limit
            clean = clean and _utf8(block)
            if clean and jsonl:
                clean = b"\r" not in block and _DELIM_BYTES[:1] not in block
            if clean:
                out.write(block)
                line_no += block.count(b"\n")
            else:
                for line in block.split(b"\n")[:-1]:
                    emit_line(line)

        pending: list[bytes] = []  # the start of the current line
        pending_len = 0
        skipping = -1  # bytes so far of an over-long line being skipped
        for data in chunks:
            if skipping >= 0:
                end = data.find(b"\n")
                if end < 0:
                    skipping += len(data)
                    continue
                cr = data[:end].endswith(b"\r")
                bad(too_long, skipping + end - cr, cr and keep_cr)
                skipping, data = -1, data[end + 1 :]
            cut = data.rfind(b"\n")
            if cut < 0:
                pending.append(data)
                pending_len += len(data)
            else:
                emit_block(b"".join([*pending, data[: cut + 1]]))
                pending, pending_len = [data[cut + 1 :]], len(data) - cut - 1
            if pending_len > limit:
                skipping, pending, pending_len = pending_len, [], 0
        if skipping >= 0:
            bad(too_long, skipping)
        elif pending_len:
            emit_line(b"".join(pending))
    p.read_path = str(out_path)
    p.side = str(side_path)


def _plain_chunks(path: Path) -> Generator[bytes, None, None]:
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def resolve_inputs(
    paths: list[str] | list[Path] | str | Path,
    fmt: str | None = None,
    notes: list[str] | None = None,
) -> list[Path]:
    """Files named by paths, globs and folders, each file once (paths that reach one file,
    through `..`, an absolute path or a link, are one input: the first). A folder gives its
    log files of format `fmt` (sorted; any request-log format when None), found by suffix;
    a `.json` file only when its first line is a JSON object (a manifest is not a log). The
    files a folder holds but that are skipped, and the paths counted once, are described in
    `notes`. A file named itself is always taken (and refused or quarantined as it is)."""
    items: Sequence[str | Path] = [paths] if isinstance(paths, str | Path) else paths
    files: list[Path] = []
    first: dict[str, Path] = {}  # real path -> the path taken
    aliases: list[str] = []
    for raw in items:
        text = str(raw)
        p = Path(text)
        if p.is_file():
            found = [p]
        elif p.is_dir():
            every = sorted(f for f in p.rglob("*") if f.is_file())
            found = [f for f in every if _is_log(f, fmt)]
            skipped = [f.relative_to(p).as_posix() for f in every if f not in found]
            if skipped and notes is not None:
                kind = f"{fmt} " if fmt else ""
                notes.append(
                    f"{text}: skipped {len(skipped)} file(s) that are not {kind}logs: "
                    + ", ".join(skipped[:10])
                    + (f" (+{len(skipped) - 10} more)" if len(skipped) > 10 else "")
                )
            if not found:
                raise InputError(
                    "folder holds no log files",
                    where=text,
                    fix="point at .jsonl/.ndjson/.csv/.parquet files (plain, .gz or .zst)",
                )
        elif glob.has_magic(text):
            found = sorted(Path(f) for f in glob.glob(text, recursive=True) if Path(f).is_file())
            if not found:
                raise InputError("no file matches the pattern", where=text, fix="check the glob")
        else:
            raise InputError("file not found", where=text, fix="check the path and try again")
        for f in found:
            real = os.path.realpath(f)
            if real in first:
                if f != first[real]:
                    aliases.append(f"{f}")
                continue
            first[real] = f
            files.append(f)
    if aliases and notes is not None:
        notes.append(f"{', '.join(aliases)}: the same file as an input named before it (read once)")
    if not files:
        raise InputError("no input given", fix="name at least one log file, glob or folder")
    return files


_GATEWAY = ("jsonl", "csv", "parquet")


def _is_log(path: Path, fmt: str | None) -> bool:
    """Whether a file found in a folder is a log of format `fmt` (None: a request log)."""
    found = suffix_format(path)
    if found == "sglang" and fmt in ("vllm", "trtllm"):  # every engine's logs are .log/.txt
        found = fmt
    if found is None or found not in ((fmt,) if fmt else _GATEWAY):
        return False
    plain = [s.lower() for s in path.suffixes if s.lower() not in _COMPRESSED]
    if found == "jsonl" and plain and plain[-1] == ".json":
        return _first_line_is_object(path)
    return True


def _first_line_is_object(path: Path) -> bool:
    """Whether the first non-blank line of a (possibly compressed) file is a JSON object."""
    comp = _compression(path)
    head = b""
    try:
        chunks = _decompress(path, comp, {}) if comp else _plain_chunks(path)
        for chunk in chunks:
            head += chunk
            text = head.lstrip()
            if b"\n" in text or len(head) > MAX_LINE_SIZE:
                break
    except (InputError, OSError):
        return False
    line = head.lstrip().split(b"\n", 1)[0]
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False
