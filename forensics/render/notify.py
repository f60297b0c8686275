"""The customer-notification lists, notices, messages and regulator summary under
OUT/notify/ (docs/notices.md).

`write_lists(engine, case, out_dir, summary)` needs `bands`, `data_owners` and
`exposure_range_requests` (from analyze) and writes, sorted by account_id, with every
column of the case's accounts file joined on account_id: recipients.csv (with each
account's tier), data_owners.csv, excluded.csv; jurisdictions.csv when the case names a
`[notify] jurisdiction` column; one notice per account under notices/ (Markdown for review,
and an e-mail message when the case names a `[notify] sender` and the account has an
address), notices/index.csv and no_contact.csv; regulator_summary.md and incident.json when
given the summary; and README.md, the column dictionary. An affected or data-owner account
missing from the accounts file is still listed (empty contacts) and warned about.

Who gets a notice: an account with exposed responses (tier proven or likely), one the
evidence leaves possible (tier possible, unless `[notify] possible = "none"`) and a data
owner; not an account of an `[[exclude]]` entry unless that entry says `notify = true`.

The notices are written a page of accounts at a time (an eighth of the listed requests, at
least `MIN_PAGE_ITEMS` and at most `PAGE_ITEMS`; a tenth of that in the first page), so no
more than a page is held in memory at any size. The pages are worded and rendered in
this process, the next read meanwhile, and the files written and hashed by helper processes
(`writer.Files`).

Each CSV's columns are a `ListFile`: the one table of column -> meaning that both selects
and orders the columns the writer writes and writes README.md, so the two cannot drift.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..case import Case, key_location, parse_utc
from ..engines import SQLEngine
from ..errors import AnalysisError, InputError, command, decode_utf8
from ..formats import iso, printable, write_csv
from ..schema import clean_id
from . import incident, messages, notices, writer
from .notices import Block, Markdown, md

MAX_IDS_IN_WARNING = 10
UNKNOWN_JURISDICTION = "(unknown)"
NOTICES = "notices"
MD_FOLDER, EML_FOLDER = "md", "eml"  # under notices/: the notices, their messages
PAGE_ITEMS = 100_000  # listed requests a page of notices holds at most
MIN_PAGE_ITEMS = 10_000  # ... and at least (but for the first and last)
PAGES = 8  # pages a case's notices are read in, when those limits allow
# the tables notify works with, read once: temporary (never written to the case database)
# but for notify_owner_requests past TEMPORARY_ROWS, which is dropped once read; an earlier
# version kept them all
TEMPORARY_ROWS = 1_000_000  # requests at risk held as a temporary table, uncompressed
WORKING_TABLES = (
    "notify_exclusions",
    "notify_quarantine",
    "notify_range",
    "notify_jurisdiction",
    "notify_pages",
    "notify_exposed",
    "notify_owner_requests",
)
ROLES = ("recipient", "possible_recipient", "data_owner")
SUBJECT = "Security incident notice (reference {reference})"
# Why the evidence leaves an exposed response uncertain (the range's min side) or another
# request possibly exposed (its max side), in the words of a notice (docs/notices.md)
CLOCK = "it arrived within the logs' clock uncertainty of a change in the cache pool"
TOKENS = "its prompt size is within the counting uncertainty of the cache pool's limit"
ENGINE_SIZE = (
    "the inference engine's logs give a prompt size that may be its own and would change "
    "whether it was affected"
)
MIN_REASONS = {
    "clock_skew": CLOCK,
    "token_count": TOKENS,
    "engine_length": ENGINE_SIZE,
    "conflicting": "another copy of its log record shows it unaffected",
}
MAX_REASONS = {
    "quarantined": "its log record could be read only in part",
    "status_unknown": "the logs do not record whether it was answered with success",
    "unknown_capacity": "the size of the cache pool of the server that answered it is not known",
    "clock_skew": CLOCK,
    "token_count": TOKENS,
    "engine_length": ENGINE_SIZE,
    "conflicting": "another copy of its log record shows it affected",
    "engine_only": "the inference engine's own logs show the fault for it",
}


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
    "One row per account that received an exposed response (a prompt above the prefill KV "
    "pool in force, answered with a success status; band `exposed`), or whose requests the "
    "exposure range's maximum adds (tier `possible`). Sorted by account_id.",
    {
        "account_id": "the account, as the logs spell it",
        "tier": "`proven`: at least one of its exposed responses is in the exposure range's "
        "minimum; `likely`: it has exposed responses, but the evidence leaves each of them "
        "uncertain (each is on the range's minimum side); `possible`: no exposed response, "
        "but requests the range's maximum adds (`possible_requests`)",
        "responses": "its exposed responses",
        "first_exposed_at": "arrival time of its first exposed response (ISO 8601 UTC)",
        "last_exposed_at": "arrival time of its last exposed response (ISO 8601 UTC)",
        "request_ids": "the request ids of its exposed responses, sorted, `;`-separated; "
        "inside an id `\\` is written `\\\\` and `;` is written `\\;`",
        "completion_tokens": "tokens generated for it across its exposed responses (content "
        "that reached the client); empty when the log gives no count for one of them, or it "
        "has none",
        "empty_responses": "exposed responses for which nothing was generated "
        "(completion_tokens = 0)",
        "unknown_responses": "exposed responses whose log gives no completion_tokens (the "
        "mapping names none, or the record has none): whether content was delivered is "
        "unknown",
        "uncertain_responses": "its exposed responses on the exposure range's minimum side "
        "(the evidence leaves open whether each was exposed: a status not logged, a time or "
        "prompt size within the uncertainty, a conflicting copy)",
        "possible_requests": "its requests on the exposure range's maximum side (not counted "
        "as exposed, but the evidence leaves it possible)",
    },
    contacts=True,
)
DATA_OWNERS = ListFile(
    "data_owners.csv",
    "One row per data-owner account: an account whose requests sat in a decode pool that an "
    "exposed response of another account, or an excluded account's over-capacity response "
    "(band `excluded`), could have read (policy in summary.json `data_owners`). Excluded "
    "accounts are listed too. Sorted by account_id.",
    {
        "account_id": "the account, as the logs spell it",
        "requests_at_risk": "its requests that an exposed or excluded response could have read",
        "exposures": "exposed and excluded responses (of other accounts) that could have read "
        "at least one of them; it can exceed requests_at_risk, as one request can be read by "
        "several",
        "first_at": "end time of its first request at risk (ISO 8601 UTC)",
        "last_at": "end time of its last request at risk (ISO 8601 UTC)",
        "excluded_reason": "the case file's exclusion reason for the account; empty when it is "
        "not excluded",
        "read_by": "whose responses could have read its requests: `exposed` (only exposed "
        "responses, counted in the exposure count), `excluded` (only excluded accounts' "
        "responses, band `excluded`: the operator's tests, a researcher) or `both`",
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
        "notified": "`true` when its `[[exclude]]` entry says `notify = true`: it gets the "
        "notices of its roles; `false` (the default): it gets none",
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
        "recipient_accounts": "accounts of recipients.csv with an exposed response (tier "
        "`proven` or `likely`)",
        "exposed_responses": "their exposed responses (sum of recipients.csv `responses`)",
        "possible_accounts": "accounts of recipients.csv of tier `possible`",
        "data_owner_accounts": "accounts of data_owners.csv",
        "requests_at_risk": "their requests at risk (sum of data_owners.csv `requests_at_risk`)",
        "excluded_accounts": "accounts of excluded.csv",
        "deadline": "when notices are due (ISO 8601 UTC): the awareness event plus the "
        "jurisdiction's `[notify.deadlines]` entry; empty without one",
        "deadline_for": "whom they are due to: `individuals` or `authority`; empty without a "
        "deadline",
    },
)
NOTICE_INDEX = ListFile(
    f"{NOTICES}/index.csv",
    "One row per notice: one per account that is notified. Sorted by account_id.",
    {
        "account_id": "the account the notice is for",
        "roles": "its sections, `;`-separated: `recipient` (responses it received), "
        "`possible_recipient` (requests the evidence leaves possibly answered so), "
        "`data_owner` (its requests whose data was at risk)",
        "tier": "its tier in recipients.csv; empty when it is not listed there",
        "reference": "the notice's reference, in its text and its message's subject",
        "file": "the notice (Markdown, for review), relative to notify/notices/",
        "eml": "its e-mail message (RFC 5322), relative to notify/notices/; empty when none "
        "was written (no address: no_contact.csv; no `[notify] sender`)",
        "sha256": "sha256 of the notice file's bytes",
    },
)
NO_CONTACT = ListFile(
    "no_contact.csv",
    "One row per notified account that has no e-mail address: its notice is written, no "
    "message. Sorted by account_id.",
    {
        "account_id": "the account",
        "roles": "its notice's sections (as in notices/index.csv)",
        "file": "its notice, relative to notify/notices/",
        "reason": "why there is no address",
    },
)


@dataclass
class NotifyResult:
    """The files (and notice folders) written and the warnings to show; `hashes`: the size and
    sha256 of each notice and message file (by its path), taken as it was written, so the
    manifest lists them without reading them back."""

    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hashes: dict[str, tuple[int, str]] = field(default_factory=dict)


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
    """Write everything under out_dir/notify/ (the module doc); regulator_summary.md and
    incident.json only with `summary` (summary.json of the analysis in the database)."""
    with _cycles_left_uncollected():
        return _write_lists(engine, case, out_dir, summary)


@contextlib.contextmanager
def _cycles_left_uncollected() -> Iterator[None]:
    """Python's cycle collector paused meanwhile (as it was, after): the notices make
    millions of short-lived objects and no cycles to speak of (a few hundred at 5M requests),
    and the collector's passes over every live object were a tenth of notify's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_lists(
    engine: SQLEngine,
    case: Case,
    out_dir: Path,
    summary: Mapping[str, Any] | None,
) -> NotifyResult:
    for table in ("bands", "data_owners", "exposure_range_requests"):
        if not engine.table_exists(table):
            raise AnalysisError(
                f"the case database holds no {table} table",
                where=engine.where,
                fix=f"run {command('analyze')} (or {command('run')}) first",
            )
    incident.discovery_method(case)  # a variety VERIS lacks is refused before any work
    for table in WORKING_TABLES:  # an earlier version's, kept in the database: never read now
        engine.execute(f'DROP TABLE IF EXISTS "{table}"')
    result = NotifyResult(warnings=load_accounts(engine, case))
    jurisdiction = _load_jurisdictions(engine, case)
    address_columns = _address_columns(engine, case)
    engine.write_frame("notify_exclusions", _exclusions(case), "account_id", temporary=True)
    engine.materialize_temporary(
        "notify_quarantine",
        "notify/quarantine_values"
        if engine.table_exists("quarantine_values")
        else "notify/quarantine_none",
    )
    engine.materialize_temporary("notify_range", "notify/range")
    template = _template(case)

    folder = out_dir / "notify"
    frames = {
        RECIPIENTS.name: RECIPIENTS.select(engine.frame("notify/recipients")),
        DATA_OWNERS.name: DATA_OWNERS.select(engine.frame("notify/data_owners")),
        EXCLUDED.name: EXCLUDED.select(engine.frame("notify/excluded")),
    }
    if jurisdiction is not None:
        counts = engine.frame("notify/jurisdictions")
        frames[JURISDICTIONS.name] = JURISDICTIONS.select(_deadlines(case, counts, result.warnings))
    else:
        _remove(folder / JURISDICTIONS.name)
    for name, frame in frames.items():
        result.paths.append(write_csv(frame, folder / name))

    written = _write_notices(
        engine,
        case,
        folder / NOTICES,
        frames[RECIPIENTS.name],
        frames[DATA_OWNERS.name],
        template,
        address_columns,
    )
    result.warnings.extend(written.warnings)
    result.hashes = written.hashes
    # the notice folders, not each of their (possibly thousands of) files: index.csv lists them
    result.paths.extend(
        p for p in (folder / NOTICES / MD_FOLDER, folder / NOTICES / EML_FOLDER) if p.is_dir()
    )
    result.paths.append(write_csv(NOTICE_INDEX.select(written.index), folder / NOTICE_INDEX.name))
    result.paths.append(write_csv(NO_CONTACT.select(written.no_contact), folder / NO_CONTACT.name))

    regulator, veris = folder / "regulator_summary.md", folder / incident.FILE
    if summary is not None:
        tiers = frames[RECIPIENTS.name]["tier"].value_counts()
        owners = frames[DATA_OWNERS.name].filter(pl.col("excluded_reason").is_not_null())
        delivery = engine.frame("notify/delivery").row(0, named=True)
        context = notices.regulator_context(
            notices.case_context(case, "regulator"),
            summary,
            tiers={t: int(n) for t, n in tiers.iter_rows()},
            excluded_accounts=frames[EXCLUDED.name].height,
            excluded_owners=(owners.height, int(owners["requests_at_risk"].sum() or 0)),
            delivery={k: int(v) for k, v in delivery.items()},
            jurisdictions=[notices.values(j) for j in frames[JURISDICTIONS.name].to_dicts()]
            if JURISDICTIONS.name in frames
            else None,
            deadlines=[notices.values(d) for d in _deadline_rows(case)],
        )
        context["jurisdiction_column"] = jurisdiction
        text = notices.Template(None, notices.REGULATOR_TEMPLATE, prose=True).render(context).md
        regulator.write_bytes(text.encode("utf-8"))
        result.paths.append(regulator)
        firsts = frames[RECIPIENTS.name]["first_exposed_at"].drop_nulls().to_list()
        first = min((parse_utc(t) for t in firsts), default=None)
        veris.write_bytes(
            incident.incident_json(
                case,
                summary,
                first_exposed=first,
                excluded_owners=context["figures"]["excluded_owners"],
            )
        )
        result.paths.append(veris)
    else:
        _remove(regulator)
        _remove(veris)

    readme = folder / "README.md"
    readme.write_bytes(
        _readme(
            case,
            [RECIPIENTS, DATA_OWNERS, EXCLUDED]
            + ([JURISDICTIONS] if jurisdiction is not None else [])
            + [NOTICE_INDEX, NO_CONTACT],
            RECIPIENTS.contact_columns(frames[RECIPIENTS.name]),
            jurisdiction,
            address_columns,
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
    blanks = [k for k in ("measures", "contact") if getattr(case.notify, k) is None]
    if summary is not None and case.notify.consequences is None:
        blanks.append("consequences")
    if blanks:
        result.warnings.append(
            "the notices and regulator summary show [TO BE COMPLETED] for what the case file "
            f"does not give: [notify] {', '.join(blanks)}"
        )
    return result


def _exclusions(case: Case) -> pl.DataFrame:
    """Every configured exclusion (account_id, reason, notified), whether the analysis
    applied them or not; an account notified when one of its entries says so."""
    rows: dict[str, tuple[str, bool]] = {}
    for ex in case.exclusions:
        for account in ex.accounts:
            reason, notified = rows.get(account, (ex.reason, False))
            rows[account] = (reason, notified or ex.notify)
    return pl.DataFrame(
        [(a, r, n) for a, (r, n) in sorted(rows.items())],
        schema={"account_id": pl.String, "reason": pl.String, "notified": pl.Boolean},
        orient="row",
    )


def _address_columns(engine: SQLEngine, case: Case) -> list[str]:
    """The accounts file's columns that hold e-mail addresses: `[notify] address_columns`
    (each must be a column), else every column whose name holds `email` or `e-mail` (any
    letter case)."""
    columns = [c for c in engine.read_table("case_accounts").columns if c != "account_id"]
    named = case.notify.address_columns
    if named is None:
        return [c for c in columns if "email" in c.lower() or "e-mail" in c.lower()]
    where = key_location(case.path, "notify", "address_columns")
    if case.accounts_path is None:
        raise InputError(
            "notify.address_columns names columns but the case names no [accounts] file",
            where=where,
            fix="add [accounts] path = ACCOUNTS.csv, or remove address_columns",
        )
    for name in named:
        if name not in columns:
            shown = ", ".join(printable(c, one_line=True) for c in ["account_id", *columns])
            raise InputError(
                f"notify.address_columns: {printable(name, one_line=True)!r} is not a column "
                f"of {case.accounts_path.name} (its columns: {shown})",
                where=where,
                fix="name the accounts file's columns that hold e-mail addresses",
            )
    return list(dict.fromkeys(named))


def _deadlines(case: Case, counts: pl.DataFrame, warnings: list[str]) -> pl.DataFrame:
    """jurisdictions.csv's counts with each jurisdiction's deadline (`[notify.deadlines]`
    from the awareness event) and whom it is for."""
    rows = {d["jurisdiction"]: (d["deadline"], d["for"]) for d in _deadline_rows(case)}
    names = set(counts["jurisdiction"].to_list())
    unknown = sorted(set(rows) - names)
    if unknown:
        warnings.append(
            f"[notify.deadlines] names {len(unknown)} jurisdiction(s) no account has: "
            f"{_ids(unknown)}"
        )
    if rows and case.awareness is None:
        warnings.append(
            "[notify.deadlines] given but no [[event]] is marked awareness = true: the "
            "deadlines in jurisdictions.csv are empty"
        )
    return counts.with_columns(
        pl.col("jurisdiction")
        .map_elements(lambda j: rows.get(j, (None, None))[0], return_dtype=pl.String)
        .alias("deadline"),
        pl.col("jurisdiction")
        .map_elements(lambda j: rows.get(j, (None, None))[1], return_dtype=pl.String)
        .alias("deadline_for"),
    )


def _deadline_rows(case: Case) -> list[dict[str, Any]]:
    """Each `[notify.deadlines]` entry: jurisdiction, rule (as written), for, deadline (the
    awareness event plus the rule; None without one)."""
    aware = case.awareness
    return [
        {
            "jurisdiction": d.jurisdiction,
            "rule": d.text,
            "for": d.to,
            "deadline": None if aware is None else iso(aware.at + d.within),
        }
        for d in sorted(case.notify.deadlines, key=lambda d: d.jurisdiction)
    ]


def _template(case: Case) -> notices.Template:
    """The notice template the case file names under `[notify] template`, else the bundled
    one."""
    path = case.notify.template
    where = key_location(case.path, "notify", "template") if path is not None else None
    return notices.Template(path, notices.NOTICE_TEMPLATE, where)


# --- the notices ---------------------------------------------------------------------------


@dataclass
class Written:
    """What `_write_notices` wrote: the rows of index.csv and no_contact.csv, warnings, and
    each file's size and sha256 (`NotifyResult.hashes`)."""

    index: pl.DataFrame
    no_contact: pl.DataFrame
    warnings: list[str]
    hashes: dict[str, tuple[int, str]]


def _write_notices(
    engine: SQLEngine,
    case: Case,
    folder: Path,
    recipients: pl.DataFrame,
    owners: pl.DataFrame,
    template: notices.Template,
    address_columns: list[str],
) -> Written:
    """One notice per notified account (the module doc), a page of accounts at a time: its
    Markdown under notices/md/, its message under notices/eml/."""
    for sub in (MD_FOLDER, EML_FOLDER):
        _clear_notices(folder / sub)
    accounts = _notice_accounts(engine, case, recipients, owners)
    composer = _composer(case)
    md_dir, eml_dir = folder / MD_FOLDER, folder / EML_FOLDER
    if accounts.height:
        md_dir.mkdir(parents=True, exist_ok=True)
    if accounts.height and composer is not None:
        eml_dir.mkdir(parents=True, exist_ok=True)
    pages = [(int(page), rows) for (page,), rows in accounts.group_by("page", maintain_order=True)]
    done: list[_Page] = []
    # rendering is Python (one core); the files are written and hashed by helper processes,
    # one for each folder written in (none when no notice is), started while DuckDB gathers
    with writer.Files() as files:
        write_md = files.writer(str(md_dir)) if pages else files.write
        write_eml = files.writer(str(eml_dir)) if pages and composer is not None else files.write
        engine.write_frame(
            "notify_pages", accounts.select("account_id", "page"), "account_id", temporary=True
        )
        engine.materialize_temporary("notify_exposed", "notify/exposed")
        # past TEMPORARY_ROWS, in the database file, compressed, until the notices are
        # written: as a temporary table (never compressed) its pages, read back, held DuckDB
        # at its memory limit (2 GB of RSS at 100M requests); below it, temporary (a third
        # less time at 5M: no write-ahead log)
        at_risk = int(accounts["requests_at_risk"].fill_null(0).sum()) if pages else 0
        if at_risk <= TEMPORARY_ROWS:
            engine.materialize_temporary("notify_owner_requests", "notify/owner_requests")
        else:
            engine.materialize("notify_owner_requests", "notify/owner_requests")
        uncertain = _uncertain(engine)
        shown = _shown_ids(engine)
        shared = notices.case_context(case, "customer")
        job = _Job(case, template.bind(shared), composer, address_columns, md_dir, eml_dir)

        def read(at: int) -> _PageItems:
            return _page_items(engine, pages[at][0], pages[at][1], uncertain, shown, template)

        # the next page is read and worded (DuckDB, Polars: Python's lock free) while this
        # one is rendered; only that thread uses the engine meanwhile
        with ThreadPoolExecutor(max_workers=1) as reader:
            ahead = reader.submit(read, 0) if pages else None
            for at, (_, rows) in enumerate(pages):
                assert ahead is not None
                items = ahead.result()
                ahead = reader.submit(read, at + 1) if at + 1 < len(pages) else None
                done.append(_render_page(job, rows.to_dicts(), items, write_md, write_eml))
    done.append(_Page(hashes=files.hashes))
    for table in ("notify_owner_requests", "notify_exposed"):  # read: not kept, not checkpointed
        engine.execute(f'DROP TABLE "{table}"')
    taken: dict[str, str] = {}
    for page in done:
        for row in page.index:
            name = row[4].lower()
            if name in taken:  # a 64-bit hash prefix collision: never seen
                raise RuntimeError(f"notice file name {row[4]} for two accounts")
            taken[name] = row[0]
    hashes = {path: digest for page in done for path, digest in page.hashes.items()}
    md_base = f"{md_dir}{os.sep}"
    index = [
        (a, roles, tier, ref, f"{MD_FOLDER}/{name}", eml, hashes[md_base + name][1])
        for page in done
        for a, roles, tier, ref, name, eml, _ in page.index
    ]
    no_contact = [row for page in done for row in page.no_contact]
    bad_addresses = [account for page in done for account in page.bad_addresses]
    emls = sum(page.emls for page in done)
    if not emls and eml_dir.is_dir() and not any(os.scandir(eml_dir)):
        eml_dir.rmdir()  # every notified account without an address: no message folder
    warnings = []
    if composer is None and accounts.height:
        warnings.append(
            "no [notify] sender: the notices are written as Markdown only, no e-mail message "
            "(give sender = the address they are sent from)"
        )
    if no_contact:
        warnings.append(
            f"{len(no_contact)} notified account(s) without an e-mail address: their notices "
            f"are written, no message (notify/no_contact.csv): {_ids([r[0] for r in no_contact])}"
        )
    if bad_addresses:
        warnings.append(
            f"{len(bad_addresses)} account(s) with a value that is not an e-mail address in "
            f"{', '.join(address_columns)} (left out of the message): {_ids(bad_addresses)}"
        )
    return Written(
        pl.DataFrame(
            index,
            schema={c: pl.String for c in NOTICE_INDEX.columns},
            orient="row",
        ),
        pl.DataFrame(no_contact, schema={c: pl.String for c in NO_CONTACT.columns}, orient="row"),
        warnings,
        hashes,
    )


@dataclass
class _Job:
    """What rendering a page of notices needs besides the page (`_render_page`)."""

    case: Case
    notices: notices.Bound
    composer: messages.Composer | None
    address_columns: list[str]
    md_dir: Path
    eml_dir: Path


@dataclass
class _Page:
    """A page of notices rendered: rows of index.csv (sha256 left empty: in `hashes`, by
    path) and no_contact.csv, accounts with a bad address, messages written, and each file's
    (size, sha256)."""

    index: list[tuple[str, str, str, str, str, str, str]] = field(default_factory=list)
    no_contact: list[tuple[str, str, str, str]] = field(default_factory=list)
    bad_addresses: list[str] = field(default_factory=list)
    emls: int = 0
    hashes: dict[str, tuple[int, str]] = field(default_factory=dict)


def _render_page(
    job: _Job,
    rows: list[dict[str, Any]],
    items: _PageItems,
    write_md: Callable[[str, bytes], None],
    write_eml: Callable[[str, bytes], None],
) -> _Page:
    """Render the notices (and messages) of a page's accounts, each file handed to the
    writer of its folder."""
    case, bound, composer, address_columns = (
        job.case,
        job.notices,
        job.composer,
        job.address_columns,
    )
    md_base, eml_base = f"{job.md_dir}{os.sep}", f"{job.eml_dir}{os.sep}"
    page = _Page()
    for row in rows:
        account = row["account_id"]
        stem = notices.notice_file_name(account, "")
        name = f"{stem}.md"
        ref = messages.reference(case, account)
        rendered = bound.render(_context(row, ref, items))
        write_md(md_base + name, rendered.md.encode("utf-8"))
        roles = row["roles"]
        to, bad = messages.addresses([row[c] for c in address_columns])
        if bad:
            page.bad_addresses.append(account)
        eml = ""
        if not to:
            page.no_contact.append(
                (
                    account,
                    roles,
                    f"{MD_FOLDER}/{name}",
                    _no_address(case, row, address_columns, bad),
                )
            )
        elif composer is not None:
            write_eml(
                f"{eml_base}{stem}.eml", composer.notice(to, ref, rendered.text, rendered.html)
            )
            eml = f"{EML_FOLDER}/{stem}.eml"
            page.emls += 1
        page.index.append((account, roles, row["tier"] or "", ref, name, eml, ""))
    return page


def _notice_accounts(
    engine: SQLEngine, case: Case, recipients: pl.DataFrame, owners: pl.DataFrame
) -> pl.DataFrame:
    """One row per notified account, sorted: its list rows' figures, its contacts, `roles`
    (`;`-joined), and the `page` of notices it is written in."""
    r = recipients.select(_RECIPIENT_KEYS)
    o = owners.select(*DATA_OWNERS.columns)
    both = r.join(o, on="account_id", how="full", coalesce=True)
    contacts = engine.read_table("case_accounts").with_columns(pl.lit(True).alias("_listed"))
    both = both.join(contacts, on="account_id", how="left")
    notified = _exclusions(case).select("account_id", pl.col("notified").alias("_notified"))
    tier = pl.col("tier")
    roles = pl.concat_str(
        [
            pl.when(tier.is_in(["proven", "likely"])).then(pl.lit("recipient")),
            pl.when((tier == "possible") & (case.notify.possible == "notice")).then(
                pl.lit("possible_recipient")
            ),
            pl.when(pl.col("requests_at_risk").fill_null(0) != 0).then(pl.lit("data_owner")),
        ],
        separator=";",
        ignore_nulls=True,
    )
    # an excluded account is notified only when its entry says so
    both = (
        both.join(notified, on="account_id", how="left")
        .with_columns(
            pl.when(pl.col("_notified").fill_null(True))
            .then(roles)
            .otherwise(pl.lit(""))
            .fill_null("")
            .alias("roles")
        )
        .drop("_notified")
        .filter(pl.col("roles") != "")
    )
    has = pl.col("roles").str.contains
    weight = (
        1
        + pl.when(has("^recipient|;recipient")).then(pl.col("responses")).otherwise(0)
        + pl.when(has("possible_recipient")).then(pl.col("possible_requests")).otherwise(0)
        + pl.when(has("data_owner")).then(pl.col("requests_at_risk")).otherwise(0)
    ).fill_null(1)
    both = both.sort("account_id").with_columns(weight.alias("_weight"))
    per_page = page_items(int(both["_weight"].sum() or 0))
    return both.with_columns(page_of(pl.col("_weight"), per_page).alias("page")).drop("_weight")


def page_items(total: int) -> int:
    """The listed requests a page of notices holds, of `total`: an eighth (`PAGES`), so a
    page is read while the one before is rendered at every size, within `MIN_PAGE_ITEMS`
    (fewer pages, each read once, for a small case) and `PAGE_ITEMS` (the memory a page
    takes)."""
    return min(PAGE_ITEMS, max(MIN_PAGE_ITEMS, -(-total // PAGES)))


def page_of(weight: pl.Expr, per_page: int) -> pl.Expr:
    """Each account's page of notices from its listed requests (`weight`, in account
    order): `per_page` a page, the first a tenth of that (it is read before any notice is
    rendered, each other page while the one before is)."""
    first = max(1, per_page // 10)
    start = weight.cum_sum() - weight
    return pl.when(start < first).then(0).otherwise(1 + (start - first) // per_page)


def _uncertain(engine: SQLEngine) -> pl.DataFrame:
    """The exposure range's min-side categories of each exposed request: request_id,
    categories (sorted list)."""
    rows = engine.sql_frame(
        "SELECT DISTINCT request_id, category FROM notify_range "
        "WHERE direction = 'min' AND request_id IS NOT NULL"
    )
    return rows.group_by("request_id").agg(pl.col("category").unique().sort().alias("categories"))


def _shown_ids(engine: SQLEngine) -> pl.DataFrame:
    """The inputs whose request ids are derived (`sha256[:16]:row`: their mapping names no
    request_id): prefix, word (`line`, or `row` for Parquet), name (the file's name)."""
    if not engine.table_exists("inputs"):  # requests written by hand (tests): none derived
        return pl.DataFrame(
            schema={"prefix": pl.String, "word": pl.String, "name": pl.String, "source": pl.String}
        )
    inputs = engine.sql_frame("SELECT path, sha256, format, fields FROM inputs")
    derived = inputs.filter(
        pl.col("fields").is_null()
        | ~pl.col("fields").str.split(",").list.contains(pl.lit("request_id"))
    )
    return derived.select(
        pl.col("sha256").str.slice(0, 16).alias("prefix"),
        pl.when(pl.col("format") == "parquet")
        .then(pl.lit("row"))
        .otherwise(pl.lit("line"))
        .alias("word"),
        pl.col("path").str.extract(r"([^/\\]+)$", 1).alias("name"),
        pl.col("path").alias("source"),
    ).unique(subset="prefix", keep="first")


def _composer(case: Case) -> messages.Composer | None:
    notify = case.notify
    if notify.sender is None:
        return None
    return messages.Composer(notify.sender, notify.reply_to, messages.message_date(case), SUBJECT)


def _no_address(case: Case, row: Mapping[str, Any], columns: list[str], bad: list[str]) -> str:
    """Why an account has no e-mail address (no_contact.csv `reason`)."""
    if case.accounts_path is None:
        return "the case names no accounts file"
    if not columns:
        return f"{case.accounts_path.name} has no e-mail address column"
    if not row.get("_listed"):
        return f"not in {case.accounts_path.name}"
    if bad:
        shown = "; ".join(printable(b, one_line=True)[:80] for b in bad[:3])
        return f"not an e-mail address in {', '.join(columns)}: {shown}"
    return f"no value in {', '.join(columns)}"


def _context(row: Mapping[str, Any], ref: str, items: _PageItems) -> dict[str, Any]:
    """What the notice template of one account sees besides what every notice shares
    (`notices.case_context`; docs/notices.md)."""
    account = row["account_id"]
    roles = row["roles"].split(";")
    lists, rows = items.lists, items.rows
    context: dict[str, Any] = {
        "reference": Markdown(ref),
        "account": {
            "id": account,
            "contacts": [
                {"column": c, "value": row[c]}
                for c in items.contact_columns
                if row.get(c) is not None
            ],
        },
        "roles": roles,
        "tier": row["tier"],
        "excluded_reason": row["excluded_reason"],
        "recipient": None,
        "possible": None,
        "data_owner": None,
        "responses_list": lists["responses"].get(account, _EMPTY),
        "possible_list": lists["possible"].get(account, _EMPTY),
        "requests_list": lists["requests"].get(account, _EMPTY),
        "responses": rows["responses"].get(account, []),
        "possible_requests": rows["possible"].get(account, []),
        "requests": rows["requests"].get(account, []),
    }
    if "recipient" in roles:
        recipient = notices.values({k: row[k] for k in _RECIPIENT_KEYS})
        recipient["delivery_unrecorded"] = items.unrecorded.get(account, 0)
        context["recipient"] = recipient
    if "possible_recipient" in roles:
        context["possible"] = {"requests": row["possible_requests"]}
    if "data_owner" in roles:
        context["data_owner"] = notices.values({k: row[k] for k in DATA_OWNERS.columns})
    return context


_EMPTY = Block("", "", "")  # a list the account has no item in
_RECIPIENT_KEYS = [k for k in RECIPIENTS.columns if k != "request_ids"]


@dataclass
class _PageItems:
    """The listed requests of one page of notices, per account: the three lists as blocks,
    as rows (for a template that words them itself), and the responses whose delivery is not
    recorded."""

    lists: dict[str, dict[str, Block]]
    rows: dict[str, dict[str, list[dict[str, Any]]]]
    unrecorded: dict[str, int]
    contact_columns: list[str]


def _page_items(
    engine: SQLEngine,
    page: int,
    rows: pl.DataFrame,
    uncertain: pl.DataFrame,
    shown: pl.DataFrame,
    template: notices.Template,
) -> _PageItems:
    """Read and word the requests a page of notices lists (see `_PageItems`)."""
    roles = rows["roles"]
    lists: dict[str, dict[str, Block]] = {"responses": {}, "possible": {}, "requests": {}}
    kept: dict[str, dict[str, list[dict[str, Any]]]] = {k: {} for k in lists}
    unrecorded: dict[str, int] = {}
    contact_columns = [c for c in rows.columns if c not in _NOTICE_COLUMNS]
    if roles.str.contains("^recipient|;recipient").any():
        frame = engine.frame("notify/page_exposed", page=page)
        frame = frame.join(uncertain, on="request_id", how="left")
        frame = frame.with_columns(pl.col("categories").fill_null(pl.lit([], pl.List(pl.String))))
        frame = _displayed(frame, shown)
        lists["responses"] = _blocks(frame, _response_line(frame))
        unknown = frame.filter(
            pl.col("categories").list.contains("status_unknown") & pl.col("completion_tokens").gt(0)
        )
        unrecorded = dict(unknown.group_by("account_id").len().iter_rows())
        if template.uses("responses"):
            kept["responses"] = _rows(frame, delivery=True)
    if roles.str.contains("possible_recipient").any():
        frame = engine.frame("notify/page_possible", page=page)
        frame = frame.group_by(["account_id", "range_key"], maintain_order=True).agg(
            pl.first("request_id", "source", "row", "at", "prompt_tokens"),
            pl.col("category").unique(maintain_order=True).alias("categories"),
        )
        frame = _displayed(frame, shown)
        lists["possible"] = _blocks(frame, _possible_line(frame))
        if template.uses("possible_requests"):
            kept["possible"] = _rows(frame.drop("range_key"))
    if roles.str.contains("data_owner").any():
        frame = _displayed(engine.frame("notify/page_owner_requests", page=page), shown)
        lists["requests"] = _blocks(frame, _owner_line(frame))
        if template.uses("requests"):
            kept["requests"] = _rows(frame)
    return _PageItems(lists, kept, unrecorded, contact_columns)


_NOTICE_COLUMNS = {
    *RECIPIENTS.columns,
    *DATA_OWNERS.columns,
    "roles",
    "page",
    "_listed",
}
# Rust-regex classes of what `printable` escapes (one_line) and of Markdown syntax (`md`)
_UNPRINTABLE = (
    r"[\t\n\x00-\x08\x0B-\x1F\x7F-\x9F\x{2028}\x{2029}\x{FFFE}\x{FFFF}\x{061C}\x{200E}"
    r"\x{200F}\x{202A}-\x{202E}\x{2066}-\x{2069}]"
)
_MD_SYNTAX = r"([\\`*_\[\]<>&|~$!(){}^#+=:@.])"


def _displayed(frame: pl.DataFrame, shown: pl.DataFrame) -> pl.DataFrame:
    """`frame` with `shown`: how a request is named to a customer, as plain text: its id, or
    for an id derived from the input's line (`sha256[:16]:row`) or a quarantined record
    without one, `line 5,444 of gateway.jsonl` (`row` for Parquet)."""
    has_source = "source" in frame.columns
    ids = frame["request_id"]
    if not shown.height and not has_source:  # no id derived, none quarantined: ids as they are
        return frame.with_columns(_printable(ids.fill_null("")).alias("shown"))
    parts = ids.str.extract_groups(r"^([0-9a-f]{16}):([0-9]+)$")
    frame = frame.with_columns(
        parts.struct.field("1").alias("_prefix"),
        parts.struct.field("2").cast(pl.Int64).alias("_row"),
    )
    if shown.height:
        frame = frame.join(shown.drop("source"), left_on="_prefix", right_on="prefix", how="left")
    else:
        frame = frame.with_columns(pl.lit(None, pl.String).alias(c) for c in ("word", "name"))
    if has_source:  # a quarantined record: named by its source and row
        by_source = shown.select("source", pl.col("word").alias("_w")).unique("source")
        frame = frame.join(by_source, on="source", how="left").with_columns(
            pl.when(pl.col("request_id").is_null())
            .then(pl.col("row"))
            .otherwise(pl.col("_row"))
            .alias("_row"),
            pl.when(pl.col("request_id").is_null())
            .then(pl.coalesce("_w", pl.lit("line")))
            .otherwise(pl.col("word"))
            .alias("word"),
            pl.when(pl.col("request_id").is_null())
            .then(pl.col("source").str.extract(r"([^/\\]+)$", 1))
            .otherwise(pl.col("name"))
            .alias("name"),
        )
    line = pl.concat_str(
        pl.col("word"), pl.lit(" "), _thousands(pl.col("_row")), pl.lit(" of "), pl.col("name")
    )
    frame = frame.with_columns(
        pl.when(pl.col("word").is_not_null())
        .then(line)
        .otherwise(pl.col("request_id"))
        .alias("shown")
    )
    shown_text = _printable(frame["shown"].fill_null(""))
    return frame.with_columns(shown_text.alias("shown")).drop(
        [c for c in ("_prefix", "_row", "word", "name", "_w") if c in frame.columns]
    )


def _printable(series: pl.Series) -> pl.Series:
    """`printable(one_line=True)` of each value (the rare ones that need it, in Python)."""
    needs = series.str.contains(_UNPRINTABLE).fill_null(False)
    if not needs.any():
        return series
    where = needs.arg_true()
    fixed = pl.Series([notices.plain(v) for v in series.gather(where).to_list()], dtype=pl.String)
    return series.scatter(where, fixed)


def _thousands(expr: pl.Expr) -> pl.Expr:
    """A count (>= 0) as text with thousands separators (`6,074`)."""
    reversed_digits = expr.cast(pl.String).str.reverse()
    return (
        reversed_digits.str.replace_all(r"(\d{3})", "$1,").str.reverse().str.strip_chars_start(",")
    )


@dataclass(frozen=True)
class _Line:
    """A list item's text after the request's name (the same in every form: the toolkit's
    words, times and counts, nothing to escape)."""

    expr: pl.Expr


def _response_line(frame: pl.DataFrame) -> _Line:
    cats = pl.col("categories")
    unrecorded = cats.list.contains("status_unknown")
    tokens = _thousands(pl.col("completion_tokens"))
    delivery = (
        pl.when(pl.col("completion_tokens").is_null())
        .then(pl.lit("the logs do not say whether content was delivered"))
        .when(pl.col("completion_tokens") == 0)
        .then(pl.lit("nothing generated"))
        .when(unrecorded)
        .then(pl.concat_str(tokens, pl.lit(" tokens generated, delivery not recorded")))
        .otherwise(pl.concat_str(tokens, pl.lit(" tokens generated and delivered")))
    )
    why = _reasons(cats, MIN_REASONS)
    return _Line(
        pl.concat_str(
            pl.lit(": received "),
            pl.col("at"),
            pl.lit(", prompt of "),
            _thousands(pl.col("prompt_tokens")),
            pl.lit(" tokens (prefill pool "),
            _thousands(pl.col("capacity")),
            pl.lit(" tokens); "),
            delivery,
            pl.when(why != "")
            .then(pl.concat_str(pl.lit("; it may not have been affected: "), why))
            .otherwise(pl.lit("")),
            pl.lit("."),
        )
    )


def _possible_line(frame: pl.DataFrame) -> _Line:
    received = (
        pl.when(pl.col("at").is_not_null())
        .then(pl.concat_str(pl.lit("received "), pl.col("at")))
        .otherwise(pl.lit("time not readable"))
    )
    prompt = (
        pl.when(pl.col("prompt_tokens").is_not_null())
        .then(
            pl.concat_str(
                pl.lit(", prompt of "), _thousands(pl.col("prompt_tokens")), pl.lit(" tokens")
            )
        )
        .otherwise(pl.lit(""))
    )
    return _Line(
        pl.concat_str(
            pl.lit(": "),
            received,
            prompt,
            pl.lit("; "),
            _reasons(pl.col("categories"), MAX_REASONS),
            pl.lit("."),
        )
    )


def _owner_line(frame: pl.DataFrame) -> _Line:
    received = (
        pl.when(pl.col("at").is_not_null())
        .then(pl.concat_str(pl.lit("received "), pl.col("at"), pl.lit(", ")))
        .otherwise(pl.lit(""))
    )
    return _Line(
        pl.concat_str(
            pl.lit(": "),
            received,
            pl.lit("finished "),
            pl.col("ended_at"),
            pl.lit("; could have been read by "),
            _thousands(pl.col("exposures")),
            pl.lit(" affected response(s)."),
        )
    )


def _reasons(categories: pl.Expr, words: Mapping[str, str]) -> pl.Expr:
    """The reasons of a request's range categories, in the words of `words` (in its order),
    `; `-joined; "" for none."""
    parts = [
        pl.when(categories.list.contains(cat)).then(pl.lit(text)).otherwise(pl.lit(None))
        for cat, text in words.items()
    ]
    return pl.concat_str(parts, separator="; ", ignore_nulls=True).fill_null("")


def _blocks(frame: pl.DataFrame, line: _Line) -> dict[str, Block]:
    """Each account's list as a block: `- NAME: ...` items in Markdown and plain text, an
    HTML `<ul>` (what CommonMark makes of the Markdown)."""
    if not frame.height:
        return {}
    name = pl.col("shown")
    md_name, html_name = name, name
    shown = frame["shown"]
    # most names (request ids) hold nothing to escape: a page's names are searched once
    if shown.str.contains(_MD_SYNTAX).any() or shown.str.starts_with("-").any():
        md_name = name.str.replace_all(_MD_SYNTAX, r"\$1")
        md_name = (
            pl.when(md_name.str.starts_with("-")).then(pl.lit("\\") + md_name).otherwise(md_name)
        )
    if shown.str.contains(r'[&<>"]').any():
        html_name = (
            name.str.replace_all("&", "&amp;", literal=True)
            .str.replace_all("<", "&lt;", literal=True)
            .str.replace_all(">", "&gt;", literal=True)
            .str.replace_all('"', "&quot;", literal=True)
        )
    # the item's words after the name, made once (an eager select computes an expression
    # each time it appears)
    worded = frame.select("account_id", "shown", line.expr.alias("_line"))
    rest = pl.col("_line")
    lines = worded.select(
        "account_id",
        pl.concat_str(pl.lit("- "), name, rest).alias("text"),
        pl.concat_str(pl.lit("<li>"), html_name, rest, pl.lit("</li>")).alias("html"),
        *([] if md_name is name else [pl.concat_str(pl.lit("- "), md_name, rest).alias("md")]),
    )
    grouped = lines.group_by("account_id", maintain_order=True).agg(
        pl.exclude("account_id").str.join("\n")
    )
    if md_name is name:  # no name to escape (the usual case): the Markdown is the plain text
        return {a: Block(t, t, f"<ul>\n{h}\n</ul>\n") for a, t, h in grouped.iter_rows()}
    return {a: Block(m, t, f"<ul>\n{h}\n</ul>\n") for a, t, h, m in grouped.iter_rows()}


def _rows(frame: pl.DataFrame, delivery: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Each account's listed requests as rows for a template (times as Markdown)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in frame.iter_rows(named=True):
        item = notices.values({k: v for k, v in row.items() if k != "account_id"})
        if delivery:
            item["delivery"] = notices.delivery(row["completion_tokens"])
            item["delivery_recorded"] = "status_unknown" not in (row.get("categories") or [])
        out.setdefault(row["account_id"], []).append(item)
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
    engine.write_frame("notify_jurisdiction", values, "account_id", temporary=True)
    return column


def _readme(
    case: Case,
    files: list[ListFile],
    contacts: list[str],
    jurisdiction: str | None,
    address_columns: list[str],
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
    to = (
        f"the addresses in column(s) {', '.join(md(c) for c in address_columns)} of {md(accounts)}"
        if accounts is not None and address_columns
        else "no address (the case names no accounts file, or it has no e-mail column)"
    )
    lines += [
        "## notices/",
        "",
        "One notice per notified account, with a section per role it has (responses it "
        "received, requests the evidence leaves possibly affected, its requests whose data "
        "was at risk). `notices/md/` holds each as Markdown, for review; `notices/eml/` its "
        f"e-mail message (RFC 5322: a plain-text and an HTML part of the same text), to {to} "
        "(index: notices/index.csv; accounts without an address: no_contact.csv). A file is "
        "named after its account: the id's letters, digits, `_` and `-` (at most 60), then "
        "`-` and the first 16 hex digits of the sha256 of the exact id. Ids and contact "
        "values are data: escaped in the Markdown and the HTML, never markup.",
        "",
        "## regulator_summary.md, incident.json",
        "",
        "The figures and texts for a supervisory authority, shaped after GDPR Art. 33(3); the "
        "incident in the VERIS 1.4 shape (JSON)."
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
