"""The shared vocabulary of a case database: the canonical request record (`requests`), the
bookkeeping tables (`inputs`, `quarantine`), the per-input accounting, server roles and bands."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    sql_type: str
    required: bool


# Order is the column order of the `requests` table.
REQUEST_FIELDS: tuple[Field, ...] = (
    Field("request_id", "VARCHAR", True),
    Field("ts", "TIMESTAMPTZ", True),
    Field("account_id", "VARCHAR", True),
    Field("model", "VARCHAR", True),
    Field("prompt_tokens", "BIGINT", True),
    Field("completion_tokens", "BIGINT", False),
    Field("status", "INTEGER", False),
    Field("prefill_node", "VARCHAR", False),
    Field("decode_node", "VARCHAR", False),
    Field("ts_end", "TIMESTAMPTZ", False),
)
PROVENANCE_FIELDS: tuple[Field, ...] = (
    Field("source", "VARCHAR", True),
    Field("source_row", "BIGINT", True),
)
MAPPABLE = {f.name for f in REQUEST_FIELDS}
ID_FIELDS = ("request_id", "account_id")
# Bounds of a loaded value (docs "Trust model"); a record beyond one is quarantined with its
# reason. Text fields (ids, model, nodes): at most MAX_TEXT_BYTES bytes of UTF-8 (request ids
# are UUID-like, ~40 bytes; a 200,000-character id is garbage or an attack). Token counts:
# below MAX_TOKENS = 2^40 (~1.1e12; context windows are ~1e7), so prompt + completion of
# 2^22 requests still sums within BIGINT (the analysis sums in DECIMAL(38) anyway).
MAX_TEXT_BYTES = 1024
MAX_TOKENS = 2**40
MAX_TOKENS_TEXT = "2^40"


def clean_id(text: str) -> str:
    """The one rule for an id (request or account) read from any source: logs, case files,
    exclusion files, the accounts file. Leading and trailing spaces (U+0020) are not part of
    it; nothing else is changed (no case folding, no Unicode normalization, no other
    whitespace): ids compare code point for code point. Ingest applies the same rule in SQL
    (`trim`, which removes spaces only). Text that is empty after it is no id. Where a file is
    read, its decoding comes first: UTF-8 with a leading byte order mark dropped, lines ended
    by LF or CRLF."""
    return text.strip(" ")


# Letters of other scripts that Unicode's confusables data (UTS #39) gives as one Latin letter:
# `\u0430cct` (Cyrillic a) reads as `acct`. Cyrillic and Greek, capitals and small letters.
_LOOKALIKES = str.maketrans(
    # Cyrillic small a e o p c y x s i j h d q w v i; capitals A B E K M H O P C T Y X S I J Y I V
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u04bb\u0501\u051b\u051d\u0475\u04cf"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0405\u0406\u0408\u04ae"
    "\u04c0\u0474"
    # Greek small a o p v i u c j; capitals A B E Z H I K M N O P T Y X
    "\u03b1\u03bf\u03c1\u03bd\u03b9\u03c5\u03f2\u03f3"
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
    "aeopcyxsijhdqwviABEKMHOPCTYXSIJYIVaopviucjABEZHIKMNOPTYX",
)
# Quotation marks a spreadsheet or a chat client puts around a pasted id
_QUOTES = "\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a"
# What makes two ids look alike though the rule keeps them apart, in the order tried
_NEAR = (
    (
        "surrounding whitespace, quotes or invisible characters",
        lambda t: _strip_invisible(t),
    ),
    (
        "whitespace or invisible characters inside",
        lambda t: "".join(c for c in t if not _invisible(c)),
    ),
    ("Unicode normalization (NFC)", lambda t: unicodedata.normalize("NFC", t)),
    (
        "compatibility forms (NFKC: full-width letters, ligatures)",
        lambda t: unicodedata.normalize("NFKC", t),
    ),
    (
        "look-alike letters of another script (Cyrillic, Greek)",
        lambda t: t.translate(_LOOKALIKES),
    ),
    (
        "look-alike hyphens or digits of another script",
        lambda t: "".join(_ascii_alike(c) for c in t),
    ),
    ("letter case", lambda t: t.casefold()),
)
# Dashes that read as `-`: hyphen, non-breaking hyphen, figure dash, en dash, minus sign,
# small and full-width hyphen-minus
_HYPHENS = frozenset("\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d")
# Where a text that names no id may hold several: `a,b`, `a;b`, `a<TAB>b`, `a b`, a CR inside
_JOINED = re.compile(r"[,;\s]+")


def _strip_invisible(text: str) -> str:
    """`text` without leading/trailing whitespace, quotation marks, controls and format
    characters (U+FEFF, zero-width spaces)."""
    start, end = 0, len(text)
    while start < end and (_invisible(text[start]) or text[start] in _QUOTES):
        start += 1
    while end > start and (_invisible(text[end - 1]) or text[end - 1] in _QUOTES):
        end -= 1
    return text[start:end]


def _ascii_alike(char: str) -> str:
    """`-` for a dash that reads as one (`_HYPHENS`), the ASCII digit for a decimal digit of
    another script (Unicode Nd: `\u0661` Arabic-Indic one reads as `1`), else `char`."""
    if char in _HYPHENS:
        return "-"
    if not char.isascii() and unicodedata.category(char) == "Nd":
        return str(unicodedata.decimal(char))
    return char


def _invisible(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zs")


def _near_forms(text: str) -> list[str]:
    """`text` after each step of _NEAR in turn (each step on the previous one's result)."""
    forms = []
    for _, step in _NEAR:
        text = step(text)
        forms.append(text)
    return forms


def near_key(text: str) -> str:
    """What `text` is once every difference `near_spellings` sets aside is set aside: two ids
    with the same key look alike."""
    return _near_forms(text)[-1]


def near_spellings(text: str, ids: Iterable[str]) -> list[tuple[str, str]]:
    """The ids of `ids` (other than `text`) that equal `text` once whitespace, quotes and
    invisible characters at the ends, whitespace and invisible characters inside, Unicode
    normalization (NFC, then NFKC), look-alike letters of other scripts, look-alike hyphens
    and non-ASCII digits, and letter case are set aside, each with what sets them apart (the
    steps that made them equal)."""
    mine = _near_forms(text)
    found = []
    for other in ids:
        if other == text:
            continue
        theirs = _near_forms(other)
        if theirs[-1] != mine[-1]:
            continue
        level = next(i for i in range(len(_NEAR)) if theirs[i] == mine[i])
        why = [
            name
            for i, (name, _) in enumerate(_NEAR[: level + 1])
            if (theirs[i], mine[i]) != ((theirs[i - 1], mine[i - 1]) if i else (other, text))
        ]
        found.append((other, " and ".join(why)))
    return found


def joined_ids(text: str, ids: Iterable[str]) -> list[str]:
    """When `text` reads as several ids joined by `,`, `;` or whitespace (`a,b`, `a<TAB>b`, a
    CR inside): the ids of `ids` that its parts name, exactly or as `near_spellings` allow;
    otherwise none."""
    parts = [p for p in (_strip_invisible(p) for p in _JOINED.split(text)) if p]
    if len(parts) < 2:
        return []
    wanted = {near_key(p) for p in parts}
    return sorted({i for i in ids if i in parts or near_key(i) in wanted})


def spelled(text: str) -> str:
    """An id quoted so that two spellings that look alike read differently: printable ASCII
    as it is (a backslash doubled), every other character as its code point (`\\u00e9`,
    `\\U0001f600`)."""
    return "'" + "".join(_code_point(c) for c in text) + "'"


def shown_id(text: str) -> str:
    """An id in a message: as it is when it is printable ASCII without a space, comma or
    quote (nothing to mistake), else `spelled`."""
    if text and all("!" <= c <= "~" and c not in ",'\"" for c in text):
        return text
    return spelled(text)


def _code_point(char: str) -> str:
    if char == "\\":
        return "\\\\"
    if " " <= char <= "~":
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


REQUIRED = tuple(f.name for f in REQUEST_FIELDS if f.required)
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens")
TIME_FIELDS = ("ts", "ts_end")
DEFAULT_STATUS = 200

# request_id is unique, but by the ingest SQL (duplicates and conflicts are classified before
# loading), not by a PRIMARY KEY: its index on tens of millions of keys made ingest several
# times slower and spilled gigabytes
REQUESTS_DDL = (
    "CREATE TABLE IF NOT EXISTS requests ("
    + ", ".join(f"{f.name} {f.sql_type}" for f in REQUEST_FIELDS + PROVENANCE_FIELDS)
    + ", extra JSON)"
)
INPUTS_DDL = (
    "CREATE TABLE IF NOT EXISTS inputs (path VARCHAR, sha256 VARCHAR PRIMARY KEY, bytes BIGINT, "
    "rows_read BIGINT, rows_loaded BIGINT, duplicates BIGINT, quarantined BIGINT, "
    "format VARCHAR, note VARCHAR, mapping_sha256 VARCHAR, fields VARCHAR)"
)
# mapping_sha256 (forensics.integrity.mapping_digest of the mapping an input was loaded with;
# NULL for engine logs and in databases written before it was recorded) is added to older
# databases by the next ingest
INPUTS_MIGRATE = "ALTER TABLE inputs ADD COLUMN IF NOT EXISTS mapping_sha256 VARCHAR"
# fields: the canonical fields a request-log input's mapping provides, comma-separated in
# REQUEST_FIELDS order (what the analysis must not take for granted: a field left unmapped
# is filled with a default, listed in summary.json `assumptions`); NULL for engine logs and
# in databases written before it was recorded (added by the next ingest)
INPUTS_MIGRATE_FIELDS = "ALTER TABLE inputs ADD COLUMN IF NOT EXISTS fields VARCHAR"
# Records of an input not loaded because they duplicate records of another input (loaded
# before it, or earlier in its run): per input and the input whose records they duplicate,
# how many. A case that leaves that other input out would otherwise lose them unseen
# (`forensics.analysis.scope`). Absent in databases written before it was recorded.
INPUT_DUPLICATES_DDL = (
    "CREATE TABLE IF NOT EXISTS input_duplicates "
    "(path VARCHAR, sha256 VARCHAR, of_path VARCHAR, records BIGINT)"
)
QUARANTINE_DDL = (
    "CREATE TABLE IF NOT EXISTS quarantine "
    "(source VARCHAR, row BIGINT, reason VARCHAR, raw VARCHAR)"
)
# The values of each quarantined request-log record that could be read as mapped, typed
# (NULL where the value is missing, unmapped or failed its own check): what the exposure
# range needs to tell whether a quarantined record could have been an exposed response
# (`forensics.analysis.uncertainty`). One row per quarantine row of a request log.
QUARANTINE_VALUES_DDL = (
    "CREATE TABLE IF NOT EXISTS quarantine_values "
    "(source VARCHAR, row BIGINT, request_id VARCHAR, ts TIMESTAMPTZ, account_id VARCHAR, "
    "model VARCHAR, prompt_tokens BIGINT, status INTEGER, prefill_node VARCHAR)"
)


@dataclass
class InputStats:
    """The accounting of one input file (one row of `inputs`): rows_read = rows_loaded +
    duplicates + quarantined."""

    path: str
    sha256: str
    bytes: int
    rows_read: int = 0
    rows_loaded: int = 0
    duplicates: int = 0
    quarantined: int = 0
    format: str = ""
    note: str | None = None
    # the top quarantine reasons of this load, (reason, records), most frequent first
    reasons: tuple[tuple[str, int], ...] = ()


INGEST_KEYS = ("rows_read", "rows_loaded", "duplicates", "quarantined")

# The roles of an inference server in prefill/decode disaggregated serving.
ROLES = ("prefill", "decode")

# The bands of a request of the case's models inside the window (SPEC "Analyses"), in the
# order summary.json lists them, with what each means.
BAND_MEANINGS = {
    "fits": "fits the pool",
    "exposed": "exposed (over capacity, answered)",
    "excluded": "excluded account (same condition)",
    "over_capacity_failed": "over capacity, error returned",
    "over_context": "over the context window",
    "unknown_capacity": "no capacity entry matched",
}
BANDS = tuple(BAND_MEANINGS)
