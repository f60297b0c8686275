"""The case file (`incident.toml`): one investigation, strictly validated.

`load_case(path)` returns a frozen `Case`; any unknown key, wrong type, unparsable time,
or contradictory entry is refused with a `CaseError` naming the file, the key and the line.
Relative paths are resolved against the case file's folder. `capacity_from` names files of
`[[capacity]]` tables (what `forensics capacity --out` writes): their entries follow the
inline ones, each validated as an inline entry, errors naming that file and line.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .errors import CaseError, command, decode_utf8, option
from .formats import printable
from .schema import ROLES, clean_id, spelled

POLICIES = ("pool-walkback", "time-window")
POSSIBLE = ("notice", "none")
DISCOVERERS = ("external", "internal", "partner")
DEADLINE_TO = ("individuals", "authority")


@dataclass(frozen=True)
class Source:
    """One `[[source]]`: a file, glob or folder, read through a mapping file or a profile."""

    path: str
    mapping: Path | None = None
    profile: str | None = None
    node: str | None = None
    role: str | None = None
    timezone: str | None = None  # the clock of an engine log that prints no zone (vLLM)


def sql_glob(pattern: str) -> str:
    """A `nodes` glob (the shell's `fnmatch`: `*`, `?`, `[...]`, `[!...]`; a backslash is an
    ordinary character) as a DuckDB GLOB pattern that matches the same names: DuckDB reads a
    backslash outside a class as an escape, so it is written `[\\]` there; a `[` that opens
    no class is written `[[]`. Spark's GLOB rewrite reads the result the same way."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append("[\\]")
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: fnmatch reads `[` as itself
                out.append("[[]")
            else:
                out.append(pattern[i : j + 1])
                i = j
        else:
            out.append(c)
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Capacity:
    """One `[[capacity]]` span: pool `tokens` for `role` nodes matching `nodes`, in [start, end).

    `reject_from` (optional) is the engine's admission limit: the smallest prompt it refuses
    (SGLang: min(context_len - 1, tokens - 1) - 5, e.g. 681,274 on a 681,280-token pool).
    A prompt is over the capacity from `over_from` on: reject_from, else tokens + 1.
    `models` (optional) is a shell glob on the model name: the entry applies only to the
    requests of the models it matches (None: to every model).
    """

    role: str
    nodes: str
    tokens: int
    start: datetime
    end: datetime | None = None
    reject_from: int | None = None
    models: str | None = None

    @property
    def over_from(self) -> int:
        """The smallest prompt over this capacity: reject_from, else tokens + 1."""
        return self.reject_from if self.reject_from is not None else self.tokens + 1

    @property
    def nodes_glob(self) -> str:
        """`nodes` as a SQL GLOB pattern that matches what `matches` does (see `sql_glob`)."""
        return sql_glob(self.nodes)

    @property
    def models_glob(self) -> str | None:
        """`models` as a SQL GLOB pattern (see `sql_glob`); None when the entry has none."""
        return sql_glob(self.models) if self.models is not None else None

    def applies_to(self, model: str) -> bool:
        """Whether the entry holds for requests of `model` (its `models` glob, or no glob)."""
        return self.models is None or fnmatch.fnmatchcase(model, self.models)

    def matches(self, node: str | None, at: datetime, model: str | None = None) -> bool:
        """Whether the entry holds for a request on `node` at `at` (of `model`, when given)."""
        node_ok = fnmatch.fnmatchcase(node, self.nodes) if node is not None else self.nodes == "*"
        model_ok = model is None or self.applies_to(model)
        return node_ok and model_ok and self.start <= at and (self.end is None or at < self.end)


@dataclass(frozen=True)
class Exclusion:
    """One `[[exclude]]`: accounts (listed and/or read from `file`) set aside for `reason`.
    `places` says where each account is written (`file:line`, or the case file's line of
    `accounts`), `comments` the comment lines of `file` that read like an id (`#acct-b`),
    with their places: for messages only (not part of what the case means)."""

    reason: str
    accounts: tuple[str, ...]
    file: Path | None = None
    places: tuple[str, ...] = ()
    comments: tuple[tuple[str, str], ...] = ()
    notify: bool = False  # whether its accounts get notices (they are listed either way)


AUDIENCES = ("customer", "regulator", "internal")


@dataclass(frozen=True)
class Event:
    """One `[[event]]` of the timeline; `awareness` marks the one at which the operator
    became aware of the breach (GDPR Art. 33(1): the 72 hours run from it). `audience`: who
    reads it (`customer`: the notices, `regulator`: the regulator summary, `internal`: only
    the report), one or more of `AUDIENCES`."""

    at: datetime
    label: str
    awareness: bool = False
    audience: tuple[str, ...] = ("internal",)


@dataclass(frozen=True)
class Deadline:
    """One `[notify.deadlines]` entry: notices for `jurisdiction` are due `within` of the
    awareness event, to `to` (`individuals` or `authority`); `text` as written."""

    jurisdiction: str
    within: timedelta
    text: str
    to: str = "individuals"


@dataclass(frozen=True)
class NotifySettings:
    """`[notify]`: how the notices and the regulator summary are written (docs/notices.md).

    `jurisdiction` names a column of the accounts file; `template` replaces the bundled
    notice; the texts are the responder's own Markdown, shown as written; `sender`,
    `reply_to` and `signature` make the notices e-mail messages. None changes a figure of the
    analysis.
    """

    jurisdiction: str | None = None
    template: Path | None = None
    description: str | None = None
    consequences: str | None = None
    measures: str | None = None
    contact: str | None = None
    sender: str | None = None
    reply_to: str | None = None
    signature: str | None = None
    possible: str = "notice"  # notice | none: what an account of tier possible gets
    address_columns: tuple[str, ...] | None = None  # None: the columns named like "email"
    date: datetime | None = None  # the messages' Date (None: derived from the case)
    discovery_method: tuple[tuple[str, tuple[str, ...]], ...] = ()  # VERIS, e.g. external
    deadlines: tuple[Deadline, ...] = ()


@dataclass(frozen=True)
class Baseline:
    min_prompt_tokens: int = 131072


@dataclass(frozen=True)
class Attribution:
    policy: str = "pool-walkback"
    lookback: timedelta = timedelta(minutes=30)


@dataclass(frozen=True)
class Uncertainty:
    """`[uncertainty]`: how far the evidence may be off (docs: "Evidence and uncertainty").

    `clock_skew`: how far gateway times may be off the engine's and the capacity timeline's;
    `prompt_tokens_tolerance`: how far the gateway's token count may be off the engine's."""

    clock_skew: timedelta = timedelta(0)
    prompt_tokens_tolerance: int = 0


@dataclass(frozen=True)
class Case:
    path: Path
    name: str
    models: tuple[str, ...]
    context_window: int
    success_status: tuple[int, ...]
    window_start: datetime
    window_end: datetime
    sources: tuple[Source, ...] = ()
    capacity: tuple[Capacity, ...] = ()
    exclusions: tuple[Exclusion, ...] = ()
    baseline: Baseline = field(default_factory=Baseline)
    attribution: Attribution = field(default_factory=Attribution)
    accounts_path: Path | None = None
    events: tuple[Event, ...] = ()
    notify: NotifySettings = field(default_factory=NotifySettings)
    uncertainty: Uncertainty = field(default_factory=Uncertainty)
    capacity_files: tuple[Path, ...] = ()  # capacity_from: files whose entries `capacity` holds

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def awareness(self) -> Event | None:
        """The `[[event]]` marked `awareness = true` (at most one), or None."""
        return next((e for e in self.events if e.awareness), None)

    def excluded_accounts(self) -> dict[str, str]:
        """account_id -> reason, over every `[[exclude]]` entry."""
        return {a: ex.reason for ex in self.exclusions for a in ex.accounts}

    def exclusion_places(self) -> dict[str, str]:
        """account_id -> where the case file or an exclusion file names it (`file:line`)."""
        places: dict[str, str] = {}
        for ex in self.exclusions:
            for a, place in zip(ex.accounts, ex.places, strict=True):
                places.setdefault(a, place)
        return places

    def capacity_rows(self, role: str) -> list[tuple[int, str, int, datetime, datetime | None]]:
        """(ordinal, nodes, tokens, start, end) of the entries of one role, in file order."""
        return [
            (i, c.nodes, c.tokens, c.start, c.end)
            for i, c in enumerate(self.capacity)
            if c.role == role
        ]


# --- parsing -------------------------------------------------------------------------------

_TOP = {
    "name": str,
    "models": list,
    "context_window": int,
    "success_status": list,
    "window": dict,
    "source": list,
    "capacity": list,
    "exclude": list,
    "baseline": dict,
    "attribution": dict,
    "accounts": dict,
    "event": list,
    "notify": dict,
    "uncertainty": dict,
    "capacity_from": list,
}
_SECTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "window": {"start": (str, datetime), "end": (str, datetime)},
    "source": {
        "path": str,
        "mapping": str,
        "profile": str,
        "node": str,
        "role": str,
        "timezone": str,
    },
    "capacity": {
        "role": str,
        "nodes": str,
        "models": str,
        "tokens": int,
        "reject_from": int,
        "start": (str, datetime),
        "end": (str, datetime),
    },
    "exclude": {"reason": str, "accounts": list, "file": str, "notify": bool},
    "baseline": {"min_prompt_tokens": int},
    "attribution": {"policy": str, "lookback": str},
    "accounts": {"path": str},
    "event": {"at": (str, datetime), "label": str, "awareness": bool, "audience": (str, list)},
    "notify": {
        "jurisdiction": str,
        "template": str,
        "description": str,
        "consequences": str,
        "measures": str,
        "contact": str,
        "sender": str,
        "reply_to": str,
        "signature": str,
        "possible": str,
        "address_columns": list,
        "date": (str, datetime),
        "discovery_method": dict,
        "deadlines": dict,
        # replaced by `template` (one notice per account): refused with that fix
        "recipient_template": str,
        "data_owner_template": str,
    },
    "uncertainty": {"clock_skew": str, "prompt_tokens_tolerance": int},
}
_REQUIRED_TOP = ("name", "models", "context_window", "window")
_REQUIRED = {
    "window": ("start", "end"),
    "source": ("path",),
    "capacity": ("role", "tokens", "start"),
    "exclude": ("reason",),
    "accounts": ("path",),
    "event": ("at", "label"),
}
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)\s*$")
_UNITS = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_BIGINT = 2**63
# Case-file times and durations stay where every derived time (window - lookback, chart
# margins, DuckDB intervals) is representable: no overflow at year 1 or 9999.
TIME_MIN = datetime(1970, 1, 1, tzinfo=UTC)
TIME_END = datetime(3000, 1, 1, tzinfo=UTC)
MAX_LOOKBACK = timedelta(days=36500)
MAX_CLOCK_SKEW = timedelta(days=1)  # beyond a day it is a wrong time zone, not a skew


class _Locator:
    """Finds the line of a key in the TOML text, for messages (tomllib keeps no positions)."""

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def line(self, section: str | None, index: int | None, key: str | None) -> int | None:
        start, end = 0, len(self.lines)
        if section is not None:
            headers = [
                i
                for i, ln in enumerate(self.lines)
                if re.match(rf"^\s*\[\[?\s*{re.escape(section)}\s*\]\]?\s*(#.*)?$", ln)
            ]
            pick = headers[index or 0] if headers and (index or 0) < len(headers) else None
            if pick is None:
                return None
            start = pick
            nxt = [i for i, ln in enumerate(self.lines) if i > pick and re.match(r"^\s*\[", ln)]
            end = nxt[0] if nxt else len(self.lines)
            if key is None:
                return start + 1
        if key is None:
            return None
        for i in range(start, end):
            if section is None and i > start and re.match(r"^\s*\[", self.lines[i]):
                break
            if re.match(rf"^\s*\"?{re.escape(key)}\"?\s*=", self.lines[i]):
                return i + 1
        return start + 1 if section is not None else None


class _Parser:
    def __init__(self, path: Path, text: str, of: str = ""):
        self.path = path
        self.loc = _Locator(text)
        self.of = of  # how a message names this file's entries after their index: " of x.toml"

    def fail(
        self,
        what: str,
        section: str | None = None,
        index: int | None = None,
        key: str | None = None,
        fix: str | None = None,
    ) -> CaseError:
        line = self.loc.line(section, index, key)
        name = ".".join(
            p
            for p in (
                f"{section}[{index + 1}]" if section and index is not None else section,
                key,
            )
            if p
        )
        where = f"{self.path}" + (f":{line}" if line else "")
        return CaseError(f"{name}: {what}" if name else what, where=where, fix=fix)

    def check_keys(
        self, table: dict[str, Any], section: str, index: int | None = None
    ) -> dict[str, Any]:
        allowed = _SECTIONS[section]
        for key, value in table.items():
            if key not in allowed:
                raise self.fail(
                    "unknown key",
                    section,
                    index,
                    key,
                    fix=f"allowed keys in [{section}]: {', '.join(allowed)}",
                )
            want = allowed[key]
            if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
                raise self.fail(
                    f"expected {_type_name(want)}, got {_type_name(type(value))}",
                    section,
                    index,
                    key,
                )
            self.check_int(value, section, index, key)
        for key in _REQUIRED.get(section, ()):
            if key not in table:
                raise self.fail("missing required key", section, index, key)
        return table

    def check_int(self, value: Any, section: str | None, index: int | None, key: str) -> None:
        """Integers (token counts, statuses) must fit a 64-bit signed integer, as stored."""
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, int) and not -_BIGINT <= v < _BIGINT for v in values):
            raise self.fail(
                "number too large", section, index, key, fix=f"give a value below 2^63 ({_BIGINT})"
            )

    def time(self, value: str | datetime, section: str, index: int | None, key: str) -> datetime:
        shown = value.isoformat() if isinstance(value, datetime) else value
        try:
            at: datetime | None = parse_utc(value)
        except OverflowError:  # year 1 or 9999 shifted to UTC
            at = None
        except ValueError:
            raise self.fail(
                f"unparsable time {shown!r}",
                section,
                index,
                key,
                fix="write an ISO 8601 time with an offset, e.g. 2026-09-09T14:52:00Z",
            ) from None
        if at is None or not TIME_MIN <= at < TIME_END:
            raise self.fail(
                f"time {shown} is outside {TIME_MIN:%Y-%m-%d} .. {TIME_END.year - 1}-12-31",
                section,
                index,
                key,
                fix="give the real time of the incident (request logs start in 1970)",
            )
        return at

    def parse(self, doc: dict[str, Any]) -> Case:
        for key, value in doc.items():
            if key not in _TOP:
                raise self.fail(
                    "unknown key", None, None, key, fix=f"allowed keys: {', '.join(_TOP)}"
                )
            want = _TOP[key]
            if not isinstance(value, want) or isinstance(value, bool):
                raise self.fail(
                    f"expected {_type_name(want)}, got {_type_name(type(value))}", None, None, key
                )
            self.check_int(value, None, None, key)
        for key in _REQUIRED_TOP:
            if key not in doc:
                raise self.fail("missing required key", None, None, key)

        models = doc["models"]
        if not models or not all(isinstance(m, str) and m for m in models):
            raise self.fail("must be a non-empty list of model names", None, None, "models")
        if doc["context_window"] <= 0:
            raise self.fail("must be a positive token count", None, None, "context_window")
        statuses = doc.get("success_status", [200])
        if not statuses or not all(
            isinstance(s, int) and not isinstance(s, bool) and 100 <= s <= 599 for s in statuses
        ):
            raise self.fail("must be a list of HTTP status codes", None, None, "success_status")

        window = self.check_keys(doc["window"], "window")
        w_start = self.time(window["start"], "window", None, "start")
        w_end = self.time(window["end"], "window", None, "end")
        if w_end <= w_start:
            raise self.fail("window end must be after its start", "window", None, "end")

        capacity = self.capacity(doc.get("capacity", []))
        files = self.capacity_files(doc.get("capacity_from", []), capacity)
        return Case(
            path=self.path,
            name=doc["name"],
            models=tuple(models),
            context_window=doc["context_window"],
            success_status=tuple(statuses),
            window_start=w_start,
            window_end=w_end,
            sources=tuple(self.sources(doc.get("source", []))),
            capacity=tuple(c for c, _ in capacity),
            capacity_files=tuple(files),
            exclusions=tuple(self.exclusions(doc.get("exclude", []))),
            baseline=self.baseline(doc.get("baseline")),
            attribution=self.attribution(doc.get("attribution")),
            accounts_path=self.accounts(doc.get("accounts")),
            events=tuple(self.events(doc.get("event", []))),
            notify=self.notify(doc.get("notify")),
            uncertainty=self.uncertainty(doc.get("uncertainty")),
        )

    def tables(self, items: list[Any], section: str) -> list[dict[str, Any]]:
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.fail(f"write it as [[{section}]] tables", section, i)
            out.append(self.check_keys(item, section, i))
        return out

    def resolve(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.path.parent / p

    def sources(self, items: list[Any]) -> list[Source]:
        out = []
        for i, t in enumerate(self.tables(items, "source")):
            if ("mapping" in t) == ("profile" in t):
                raise self.fail(
                    "give exactly one of mapping or profile",
                    "source",
                    i,
                    fix='e.g. mapping = "gateway.mapping.toml" or profile = "canonical"',
                )
            if "role" in t and t["role"] not in ROLES:
                raise self.fail(f"role must be one of {ROLES}", "source", i, "role")
            mapping = self.resolve(t["mapping"]) if "mapping" in t else None
            if mapping is not None and not mapping.is_file():
                raise self.fail(
                    f"mapping file not found: {mapping}",
                    "source",
                    i,
                    "mapping",
                    fix="fix the path in the case file (a relative path starts at the case "
                    "file's folder)",
                )
            out.append(
                Source(
                    path=str(self.resolve(t["path"])),
                    mapping=mapping,
                    profile=t.get("profile"),
                    node=t.get("node"),
                    role=t.get("role"),
                    timezone=t.get("timezone"),
                )
            )
        return out

    def capacity(
        self, items: list[Any], prior: list[tuple[Capacity, str]] | None = None
    ) -> list[tuple[Capacity, str]]:
        """The entries `items` (each with how messages name it) after the `prior` ones; an
        entry contradicting any of them is refused."""
        out: list[tuple[Capacity, str]] = list(prior or [])
        for i, t in enumerate(self.tables(items, "capacity")):
            if t["role"] not in ROLES:
                raise self.fail(f"role must be one of {ROLES}", "capacity", i, "role")
            if t["tokens"] <= 0:
                raise self.fail("must be a positive token count", "capacity", i, "tokens")
            reject_from = t.get("reject_from")
            if reject_from is not None and not 0 < reject_from <= t["tokens"] + 1:
                raise self.fail(
                    f"must be in 1 .. tokens + 1 ({t['tokens'] + 1}): the smallest prompt the "
                    "engine refuses, never above the pool",
                    "capacity",
                    i,
                    "reject_from",
                    fix=f"write the engine's admission limit ({command('capacity')} derives it "
                    "from the engine logs), or leave it out (over capacity then means "
                    "prompt > tokens)",
                )
            start = self.time(t["start"], "capacity", i, "start")
            end = self.time(t["end"], "capacity", i, "end") if "end" in t else None
            if end is not None and end <= start:
                raise self.fail("end must be after start", "capacity", i, "end")
            models = t.get("models")
            if models is not None and not models.strip():
                raise self.fail(
                    "must not be empty",
                    "capacity",
                    i,
                    "models",
                    fix='give a glob on the model name (e.g. "@cf/zai-org/glm-5.3"), or leave '
                    "it out for an entry that holds for every model",
                )
            cap = Capacity(
                t["role"], t.get("nodes", "*"), t["tokens"], start, end, reject_from, models
            )
            for other, label in out:
                if (
                    other.role == cap.role
                    and other.nodes == cap.nodes
                    and other.models == cap.models
                    and _overlaps(other, cap)
                    and (other.tokens, other.reject_from) != (cap.tokens, cap.reject_from)
                ):
                    same = "role and nodes" if cap.models is None else "role, nodes and models"
                    raise self.fail(
                        f"contradicts {label}: same {same}, overlapping "
                        f"time, different tokens or reject_from ({_limit(other)} vs "
                        f"{_limit(cap)})",
                        "capacity",
                        i,
                        fix="make the spans [start, end) of one node glob not overlap",
                    )
            out.append((cap, f"capacity[{i + 1}]{self.of}"))
        return out

    def capacity_files(self, names: list[Any], entries: list[tuple[Capacity, str]]) -> list[Path]:
        """`capacity_from`: read each file's `[[capacity]]` tables, validated as inline ones
        (errors name that file and line), appended to `entries` in order; the files."""
        if not all(isinstance(n, str) and n.strip() for n in names):
            raise self.fail(
                "must be a list of file paths",
                None,
                None,
                "capacity_from",
                fix='e.g. capacity_from = ["capacity.toml"]',
            )
        files = []
        for name in names:
            path = self.resolve(name)
            try:
                data = path.read_bytes()
            except OSError as e:
                raise self.fail(
                    f"cannot read {path}: {e.strerror}",
                    None,
                    None,
                    "capacity_from",
                    fix=f"give the file {command('capacity')} LOGS... {option('out')} FILE wrote "
                    "(a relative path starts at the case file's folder)",
                ) from None
            text = decode_utf8(data, str(path), CaseError)
            doc = _toml(path, text)
            sub = _Parser(path.resolve(), text, of=f" of {path.name}")
            for key in doc:
                if key != "capacity":
                    raise sub.fail(
                        "unknown key",
                        None,
                        None,
                        key,
                        fix="a capacity file holds only [[capacity]] tables",
                    )
            tables = doc.get("capacity", [])
            if not isinstance(tables, list) or not tables:
                raise sub.fail(
                    "holds no [[capacity]] table",
                    fix=f"give the file {command('capacity')} LOGS... {option('out')} FILE wrote",
                )
            entries[:] = sub.capacity(tables, entries)
            files.append(path)
        return files

    def exclusions(self, items: list[Any]) -> list[Exclusion]:
        out: list[Exclusion] = []
        seen: dict[str, tuple[str, int]] = {}
        for i, t in enumerate(self.tables(items, "exclude")):
            listed = t.get("accounts", [])
            if not all(isinstance(a, str) and clean_id(a) for a in listed):
                raise self.fail("must be a list of account ids", "exclude", i, "accounts")
            line = self.loc.line("exclude", i, "accounts")
            inline = f"{self.path}:{line} (exclude[{i + 1}].accounts)"
            accounts = [(clean_id(a), inline) for a in listed]
            comments: list[tuple[str, str]] = []
            file = None
            if "file" in t:
                file = self.resolve(t["file"])
                try:
                    text = decode_utf8(file.read_bytes(), str(file), CaseError)
                except OSError as e:
                    raise self.fail(
                        f"cannot read {file}: {e.strerror}",
                        "exclude",
                        i,
                        "file",
                        fix="give a text file with one account id a line",
                    ) from None
                read, comments = exclusion_lines(text, file)
                accounts += read
            if not accounts:
                raise self.fail("names no account (give accounts and/or file)", "exclude", i)
            for a, place in accounts:
                if a in seen and seen[a][0] != t["reason"]:
                    raise self.fail(
                        f"account {spelled(a)} is already excluded as {seen[a][0]!r} by "
                        f"exclude[{seen[a][1] + 1}]",
                        "exclude",
                        i,
                        "accounts" if place == inline else "file",
                        fix="give each account one reason",
                    )
                seen[a] = (t["reason"], i)
            places = dict(reversed(accounts))  # the first place of an account listed twice
            ids = tuple(dict.fromkeys(a for a, _ in accounts))
            out.append(
                Exclusion(
                    t["reason"],
                    ids,
                    file,
                    tuple(places[a] for a in ids),
                    tuple(comments),
                    t.get("notify", False),
                )
            )
        return out

    def baseline(self, t: dict[str, Any] | None) -> Baseline:
        if t is None:
            return Baseline()
        t = self.check_keys(t, "baseline")
        b = Baseline(**t)
        if b.min_prompt_tokens < 0:
            raise self.fail("must be >= 0", "baseline", None, "min_prompt_tokens")
        return b

    def attribution(self, t: dict[str, Any] | None) -> Attribution:
        if t is None:
            return Attribution()
        t = self.check_keys(t, "attribution")
        policy = t.get("policy", "pool-walkback")
        if policy not in POLICIES:
            raise self.fail(f"policy must be one of {POLICIES}", "attribution", None, "policy")
        lookback = Attribution.lookback
        if "lookback" in t:
            m = _DURATION.match(t["lookback"])
            if not m or int(m.group(1)) <= 0:
                raise self.fail(
                    f"unparsable duration {t['lookback']!r}",
                    "attribution",
                    None,
                    "lookback",
                    fix='write e.g. "30m", "2h", "90s"',
                )
            if int(m.group(1)) * _UNIT_MS[m.group(2)] > MAX_LOOKBACK // timedelta(milliseconds=1):
                raise self.fail(
                    f"duration {t['lookback']!r} is longer than {MAX_LOOKBACK.days} days",
                    "attribution",
                    None,
                    "lookback",
                    fix='give how long data stays in the decode pool, e.g. "30m" or "2h"',
                )
            lookback = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
        return Attribution(policy, lookback)

    def uncertainty(self, t: dict[str, Any] | None) -> Uncertainty:
        if t is None:
            return Uncertainty()
        t = self.check_keys(t, "uncertainty")
        skew = Uncertainty.clock_skew
        if "clock_skew" in t:
            m = _DURATION.match(t["clock_skew"])
            if not m:
                raise self.fail(
                    f"unparsable duration {t['clock_skew']!r}",
                    "uncertainty",
                    None,
                    "clock_skew",
                    fix='write e.g. "2m", "90s", "500ms" (or "0s" for none)',
                )
            if int(m.group(1)) * _UNIT_MS[m.group(2)] > MAX_CLOCK_SKEW // timedelta(milliseconds=1):
                raise self.fail(
                    f"duration {t['clock_skew']!r} is longer than {MAX_CLOCK_SKEW.days} day",
                    "uncertainty",
                    None,
                    "clock_skew",
                    fix='give how far the gateway\'s clock may be off, e.g. "2m"; times off by '
                    "hours are a time zone to fix in the mapping's [timestamp]",
                )
            skew = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
        tolerance = t.get("prompt_tokens_tolerance", 0)
        if tolerance < 0:
            raise self.fail("must be >= 0", "uncertainty", None, "prompt_tokens_tolerance")
        return Uncertainty(skew, tolerance)

    def accounts(self, t: dict[str, Any] | None) -> Path | None:
        if t is None:
            return None
        t = self.check_keys(t, "accounts")
        return self.resolve(t["path"])

    def events(self, items: list[Any]) -> list[Event]:
        out: list[Event] = []
        aware: int | None = None
        for i, t in enumerate(self.tables(items, "event")):
            if t.get("awareness", False):
                if aware is not None:
                    raise self.fail(
                        f"event[{aware + 1}] is already marked awareness = true",
                        "event",
                        i,
                        "awareness",
                        fix="mark only the event at which the operator became aware of the breach",
                    )
                aware = i
            audience = t.get("audience", "internal")
            audience = [audience] if isinstance(audience, str) else audience
            if not audience or not all(a in AUDIENCES for a in audience):
                raise self.fail(
                    f"must be one of {', '.join(AUDIENCES)}, or a list of them",
                    "event",
                    i,
                    "audience",
                    fix='e.g. audience = "customer" or audience = ["customer", "regulator"]',
                )
            out.append(
                Event(
                    self.time(t["at"], "event", i, "at"),
                    t["label"],
                    t.get("awareness", False),
                    tuple(dict.fromkeys(audience)),
                )
            )
        return out

    def notify(self, t: dict[str, Any] | None) -> NotifySettings:
        if t is None:
            return NotifySettings()
        t = self.check_keys(t, "notify")
        for key in ("recipient_template", "data_owner_template"):
            if key in t:
                raise self.fail(
                    "replaced by template: each account gets one notice, with a section per "
                    "role (responses it received, its requests at risk)",
                    "notify",
                    None,
                    key,
                    fix="give one template = PATH (its variables are in docs/notices.md), or "
                    "leave the key out for the bundled one",
                )
        for key, value in t.items():
            if isinstance(value, str) and not value.strip():
                raise self.fail(
                    "must not be empty",
                    "notify",
                    None,
                    key,
                    fix="give the value, or leave the key out",
                )
        for key in ("sender", "reply_to"):
            if key in t and mail_address(t[key]) is None:
                raise self.fail(
                    f"{printable(t[key], one_line=True)!r} is not an e-mail address",
                    "notify",
                    None,
                    key,
                    fix='give one address, e.g. "security@example.com" or '
                    '"Security Team <security@example.com>"',
                )
        possible = t.get("possible", "notice")
        if possible not in POSSIBLE:
            raise self.fail(
                f"must be one of {', '.join(POSSIBLE)}",
                "notify",
                None,
                "possible",
                fix='"notice": accounts the evidence leaves possible get a notice saying so; '
                '"none": they are listed in recipients.csv only',
            )
        columns = t.get("address_columns")
        if columns is not None and (
            not columns or not all(isinstance(c, str) and c.strip() for c in columns)
        ):
            raise self.fail(
                "must be a list of column names of the accounts file",
                "notify",
                None,
                "address_columns",
                fix='e.g. address_columns = ["contact_email"]',
            )

        def path(key: str) -> Path | None:
            return self.resolve(t[key]) if key in t else None

        return NotifySettings(
            jurisdiction=t.get("jurisdiction"),
            template=path("template"),
            description=t.get("description"),
            consequences=t.get("consequences"),
            measures=t.get("measures"),
            contact=t.get("contact"),
            sender=t.get("sender"),
            reply_to=t.get("reply_to"),
            signature=t.get("signature"),
            possible=possible,
            address_columns=None if columns is None else tuple(columns),
            date=self.time(t["date"], "notify", None, "date") if "date" in t else None,
            discovery_method=self.discovery(t.get("discovery_method")),
            deadlines=self.deadlines(t.get("deadlines")),
        )

    def discovery(self, t: dict[str, Any] | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """`[notify] discovery_method`: who discovered the breach, as VERIS names it: a table
        of `external`, `internal` and/or `partner`, each a list of varieties (the VERIS
        writer checks the varieties against VERIS' own lists)."""
        if t is None:
            return ()
        fix = 'e.g. discovery_method = { external = ["Security researcher"] }'
        if not t or any(k not in DISCOVERERS for k in t):
            raise self.fail(
                f"keys must be {', '.join(DISCOVERERS)}",
                "notify",
                None,
                "discovery_method",
                fix=fix,
            )
        out = []
        for by, varieties in t.items():
            if not isinstance(varieties, list) or not varieties:
                varieties = [varieties] if isinstance(varieties, str) else None
            if not varieties or not all(isinstance(v, str) and v.strip() for v in varieties):
                raise self.fail(
                    f"{by}: must be a list of VERIS discovery varieties",
                    "notify",
                    None,
                    "discovery_method",
                    fix=fix,
                )
            out.append((by, tuple(dict.fromkeys(varieties))))
        return tuple(out)

    def deadlines(self, t: dict[str, Any] | None) -> tuple[Deadline, ...]:
        """`[notify.deadlines]`: jurisdiction -> "30d" (notices to individuals due 30 days
        after the awareness event), or { within = "72h", to = "authority" }."""
        if t is None:
            return ()
        section = "notify.deadlines"
        out = []
        for name, value in t.items():
            fix = (
                f'e.g. {name} = "30d" (notices to individuals), or '
                f'{name} = {{ within = "72h", to = "authority" }}'
            )
            spec = {"within": value} if isinstance(value, str) else value
            if not isinstance(spec, dict) or set(spec) - {"within", "to"} or "within" not in spec:
                raise self.fail(
                    "must be a duration or a table (within, to)", section, None, name, fix=fix
                )
            to = spec.get("to", "individuals")
            if to not in DEADLINE_TO:
                raise self.fail(
                    f"to must be one of {', '.join(DEADLINE_TO)}", section, None, name, fix=fix
                )
            within = spec["within"]
            m = _DURATION.match(within) if isinstance(within, str) else None
            if not m or m.group(2) not in ("h", "d") or not 0 < int(m.group(1)) <= 36500:
                raise self.fail(
                    f"unparsable duration {within!r}: give hours or days",
                    section,
                    None,
                    name,
                    fix=fix,
                )
            out.append(
                Deadline(
                    name.strip(),
                    timedelta(**{_UNITS[m.group(2)]: int(m.group(1))}),
                    within.strip(),
                    to,
                )
            )
        return tuple(out)


def key_location(path: Path, section: str, key: str, index: int | None = None) -> str:
    """`PATH:LINE` of a key of a case file already loaded (for a message of a later step about
    a value it gave, e.g. a `[notify]` column the accounts file lacks); `PATH` alone when the
    key is not found. The line is found again in the file: `Case` keeps no layout."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return str(path)
    line = _Locator(text).line(section, index, key)
    return f"{path}:{line}" if line else str(path)


def _limit(c: Capacity) -> str:
    return str(c.tokens) + (f" reject_from {c.reject_from}" if c.reject_from is not None else "")


def exclusion_lines(text: str, file: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The ids of an exclusion file's text, and its comment lines that read like an id, each
    with its place (`file:line`). One id a line, as `clean_id` says; a line whose first
    character (after spaces) is `#` is a comment; blank lines are skipped. Comments go on
    their own line: an id followed by whitespace and `#` is refused (CaseError naming the
    line), never read as one id holding the comment; so is a CR inside a line (a file whose
    lines end with CR alone would read as one id, or one comment)."""
    ids: list[tuple[str, str]] = []
    comments: list[tuple[str, str]] = []
    for n, raw in enumerate(text.split("\n"), start=1):
        line = clean_id(raw.removesuffix("\r"))
        place = f"{file}:{n}"
        if "\r" in line:  # checked first: a CR-only file is one line, maybe one comment
            raise CaseError(
                "a carriage return (CR) inside the line: the file's lines end with CR alone "
                "(an old Mac export), so its ids would run together as one",
                where=place,
                fix="save it with LF or CRLF line ends, one account id a line",
            )
        if not line:
            continue
        if line.startswith("#"):
            if not any(c.isspace() for c in line):
                comments.append((line, place))
            continue
        if _TRAILING_COMMENT.search(line):
            raise CaseError(
                f"a comment after the account id {spelled(line.split()[0])}",
                where=place,
                fix="put comments on their own line (starting with #): an id holds no comment",
            )
        ids.append((line, place))
    return ids, comments


_TRAILING_COMMENT = re.compile(r"\s#")


def _overlaps(a: Capacity, b: Capacity) -> bool:
    a_end = a.end or datetime.max.replace(tzinfo=UTC)
    b_end = b.end or datetime.max.replace(tzinfo=UTC)
    return a.start < b_end and b.start < a_end


def _type_name(t: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        list: "a list",
        dict: "a table",
        datetime: "a time",
        float: "a number",
        bool: "a boolean",
    }
    if isinstance(t, tuple):
        return names.get(t[0], t[0].__name__)
    return names.get(t, t.__name__)


def parse_utc(value: str | datetime) -> datetime:
    """An ISO 8601 time (any offset or `Z`; naive means UTC) as an aware UTC datetime."""
    if isinstance(value, datetime):
        dt = value
    else:
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        # Python keeps microseconds; cut longer fractions rather than refuse them
        text = re.sub(r"(\.\d{6})\d+", r"\1", text)
        dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def load_case(path: str | Path) -> Case:
    """Read and validate a case file; raises `CaseError` naming file, key and line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise CaseError(
            "case file not found", where=str(p), fix="give the path of an incident.toml"
        ) from None
    except OSError as e:
        raise CaseError(f"cannot read case file: {e.strerror}", where=str(p)) from None
    text = decode_utf8(data, str(p), CaseError)
    return _Parser(p.resolve(), text).parse(_toml(p, text))


def _toml(path: Path, text: str) -> dict[str, Any]:
    """The TOML document `text` of `path`; CaseError naming the file and line otherwise."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # Python < 3.14 keeps the position only in the message: "... (at line 9, column 8)"
        found = re.search(r"at line (\d+)", str(e))
        line = getattr(e, "lineno", None) or (int(found.group(1)) if found else None)
        where = f"{path}:{line}" if line else str(path)
        msg = getattr(e, "msg", str(e))
        raise CaseError(f"not valid TOML: {msg}", where=where) from None


# An e-mail address as the notices' messages use one (RFC 5322 dot-atom addr-spec, ASCII, a
# domain of at least two labels), optionally after a display name: "Name <addr>".
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
ADDR_SPEC = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})+")
# `Name <addr>` or `"Name, with specials" <addr>` (a quoted name: no quote or backslash in it)
_NAMED = re.compile(r"^(?:\"([^\"\\\x00-\x1f\x7f]*)\"\s*|([^<>\"\\\x00-\x1f\x7f]*))<([^<>]*)>$")


def mail_address(text: str) -> tuple[str, str] | None:
    """(display name, address) of `addr` or `Name <addr>`, None when it is not one (a
    control character, a quoted or non-ASCII local part, a one-label domain, ...)."""
    text = text.strip()
    name = ""
    named = _NAMED.match(text)
    if named is not None:
        name, text = (named.group(1) or named.group(2) or "").strip(), named.group(3).strip()
    if len(text) > 254 or not ADDR_SPEC.fullmatch(text):
        return None
    return name, text
