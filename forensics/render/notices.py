"""Markdown notices: one per account, and the regulator summary (docs/notices.md).

Pure rendering: `forensics.render.notify` reads the analysis tables and hands the rows here;
this module turns them into Markdown through Jinja2 templates (bundled in `templates/`, or
the case file's `[notify] recipient_template` / `data_owner_template`) and names the files.

- **Data is escaped, never Markdown.** Every string a template prints goes through `md`
  (Jinja2's `finalize`) unless it is a `Markdown` value: text the toolkit formats itself
  (times, counts) or the responder's own `[notify]` texts. `md` shows control characters,
  U+2028/2029 and bidirectional controls as visible escapes (`\\x01`, `\\u202e`), puts a
  backslash before every ASCII punctuation character that can start or end Markdown syntax
  (links, images, HTML, emphasis, code, tables, autolinks, math) and before a leading `-`,
  so an account id, request id or contact value renders as its own text and cannot open a
  link, an HTML tag or a new block. Backslash escapes are CommonMark, so any renderer shows
  the text itself.
- **File names come from ids safely** (`notice_file_name`): a stem of at most 60 of
  `[A-Za-z0-9_-]` (every other run of characters is `_`; leading and trailing `_`/`-` cut;
  `account` when nothing is left), then `-` and the first 16 hex digits of the sha256 of the
  exact id (UTF-8). No name holds a path separator, a dot before `.md`, a control character
  or a Windows device name (`CON-...` is not `CON`), and two ids (even differing only by
  case) never share a name, on a case-insensitive file system too.
- Templates run in Jinja2's sandbox with undefined names as errors; an error in one is one
  line naming the template file and its line.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import jinja2.sandbox

from ..case import Case
from ..errors import InputError
from ..formats import iso, printable

STEM_CHARS = 60
HASH_CHARS = 16
AWARENESS_HOURS = 72
NOTICE_NAME = re.compile(r"-[0-9a-f]{16}\.md$")
RECIPIENT_TEMPLATE = "notice_recipient.md.j2"
DATA_OWNER_TEMPLATE = "notice_data_owner.md.j2"
REGULATOR_TEMPLATE = "regulator_summary.md.j2"

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")
# Bidirectional controls reorder the text around them when shown ("Trojan Source").
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# ASCII punctuation that starts or ends Markdown syntax (CommonMark, GFM tables, strike-
# through and autolinks, math): escaped everywhere in a value. `-` only at its start (a
# list item); `,` `;` `?` `%` `/` `'` `"` never start anything once `[`, `(` and `<` are
# escaped, and are kept as they are for legibility.
_MD_SYNTAX = re.compile(r"([\\`*_\[\]<>&|~$!(){}^#+=:@.])")
_ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")


class Markdown(str):
    """Text that is Markdown already: shown as it is by the templates (`md` escapes the rest)."""


@functools.lru_cache(maxsize=1 << 16)
def md(text: str) -> str:
    """`text` (data: an id, a contact, a label) as Markdown that renders as that text.
    Cached: a case's notices repeat the same models, nodes and labels thousands of times."""
    shown = printable(text, one_line=True)
    shown = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", shown)
    escaped = _MD_SYNTAX.sub(r"\\\1", shown)
    return "\\" + escaped if escaped.startswith("-") else escaped


def time_text(value: str | None) -> str | None:
    """A time the analysis formatted (ISO 8601 UTC `Z`) as Markdown; anything else stays data."""
    if value is None:
        return None
    return Markdown(value) if _ISO_TIME.match(value) else value


def notice_file_name(account_id: str) -> str:
    """The notice file's name for an account (see the module doc): safe on every file
    system, unique per exact id."""
    stem = _UNSAFE_NAME.sub("_", account_id)[:STEM_CHARS].strip("_-") or "account"
    digest = hashlib.sha256(account_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{stem}-{digest[:HASH_CHARS]}.md"


def deadline(at: datetime) -> str:
    """The 72-hour mark after the operator became aware (GDPR Art. 33(1))."""
    return iso(at + timedelta(hours=AWARENESS_HOURS))


# --- templates ---------------------------------------------------------------------------


class Template:
    """A notice template: bundled, or a file the case file names (`where`: its key's place)."""

    def __init__(self, path: Path | None, bundled: str, where: str | None = None):
        self.name = str(path) if path is not None else bundled
        if path is None:
            # the bundled templates are ours: no sandbox (its check of every attribute a
            # template reads was about a fifth of rendering 21,000 notices)
            env = _environment(
                jinja2.PackageLoader("forensics.render", "templates"), sandboxed=False
            )
            self.template = env.get_template(bundled)
            self.file: str | None = self.template.filename
            return
        self.file = str(path)
        env = _environment(jinja2.FileSystemLoader(str(path.parent)))
        fix = "give the path of a Jinja2 template, relative to the case file"
        if not path.is_file():
            raise InputError(f"template file not found: {path}", where=where or str(path), fix=fix)
        try:
            self.template = env.get_template(path.name)
        except jinja2.TemplateSyntaxError as e:
            raise _template_error(e, f"{e.filename or path}:{e.lineno}") from None
        except UnicodeDecodeError:
            raise InputError(
                "the template is not UTF-8 text", where=str(path), fix="save it as UTF-8"
            ) from None
        except jinja2.TemplateError as e:  # an include or import that is missing
            raise _template_error(e, str(path)) from None

    def render(self, context: Mapping[str, Any]) -> str:
        """The notice text (ends with one newline); a failure is one line naming the line."""
        try:
            text = self.template.render(context)
        except jinja2.TemplateSyntaxError as e:  # in an included template
            raise _template_error(e, f"{e.filename or self.name}:{e.lineno}") from None
        except Exception as e:
            line = _template_line(e.__traceback__, self.file)
            where = f"{self.name}:{line}" if line else self.name
            raise _template_error(e, where) from None
        return text.rstrip("\n") + "\n"


def _template_error(e: Exception, where: str) -> InputError:
    what = str(getattr(e, "message", None) or e).splitlines()[0] if str(e) else type(e).__name__
    return InputError(
        f"template error: {printable(what, one_line=True)}",
        where=where,
        fix="fix the template (its variables are listed in docs/notices.md)",
    )


def _template_line(tb: TracebackType | None, filename: str | None) -> int | None:
    """The template line a render error happened on (Jinja2 maps template frames to it)."""
    line = None
    for frame in _frames(tb):
        if filename is not None and frame.tb_frame.f_code.co_filename == filename:
            line = frame.tb_lineno
    return line


def _frames(tb: TracebackType | None) -> Iterator[TracebackType]:
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _environment(loader: jinja2.BaseLoader, sandboxed: bool = True) -> jinja2.Environment:
    """A Jinja2 environment for notices: a case file's own templates run sandboxed."""
    kind = jinja2.sandbox.SandboxedEnvironment if sandboxed else jinja2.Environment
    env = kind(
        loader=loader,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["n"] = _count
    return env


def _finalize(value: Any) -> Any:
    """What a template prints: Markdown as is, numbers as digits, any other text escaped."""
    if value is None:
        return ""
    if isinstance(value, Markdown):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(value)
    return md(str(value))


def _count(value: Any) -> Any:
    """A count with thousands separators (`6,074`); text and None pass through."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Markdown(f"{value:,}")
    return value


# --- what the templates see (docs/notices.md lists every name) ----------------------------


def case_context(case: Case) -> dict[str, Any]:
    """What every notice and the regulator summary share: the case, its timeline, the
    awareness event and the 72-hour mark, the responder's [notify] texts."""
    aware = case.awareness
    texts = case.notify
    return {
        "case": {
            "name": case.name,
            "file": case.path.name,
            "models": list(case.models),
            "window_start": Markdown(iso(case.window_start)),
            "window_end": Markdown(iso(case.window_end)),
            "context_window": case.context_window,
        },
        "events": [
            {"at": Markdown(iso(e.at)), "label": e.label, "awareness": e.awareness}
            for e in sorted(case.events, key=lambda e: (e.at, e.label))
        ],
        "awareness": None
        if aware is None
        else {
            "at": Markdown(iso(aware.at)),
            "label": aware.label,
            "deadline": Markdown(deadline(aware.at)),
        },
        "notify": {
            key: None if value is None else Markdown(value.strip("\r\n"))
            for key, value in (
                ("description", texts.description),
                ("consequences", texts.consequences),
                ("measures", texts.measures),
                ("contact", texts.contact),
            )
        },
    }


def account_context(row: Mapping[str, Any], contacts: list[str]) -> dict[str, Any]:
    """The account of a list row: its id and the contact columns that hold a value."""
    return {
        "id": row["account_id"],
        "contacts": [
            {"column": column, "value": row[column]}
            for column in contacts
            if row.get(column) is not None
        ],
    }


def delivery(completion_tokens: int | None) -> str:
    """What reached the client: delivered (> 0 tokens), empty (0) or unknown (no count)."""
    if completion_tokens is None:
        return "unknown"
    return "delivered" if completion_tokens > 0 else "empty"


def recipient_context(
    shared: Mapping[str, Any],
    row: Mapping[str, Any],
    contacts: list[str],
    responses: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """A recipient's notice: its recipients.csv row and its exposed responses (with whether
    the log records each one's status, i.e. its delivery), and how many lack that record."""
    return {
        **shared,
        "kind": "recipient",
        "account": account_context(row, contacts),
        "row": {key: _value(row[key]) for key in row if key not in contacts},
        "responses": [
            {
                **{key: _value(value) for key, value in r.items() if key != "account_id"},
                "delivery": delivery(r["completion_tokens"]),
            }
            for r in responses
        ],
        "delivery_unrecorded": sum(1 for r in responses if not r.get("status_recorded", True)),
    }


def data_owner_context(
    shared: Mapping[str, Any],
    row: Mapping[str, Any],
    contacts: list[str],
    requests: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """A data owner's notice: its data_owners.csv row and its requests at risk."""
    return {
        **shared,
        "kind": "data_owner",
        "account": account_context(row, contacts),
        "row": {key: _value(row[key]) for key in row if key not in contacts},
        "requests": [
            {key: _value(value) for key, value in r.items() if key != "account_id"}
            for r in requests
        ],
    }


def _value(value: Any) -> Any:
    """A list cell for a template: times the analysis formatted as Markdown, the rest as is."""
    return time_text(value) if isinstance(value, str) else value


def regulator_context(
    shared: Mapping[str, Any],
    summary: Mapping[str, Any],
    excluded_accounts: int,
    jurisdictions: Sequence[Mapping[str, Any]] | None,
    jurisdiction_column: str | None,
) -> dict[str, Any]:
    """The regulator summary: every figure from summary.json (the analysis), the excluded
    accounts and jurisdictions from the lists' tables."""
    exclusions = summary.get("exclusions") or {}
    return {
        **shared,
        "figures": {
            "exposure_count": summary["exposure_count"],
            "affected_accounts": summary["affected_accounts"],
            "delivery": summary.get("exposed_by_delivery"),
            "range": summary.get("exposure_range"),
            "data_owners": summary.get("data_owners"),
            "exclusions_applied": bool(exclusions.get("applied", True)),
            "excluded_by_reason": [
                {"reason": reason, "requests": n}
                for reason, n in sorted((summary.get("excluded_by_reason") or {}).items())
            ],
            "excluded_requests": sum((summary.get("excluded_by_reason") or {}).values()),
            "excluded_accounts": excluded_accounts,
            "verdict": summary.get("verdict"),
            "flagged_accounts": len(summary.get("flagged_accounts") or []),
        },
        "jurisdictions": jurisdictions,
        "jurisdiction_column": jurisdiction_column,
    }
