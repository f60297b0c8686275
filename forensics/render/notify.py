"""The customer-notification lists under OUT/notify/ (SPEC.md "Outputs").

`write_lists(engine, case, out_dir)` needs `bands` and `data_owners` (from analyze) and
writes recipients.csv, data_owners.csv and excluded.csv, sorted by account_id, with every
column of the case's accounts file joined on account_id. An affected or data-owner account
missing from the accounts file is still listed (empty contacts) and warned about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..case import Case
from ..engines import SQLEngine
from ..errors import AnalysisError, InputError, command
from ..formats import printable, write_csv

MAX_IDS_IN_WARNING = 10


@dataclass
class NotifyResult:
    """The files written and the warnings to show."""

    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_accounts(engine: SQLEngine, case: Case) -> list[str]:
    """Materialize `case_accounts` from the accounts file (empty without one); warnings."""
    path = case.accounts_path
    if path is None:
        engine.materialize("case_accounts", "notify/accounts_empty")
        return ["the case names no [accounts] file: the lists carry no contact columns"]
    if not path.is_file():
        raise InputError(
            "accounts file not found",
            where=f"{case.path}: accounts.path = {path}",
            fix="give a CSV with an account_id column and any contact columns",
        )
    try:
        engine.load_local("case_accounts", "notify/accounts_load", path=str(path))
    except engine.errors as e:
        raise InputError(
            f"cannot read the accounts file as CSV: {str(e).splitlines()[0]}",
            where=str(path),
            fix="give a CSV with a header line and an account_id column",
        ) from None
    columns = engine.frame("notify/accounts_columns").columns
    if "account_id" not in columns:
        raise InputError(
            "the accounts file has no account_id column",
            where=f"{path}:1",
            fix="name the column holding the account ids account_id",
        )
    duplicates = engine.frame("notify/accounts_duplicates")["account_id"].to_list()
    if duplicates:
        raise InputError(
            f"account_id listed more than once: {_ids(duplicates)}",
            where=str(path),
            fix="give each account one row",
        )
    return []


def write_lists(engine: SQLEngine, case: Case, out_dir: Path) -> NotifyResult:
    """Write out_dir/notify/{recipients,data_owners,excluded}.csv."""
    for table in ("bands", "data_owners"):
        if not engine.table_exists(table):
            raise AnalysisError(
                f"the case database holds no {table} table",
                where=engine.where,
                fix=f"run {command('analyze')} (or {command('run')}) first",
            )
    result = NotifyResult(warnings=load_accounts(engine, case))
    # every configured exclusion, whether the analysis applied them or not
    exclusions = pl.DataFrame(
        sorted(case.excluded_accounts().items()),
        schema={"account_id": pl.String, "reason": pl.String},
        orient="row",
    )
    engine.write_frame("notify_exclusions", exclusions, "account_id")

    folder = out_dir / "notify"
    for name, query in (
        ("recipients.csv", "notify/recipients"),
        ("data_owners.csv", "notify/data_owners"),
        ("excluded.csv", "notify/excluded"),
    ):
        result.paths.append(write_csv(engine.frame(query), folder / name))

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


def _ids(ids: list[str]) -> str:
    """The first ids, as one printable line (an id may hold control characters)."""
    shown = ", ".join(printable(i, one_line=True) for i in ids[:MAX_IDS_IN_WARNING])
    return shown + (
        f" (+{len(ids) - MAX_IDS_IN_WARNING} more)" if len(ids) > MAX_IDS_IN_WARNING else ""
    )
