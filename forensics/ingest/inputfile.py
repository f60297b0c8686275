"""An input file as bytes, before DuckDB reads it: its format by name, sha256, checks of
compressed streams, and the line checks that decide whether it is rewritten first.

Everything here is streaming I/O in chunks (no file is held in memory). `prepare` returns
what `ingest` stages: the path DuckDB reads (the file itself, a decompressed prefix of a
truncated stream, or a rewrite whose line n is physical line n of the input) and, for a
rewrite, a side CSV of the lines it replaced with their reasons.
"""

from __future__ import annotations

import codecs
import glob
import hashlib
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from ..errors import InputError
from ..mapping import Mapping

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


@dataclass
class Prepared:
    path: str
    read_path: str  # what DuckDB reads (a decompressed prefix for a truncated stream)
    sha256: str
    size: int
    fmt: str
    note: str | None = None
    table: str | None = None  # the staged temp table of its records
    replaces: str | None = None  # force: the path its earlier load is recorded under
    side: str | None = None  # rewritten input (_normalize): CSV of the lines it replaced


def suffix_format(path: Path) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    return _KNOWN.get(suffixes[-1]) if suffixes else None


def _compression(path: Path) -> str | None:
    return _COMPRESSED.get(path.suffix.lower())


def prepare(path: Path, m: Mapping, scratch: Path) -> Prepared:
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
    comp = _compression(path)
    try:
        size = path.stat().st_size
        sha256 = hash_file(path, check.feed if check is not None and comp is None else None)
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
        out_bytes, truncated = _check_stream(path, comp, check)
        if truncated:
            target = scratch / f"{prepared.sha256[:16]}.prefix"
            with target.open("wb") as sink:
                _check_stream(path, comp, None, sink)
            kept = _cut_at_last_newline(target)
            prepared.read_path = str(target)
            prepared.note = (
                f"truncated {comp} stream: loaded the {kept:,} decompressed bytes before the "
                "break; the partial record at the break was not read"
            )
            out_bytes = kept
        if out_bytes == 0:
            raise InputError(
                "the file is empty once decompressed", where=where, fix="check the export"
            )
    if check is not None and check.finish(fmt):
        _normalize(prepared, comp if prepared.read_path == where else None, scratch)
    return prepared


def hash_file(path: Path, feed: Callable[[bytes], None] | None = None) -> str:
    """The sha256 of a file, read once in chunks (each also given to `feed`)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            if feed is not None:
                feed(chunk)
    return digest.hexdigest()


def _check_stream(
    path: Path, comp: str, check: _LineCheck | None = None, sink: Any = None
) -> tuple[int, bool]:
    """Decompress `path` in chunks (to `check` and `sink`): (bytes out, truncated?).
    Corrupt data -> InputError."""
    total = 0
    state: dict[str, bool] = {}
    for data in _decompress(path, comp, state):
        total += len(data)
        if check is not None:
            check.feed(data)
        if sink is not None:
            sink.write(data)
    return total, state["truncated"]


def _decompress(path: Path, comp: str, state: dict[str, bool]) -> Iterator[bytes]:
    """The decompressed bytes of `path` in chunks; then state["truncated"] says whether the
    stream broke off inside a member/frame. Corrupt data -> InputError."""
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


def _cut_at_last_newline(path: Path) -> int:
    """Truncate a file after its last newline; the size kept."""
    size = path.stat().st_size
    with path.open("rb+") as fh:
        pos = size
        while pos > 0:
            step = min(_CHUNK, pos)
            fh.seek(pos - step)
            block = fh.read(step)
            idx = block.rfind(b"\n")
            if idx >= 0:
                keep = pos - step + idx + 1
                fh.truncate(keep)
                return keep
            pos -= step
        fh.truncate(0)
        return 0


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

    def feed(self, data: bytes) -> None:
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
        if fmt == "csv":  # CSV: DuckDB handles CR and quotes itself
            return self.bad_utf8 or self.long
        return self.bad_utf8 or self.long or self.cr or self.delim


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


def _normalize(p: Prepared, comp: str | None, scratch: Path) -> None:
    """Rewrite input `p` into `scratch` as lines DuckDB reads exactly, streaming: line n of
    the copy is physical line n (ended by LF) of the input. A line that is not UTF-8 or is
    longer than MAX_LINE_SIZE bytes becomes PLACEHOLDER, its reason and length (without the
    line end) in a side CSV (`p.side`). JSONL also: CRLF -> LF, a lone CR -> TAB (both JSON
    whitespace; inside a string both invalid), a line holding LINE_DELIM -> PLACEHOLDER."""
    out_path = scratch / f"{p.sha256[:16]}.lines"
    side_path = scratch / f"{p.sha256[:16]}.side.csv"
    jsonl = p.fmt == "jsonl"
    limit = MAX_LINE_SIZE
    too_long = f"line longer than {limit} bytes"
    source = Path(p.read_path)
    state: dict[str, bool] = {}
    chunks = _decompress(source, comp, state) if comp else _plain_chunks(source)
    line_no = 1
    with out_path.open("wb") as out, side_path.open("w", encoding="utf-8") as side:
        side.write("line,reason,bytes\n")

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
                bad(too_long, len(line), cr and not jsonl)
            elif not _utf8(line):
                bad("invalid UTF-8", len(line), cr and not jsonl)
            elif jsonl and _DELIM_BYTES in line:
                bad("invalid JSON", len(line))
            elif jsonl:
                out.write(line.replace(b"\r", b"\t") + b"\n")
                line_no += 1
            else:
                out.write(line + (b"\r\n" if cr else b"\n"))
                line_no += 1

        def emit_block(block: bytes) -> None:  # whole lines, each ended by LF
            nonlocal line_no
            if jsonl and b"\r" in block:
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
                bad(too_long, skipping + end - cr, cr and not jsonl)
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


def _plain_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def resolve_inputs(paths: list[str] | list[Path] | str | Path) -> list[Path]:
    """Files named by paths, globs and folders (folders: their log files, sorted)."""
    items: Sequence[str | Path] = [paths] if isinstance(paths, str | Path) else paths
    files: list[Path] = []
    for raw in items:
        text = str(raw)
        p = Path(text)
        if p.is_file():
            found = [p]
        elif p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and suffix_format(f) is not None)
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
            if f not in files:
                files.append(f)
    if not files:
        raise InputError("no input given", fix="name at least one log file, glob or folder")
    return files
