"""What the docs say about the bundled case is what `forensics demo` prints.

Every figure README.md and docs/ quote about the bundled case is listed in `QUOTES`: the
page, and the text as it stands there with each figure written as a placeholder for where
the demo's outputs hold it. The demo runs once per session (`bundled_demo`); each quote, its
placeholders filled from that run, must be on its page (line breaks and runs of spaces read
as one space). A figure the code changes fails here, naming the page and the text: fix the
page. A page that quotes a new figure of the bundled case adds its line to `QUOTES`.

Placeholders (`<<NAME>>`, or `<<NAME|SPEC>>` with a Python format spec such as `,`, which
groups thousands, or `M`: millions with two decimals, `2.04M`):
- `a/b/c`: summary.json's `a.b.c` (a list index is a number);
- `csv:FILE:ACCOUNT:COLUMN`: COLUMN of ACCOUNT's row in FILE (a CSV under the demo's out);
- `rows:FILE`: the data rows of FILE;
- `sql:NAME`: the value of the query `SQL[NAME]` on the demo's case.duckdb;
- `jurisdictions`: the jurisdictions with a recipient, as a list in words (`a, b and c`).

The excerpts of a notice (README.md, docs/notices.md) show its e-mail message as a customer
receives it: its headers (`From:`, `To:`, ...) and its plain-text part, decoded. They are
checked line by line against the message the demo wrote, parsed back by the standard
library's `email` package (`EXCERPTS`): a line cut with `...` against its start.
"""

from __future__ import annotations

import csv
import email
import email.message
import email.policy
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

REPO = Path(__file__).resolve().parent.parent
SQL = {
    # what the prompt-size chart draws: every band but fits, fits from the baseline's 131,072
    "size_chart": "SELECT count(*) FROM bands WHERE band <> 'fits' OR prompt_tokens >= 131072",
}
REASON = "engine_reconciliation/engine_only/reasons/excluded account ({})/count"
STATUS_499 = (
    "engine_reconciliation/engine_only/reasons/gateway status 499: response not delivered to "
    "the client (band over_capacity_failed)/count"
)
QUOTES: list[tuple[str, str]] = [
    ("README.md", "a gateway log of <<ingest_by_format/jsonl/rows_read|,>> records"),
    (
        "README.md",
        "**<<exposure_count>> exposed responses** to prompts the <<capacity/0/tokens|,>>-token "
        "prefill pool refused at admission (<<capacity/0/reject_from|,>> tokens and more)",
    ),
    (
        "README.md",
        "`exposed responses: <<exposure_count>> (range "
        "<<exposure_range/min>>-<<exposure_range/max>>)`: the gateway log's"
        " <<ingest_by_format/jsonl/quarantined>> lines that are not valid JSON",
    ),
    ("README.md", "and the verdict `<<verdict>>`. The count carries its range"),
    (
        "docs/index.md",
        "**<<exposure_count>> exposed responses**, <<affected_accounts>> affected accounts, the "
        "operator's tests (<<excluded_by_reason/internal-test>>) and the researcher "
        "(<<excluded_by_reason/security-researcher>>) set aside, verdict `<<verdict>>`",
    ),
    ("docs/index.md", "held only **<<capacity/0/tokens|,>>** tokens"),
    ("docs/index.md", "**<<exposure_count>> responses** to prompts above the prefill pool"),
    ("docs/index.md", "(a pool of about **<<capacity/1/tokens|M>>** tokens"),
    (
        "docs/evidence.md",
        '"exposure_range": {"min": <<exposure_range/min>>, "likely": <<exposure_range/likely>>, '
        '"max": <<exposure_range/max>>, "contributions": [{"category": '
        '"<<exposure_range/contributions/0/category>>", "direction": '
        '"<<exposure_range/contributions/0/direction>>", "requests": '
        "<<exposure_range/contributions/0/requests>>}]}",
    ),
    (
        "docs/evidence.md",
        "The headline reads `exposed responses: <<exposure_count>> (range "
        "<<exposure_range/min>>-<<exposure_range/max>>)`",
    ),
    (
        "docs/evidence.md",
        "on the bundled case `in scope: <<coverage/in_scope|,>> of <<coverage/loaded|,>> loaded "
        "requests`",
    ),
    (
        "docs/evidence.md",
        "On the bundled case (`forensics demo`) the range is "
        "<<exposure_range/min>>-<<exposure_range/max>>: the gateway log's "
        "<<ingest_by_format/jsonl/quarantined>> lines that are not valid JSON",
    ),
    (
        "docs/evidence.md",
        "The <<engine_reconciliation/engine_only/count>> engine-only signatures are all explained "
        f"(<<{REASON.format('internal-test')}>> + <<{REASON.format('security-researcher')}>> "
        f"excluded accounts, <<{STATUS_499}>> answered with status 499)",
    ),
    (
        "docs/decisions.md",
        "the bundled case reads <<ingest/rows_read|,>> = <<ingest_by_format/jsonl/rows_read|,>> + "
        "<<ingest_by_format/sglang/rows_read|,>>",
    ),
    (
        "docs/decisions.md",
        "On the bundled case: <<engine_confirmed>> of <<exposure_count>> confirmed; "
        "<<engine_reconciliation/engine_only/count>> engine-only "
        f"(<<{REASON.format('internal-test')}>> + <<{REASON.format('security-researcher')}>> "
        f"excluded, <<{STATUS_499}>> with status 499)",
    ),
    (
        "docs/decisions.md",
        "<<capacity/0/reject_from|,>> on a <<capacity/0/tokens|,>>-token pool",
    ),
    ("docs/decisions.md", "the bundled case's model is written `'<<models/0>>`"),
    (
        "docs/decisions.md",
        "The bundled case has <<data_owners/accounts>> data-owner accounts with "
        "<<data_owners/requests|,>> requests at risk: <<data_owners/read_by/exposed/accounts>> "
        "accounts and <<data_owners/read_by/exposed/requests|,>> requests that the exposed "
        "responses could have read (all the owners there were before), and "
        "<<data_owners/read_by/excluded/accounts>> accounts and "
        "<<data_owners/read_by/excluded/requests|,>> requests that the <<bands/excluded>> "
        "excluded responses could have read.",
    ),
    ("docs/outputs.md", "the bundled case's model is written `'<<models/0>>`"),
    (
        "docs/notices.md",
        "On the bundled case: <<affected_accounts>> recipient accounts and <<exposure_count>> "
        "exposed responses across <<jurisdictions>>; <<data_owners/accounts>> data-owner accounts "
        "with <<data_owners/requests|,>> requests at risk; <<rows:notify/excluded.csv>> excluded.",
    ),
    (
        "docs/notices.md",
        "(the bundled case: `<<data_owners/read_by/excluded/accounts>> of them through such "
        "responses` and `including 4 set-aside accounts with 52 requests` of "
        "<<data_owners/accounts>> and <<data_owners/requests|,>>);",
    ),
    (
        "docs/outputs.md",
        "`acct-076c33bcab` has <<csv:notify/data_owners.csv:acct-076c33bcab:requests_at_risk>> "
        "requests at risk and <<csv:notify/data_owners.csv:acct-076c33bcab:exposures>> exposures",
    ),
    (
        "docs/performance.md",
        "The bundled demo (<<exposure_count>> exposed responses, <<sql:size_chart|,>> requests in "
        "the size chart)",
    ),
]
MESSAGE = "notify/notices/eml/acct-091ec8b343-c84ee19064f1cee6.eml"
HEADERS = ("From", "Reply-To", "To", "Subject", "Date")
# (page, the text just before the excerpt's ```text block, the message it quotes)
EXCERPTS = [
    ("README.md", "A notice of the bundled case", MESSAGE),
    ("docs/notices.md", "## A message as a customer receives it (bundled case)", MESSAGE),
]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _in_words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _value(name: str, summary: dict[str, Any], out: Path) -> Any:
    """The figure a placeholder names (the module doc)."""
    kind, _, rest = name.partition(":")
    if kind == "csv":
        file, account, column = rest.split(":")
        (row,) = [r for r in _csv(out / file) if r["account_id"] == account]
        return int(row[column])
    if kind == "rows":
        return len(_csv(out / rest))
    if kind == "sql":
        con = duckdb.connect(str(out / "case.duckdb"), read_only=True)
        try:
            return con.execute(SQL[rest]).fetchone()[0]  # type: ignore[index]
        finally:
            con.close()
    if name == "jurisdictions":
        rows = _csv(out / "notify" / "jurisdictions.csv")
        return _in_words([r["jurisdiction"] for r in rows if int(r["recipient_accounts"])])
    value: Any = summary
    for key in name.split("/"):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def _filled(template: str, summary: dict[str, Any], out: Path) -> str:
    """`template` with each placeholder replaced by its figure, formatted."""

    def one(match: re.Match[str]) -> str:
        value = _value(match.group(1), summary, out)
        spec = match.group(2) or ""
        return f"{value / 1e6:.2f}M" if spec == "M" else format(value, spec)

    return re.sub(r"<<([^<>|]+)(?:\|([^<>]*))?>>", one, template)


@pytest.fixture(scope="module")
def summary(bundled_demo: Path) -> dict[str, Any]:
    return json.loads((bundled_demo / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("page, template", QUOTES, ids=[f"{p}:{t[:40]}" for p, t in QUOTES])
def test_a_figure_the_docs_quote_is_what_the_demo_gives(bundled_demo, summary, page, template):
    expected = _flat(_filled(template, summary, bundled_demo))
    text = _flat((REPO / page).read_text(encoding="utf-8"))
    assert expected in text, f"{page} should read: {expected}"


def _received(path: Path) -> list[str]:
    """The lines a customer reads of a message: its headers, then its plain-text part."""
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert isinstance(message, email.message.EmailMessage)
    body = message.get_body(("plain",))
    assert body is not None
    headers = [f"{h}: {message[h]}" for h in HEADERS if message[h] is not None]
    return headers + str(body.get_content()).replace("\r\n", "\n").splitlines()


@pytest.mark.parametrize("page, before, message", EXCERPTS)
def test_a_notice_excerpt_in_the_docs_is_the_message_the_demo_writes(
    bundled_demo, page, before, message
):
    text = (REPO / page).read_text(encoding="utf-8")
    block = text[text.index(before) :].split("```text\n", 1)[1].split("```", 1)[0]
    written = _received(bundled_demo / message)
    for line in block.splitlines():
        if line.strip() in ("", "..."):
            continue
        shown = line.removesuffix("...").rstrip().removesuffix(",")
        if shown.endswith("..."):
            shown = shown.removesuffix("...").rstrip()
        assert any(w.startswith(shown) for w in written), f"{page}: {line!r} not in {message}"


def test_the_placeholders_read_summary_json_and_the_outputs(bundled_demo, summary):
    # a guard on the checker itself, against values read by hand from the demo (truth.json:
    # 155 exposed, internal-test 60, security-researcher 50; 72,007 gateway records)
    assert _filled("<<exposure_count>>", summary, bundled_demo) == "155"
    assert _filled("<<excluded_by_reason/security-researcher>>", summary, bundled_demo) == "50"
    assert _filled("<<ingest_by_format/jsonl/rows_read|,>>", summary, bundled_demo) == "72,007"
    assert _filled("<<capacity/1/tokens|M>>", summary, bundled_demo) == "2.04M"
    assert _filled('{"a": <<exposure_range/min>>}', summary, bundled_demo) == '{"a": 155}'
    assert _filled("<<rows:notify/excluded.csv>>", summary, bundled_demo) == "4"
