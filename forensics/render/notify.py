"""The customer-notification lists, notices and regulator summary under OUT/notify/
(docs/notices.md).

`write_lists(engine, case, out_dir, summary)` needs `bands` and `data_owners` (from analyze)
and writes, sorted by account_id, with every column of the case's accounts file joined on
account_id: recipients.csv, data_owners.csv, excluded.csv; jurisdictions.csv when the case
names a `[notify] jurisdiction` column; one Markdown notice per recipient and per data owner
under notices/ with notices/index.csv; regulator_summary.md when given the summary; and
README.md, the column dictionary. An affected or data-owner account missing from the
accounts file is still listed (empty contacts) and warned about.

Each CSV's columns are a `ListFile`: the one table of column -> meaning that both selects
and orders the columns the writer writes and writes README.md, so the two cannot drift.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..case import Case, key_location
from ..engines import SQLEngine
from ..errors import AnalysisError, InputError, command, decode_utf8
from ..formats import printable, write_csv
from ..schema import clean_id
from . import notices
from .notices import md

MAX_IDS_IN_WARNING = 10
UNKNOWN_JURISDICTION = "(unknown)"
NOTICES = "notices"
KINDS = {"recipient": "recipients", "data_owner": "data_owners"}  # kind -> notice folder


@dataclass(frozen=True)
class ListFile:
    """One CSV under notify/: what a row is, and its columns in order with their meaning.
    `contacts`: the accounts file's columns follow, as that file names them."""

    name: str
    about: str
    columns: dict[str, str]
    contacts: bool = False

    def select(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The frame's columns in the file's order (then the contact columns)."""
        missing = [c for c in self.columns if c not in frame.columns]
        extra = [c for c in frame.columns if c not in self.columns]
        if missing or (extra and not self.contacts):  # the query and the table disagree: a bug
            raise RuntimeError(f"{self.name}: columns {missing} missing, {extra} unexpected")
        return frame.select([*self.columns, *extra])

    def contact_columns(self, frame: pl.DataFrame) -> list[str]:
        return [c for c in frame.columns if c not in self.columns]


RECIPIENTS = ListFile(
    "recipients.csv",
    "One row per affected account: an account with at least one exposed response (a prompt "
    "above the prefill KV pool in force, answered with a success status; band `exposed`). "
    "Sorted by account_id.",
    {
        "account_id": "the account, as the logs spell it",
        "responses": "its exposed responses",
        "first_exposed_at": "arrival time of its first exposed response (ISO 8601 UTC)",
        "last_exposed_at": "arrival time of its last exposed response (ISO 8601 UTC)",
        "request_ids": "the request ids of its exposed responses, sorted, `;`-separated; "
        "inside an id `\\` is written `\\\\` and `;` is written `\\;`",
        "completion_tokens": "tokens generated for it across its exposed responses (content "
        "that reached the client); empty when the log gives no count for one of them",
        "empty_responses": "exposed responses for which nothing was generated "
        "(completion_tokens = 0)",
        "unknown_responses": "exposed responses whose log gives no completion_tokens (the "
        "mapping names none, or the record has none): whether content was delivered is "
        "unknown",
    },
    contacts=True,
)
DATA_OWNERS = ListFile(
    "data_owners.csv",
    "One row per data-owner account: an account whose requests sat in a decode pool that an "
    "exposed response of another account could have read (policy in summary.json "
    "`data_owners`). Excluded accounts are listed too. Sorted by account_id.",
    {
        "account_id": "the account, as the logs spell it",
        "requests_at_risk": "its requests that an exposed response could have read",
        "exposures": "exposed responses (of other accounts) that could have read at least one "
        "of them; it can exceed requests_at_risk, as one request can be read by several",
        "first_at": "end time of its first request at risk (ISO 8601 UTC)",
        "last_at": "end time of its last request at risk (ISO 8601 UTC)",
        "excluded_reason": "the case file's exclusion reason for the account; empty when it is "
        "not excluded",
    },
    contacts=True,
)
EXCLUDED = ListFile(
    "excluded.csv",
    "One row per account the case file excludes (`[[exclude]]`), whether or not it sent "
    "requests. Sorted by account_id.",
    {
        "account_id": "the excluded account",
        "reason": "the case file's reason",
        "requests": "its requests in band `excluded` (over capacity and answered, set aside); "
        "0 when the analysis ran without exclusions",
    },
)
JURISDICTIONS = ListFile(
    "jurisdictions.csv",
    "One row per jurisdiction: each value of the accounts file's jurisdiction column (zeros "
    "included), and `(unknown)` for listed accounts that are not in the accounts file or have "
    "no value there. Counted from the tables the lists count, so each column sums to its "
    "list's total. Sorted by jurisdiction, `(unknown)` last.",
    {
        "jurisdiction": "the value of the accounts file's jurisdiction column",
        "recipient_accounts": "accounts of recipients.csv",
        "exposed_responses": "their exposed responses (sum of recipients.csv `responses`)",
        "data_owner_accounts": "accounts of data_owners.csv",
        "requests_at_risk": "their requests at risk (sum of data_owners.csv `requests_at_risk`)",
        "excluded_accounts": "accounts of excluded.csv",
    },
)
NOTICE_INDEX = ListFile(
    f"{NOTICES}/index.csv",
    "One row per notice. Sorted by kind, then account_id.",
    {
        "account_id": "the account the notice is for",
        "kind": "`recipient` (a row of recipients.csv) or `data_owner` (of data_owners.csv)",
        "file": "the notice, relative to notify/notices/",
        "sha256": "sha256 of the notice file's bytes",
    },
)


@dataclass
class NotifyResult:
    """The files (and notice folders) written and the warnings to show."""

    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_accounts(engine: SQLEngine, case: Case) -> list[str]:
    """Materialize `case_accounts` from the accounts file (empty without one); warnings.

    The file is RFC 4180 CSV, never sniffed: comma, double quote (doubled inside a quoted
    value), the header on line 1, UTF-8 (a byte order mark dropped), LF or CRLF; blank lines
    are skipped. Ids follow the one id rule (`schema.clean_id`). Refused with the file and
    line (InputError): a row with another number of fields than the header, no account_id
    column, an empty or repeated account id, a contact column named like a column the lists
    write themselves (`responses`, `excluded_reason`, ...)."""
    path = case.accounts_path
    engine.materialize("case_accounts", "notify/accounts_empty")
    if path is None:
        return ["the case names no [accounts] file: the lists carry no contact columns"]
    if not path.is_file():
        raise InputError(
            "accounts file not found",
            where=f"{case.path}: accounts.path = {path}",
            fix="give a CSV with an account_id column and any contact columns",
        )
    header, rows = _read_accounts(path)
    reserved = {name: lst.name for lst in (RECIPIENTS, DATA_OWNERS) for name in lst.columns}
    for name in header:
        if name != "account_id" and name in reserved:
            raise InputError(
                f"column {name!r} is also a column of notify/{reserved[name]}",
                where=f"{path}:1",
                fix=f"rename it (e.g. contact_{name}): the lists keep their own columns",
            )
    frame = pl.DataFrame(
        [[None if v == "" else v for v in values] for _, values in rows],
        schema=dict.fromkeys(header, pl.String),
        orient="row",
    )
    engine.write_frame("case_accounts", frame, "account_id")
    return []


def _read_accounts(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line, values)]) of an accounts file, checked as `load_accounts` says."""
    text = decode_utf8(path.read_bytes(), str(path), InputError)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for record in reader:
            line, start = start, reader.line_num + 1
            if record:
                rows.append((line, record))
    except csv.Error as e:
        raise InputError(
            f"not RFC 4180 CSV ({e})",
            where=f"{path}:{start}",
            fix="quote a value holding a comma, quote or line break with double quotes",
        ) from None
    if not rows:
        raise InputError("the accounts file is empty", where=str(path), fix="give a header line")
    (_, header), body = rows[0], rows[1:]
    if "account_id" not in header:
        shown = ", ".join(repr(h) for h in header[:6])
        raise InputError(
            f"the accounts file has no account_id column (its header, line 1, names {shown})",
            where=f"{path}:1",
            fix="name the column holding the account ids account_id; the header is line 1",
        )
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise InputError(
            f"column {repeated[0]!r} named twice in the header",
            where=f"{path}:1",
            fix="give each column its own name",
        )
    for line, values in body:
        if len(values) != len(header):
            raise InputError(
                f"{len(values)} fields where the header has {len(header)}",
                where=f"{path}:{line}",
                fix="quote a value holding a comma with double quotes",
            )
    key = header.index("account_id")
    for _, values in body:
        values[key] = clean_id(values[key])
    empty = [line for line, values in body if not values[key]]
    if empty:
        also = f" (also line {', '.join(map(str, empty[1:]))})" if len(empty) > 1 else ""
        raise InputError(
            f"empty account_id{also}",
            where=f"{path}:{empty[0]}",
            fix="give every row an account id, or remove the row",
        )
    first: dict[str, int] = {}
    for line, values in body:
        if values[key] in first:
            raise InputError(
                f"account_id listed more than once: {_ids([values[key]])} (first on line "
                f"{first[values[key]]})",
                where=f"{path}:{line}",
                fix="give each account one row",
            )
        first[values[key]] = line
    return header, body


def write_lists(
    engine: SQLEngine,
    case: Case,
    out_dir: Path,
    summary: Mapping[str, Any] | None = None,
) -> NotifyResult:
    """Write everything under out_dir/notify/ (the module doc); regulator_summary.md only
    with `summary` (summary.json of the analysis in the database)."""
    for table in ("bands", "data_owners"):
        if not engine.table_exists(table):
            raise AnalysisError(
                f"the case database holds no {table} table",
                where=engine.where,
                fix=f"run {command('analyze')} (or {command('run')}) first",
            )
    result = NotifyResult(warnings=load_accounts(engine, case))
    jurisdiction = _load_jurisdictions(engine, case)
    # every configured exclusion, whether the analysis applied them or not
    exclusions = pl.DataFrame(
        sorted(case.excluded_accounts().items()),
        schema={"account_id": pl.String, "reason": pl.String},
        orient="row",
    )
    engine.write_frame("notify_exclusions", exclusions, "account_id")
    recipient_notice = _template(case, "recipient_template", notices.RECIPIENT_TEMPLATE)
    owner_notice = _template(case, "data_owner_template", notices.DATA_OWNER_TEMPLATE)

    folder = out_dir / "notify"
    frames = {
        RECIPIENTS.name: RECIPIENTS.select(engine.frame("notify/recipients")),
        DATA_OWNERS.name: DATA_OWNERS.select(engine.frame("notify/data_owners")),
        EXCLUDED.name: EXCLUDED.select(engine.frame("notify/excluded")),
    }
    if jurisdiction is not None:
        frames[JURISDICTIONS.name] = JURISDICTIONS.select(engine.frame("notify/jurisdictions"))
    else:
        _remove(folder / JURISDICTIONS.name)
    for name, frame in frames.items():
        result.paths.append(write_csv(frame, folder / name))

    shared = notices.case_context(case)
    index = _write_notices(
        folder / NOTICES,
        [
            (
                "recipient",
                frames[RECIPIENTS.name],
                RECIPIENTS.contact_columns(frames[RECIPIENTS.name]),
                _by_account(_exposed_responses(engine)),
                recipient_notice,
                lambda row, contacts, rows: notices.recipient_context(shared, row, contacts, rows),
            ),
            (
                "data_owner",
                frames[DATA_OWNERS.name],
                DATA_OWNERS.contact_columns(frames[DATA_OWNERS.name]),
                _by_account(engine.frame("notify/owner_requests")),
                owner_notice,
                lambda row, contacts, rows: notices.data_owner_context(shared, row, contacts, rows),
            ),
        ],
    )
    # the notice folders, not each of their (possibly thousands of) files: index.csv lists them
    result.paths.extend(folder / NOTICES / sub for sub in KINDS.values())
    result.paths.append(write_csv(NOTICE_INDEX.select(index), folder / NOTICE_INDEX.name))

    regulator = folder / "regulator_summary.md"
    if summary is not None:
        jurisdictions = frames.get(JURISDICTIONS.name)
        context = notices.regulator_context(
            shared,
            summary,
            excluded_accounts=frames[EXCLUDED.name].height,
            jurisdictions=None if jurisdictions is None else jurisdictions.to_dicts(),
            jurisdiction_column=jurisdiction,
        )
        text = notices.Template(None, notices.REGULATOR_TEMPLATE).render(context)
        regulator.write_bytes(text.encode("utf-8"))
        result.paths.append(regulator)
    else:
        _remove(regulator)

    readme = folder / "README.md"
    readme.write_bytes(
        _readme(
            case,
            [RECIPIENTS, DATA_OWNERS, EXCLUDED]
            + ([JURISDICTIONS] if jurisdiction is not None else [])
            + [NOTICE_INDEX],
            RECIPIENTS.contact_columns(frames[RECIPIENTS.name]),
            jurisdiction,
            regulator=summary is not None,
        ).encode("utf-8")
    )
    result.paths.append(readme)

    if case.accounts_path is not None:
        missing: dict[str, list[str]] = {}
        for kind, account in engine.frame("notify/missing_accounts").iter_rows():
            missing.setdefault(kind, []).append(account)
        for kind, label in (("recipients", "affected"), ("data_owners", "data-owner")):
            if kind in missing:
                ids = missing[kind]
                result.warnings.append(
                    f"{len(ids)} {label} account(s) not in {case.accounts_path.name}, listed "
                    f"with empty contacts in notify/{kind}.csv: {_ids(ids)}"
                )
    return result


def _load_jurisdictions(engine: SQLEngine, case: Case) -> str | None:
    """Write `notify_jurisdiction` (account_id, jurisdiction) from the accounts file's
    `[notify] jurisdiction` column; its name, or None when the case names none."""
    column = case.notify.jurisdiction
    if column is None:
        return None
    where = key_location(case.path, "notify", "jurisdiction")
    if case.accounts_path is None:
        raise InputError(
            f"notify.jurisdiction names a column ({column!r}) but the case names no [accounts] "
            "file",
            where=where,
            fix="add [accounts] path = ACCOUNTS.csv, or remove jurisdiction",
        )
    accounts = engine.read_table("case_accounts")
    if column not in accounts.columns:
        shown = ", ".join(printable(c, one_line=True) for c in accounts.columns)
        raise InputError(
            f"notify.jurisdiction: {printable(column, one_line=True)!r} is not a column of "
            f"{case.accounts_path.name} (its columns: {shown})",
            where=where,
            fix="name the accounts file's column that holds each account's jurisdiction",
        )
    # " eu" and "eu" are one jurisdiction: surrounding whitespace is no part of a value (an
    # empty value after it is unknown)
    trimmed = pl.col(column).cast(pl.String).str.strip_chars()
    values = accounts.select(
        pl.col("account_id").cast(pl.String),
        pl.when(trimmed == "").then(None).otherwise(trimmed).alias("jurisdiction"),
    )
    if values.filter(pl.col("jurisdiction") == UNKNOWN_JURISDICTION).height:
        raise InputError(
            f"column {printable(column, one_line=True)!r} holds the value "
            f"{UNKNOWN_JURISDICTION!r}, which jurisdictions.csv keeps for accounts without one",
            where=str(case.accounts_path),
            fix="leave the cell empty for an account of unknown jurisdiction",
        )
    engine.write_frame("notify_jurisdiction", values, "account_id")
    return column


def _template(case: Case, key: str, bundled: str) -> notices.Template:
    """The notice template the case file names under `[notify] key`, else the bundled one."""
    path = getattr(case.notify, key)
    where = key_location(case.path, "notify", key) if path is not None else None
    return notices.Template(path, bundled, where)


Build = Callable[[Mapping[str, Any], list[str], Sequence[Mapping[str, Any]]], dict[str, Any]]


def _write_notices(
    folder: Path,
    kinds: list[
        tuple[
            str, pl.DataFrame, list[str], dict[str, list[dict[str, Any]]], notices.Template, Build
        ]
    ],
) -> pl.DataFrame:
    """One notice per row of each list (kind, list frame, its contact columns, the rows of
    each account, template, context builder); returns the index rows, sorted."""
    rows: list[tuple[str, str, str, str]] = []
    for kind, frame, contacts, per_account, template, build in kinds:
        sub = folder / KINDS[kind]
        _clear_notices(sub)
        sub.mkdir(parents=True, exist_ok=True)
        taken: dict[str, str] = {}
        for row in frame.iter_rows(named=True):
            account = row["account_id"]
            name = notices.notice_file_name(account)
            if name.lower() in taken:  # a 64-bit hash prefix collision: never seen
                raise RuntimeError(f"notice file name {name} for two accounts")
            taken[name.lower()] = account
            text = template.render(build(row, contacts, per_account.get(account, [])))
            data = text.encode("utf-8")
            (sub / name).write_bytes(data)
            rows.append((account, kind, f"{KINDS[kind]}/{name}", hashlib.sha256(data).hexdigest()))
    return pl.DataFrame(
        sorted(rows, key=lambda r: (r[1], r[0])),
        schema={"account_id": pl.String, "kind": pl.String, "file": pl.String, "sha256": pl.String},
        orient="row",
    )


def _exposed_responses(engine: SQLEngine) -> pl.DataFrame:
    """The exposed responses for the notices; `status_recorded` is false where the log gives
    no status or the analysis found it unknown (the exposure range's status_unknown)."""
    frame = engine.frame("notify/exposed_responses")
    if engine.table_exists("exposure_range_requests"):
        unknown = engine.frame("notify/status_unknown")["request_id"]
        recorded = pl.col("status_recorded") & ~pl.col("request_id").is_in(unknown.implode())
        frame = frame.with_columns(recorded.alias("status_recorded"))
    return frame


def _by_account(frame: pl.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """The rows of a frame sorted by account_id, grouped by it (order kept)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in frame.iter_rows(named=True):
        out.setdefault(row["account_id"], []).append(row)
    return out


def _clear_notices(folder: Path) -> None:
    """Remove the notices an earlier run wrote here (our names only; other files stay)."""
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and notices.NOTICE_NAME.search(path.name):
                path.unlink()


def _remove(path: Path) -> None:
    """Remove a file an earlier run wrote that this one does not (it would be stale)."""
    if path.is_file():
        path.unlink()


def _readme(
    case: Case,
    files: list[ListFile],
    contacts: list[str],
    jurisdiction: str | None,
    *,
    regulator: bool,
) -> str:
    """notify/README.md: the column dictionary of every CSV written, from the `ListFile`s the
    writers use, and what else the folder holds."""
    accounts = case.accounts_path.name if case.accounts_path is not None else None
    lines = [
        "# Notification lists and notices",
        "",
        f"Written by `forensics notify` (and `run`) for the case {md(case.name)} "
        f"({md(case.path.name)}) from the analysis in the case database. The same analysis "
        "gives the same bytes. Times are ISO 8601 UTC. In the CSVs a text cell that a "
        "spreadsheet would run as a formula starts with `'`.",
        "",
    ]
    for f in files:
        lines += [f"## {f.name}", "", f.about, "", "| column | meaning |", "| --- | --- |"]
        meanings = dict(f.columns)
        if f is JURISDICTIONS and jurisdiction is not None:
            meanings["jurisdiction"] = (
                f"the value of column {md(jurisdiction)} of {md(accounts or '')} "
                "(`[notify] jurisdiction`), or `(unknown)`"
            )
        lines += [f"| `{name}` | {meaning} |" for name, meaning in meanings.items()]
        if f.contacts:
            shown = ", ".join(md(c) for c in contacts)
            lines.append(
                f"| {shown} | the columns of {md(accounts)}, as written there; empty when "
                "the account is not in it |"
                if accounts is not None and contacts
                else "| (none) | the case names no accounts file: no contact columns |"
            )
        lines.append("")
    lines += [
        "## notices/",
        "",
        "`notices/recipients/` holds one Markdown notice per row of recipients.csv, "
        "`notices/data_owners/` one per row of data_owners.csv (index: notices/index.csv). A "
        "file is named after its account: the id's letters, digits, `_` and `-` (at most 60), "
        "then `-` and the first 16 hex digits of the sha256 of the exact id. Ids and contact "
        "values are escaped: they show as text, never as Markdown.",
        "",
        "## regulator_summary.md",
        "",
        "The figures and texts for a supervisory authority, shaped after GDPR Art. 33(3)."
        if regulator
        else "Not written: the output folder holds no summary.json of this analysis (run "
        "`forensics analyze` with the same `--out` first).",
        "",
    ]
    return "\n".join(lines)


def _ids(ids: list[str]) -> str:
    """The first ids, as one printable line (an id may hold control characters)."""
    shown = ", ".join(printable(i, one_line=True) for i in ids[:MAX_IDS_IN_WARNING])
    return shown + (
        f" (+{len(ids) - MAX_IDS_IN_WARNING} more)" if len(ids) > MAX_IDS_IN_WARNING else ""
    )
