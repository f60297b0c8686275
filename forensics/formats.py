"""Deterministic output: ISO 8601 UTC `Z` times, paths relative to the case, text safe to
show, CSV and JSON files with stable bytes."""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl


def iso_z(value: datetime | None, *, whole_seconds: bool = False) -> str | None:
    """An aware or naive-UTC datetime as ISO 8601 UTC with `Z`: microseconds when non-zero
    (six digits), or none with `whole_seconds` (chart axes)."""
    if value is None:
        return None
    dt = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond and not whole_seconds:
        text += f".{dt.microsecond:06d}"
    return text + "Z"


def iso(value: datetime, *, whole_seconds: bool = False) -> str:
    """`iso_z` of a time known to be there."""
    text = iso_z(value, whole_seconds=whole_seconds)
    assert text is not None
    return text


def relative_path(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> str:
    """`path` relative to `folder` in POSIX form (`../x` when outside it), so what names an
    input does not depend on where the case sits on disk; as given on another drive."""
    try:
        return Path(os.path.relpath(os.path.realpath(path), os.path.realpath(folder))).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(path).as_posix()


# Formula injection (OWASP "CSV Injection"): a spreadsheet runs a text cell that starts with
# one of these as a formula. Such a cell gets a leading ' (NUL: OWASP ASVS 1.2.10). Besides
# ASCII = + - @: every character whose NFKC form is one of them (full-width ＝＋－＠, small
# ﹦﹢﹣﹫, super/subscript ⁺⁼₊₌, U+FB29), which a spreadsheet in a CJK locale reads as the
# operator.
_OPERATORS = "=+\\-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u207a\u207c\u208a\u208c\ufb29"
FORMULA_START = f"^[{_OPERATORS}\\t\\r\\x00]"
# A cell holding `;` or a tab before one of them is a formula in a spreadsheet that splits on
# that separator (e.g. the `;`-joined request_ids): quoting does not help there, as a `;`
# inside a quoted cell of a later column starts a field of its own. Each such part gets a
# leading ' too (`r1;'=r2`), and the cell is quoted whole.
FORMULA_AFTER_SEPARATOR = f"[;\\t][{_OPERATORS}\\t\\r\\x00]"
_PART_START = re.compile(f"(?<=[;\\t])(?=[{_OPERATORS}\\t\\r\\x00])")
# Bidirectional controls (U+061C, U+200E/200F, U+202A-202E, U+2066-2069) reorder what a viewer
# shows: `acct-\u202efdp.exe` displays as `acct-exe.pdf`. Written as the escape `\u202e`.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
_BIDI_CHARS = [
    chr(c) for c in (0x61C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
]
# What makes a cell need quoting at all (as Polars quotes): separator, quote, line break.
NEEDS_QUOTES = r'[,"\n\r]'


def neutralize_parts(text: str) -> str:
    """`text` with a ' before every `;`/tab-separated part (after the first) that starts a
    formula: `r1;=r2` -> `r1;'=r2`, `a;\t=b` -> `a;'\t'=b`."""
    return _PART_START.sub("'", text)


def csv_text(column: str, *, bidi: bool = True, parts: bool = True) -> pl.Expr:
    """The CSV field of a text column as written: bidi controls as escapes (`bidi`: the
    column may hold one), formula cells prefixed with ', each `;`/tab-separated part that
    starts a formula prefixed with ' (`parts`: the column may hold one), then quoted where
    needed (RFC 4180), and also where a `;`/tab-separated part starts a formula."""
    cell = pl.col(column)
    for char in _BIDI_CHARS if bidi else ():  # shown as escapes, before the formula check
        cell = cell.str.replace_all(char, _escape_char(char), literal=True)
    separated = cell.str.contains(FORMULA_AFTER_SEPARATOR)
    cell = pl.when(cell.str.contains(FORMULA_START)).then(pl.lit("'") + cell).otherwise(cell)
    if parts:  # rare (the column holds a part starting a formula): one pass in Python
        cell = cell.map_elements(neutralize_parts, return_dtype=pl.String, skip_nulls=True)
    quote = cell.str.contains(NEEDS_QUOTES) | separated | (cell.str.len_bytes() == 0)
    quoted = pl.lit('"') + cell.str.replace_all('"', '""', literal=True) + pl.lit('"')
    return pl.when(quote).then(quoted).otherwise(cell).alias(column)


def write_csv(frame: pl.DataFrame, path: Path) -> Path:
    """Write a (small, already sorted, times already formatted) frame as CSV with a header.

    Every CSV output goes through here. Text cells (header included) are neutralized against
    formula injection and bidi reordering (`csv_text`); numeric columns are written as
    numbers, a negative one included (a number is not a formula). Normal data gives the bytes
    Polars would write.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    header = pl.DataFrame({"name": frame.columns}, schema={"name": pl.String})
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    body = frame.with_columns(
        csv_text(
            name,
            bidi=bool(frame[name].str.contains(_BIDI.pattern).any()),
            parts=bool(frame[name].str.contains(FORMULA_AFTER_SEPARATOR).any()),
        )
        for name in text
    )
    with path.open("wb") as f:
        names = header.select(
            csv_text(
                "name",
                bidi=any(_BIDI.search(c) for c in frame.columns),
                parts=any(re.search(FORMULA_AFTER_SEPARATOR, c) for c in frame.columns),
            )
        )
        f.write((",".join(names["name"]) + "\n").encode())
        body.write_csv(
            f, include_header=False, line_terminator="\n", null_value="", quote_style="never"
        )
    return path


# Characters a label must not carry into SVG (not allowed in XML 1.0: C0 controls, U+FFFE/F,
# surrogates) or into a Vega expression (U+2028/2029 end its string literals), with the other
# control characters (DEL, C1, CR, ESC: terminal sequences) that would draw as nothing, and
# the bidi controls (they reorder the text around them).
_UNPRINTABLE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff" + BIDI_CONTROLS
_KEEP_LINES = re.compile(f"[{_UNPRINTABLE}]")
_ONE_LINE = re.compile(f"[\t\n{_UNPRINTABLE}]")


# A text a chart or the report shows (an id, a name) is at most LABEL_MAX characters: a longer
# one as its first LABEL_KEEP characters, an ellipsis and 8 hex digits of its sha256, so two
# long ids stay apart. Drawing a 200,000-character id made the chart export take minutes; the
# CSVs and the case database keep every value whole.
LABEL_MAX = 120
LABEL_KEEP = 100


def short(text: str) -> str:
    """`text` cut to LABEL_MAX characters for display (see LABEL_MAX)."""
    if len(text) <= LABEL_MAX:
        return text
    return text[:LABEL_KEEP] + "\u2026" + hashlib.sha256(text.encode()).hexdigest()[:8]


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` safe to draw in a chart (SVG, Vega), an HTML page or a terminal: each control
    character, bidi control, U+2028/2029, surrogate and U+FFFE/U+FFFF as a visible escape
    (`\\x01`, `\\u202e`); tab and newline too when `one_line`. Other text is unchanged."""
    return (_ONE_LINE if one_line else _KEEP_LINES).sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    return _escape_char(match.group())


def _escape_char(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def write_json(data: dict[str, Any], path: Path) -> Path:
    """Write JSON with sorted keys, indent 2 and a trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    return path


def digest(body: Any) -> str:
    """sha256 of a JSON-ready value's canonical JSON (sorted keys, no layout): equal content,
    equal digest."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
