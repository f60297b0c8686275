"""From lists to notices a notification team sends as they are (issue 39, docs/notices.md):
one notice per account with a section per role, who is notified, which events each reader
gets, e-mail messages parsed back, what the evidence shows (delivery not recorded, tiers,
not attributable), the regulator summary with its deadlines and incident.json, safe file
names and text, the column dictionary, and the bundled case.

Figures are derived by hand in tests/fixtures/case_small/README.md ("Notices") and
tests/fixtures/evidence/README.md ("Tiers"), or in the test's docstring.
"""

from __future__ import annotations

import csv
import dataclasses
import email
import gc
import hashlib
import json
import re
import shutil
from email import policy
from email.message import EmailMessage
from pathlib import Path

import duckdb
import pytest
from case_small_db import CASE_DIR, case_small, engine_with_requests
from conftest import messages
from evidence_case import analyzed, case_copy
from markdown_it import MarkdownIt
from partial_case import PARTIAL_DIR

from forensics import pipeline
from forensics.case import Event, NotifySettings, load_case, parse_utc
from forensics.cli import app
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError, InputError
from forensics.formats import printable
from forensics.render import messages as messages_module
from forensics.render import notify
from forensics.render.headline import headline
from forensics.render.messages import Composer, encoding, html_document
from forensics.render.notices import md, notice_file_name, to_html, to_text

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "sample_logs" / "glm53" / "incident.toml"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*-[0-9a-f]{16}\.md$")
WINDOWS_DEVICES = {"con", "prn", "aux", "nul"} | {
    f"{d}{i}" for d in ("com", "lpt") for i in "123456789"
}
RECIPIENT = "Responses your account received"
POSSIBLE = "Responses your account may have received"
OWNER = "Your requests whose data was at risk"
# case_small: the accounts notified (README "Notices"): recipients alice, bob, carol, erin;
# dave possible (r10, unknown_capacity); data owners alice, bob, carol, dave, frank and qa,
# whose [[exclude]] entry does not say notify = true
INDEX = [
    ("acct-alice", "recipient;data_owner", "proven"),
    ("acct-bob", "recipient;data_owner", "proven"),
    ("acct-carol", "recipient;data_owner", "proven"),
    ("acct-dave", "possible_recipient;data_owner", "possible"),
    ("acct-erin", "recipient", "proven"),
    ("acct-frank", "data_owner", ""),
]
# Words no customer or regulator text may hold: commands, options, case-file keys, the logs'
# fields and the toolkit's own names for them
TOOL_WORDS = (
    "forensics ",
    "[notify]",
    "[[",
    "awareness = true",
    "summary.json",
    "decode_node",
    "prefill_node",
    "completion_tokens",
    "prompt_tokens",
    "request_id",
    "account_id",
    "ts_end",
    "mapping",
    "unknown_capacity",
    "status_unknown",
    "clock_skew",
    "token_count",
    "engine_only",
    "pool-walkback",
    "verdict",
    "band ",
)

# case_small's accounts with a region column; acct-erin, acct-qa2 and acct-res are not in it,
# acct-dave has no value, acct-zed is a customer no list names
REGION_ACCOUNTS = (
    "account_id,name,email,region\n"
    "acct-alice,Alice Ltd,alice@example.com,eu\n"
    'acct-bob,"Bob, Inc.",bob@example.com,us\n'
    "acct-carol,Carol GmbH,carol@example.com,eu\n"
    "acct-dave,Dave Co,dave@example.com,\n"
    "acct-frank,Frank SA,frank@example.com,us\n"
    "acct-qa,Ops QA,qa@example.internal,us\n"
    "acct-zed,Zed Pty,zed@example.com,apac\n"
)
TEXTS = (
    "\n[notify]\n"
    'jurisdiction = "region"\n'
    'description = "The *pool* was too small."\n'
    "consequences = '''\nOthers' prompts could be read.\n'''\n"
    'measures = "- Pool enlarged.\\n- Patch rejects oversized prompts."\n'
    'contact = "DPO, dpo@provider.example"\n'
)
SENDER = (
    "\n[notify]\n"
    'sender = "Security Team <security@provider.example>"\n'
    'reply_to = "dpo@provider.example"\n'
    'signature = "Jane Doe\\nSecurity Team"\n'
)


@pytest.fixture
def engine():
    eng = engine_with_requests()
    yield eng
    eng.close()


def _case_copy(folder: Path, extra: str = "", accounts: str | None = None) -> Path:
    """case_small copied into `folder`, the case file's last event marked awareness = true
    (2026-09-01T14:25:00Z), then `extra` appended; `accounts` replaces accounts.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("requests.csv", "researchers.txt", "accounts.csv"):
        shutil.copy(CASE_DIR / name, folder / name)
    if accounts is not None:
        (folder / "accounts.csv").write_text(accounts, encoding="utf-8")
    case = folder / "incident.toml"
    text = (CASE_DIR / "incident.toml").read_text(encoding="utf-8")
    case.write_text(text + "awareness = true\n" + extra, encoding="utf-8")
    return case


def _analyzed(engine, case=None):
    """The whole analysis of `case` (default case_small) on the engine: its summary dict."""
    summary, _ = pipeline.analyze_case(engine, case or case_small())
    return summary


def _notified(case_path: Path, out: Path, **options) -> dict:
    """Ingest, analyze and notify a case file in memory (what `run` does, without the
    report); the summary dict (summary.json's content)."""
    case = load_case(case_path)
    with DuckDBEngine() as eng:
        pipeline.ingest_sources(eng, case)
        summary, _ = pipeline.analyze_case(eng, case, **options)
        notify.write_lists(eng, case, out, summary)
    return summary


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _index(out: Path) -> list[dict[str, str]]:
    return _csv(out / "notify" / "notices" / "index.csv")


def _row(out: Path, account: str) -> dict[str, str]:
    rows = [r for r in _index(out) if r["account_id"] == account]
    assert len(rows) == 1
    return rows[0]


def _notice(out: Path, account: str) -> str:
    """The notice (Markdown) of `account`, found through index.csv."""
    return (out / "notify" / "notices" / _row(out, account)["file"]).read_text(encoding="utf-8")


def _message(out: Path, account: str) -> EmailMessage:
    """The e-mail message of `account`, parsed back by the standard library."""
    path = out / "notify" / "notices" / _row(out, account)["eml"]
    message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def _parts(message: EmailMessage) -> tuple[str, ...]:
    """(text/plain, text/html) of a message, as a mail client reads them (line ends LF)."""
    text, html = message.get_body(("plain",)), message.get_body(("html",))
    assert text is not None and html is not None
    return tuple(str(p.get_content()).replace("\r\n", "\n") for p in (text, html))


def _section(text: str, title: str) -> str:
    """The body of the `## title` section of a Markdown text."""
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _listed_ids(section: str) -> list[str]:
    """The request ids of a notice's list items (`- ID: received ...`), unescaped."""
    return [_unescape(m) for m in re.findall(r"^- (\S+?): (?:received|finished)", section, re.M)]


def _rendered(markdown: str) -> tuple[str, set[str]]:
    """(the text a CommonMark + GFM-table renderer shows, every token type it makes)."""
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    texts, kinds = [], set()
    for token in parser.parse(markdown):
        kinds.add(token.type)
        for child in token.children or []:
            kinds.add(child.type)
            if child.type in ("text", "code_inline"):
                texts.append(child.content)
    return "".join(texts), kinds


def _words_of_the_tool(text: str) -> list[str]:
    options = re.findall(r"(?<![-|])--[a-z][a-z-]*", text)  # `--out`, never `| --- |`
    return [w for w in TOOL_WORDS if w in text] + options


# --- 1. one notice per account, a section per role ----------------------------------------


def test_one_notice_per_notified_account_with_its_roles_in_the_index(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    index = _index(tmp_path)

    def name(account: str) -> str:  # docs/notices.md: stem, then 16 hex digits of its sha256
        return f"{account}-{hashlib.sha256(account.encode()).hexdigest()[:16]}.md"

    assert [(r["account_id"], r["roles"], r["tier"]) for r in index] == INDEX
    assert [r["file"] for r in index] == [f"md/{name(a)}" for a, _, _ in INDEX]
    folder = tmp_path / "notify" / "notices"
    for row in index:
        assert hashlib.sha256((folder / row["file"]).read_bytes()).hexdigest() == row["sha256"]
    assert sorted(p.name for p in (folder / "md").iterdir()) == [name(a) for a, _, _ in INDEX]


def test_a_notice_has_a_section_per_role_of_its_account(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))

    def titles(account: str) -> list[str]:
        return re.findall(r"^## (.*)$", _notice(tmp_path, account), re.M)

    assert titles("acct-alice") == [
        "What happened",
        RECIPIENT,
        OWNER,
        "What we have done",
        "Contact",
    ]
    assert titles("acct-dave") == ["What happened", POSSIBLE, OWNER, "What we have done", "Contact"]
    assert titles("acct-erin") == ["What happened", RECIPIENT, "What we have done", "Contact"]
    assert titles("acct-frank") == ["What happened", OWNER, "What we have done", "Contact"]


def test_a_recipient_section_lists_each_exposed_response_with_its_content(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "acct-bob")
    assert notice.startswith(
        "# Notice of a security incident affecting your account\n\n"
        f"- Reference: {_row(tmp_path, 'acct-bob')['reference']}\n"
        "- Account: acct-bob\n"
    )
    # bob's exposed responses (README "Bands"): r03 08:20 500 > pool 400, 20 tokens; r04 08:30
    # 1000 > 400, 0 tokens; r17 13:00 850 > 800, 50 tokens: 70 in all, one empty
    assert _section(notice, RECIPIENT) == (
        "\n3 responses to requests of your account were answered in this condition, the "
        "first received at 2026-09-01T08:20:00Z and the last at 2026-09-01T13:00:00Z:\n\n"
        "- r03: received 2026-09-01T08:20:00Z, prompt of 500 tokens (prefill pool 400 tokens); "
        "20 tokens generated and delivered.\n"
        "- r04: received 2026-09-01T08:30:00Z, prompt of 1,000 tokens (prefill pool 400 "
        "tokens); nothing generated.\n"
        "- r17: received 2026-09-01T13:00:00Z, prompt of 850 tokens (prefill pool 800 tokens); "
        "50 tokens generated and delivered.\n\n"
        "In all, 70 tokens were generated and delivered in these responses; 1 of them "
        "generated nothing.\n\n"
        "Please treat these responses as possibly holding another customer's data: do not use "
        "or pass them on, and delete any copies you stored.\n"
    )


def test_a_data_owner_section_lists_its_requests_at_risk(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    # alice owns r01 (read back by r03), r02 (by r03), r16 (by r17): README "Data owners"
    assert _section(_notice(tmp_path, "acct-alice"), OWNER) == (
        "\n3 requests of your account, finished between 2026-09-01T08:01:00Z and "
        "2026-09-01T12:00:30Z, were held in a server's cache that 2 affected response(s) to "
        "other customers could have read:\n\n"
        "- r01: received 2026-09-01T08:00:00Z, finished 2026-09-01T08:01:00Z; could have been "
        "read by 1 affected response(s).\n"
        "- r02: received 2026-09-01T08:10:00Z, finished 2026-09-01T08:12:00Z; could have been "
        "read by 1 affected response(s).\n"
        "- r16: received 2026-09-01T11:59:59Z, finished 2026-09-01T12:00:30Z; could have been "
        "read by 1 affected response(s).\n\n"
        "Whether data of a given request was in fact read cannot be told from the logs: these "
        "are the requests whose data could have been.\n"
    )


def test_a_recipient_missing_from_the_accounts_file_still_has_its_notice(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "acct-erin")
    assert "- Account: acct-erin\n" in notice
    assert _listed_ids(_section(notice, RECIPIENT)) == ["r13", "r21"]


# --- 2. who is notified --------------------------------------------------------------------


def test_an_excluded_account_gets_no_notice_unless_its_entry_says_so(tmp_path):
    """acct-qa (internal-test) owns r08, read back by r16 (README "Data owners"): a data
    owner, listed in data_owners.csv either way; noticed only with notify = true."""
    plain = _case_copy(tmp_path / "plain")
    _notified(plain, tmp_path / "a")
    assert "acct-qa" not in {r["account_id"] for r in _index(tmp_path / "a")}
    assert "acct-qa" in {r["account_id"] for r in _csv(tmp_path / "a/notify/data_owners.csv")}

    marked = _case_copy(tmp_path / "marked")
    text = marked.read_text().replace(
        'accounts = ["acct-qa", "acct-qa2"]', 'accounts = ["acct-qa", "acct-qa2"]\nnotify = true'
    )
    marked.write_text(text)
    _notified(marked, tmp_path / "b")
    assert _row(tmp_path / "b", "acct-qa")["roles"] == "data_owner"
    assert _listed_ids(_section(_notice(tmp_path / "b", "acct-qa"), OWNER)) == ["r08"]
    assert [(r["account_id"], r["notified"]) for r in _csv(tmp_path / "b/notify/excluded.csv")] == [
        ("acct-qa", "true"),
        ("acct-qa2", "true"),
        ("acct-res", "false"),
    ]


def test_without_exclusions_excluded_accounts_are_listed_but_not_notified(tmp_path):
    """--no-exclusions (README "Bands"): qa (r07) and res (r09, r20) have exposed responses
    and are recipients in recipients.csv; their entries do not say notify = true."""
    case = _case_copy(tmp_path / "case")
    _notified(case, tmp_path / "out", exclusions=False)
    listed = {r["account_id"]: r["tier"] for r in _csv(tmp_path / "out/notify/recipients.csv")}
    assert listed["acct-qa"] == listed["acct-res"] == "proven"
    assert {"acct-qa", "acct-res"}.isdisjoint(r["account_id"] for r in _index(tmp_path / "out"))


# --- 3. which events each reader gets ----------------------------------------------------------


AUDIENCES = (
    '\n[[event]]\nat = "2026-09-01T06:00:00Z"\nlabel = "Prototype disabled"\n'
    '\n[[event]]\nat = "2026-09-01T07:00:00Z"\nlabel = "Model made private"\n'
    'audience = "customer"\n'
    '\n[[event]]\nat = "2026-09-01T08:00:00Z"\nlabel = "Researcher report verified"\n'
    'audience = "regulator"\n'
    '\n[[event]]\nat = "2026-09-05T00:00:00Z"\nlabel = "Patch released"\n'
    'audience = ["customer", "regulator"]\n'
)


def test_each_document_shows_only_its_audiences_events(tmp_path):
    """case_small's own event (the awareness, 14:25Z) is internal; of the four added, the
    notices show the customer ones, the summary the regulator ones (the 72-hour mark is
    2026-09-04T14:25Z: "Patch released" comes after it)."""
    case = _case_copy(tmp_path / "case", AUDIENCES)
    _notified(case, tmp_path / "out")
    assert _section(_notice(tmp_path / "out", "acct-frank"), "Timeline") == (
        "\n- 2026-09-01T07:00:00Z: Model made private\n- 2026-09-05T00:00:00Z: Patch released\n"
    )
    summary = (tmp_path / "out/notify/regulator_summary.md").read_text()
    assert _section(summary, "7. Timeline up to the 72-hour mark") == (
        "\n- 2026-09-01T08:00:00Z: Researcher report verified\n"
    )
    assert _section(summary, "8. Information after the 72-hour mark (Art. 33(4))") == (
        "\n- 2026-09-05T00:00:00Z: Patch released\n"
    )
    assert "Prototype disabled" not in summary + _notice(tmp_path / "out", "acct-frank")


def test_an_empty_timeline_has_no_heading(engine, tmp_path):
    # case_small's one event has no audience: internal, read in the report only
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    for row in _index(tmp_path):
        assert "## Timeline" not in _notice(tmp_path, row["account_id"])


# --- 4. messages ready to send -----------------------------------------------------------------


def test_each_notice_with_an_address_is_a_message_parsed_back(tmp_path):
    """case_small with a sender: every notified account in accounts.csv has its email as To;
    Date is the case's last time (window end 2026-09-02T00:00Z, after its one event)."""
    _notified(_case_copy(tmp_path / "case", SENDER), tmp_path / "out")
    out = tmp_path / "out"
    emails = {r["account_id"]: r["email"] for r in _csv(CASE_DIR / "accounts.csv")}
    sent = [r for r in _index(out) if r["eml"]]
    assert [r["account_id"] for r in sent] == [
        "acct-alice",
        "acct-bob",
        "acct-carol",
        "acct-dave",
        "acct-frank",
    ]
    for row in sent:
        message = _message(out, row["account_id"])
        assert message["From"] == "Security Team <security@provider.example>"
        assert message["Reply-To"] == "dpo@provider.example"
        assert message["To"] == emails[row["account_id"]]
        assert message["Subject"] == f"Security incident notice (reference {row['reference']})"
        assert message["Date"] == "Wed, 02 Sep 2026 00:00:00 +0000"
        digits = row["reference"].replace("-", "").lower()
        assert re.fullmatch(rf"<{digits}\.[0-9a-f]{{16}}@provider\.example>", message["Message-ID"])
        assert message.get_content_type() == "multipart/alternative"
        text, html = _parts(message)
        notice = _notice(out, row["account_id"])
        assert text == to_text(notice) + "\n"  # the one template, as plain text
        assert f"<title>{message['Subject']}</title>" in html
        assert to_html(notice) in html  # ... and as HTML
        assert text.endswith("Jane Doe\nSecurity Team\n")  # the signature, its lines kept


def test_an_account_without_an_address_gets_its_notice_and_a_no_contact_row(tmp_path):
    """erin is not in accounts.csv; dave's email cell is emptied: both keep their notice,
    neither gets a message; every message written has a recipient."""
    accounts = (CASE_DIR / "accounts.csv").read_text().replace("dave@example.com", "")
    _notified(_case_copy(tmp_path / "case", SENDER, accounts), tmp_path / "out")
    out = tmp_path / "out"
    assert [
        (r["account_id"], r["roles"], r["reason"]) for r in _csv(out / "notify" / "no_contact.csv")
    ] == [
        ("acct-dave", "possible_recipient;data_owner", "no value in email"),
        ("acct-erin", "recipient", "not in accounts.csv"),
    ]
    assert {r["account_id"]: r["eml"] for r in _index(out)}["acct-dave"] == ""
    assert (out / "notify/notices" / _row(out, "acct-dave")["file"]).is_file()
    for path in (out / "notify" / "notices" / "eml").iterdir():
        assert email.message_from_bytes(path.read_bytes(), policy=policy.default)["To"]


def test_a_value_that_is_not_an_address_is_never_a_recipient(tmp_path):
    """A header injection in an address cell (`a@b.example` then a line `Bcc: ...`) and a
    second address after `;`: the message goes to the valid addresses only; a cell with no
    valid address is no contact."""
    accounts = (
        "account_id,name,email\n"
        'acct-alice,Alice,"alice@example.com\r\nBcc: evil@attacker.example"\n'
        "acct-bob,Bob,bob@example.com; Bob Two <bob2@example.com>\n"
        "acct-carol,Carol,carol at example\n"
    )
    _notified(_case_copy(tmp_path / "case", SENDER, accounts), tmp_path / "out")
    out = tmp_path / "out"
    assert _message(out, "acct-bob")["To"] == "bob@example.com, bob2@example.com"
    raw = (out / "notify/notices" / _row(out, "acct-bob")["eml"]).read_bytes()
    assert b"Bcc" not in raw
    reasons = {r["account_id"]: r["reason"] for r in _csv(out / "notify" / "no_contact.csv")}
    assert reasons["acct-alice"].startswith("not an e-mail address in email: alice@example.com")
    assert reasons["acct-carol"] == "not an e-mail address in email: carol at example"


def test_a_sender_name_holding_a_comma_is_one_quoted_from_address(tmp_path):
    """`Example Inference, Inc. <security@...>`: unquoted, a comma splits a From header into
    two addresses; written quoted, the message parses back with one sender and that name."""
    sender = SENDER.replace(
        "Security Team <security@provider.example>",
        "Example Inference, Inc. <security@provider.example>",
    ).replace('"dpo@provider.example"', '"Privacy, DPO <dpo@provider.example>"')
    _notified(_case_copy(tmp_path / "case", sender), tmp_path / "out")
    message = _message(tmp_path / "out", "acct-bob")
    assert [(a.display_name, a.addr_spec) for a in message["From"].addresses] == [
        ("Example Inference, Inc.", "security@provider.example")
    ]
    assert [(a.display_name, a.addr_spec) for a in message["Reply-To"].addresses] == [
        ("Privacy, DPO", "dpo@provider.example")
    ]
    assert message.defects == []


def test_a_quoted_name_holding_a_comma_is_one_address(tmp_path):
    """`"Doe, John" <bob@example.com>`: the comma inside the quotes separates nothing, so the
    cell is one address (the name dropped), never two broken parts in no_contact.csv."""
    accounts = (
        "account_id,name,email\n"
        'acct-bob,Bob,"""Doe, John"" <bob@example.com>; ""Roe; Rick"" <rick@example.com>"\n'
    )
    _notified(_case_copy(tmp_path / "case", SENDER, accounts), tmp_path / "out")
    out = tmp_path / "out"
    assert _message(out, "acct-bob")["To"] == "bob@example.com, rick@example.com"
    no_contact = {r["account_id"] for r in _csv(out / "notify" / "no_contact.csv")}
    assert "acct-bob" not in no_contact


HOSTILE_IDS = {
    "acct-bob": "Tidal Bio Co.",
    "acct-carol": "[x](http://e.example) <i>c</i> & *d*",
    "acct-frank": "-f\x01_\u202e",
}


def _hostile_case(engine, tmp_path, **notify_settings):
    """case_small with hostile account ids (HOSTILE_IDS) and request ids (r03 ->
    `req_001<b>x</b>`, r04 -> `-r\x01_4`), each account's address in an accounts file, a
    sender; written into tmp_path."""
    for old, new in HOSTILE_IDS.items():
        engine.execute("UPDATE requests SET account_id = $n WHERE account_id = $o", n=new, o=old)
    engine.execute("UPDATE requests SET request_id = 'req_001<b>x</b>' WHERE request_id = 'r03'")
    engine.execute("UPDATE requests SET request_id = '-r\x01_4' WHERE request_id = 'r04'")
    accounts = tmp_path / "accounts.csv"
    with accounts.open("w", newline="", encoding="utf-8") as f:
        rows = [["account_id", "email"], ["acct-alice", "alice@example.com"]]
        rows += [[new, f"{old}@example.com"] for old, new in HOSTILE_IDS.items()]
        csv.writer(f).writerows(rows)
    case = dataclasses.replace(
        case_small(),
        accounts_path=accounts,
        notify=NotifySettings(sender="sec@provider.example", **notify_settings),
    )
    notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))


def test_a_responder_text_holding_the_mime_boundary_leaves_the_message_whole(engine, tmp_path):
    """A `[notify]` text is the responder's own Markdown, shown as written: a line of the
    message's boundary in it must not end a part (it goes in base64), nor add one."""
    _hostile_case(
        engine,
        tmp_path,
        signature="Jane\n--=_kv-forensics-notice\nContent-Type: text/html\n\n<a>Sign in</a>",
    )
    message = _message(tmp_path, "acct-alice")
    parts = list(message.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert [p["Content-Transfer-Encoding"] for p in parts] == ["base64", "base64"]
    assert _parts(message)[0].rstrip("\n").endswith("Content-Type: text/html\n\n<a>Sign in</a>")


def test_the_plain_text_reads_as_text_and_the_html_escapes_hostile_ids(engine, tmp_path):
    """The Markdown escapes ids (`Tidal Bio Co\\.`, `req\\_001\\<b\\>`); the plain-text part
    shows them as they are, the HTML part as text (`&lt;b&gt;`), never as markup."""
    _hostile_case(engine, tmp_path)
    notice = _notice(tmp_path, "Tidal Bio Co.")
    assert "- Account: Tidal Bio Co\\.\n" in notice
    assert "- req\\_001\\<b\\>x\\</b\\>: received" in notice
    text, html = _parts(_message(tmp_path, "Tidal Bio Co."))
    assert "- Account: Tidal Bio Co.\n" in text and "Co\\." not in text and "\\_" not in text
    assert "- req_001<b>x</b>: received 2026-09-01T08:20:00Z" in text
    assert "<li>req_001&lt;b&gt;x&lt;/b&gt;: received" in html and "<b>" not in html
    assert "- \\x01_4: received" not in text and "- -r\\x01_4: received" in text


def test_the_html_and_plain_text_are_what_commonmark_makes_of_the_notice(engine, tmp_path):
    """Every message's HTML body is CommonMark's HTML of its notice's Markdown, and its text
    part CommonMark's text of it (each shape of notice is parsed once and reused for the
    others: the reuse changes nothing), hostile ids and the responder's Markdown included."""
    _hostile_case(
        engine, tmp_path, measures="- **Pool** enlarged\n- `patch` <b>x</b>", signature="Jane\nTeam"
    )
    index = _index(tmp_path)
    assert len([r for r in index if r["eml"]]) == 4  # alice, bob, carol, frank have addresses
    for row in index:
        if not row["eml"]:
            continue
        notice = _notice(tmp_path, row["account_id"])
        text, html = _parts(_message(tmp_path, row["account_id"]))
        assert text == to_text(notice) + "\n"
        assert html.split("<body>\n", 1)[1].removesuffix("</body>\n</html>\n") == to_html(notice)


def test_messages_are_the_same_bytes_on_every_run(tmp_path):
    case = _case_copy(tmp_path / "case", SENDER)
    _notified(case, tmp_path / "a")
    _notified(case, tmp_path / "b")
    a, b = tmp_path / "a/notify/notices/eml", tmp_path / "b/notify/notices/eml"
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    for path in a.iterdir():
        assert path.read_bytes() == (b / path.name).read_bytes()


@pytest.mark.parametrize(
    ("sender", "to", "subject", "text"),
    [
        ("a@b.example", ["c@d.example"], "Security incident notice (reference 0000-1111)", "x\n"),
        (
            "Équipe sécurité <sec@provider.example>",
            [f"user{i}@a-long-domain-{i}.example.com" for i in range(9)],
            "Avis d'incident de sécurité: un sujet bien plus long que la ligne (référence 1)",
            "ünïcödé\r\nline\rcr\n.\nFrom here\n" + "long " * 400,
        ),
        ("a@b.example", ["c@d.example"], "two  spaces", ""),
        ("a@b.example", ["c@d.example"], "x", "x" * 57),
        ("a@b.example", ["c@d.example"], "x", "ascii\r\nlines\rof every\nend\n\n" + "y" * 990),
        ("a@b.example", ["c@d.example"], "x", "x" * 998),  # as it is; its HTML line: base64
        ("a@b.example", ["c@d.example"], "x", "z" * 999),
        ("a@b.example", ["c@d.example"], "x", "a NUL \0 in ASCII\n"),
        ("a@b.example", ["c@d.example"], "x", ".\nFrom a line a mailbox would mangle\n"),
    ],
)
def test_a_message_is_byte_for_byte_what_the_email_package_builds(sender, to, subject, text):
    composer = Composer(sender, "r@b.example", parse_utc("2026-10-26T00:00:00Z"), subject)
    html = html_document(subject, f"<p>{text}</p>\n")
    fast = composer.message(to, subject, "<id@b.example>", text, html)
    assert fast == composer.canonical(to, subject, "<id@b.example>", text, html)


@pytest.mark.parametrize(
    ("to", "ref", "text"),
    [
        (["c@d.example"], "0000-1111-2222-3333", "x\n"),
        ([f"u{i}@d.example" for i in range(9)], "AB CD", "ünïcödé\r\nline\rcr\n" + "y " * 600),
        (["c@d.example"], "\t two  spaces ", "z" * 999),
        (["c@d.example"], "0000", "a lone surrogate \udc80\n"),
        ([], "0000", ""),
    ],
)
def test_a_notice_message_is_the_message_of_its_subject_document_and_id(to, ref, text):
    """`Composer.notice` (the text encoded once) gives the bytes `message` gives for the
    subject with the reference, the HTML as a whole document and `message_id`'s id."""
    composer = Composer("a@b.example", None, parse_utc("2026-10-26T00:00:00Z"), notify.SUBJECT)
    html = f"<p>{text}</p>\n"
    subject = notify.SUBJECT.format(reference=ref)
    expected = composer.message(
        to, subject, composer.message_id(ref, to, text), text, html_document(subject, html)
    )
    assert composer.notice(to, ref, text, html) == expected


def test_a_reference_is_the_sha256_of_the_case_window_and_account():
    """Four groups of the first 16 hex digits of sha256(name NUL window start NUL account)."""
    case = case_small()
    for account in ("acct-alice", "Tidal Bio Co.", "\udc80x"):
        key = f"{case.name}\0{case.window_start.isoformat()}\0{account}"
        digits = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16].upper()
        expected = "-".join(digits[i : i + 4] for i in range(0, 16, 4))
        assert messages_module.reference(case, account) == expected


def test_a_part_in_ascii_with_lines_of_at_most_998_octets_is_sent_as_it_is():
    assert encoding("a notice\n" + "x" * 998 + "\r\n" + "y" * 998) == "7bit"
    assert encoding("") == "7bit"


def test_a_line_of_999_octets_anywhere_among_many_short_ones_makes_the_part_base64():
    # lines stepped over many at a time: a long line after, before and between runs of short
    # ones, each at every offset near a step's reach
    for short in (0, 1, 40, 997):
        for before in (0, 1, 3, 25, 26, 60):
            head = ("s" * short + "\n") * before
            for width, fits in (
                (997, True),
                (998, True),
                (999, False),
                (1000, False),
                (2500, False),
            ):
                for tail in ("", "\n" + "t" * 998, "\n" + ("u\n" * 30)):
                    text = head + "x" * width + tail
                    assert encoding(text) == ("7bit" if fits else "base64"), (short, before, width)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 999,
        "ok\n" + "x" * 999 + "\n",
        "Équipe",
        "a NUL \0",
        "ok\r" + "x" * 999,
        "a line\n--=_kv-forensics-notice--\nwould end the message",
    ],
)
def test_a_part_not_ascii_or_with_a_longer_line_a_nul_or_the_boundary_is_base64(text):
    assert encoding(text) == "base64"


def test_a_part_holding_the_boundary_parses_back_whole():
    text = "before\n--=_kv-forensics-notice\nafter\n"
    composer = Composer("a@b.example", None, parse_utc("2026-10-26T00:00:00Z"), "s")
    raw = composer.message(["c@d.example"], "s", "<id@b.example>", text, f"<p>{text}</p>\n")
    message = email.message_from_bytes(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    assert len(list(message.iter_parts())) == 2
    assert _parts(message)[0] == text


def test_a_notice_in_ascii_reads_as_it_is_in_its_raw_message(tmp_path):
    case = _case_copy(tmp_path / "case", SENDER)
    _notified(case, tmp_path)
    index = _csv(tmp_path / "notify/notices/index.csv")
    row = next(r for r in index if r["eml"])
    raw = (tmp_path / "notify/notices" / row["eml"]).read_bytes()
    message = _message(tmp_path, row["account_id"])
    text, html = (message.get_body((kind,)) for kind in ("plain", "html"))
    assert text is not None and html is not None
    assert text["Content-Transfer-Encoding"] == html["Content-Transfer-Encoding"] == "7bit"
    for part in _parts(message):
        assert part.replace("\n", "\r\n").encode("ascii") in raw


# --- 5. what the evidence shows ---------------------------------------------------------------


def test_tiers_on_the_evidence_fixture_derived_by_hand(tmp_path):
    """tests/fixtures/evidence/README.md "Tiers", base case: the range's min side is b01 b02
    b04 (status not mapped) and c1 (conflicting); its max side with a readable account a06
    (erin) and q5 (hank)."""
    eng, summary = analyzed()
    with eng:
        notify.write_lists(eng, load_case(case_copy(tmp_path)), tmp_path, summary)
    tiers = {r["account_id"]: r["tier"] for r in _csv(tmp_path / "notify/recipients.csv")}
    assert tiers == {
        "acct-alice": "proven",
        "acct-carol": "proven",
        "acct-erin": "possible",
        "acct-gina": "proven",
        "acct-hank": "possible",
        "acct-ivan": "likely",
        "acct-kate": "likely",
        "acct-lena": "proven",
    }


def test_tiers_with_clock_skew_token_tolerance_and_engine_logs(tmp_path):
    """README "Tiers", all together: a03 (carol's only exposed response) is on the min side
    now; a04 (dave) and a13 (frank) are on the max side; lena keeps a16, whose length the
    engine decides, and adds a17 and a19 on the max side."""
    case = case_copy(tmp_path, '\n[uncertainty]\nclock_skew = "2m"\nprompt_tokens_tolerance = 50\n')
    eng, summary = analyzed(case, engine_rows=True)
    with eng:
        notify.write_lists(eng, load_case(case), tmp_path, summary)
    rows = {r["account_id"]: r for r in _csv(tmp_path / "notify/recipients.csv")}
    assert {a: r["tier"] for a, r in rows.items()} == {
        "acct-alice": "proven",
        "acct-carol": "likely",
        "acct-dave": "possible",
        "acct-erin": "possible",
        "acct-frank": "possible",
        "acct-gina": "proven",
        "acct-hank": "possible",
        "acct-ivan": "likely",
        "acct-kate": "likely",
        "acct-lena": "proven",
    }
    # lena: a18 uncertain (980 + 50 > 1000); a17 (engine-only room 7101) and a19 (1030 - 50
    # <= 1000) possible
    assert (rows["acct-lena"]["uncertain_responses"], rows["acct-lena"]["possible_requests"]) == (
        "1",
        "2",
    )


def test_a_possible_account_gets_a_notice_saying_so_or_none(tmp_path):
    """hank's q5 (a.jsonl line 29, 02:00, 900 tokens, status unreadable) is possibly exposed:
    its notice says the logs do not settle it; with possible = "none" hank gets no notice,
    and stays in recipients.csv."""
    eng, summary = analyzed()
    with eng:
        notify.write_lists(eng, load_case(case_copy(tmp_path / "a")), tmp_path / "a", summary)
        none = case_copy(tmp_path / "b", '\n[notify]\npossible = "none"\n')
        notify.write_lists(eng, load_case(none), tmp_path / "b", summary)
    assert _section(_notice(tmp_path / "a", "acct-hank"), POSSIBLE) == (
        "\nThe logs do not settle whether this request of your account was answered in this "
        "condition. We tell you so that you can check it:\n\n"
        "- line 29 of a\\.jsonl: received 2026-09-01T02:00:00Z, prompt of 900 tokens; its log "
        "record could be read only in part.\n\n"
        "If you kept the responses to these requests, please treat them as possibly holding "
        "another customer's data.\n"
    )
    assert "acct-hank" not in {r["account_id"] for r in _index(tmp_path / "b")}
    assert "acct-hank" in {r["account_id"] for r in _csv(tmp_path / "b/notify/recipients.csv")}


def test_a_response_whose_status_was_assumed_says_its_delivery_is_not_recorded(tmp_path):
    """Two logs of one account, each one request over the pool (600 > 500), 10 tokens:
    s1 from a log that gives its status (200), s2 from one whose mapping names no status
    (so 200 is assumed: the range's min side). s1 is proven, so the account is proven."""
    (tmp_path / "a.jsonl").write_text(
        '{"id": "s1", "ts": "2026-09-01T01:00:00Z", "acct": "acct-a", "prompt": 600, '
        '"completion": 10, "status": 200}\n'
    )
    (tmp_path / "b.jsonl").write_text(
        '{"id": "s2", "ts": "2026-09-01T01:10:00Z", "acct": "acct-a", "prompt": 600, '
        '"completion": 10}\n'
    )
    fields = (
        'format = "jsonl"\n[fields]\nrequest_id = "id"\nts = "ts"\naccount_id = "acct"\n'
        'model = { const = "m" }\nprompt_tokens = "prompt"\ncompletion_tokens = "completion"\n'
    )
    (tmp_path / "a.mapping.toml").write_text(fields + 'status = "status"\n')
    (tmp_path / "b.mapping.toml").write_text(fields)
    case = tmp_path / "incident.toml"
    case.write_text(
        'name = "t"\nmodels = ["m"]\ncontext_window = 1000\n[window]\n'
        'start = "2026-09-01T00:00:00Z"\nend = "2026-09-02T00:00:00Z"\n'
        '[[source]]\npath = "a.jsonl"\nmapping = "a.mapping.toml"\n'
        '[[source]]\npath = "b.jsonl"\nmapping = "b.mapping.toml"\n'
        '[[capacity]]\nrole = "prefill"\ntokens = 500\nstart = "2026-09-01T00:00:00Z"\n'
    )
    _notified(case, tmp_path / "out")
    assert _section(_notice(tmp_path / "out", "acct-a"), RECIPIENT).startswith(
        "\n2 responses to requests of your account were answered in this condition, the first "
        "received at 2026-09-01T01:00:00Z and the last at 2026-09-01T01:10:00Z:\n\n"
        "- s1: received 2026-09-01T01:00:00Z, prompt of 600 tokens (prefill pool 500 tokens); "
        "10 tokens generated and delivered.\n"
        "- s2: received 2026-09-01T01:10:00Z, prompt of 600 tokens (prefill pool 500 tokens); "
        "10 tokens generated, delivery not recorded.\n\n"
        "In all, 20 tokens were generated in these responses (for 1 of them the logs do not "
        "record delivery).\n"
    )
    row = _csv(tmp_path / "out/notify/recipients.csv")[0]
    assert (row["tier"], row["uncertain_responses"]) == ("proven", "1")


def test_a_derived_request_id_is_shown_as_its_line(tmp_path):
    """A log whose mapping names no request_id: its request on line 2 gets the id
    `<16 hex of the file's sha256>:2`, which a notice shows as `line 2 of gw.jsonl`."""
    (tmp_path / "gw.jsonl").write_text(
        '{"ts": "2026-09-01T01:00:00Z", "acct": "acct-a", "prompt": 100}\n'
        '{"ts": "2026-09-01T01:05:00Z", "acct": "acct-a", "prompt": 6444, "completion": 3}\n'
    )
    (tmp_path / "gw.mapping.toml").write_text(
        'format = "jsonl"\n[fields]\nts = "ts"\naccount_id = "acct"\nmodel = { const = "m" }\n'
        'prompt_tokens = "prompt"\ncompletion_tokens = "completion"\nstatus = { const = 200 }\n'
    )
    case = tmp_path / "incident.toml"
    case.write_text(
        'name = "t"\nmodels = ["m"]\ncontext_window = 10000\n[window]\n'
        'start = "2026-09-01T00:00:00Z"\nend = "2026-09-02T00:00:00Z"\n'
        '[[source]]\npath = "gw.jsonl"\nmapping = "gw.mapping.toml"\n'
        '[[capacity]]\nrole = "prefill"\ntokens = 5000\nstart = "2026-09-01T00:00:00Z"\n'
    )
    _notified(case, tmp_path / "out")
    sha = hashlib.sha256((tmp_path / "gw.jsonl").read_bytes()).hexdigest()[:16]
    assert _csv(tmp_path / "out/notify/recipients.csv")[0]["request_ids"] == f"{sha}:2"
    assert "\n- line 2 of gw\\.jsonl: received 2026-09-01T01:05:00Z, prompt of 6,444 tokens " in (
        _notice(tmp_path / "out", "acct-a")
    )


def test_data_owners_not_attributable_are_said_so_never_zero(engine, tmp_path):
    """No request names a decode node: attribution not possible; the regulator summary says
    not attributable and why, incident.json gives no data_total."""
    engine.execute("UPDATE requests SET decode_node = NULL")
    summary = _analyzed(engine)
    assert summary["data_owners"]["status"] == "not_possible"
    notify.write_lists(engine, case_small(), tmp_path, summary)
    text = (tmp_path / "notify" / "regulator_summary.md").read_text()
    assert (
        "| Customers whose data was at risk (their requests could have been read by an "
        "affected response) | not attributable | not attributable |\n"
    ) in text
    assert (
        "Customers whose data was at risk: not attributable. The logs do not record which "
        "server generated the responses.\n"
    ) in text
    veris = json.loads((tmp_path / "notify" / "incident.json").read_text())
    assert "data_total" not in veris["attribute"]["confidentiality"]


def test_no_customer_or_regulator_text_names_a_command_option_or_field(tmp_path):
    """The notices (Markdown and both message parts) and the regulator summary of the
    evidence fixture with every uncertainty at once (every wording of the range in use)."""
    case = case_copy(
        tmp_path, '\n[uncertainty]\nclock_skew = "2m"\nprompt_tokens_tolerance = 50\n' + SENDER
    )
    eng, summary = analyzed(case, engine_rows=True)
    with eng:
        notify.write_lists(eng, load_case(case), tmp_path, summary)
    texts = [(tmp_path / "notify" / "regulator_summary.md").read_text()]
    for row in _index(tmp_path):
        texts.append(_notice(tmp_path, row["account_id"]))
    assert all(_words_of_the_tool(t) == [] for t in texts), [_words_of_the_tool(t) for t in texts]


# --- 6. the regulator summary, jurisdictions, incident.json --------------------------------------


def _regulator(engine, tmp_path, summary=None, **changes) -> str:
    case = dataclasses.replace(case_small(), **changes)
    summary = summary or _analyzed(engine, case)
    notify.write_lists(engine, case, tmp_path, summary)
    return (tmp_path / "notify" / "regulator_summary.md").read_text(encoding="utf-8")


def test_the_regulator_summary_gives_the_numbers_as_ranges(engine, tmp_path):
    text = _regulator(engine, tmp_path)
    # README: 8 exposed, range 8-9 (r10 unknown_capacity); accounts 4 proven, dave possible:
    # 4-5; data owners 6 accounts, 11 requests, partial (r21 has no decode node; the excluded
    # r07 r09 r20 ran on dc-3, no decode capacity); set aside 3 accounts (qa, qa2, res) with
    # 1 + 2 = 3 requests

    # 4-5; data owners 6 accounts, 11 requests, partial (r21 has no decode node); set aside 3
    # accounts (qa, qa2, res) with 1 + 2 = 3 requests; qa is one of the 6 owners (r08, 1
    # request at risk), so the owners' row says it holds 1 set-aside account, 1 request
    section = _section(
        text,
        "2. Categories and approximate numbers of data subjects and records concerned "
        "(Art. 33(3)(a))",
    )
    assert section.startswith(
        "\n| category | accounts | records |\n| --- | ---: | ---: |\n"
        "| Customers who received affected responses, which may hold other customers' data | "
        "4-5 | 8-9 responses |\n"
        "| Customers whose data was at risk (their requests could have been read by an "
        "affected response), including 1 set-aside account with 1 request: their data was in "
        "the cache all the same | at least 6 | at least 11 requests |\n"
        "| Set aside: the operator's own test accounts and researchers (reasons below); their "
        "responses are not counted in the first row, their requests at risk are in the second "
        "| 3 | 3 requests |\n\n"
        "Affected responses: 8 on the logs as read, at least 8 and at most 9 on the evidence. "
        "Customers who received them: 4 (4 with at least one response the evidence proves; 1 "
        "more whose requests the evidence leaves possibly affected).\n\n"
        "| what leaves the count uncertain | which way | records |\n| --- | --- | ---: |\n"
        "| requests answered by a server whose cache pool size is not known | may be affected "
        "| 1 |\n"
    )
    assert (
        "Customers whose data was at risk: attributed for part of the affected responses only, "
        "so these are lower bounds. For 1 affected response(s) the logs do not record which "
        "server generated them; 3 response(s) to set-aside accounts were generated on a server "
        "whose cache pool size is not known.\n"
    ) in section


def test_the_regulator_summary_follows_art_33_in_order(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    _notified(case, tmp_path / "out")
    text = (tmp_path / "out" / "notify" / "regulator_summary.md").read_text()
    assert re.findall(r"^## (.*)$", text, re.M) == [
        "1. Nature of the breach (Art. 33(3)(a))",
        "2. Categories and approximate numbers of data subjects and records concerned "
        "(Art. 33(3)(a))",
        "3. Contact point (Art. 33(3)(b))",
        "4. Likely consequences (Art. 33(3)(c))",
        "5. Measures taken or proposed (Art. 33(3)(d))",
        "6. Awareness and the 72-hour mark (Art. 33(1))",
        "7. Timeline up to the 72-hour mark",
        "8. Information after the 72-hour mark (Art. 33(4))",
    ]
    assert _section(text, "3. Contact point (Art. 33(3)(b))") == "\nDPO, dpo@provider.example\n"
    assert "\nOthers' prompts could be read.\n" in _section(
        text, "4. Likely consequences (Art. 33(3)(c))"
    )


def test_the_72_hour_mark_runs_from_the_awareness_event(engine, tmp_path):
    events = (
        Event(
            parse_utc("2026-09-08T00:00:00Z"), "Researcher reports the issue", False, ("regulator",)
        ),
        Event(parse_utc("2026-09-09T13:22:00Z"), "Incident declared", True, ("regulator",)),
    )
    text = _regulator(engine, tmp_path, events=events)
    assert _section(text, "6. Awareness and the 72-hour mark (Art. 33(1))") == (
        "\nThe operator became aware of the breach at 2026-09-09T13:22:00Z (Incident declared). "
        "Notification to the supervisory authority is due within 72 hours of that time: by "
        "2026-09-12T13:22:00Z. Where it is made later, the reasons for the delay go with it.\n"
    )
    assert "- 2026-09-09T13:22:00Z: Incident declared (the operator becomes aware)\n" in text


def test_without_an_awareness_event_the_summary_asks_for_it(engine, tmp_path):
    text = _regulator(engine, tmp_path, events=())
    assert "[TO BE COMPLETED: when the operator became aware of the breach" in text


DEADLINES = (
    '\n[notify.deadlines]\neu = { within = "72h", to = "authority" }\nus = "30d"\nmars = "1d"\n'
)


def test_jurisdictions_csv_gives_each_deadline_as_a_date(tmp_path):
    """Awareness 2026-09-01T14:25Z: eu + 72 h = 2026-09-04T14:25Z (authority), us + 30 days =
    2026-10-01T14:25Z (individuals); apac has none; mars is no account's: a warning."""
    case = _case_copy(tmp_path / "case", TEXTS + DEADLINES, REGION_ACCOUNTS)
    loaded = load_case(case)
    with DuckDBEngine() as eng:
        pipeline.ingest_sources(eng, loaded)
        summary, _ = pipeline.analyze_case(eng, loaded)
        result = notify.write_lists(eng, loaded, tmp_path / "out", summary)
    rows = _csv(tmp_path / "out/notify/jurisdictions.csv")
    assert [(r["jurisdiction"], r["deadline"], r["deadline_for"]) for r in rows] == [
        ("apac", "", ""),
        ("eu", "2026-09-04T14:25:00Z", "authority"),
        ("us", "2026-10-01T14:25:00Z", "individuals"),
        ("(unknown)", "", ""),
    ]
    assert "[notify.deadlines] names 1 jurisdiction(s) no account has: mars" in result.warnings
    text = (tmp_path / "out/notify/regulator_summary.md").read_text()
    assert "| eu | 2026-09-04T14:25:00Z | authority | 72h after awareness |\n" in text


def test_jurisdictions_count_each_list_per_value_of_the_column(engine, tmp_path):
    accounts = tmp_path / "accounts.csv"
    accounts.write_text(REGION_ACCOUNTS, encoding="utf-8")
    case = dataclasses.replace(
        case_small(), accounts_path=accounts, notify=NotifySettings(jurisdiction="region")
    )
    notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))
    # recipients alice 2, bob 3, carol 1, erin 2; possible dave; data owners alice 3, bob 2,
    # carol 1, dave 1, frank 3, qa 1 (requests at risk); excluded qa, qa2, res.
    # eu: alice, carol -> recipients 2 (2+1 = 3 responses), owners 2 (3+1 = 4), excluded 0
    # us: bob, frank, qa -> recipients 1 (3), owners 3 (2+3+1 = 6), excluded 1 (qa)
    # apac: zed -> all 0 (listed: every value of the column)
    # (unknown): erin (not in the file), dave (no value), qa2 and res (not in the file)
    #   -> recipients 1 (erin: 2), possible 1 (dave), owners 1 (dave: 1), excluded 2
    assert (tmp_path / "notify" / "jurisdictions.csv").read_text() == (
        "jurisdiction,recipient_accounts,exposed_responses,possible_accounts,"
        "data_owner_accounts,requests_at_risk,excluded_accounts,deadline,deadline_for\n"
        "apac,0,0,0,0,0,0,,\n"
        "eu,2,3,0,2,4,0,,\n"
        "us,1,3,0,3,6,1,,\n"
        "(unknown),1,2,1,1,1,2,,\n"
    )


def test_jurisdictions_reconcile_with_summary_and_the_lists(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    out = tmp_path / "out"
    summary = _notified(case, out)
    rows = _csv(out / "notify" / "jurisdictions.csv")

    def total(column: str) -> int:
        return sum(int(r[column]) for r in rows)

    recipients = _csv(out / "notify" / "recipients.csv")
    exposed = [r for r in recipients if r["tier"] != "possible"]
    owners = _csv(out / "notify" / "data_owners.csv")
    assert total("recipient_accounts") == summary["affected_accounts"] == len(exposed) == 4
    assert total("possible_accounts") == len(recipients) - len(exposed) == 1
    assert total("exposed_responses") == summary["exposure_count"] == 8
    assert total("exposed_responses") == sum(int(r["responses"]) for r in recipients)
    assert total("data_owner_accounts") == summary["data_owners"]["accounts"] == len(owners) == 6
    assert total("requests_at_risk") == summary["data_owners"]["requests"] == 11
    assert total("excluded_accounts") == len(_csv(out / "notify" / "excluded.csv")) == 3


def test_a_jurisdiction_that_is_not_a_column_is_refused_with_file_and_line(runner, tmp_path):
    case = _case_copy(tmp_path / "case", '\n[notify]\njurisdiction = "regoin"\n', REGION_ACCOUNTS)
    line = case.read_text().splitlines().index('jurisdiction = "regoin"') + 1
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "".join(messages(result.stderr)) == (
        f"error: {case.resolve()}:{line}: notify.jurisdiction: 'regoin' is not a column of "
        "accounts.csv (its columns: account_id, name, email, region); name the accounts file's "
        "column that holds each account's jurisdiction"
    )


def test_an_address_column_that_is_not_a_column_is_refused(engine, tmp_path):
    case = _case_copy(tmp_path, '\n[notify]\naddress_columns = ["mail"]\n')
    loaded = load_case(case)
    _analyzed(engine, loaded)
    with pytest.raises(InputError, match=r"address_columns: 'mail' is not a column of accounts"):
        notify.write_lists(engine, loaded, tmp_path)


def test_without_a_jurisdiction_key_no_jurisdictions_csv_is_written(engine, tmp_path):
    (tmp_path / "notify").mkdir()
    (tmp_path / "notify" / "jurisdictions.csv").write_text("stale\n")
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    assert not (tmp_path / "notify" / "jurisdictions.csv").exists()
    assert "## jurisdictions.csv" not in (tmp_path / "notify" / "README.md").read_text()


def test_incident_json_is_in_the_veris_shape(tmp_path):
    """VERIS 1.4.1 (verisc.json) requires actor, action, discovery_method, schema_version,
    asset, timeline (incident.year), incident_id, security_incident, summary. case_small:
    first exposed response r02 at 08:10Z; awareness 14:25Z: discovery 6 h 15 min = 6.2
    hours (one decimal, half to even); window end 2026-09-02T00:00Z: containment 9 h 35
    min = 9.6 hours; data_total the 11 requests at risk; min 8 > 0: confirmed."""
    extra = '\n[notify]\ndiscovery_method = { external = ["Security researcher"] }\n'
    _notified(_case_copy(tmp_path / "case", extra), tmp_path / "out")
    veris = json.loads((tmp_path / "out/notify/incident.json").read_text())
    assert {
        "actor",
        "action",
        "discovery_method",
        "schema_version",
        "asset",
        "timeline",
        "incident_id",
        "security_incident",
        "summary",
    } <= veris.keys()
    assert veris["schema_version"] == "1.4.1"
    assert veris["security_incident"] == "Confirmed"
    assert veris["attribute"]["confidentiality"]["data_total"] == 11
    assert veris["attribute"]["confidentiality"]["data_disclosure"] == "Yes"
    assert veris["timeline"] == {
        "incident": {"year": 2026, "month": 9, "day": 1, "time": "08:10:00 AM"},
        "discovery": {"unit": "Hours", "value": 6.2},
        "containment": {"unit": "Hours", "value": 9.6},
    }
    assert veris["discovery_method"] == {"external": {"variety": ["Security researcher"]}}
    assert veris["plus"]["kv_forensics"]["exposed_responses"] == {
        "min": 8,
        "likely": 8,
        "max": 9,
        "max_may_be_higher": False,
        "max_may_be_higher_because": [],
    }


def test_a_discovery_variety_that_veris_lacks_is_refused(engine, tmp_path):
    case = load_case(
        _case_copy(tmp_path, '\n[notify]\ndiscovery_method = { external = ["Blog"] }\n')
    )
    with pytest.raises(InputError, match=r"'Blog' is not a VERIS 1\.4 external discovery variety"):
        notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))


# --- templates ---------------------------------------------------------------------------------


def test_notices_carry_the_case_texts_as_written(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    _notified(case, tmp_path / "out")
    notice = _notice(tmp_path / "out", "acct-carol")
    assert _section(notice, "What happened") == "\nThe *pool* was too small.\n"
    assert _section(notice, "What we have done") == (
        "\n- Pool enlarged.\n- Patch rejects oversized prompts.\n"
    )
    assert notice.endswith("## Contact\n\nDPO, dpo@provider.example\n")


def test_without_texts_the_notices_say_what_is_missing(engine, tmp_path):
    result = notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "acct-dave")
    assert "\n[TO BE COMPLETED: the measures taken or proposed]\n" in notice
    assert "\n[TO BE COMPLETED: the contact point]\n" in notice
    assert (
        "the notices and regulator summary show [TO BE COMPLETED] for what the case file does "
        "not give: [notify] measures, contact, consequences"
    ) in result.warnings


def test_a_case_template_replaces_the_bundled_one(tmp_path):
    extra = '\n[notify]\ntemplate = "letters/notice.md.j2"\n'
    case = _case_copy(tmp_path / "case", extra)
    (case.parent / "letters").mkdir()
    (case.parent / "letters" / "notice.md.j2").write_text(
        "Dear {{ account.id }} ({{ roles|join('+') }}): "
        "{{ responses|map(attribute='request_id')|join(' ') }}; "
        "{{ requests|map(attribute='request_id')|join(' ') }}; aware {{ awareness.at }}, "
        "deadline {{ awareness.deadline }}.\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    _notified(case, out)
    # the awareness event is 2026-09-01T10:25:00-04:00 = 14:25Z; + 72 h = 2026-09-04T14:25Z
    assert _notice(out, "acct-bob") == (
        "Dear acct-bob (recipient\\+data\\_owner): r03 r04 r17; r03 r04; aware "
        "2026-09-01T14:25:00Z, "
        "deadline 2026-09-04T14:25:00Z.\n"
    )


def test_a_case_template_reads_jinjas_own_globals(tmp_path):
    extra = '\n[notify]\ntemplate = "notice.md.j2"\n'
    case = _case_copy(tmp_path / "case", extra)
    (case.parent / "notice.md.j2").write_text(
        "{% for i in range(2) %}{{ i }} {% endfor %}{% set ns = namespace(n=3) %}{{ ns.n }}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    _notified(case, out)
    assert _notice(out, "acct-bob") == "0 1 3\n"


@pytest.mark.parametrize(
    ("template", "line", "what"),
    [
        ("# Notice\n\n{% if %}\n", 3, "template error: Expected an expression"),
        ("# Notice\n{{ account.nmae }}\n", 2, "template error: 'dict object' has no attribute"),
        ("# Notice\n\n\n{{ ''.__class__.__mro__ }}\n", 4, "template error: access to attribute"),
    ],
)
def test_a_template_error_is_one_line_naming_the_template_file_and_line(
    runner, tmp_path, template, line, what
):
    case = _case_copy(tmp_path / "case", '\n[notify]\ntemplate = "notice.md.j2"\n')
    (case.parent / "notice.md.j2").write_text(template, encoding="utf-8")
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    message = "".join(messages(result.stderr))
    assert message.startswith(f"error: {case.parent.resolve() / 'notice.md.j2'}:{line}: {what}")
    assert message.endswith("fix the template (its variables are listed in docs/notices.md)")
    assert not (tmp_path / "out").exists()  # a failed run leaves no outputs


def test_a_missing_template_names_the_case_file_key_and_line(runner, tmp_path):
    case = _case_copy(tmp_path / "case", '\n[notify]\ntemplate = "nope.md.j2"\n')
    line = case.read_text().splitlines().index('template = "nope.md.j2"') + 1
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"error: {case.resolve()}:{line}: template file not found:" in result.output


def test_notices_of_an_earlier_run_are_removed_and_other_files_kept(engine, tmp_path):
    stale = tmp_path / "notify" / "notices" / "md"
    stale.mkdir(parents=True)
    (stale / "acct-gone-0123456789abcdef.md").write_text("old")
    (stale / "notes.txt").write_text("mine")
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    assert not (stale / "acct-gone-0123456789abcdef.md").exists()
    assert (stale / "notes.txt").read_text() == "mine"
    assert len(list(stale.glob("*.md"))) == 6


@pytest.mark.parametrize("enabled", [True, False])
def test_notify_leaves_the_cycle_collector_as_it_found_it(engine, tmp_path, enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_notify_refused_midway_turns_the_cycle_collector_back_on(engine, tmp_path):
    assert gc.isenabled()
    with pytest.raises(AnalysisError, match="no bands table"):
        notify.write_lists(engine, case_small(), tmp_path)  # not analyzed
    assert gc.isenabled()


# --- file names from hostile account ids ---------------------------------------------------


@pytest.mark.parametrize(
    "account",
    [
        "../../x",
        "..\\..\\x",
        "/etc/passwd",
        "CON",
        "nul",
        "COM1",
        "LPT9.txt",
        "con.md",
        "a" * 300,
        "a\x00b",
        "\x1b[31mred\x7f",
        "line\nbreak\r",
        ".hidden",
        "...",
        "",
        "   ",
        "-rf",
        "Ünïcødé ✓",
    ],
)
def test_a_notice_file_name_never_escapes_its_folder_or_names_a_device(tmp_path, account):
    name = notice_file_name(account)
    assert NAME.match(name), name  # letters, digits, _ and - then the hash: no / \ . NUL
    assert len(name) <= 60 + 1 + 16 + 3
    assert name.split(".")[0].lower() not in WINDOWS_DEVICES
    assert (tmp_path / name).resolve().parent == tmp_path.resolve()
    digest = hashlib.sha256(account.encode("utf-8")).hexdigest()[:16]
    assert name.endswith(f"-{digest}.md")
    assert notice_file_name(account, ".eml") == name.removesuffix(".md") + ".eml"


def test_ids_differing_only_by_case_get_names_that_differ_on_any_file_system():
    names = [notice_file_name(a) for a in ("acct-X", "acct-x", "ACCT-X")]
    assert len({n.lower() for n in names}) == 3


def test_ids_that_clean_up_alike_get_different_names():
    ids = ["a/b", "a\\b", "a_b", "a b", "a\x00b", "a..b"]
    names = [notice_file_name(a) for a in ids]
    assert {n.split("-")[0] for n in names} == {"a_b"}
    assert len(set(names)) == len(ids)


def test_a_long_id_keeps_its_first_60_characters_and_its_hash():
    account = "acct-" + "9" * 295
    assert notice_file_name(account) == (
        account[:60] + "-" + hashlib.sha256(account.encode()).hexdigest()[:16] + ".md"
    )


HOSTILE = {
    "acct-alice": "Acct-X",
    "acct-bob": "acct-x",
    "acct-carol": "../../escaped",
    "acct-erin": "CON",
    "acct-dave": "..\\..\\evil\x00\x1b[31m",
    "acct-frank": "F" * 300,
}


def test_hostile_account_ids_get_one_notice_each_inside_the_folder(engine, tmp_path):
    for old, new in HOSTILE.items():
        engine.execute("UPDATE requests SET account_id = $n WHERE account_id = $o", n=new, o=old)
    out = tmp_path / "out"
    case = dataclasses.replace(case_small(), accounts_path=None)
    notify.write_lists(engine, case, out, _analyzed(engine, case))
    index = _index(out)
    # the same 6 notified accounts as case_small (INDEX), renamed
    assert {r["account_id"] for r in index} == {HOSTILE[a] for a, _, _ in INDEX}
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    notices = [p for p in files if p.suffix == ".md" and p.parent.name != "notify"]
    assert len(notices) == 6 and len({(p.parent, p.name.lower()) for p in notices}) == 6
    assert all(p.resolve().is_relative_to((out / "notify" / "notices").resolve()) for p in notices)
    assert all(p.resolve().is_relative_to((out / "notify").resolve()) for p in files)


# --- ids and contacts are text, never Markdown ----------------------------------------------


def test_md_puts_a_backslash_before_markdown_syntax():
    assert md("[x](http://e.example)") == "\\[x\\]\\(http\\://e\\.example\\)"
    assert md("<b>&amp;</b>") == "\\<b\\>\\&amp;\\</b\\>"
    assert md("-x-y") == "\\-x-y"  # a leading - would start a list item
    assert md("# 1. *a* _b_ `c` | ~d~ $e$ !f @g") == (
        "\\# 1\\. \\*a\\* \\_b\\_ \\`c\\` \\| \\~d\\~ \\$e\\$ \\!f \\@g"
    )
    assert md("Bob, Inc; 'q' \"r\" 50% a/b?") == "Bob, Inc; 'q' \"r\" 50% a/b?"


def test_md_shows_control_and_bidirectional_characters_as_escapes():
    assert md("a\nb\x00c\u202ed") == "a\\\\x0ab\\\\x00c\\\\u202ed"
    assert _rendered(md("a\nb\x00c\u202ed"))[0] == "a\\x0ab\\x00c\\u202ed"


@pytest.mark.parametrize(
    "value",
    [
        "[click me](http://evil.example/x)",
        "![img](http://evil.example/i.png)",
        "<img src=x onerror=alert(1)>",
        "<script>alert(1)</script>",
        "<http://evil.example>",
        "**bold** _it_ `code` ~~gone~~",
        "# heading",
        "- item",
        "1. item",
        "> quote",
        "| a | b |",
        "[ref]: http://evil.example",
        "&lt;b&gt; &#x3C;",
        "\\[already escaped\\]",
        "line\n# new block",
        "www.evil.example user@evil.example",
    ],
)
def test_a_hostile_value_renders_as_its_own_text(value):
    text, kinds = _rendered(f"- Account: {md(value)}\n")
    assert text == "Account: " + printable(value, one_line=True)
    assert not kinds & {"link_open", "image", "html_inline", "html_block", "heading_open"}
    assert not kinds & {"strong_open", "em_open", "code_inline", "s_open", "table_open"}
    raw = md(value)  # GFM's extended autolinks need these literally: none is left unescaped
    assert not re.search(r"(?<!\\)(?:\.|:|@)", raw)


def test_hostile_ids_in_a_notice_stay_text(engine, tmp_path):
    hostile_id = "[click](http://evil.example/)<img src=x>"
    engine.execute(
        "UPDATE requests SET account_id = $n WHERE account_id = 'acct-bob'", n=hostile_id
    )
    engine.execute("UPDATE requests SET request_id = '<b>r03</b>' WHERE request_id = 'r03'")
    case = dataclasses.replace(case_small(), accounts_path=None)
    notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))
    notice = _notice(tmp_path, hostile_id)
    text, kinds = _rendered(notice)
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}
    assert f"Account: {hostile_id}" in text
    assert _listed_ids(_section(notice, RECIPIENT)) == ["<b>r03</b>", "r04", "r17"]


# --- the lists' README, determinism, notify's refusals ----------------------------------------


def _analyzed_db(case: Path, out: Path) -> Path:
    """A case database holding the case's logs, analyzed by `analyze` into `out`."""
    db = out.parent / "case.duckdb"
    with DuckDBEngine(db) as eng:
        pipeline.ingest_sources(eng, load_case(case))
    pipeline.analyze(case, db, out)
    return db


def test_notify_without_summary_json_writes_the_rest_and_says_why_not_the_summary(tmp_path):
    case = _case_copy(tmp_path / "case")
    db = _analyzed_db(case, tmp_path / "out")
    other = tmp_path / "other"
    result = pipeline.notify(case, db, other)
    assert not (other / "notify" / "regulator_summary.md").exists()
    assert not (other / "notify" / "incident.json").exists()
    assert (other / "notify" / "notices" / "index.csv").is_file()
    assert result.warnings[-1].startswith(
        f"no summary.json in {other}: notify/regulator_summary.md not written"
    )


def test_notify_refuses_a_summary_json_of_another_analysis(tmp_path):
    case = _case_copy(tmp_path / "case")
    out = tmp_path / "out"
    db = _analyzed_db(case, out)
    pipeline.notify(case, db, out)  # the summary.json of the analysis: accepted
    summary = json.loads((out / "summary.json").read_text())
    summary["exposure_count"] = 9
    (out / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(AnalysisError, match=r"summary\.json in the output folder is not from"):
        pipeline.notify(case, db, out)


def test_the_readme_lists_each_csvs_columns_in_the_order_written(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    out = tmp_path / "out"
    _notified(case, out)
    readme = (out / "notify" / "README.md").read_text()
    for name in (
        "recipients.csv",
        "data_owners.csv",
        "excluded.csv",
        "jurisdictions.csv",
        "notices/index.csv",
        "no_contact.csv",
    ):
        with (out / "notify" / name).open(newline="") as f:
            header = next(csv.reader(f))
        documented = re.findall(r"^\| `([a-z_0-9]+)` \|", _section(readme, name), re.M)
        assert header[: len(documented)] == documented, name
        contacts = header[len(documented) :]
        if contacts:  # the accounts file's columns, named in the last row
            assert f"| {', '.join(contacts)} | the columns of accounts\\.csv" in readme
    assert "## regulator_summary.md, incident.json\n\nThe figures and texts" in readme


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_two_runs_write_byte_identical_notify_folders(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS + SENDER.replace("[notify]\n", ""), REGION_ACCOUNTS)
    _notified(case, tmp_path / "a")
    _notified(case, tmp_path / "b")
    a, b = _tree(tmp_path / "a" / "notify"), _tree(tmp_path / "b" / "notify")
    # README, 3 lists, jurisdictions, no_contact, regulator summary, incident.json, index,
    # 6 notices and 5 messages (erin has no address)
    assert len(a) == 1 + 3 + 1 + 1 + 1 + 1 + 1 + 6 + 5
    assert a == b


# --- the bundled case ---------------------------------------------------------------------------


def test_bundled_case_one_index_row_per_notified_account(bundled_demo):
    """Every recipient (tier proven or likely) and every data owner has one row, and no
    excluded account (the bundled case's entries do not say notify = true)."""
    recipients = _csv(bundled_demo / "notify" / "recipients.csv")
    owners = _csv(bundled_demo / "notify" / "data_owners.csv")
    excluded = {r["account_id"] for r in _csv(bundled_demo / "notify" / "excluded.csv")}
    index = _index(bundled_demo)
    accounts = [r["account_id"] for r in index]
    expected = {r["account_id"] for r in recipients} | {r["account_id"] for r in owners}
    assert accounts == sorted(expected - excluded)
    assert len(accounts) == len(set(accounts))
    assert all(r["eml"] for r in index)  # every account has an address in accounts.csv


def test_bundled_case_every_recipient_notice_lists_its_request_ids(bundled_demo):
    for row in _csv(bundled_demo / "notify" / "recipients.csv"):
        notice = _notice(bundled_demo, row["account_id"])
        listed = _listed_ids(_section(notice, RECIPIENT))
        assert sorted(listed) == row["request_ids"].split(";")
        assert len(listed) == int(row["responses"])


def test_bundled_case_every_data_owner_notice_lists_its_requests_at_risk(bundled_demo):
    owners = _csv(bundled_demo / "notify" / "data_owners.csv")
    with DuckDBEngine(bundled_demo / "case.duckdb") as eng:
        pairs = eng.rows("SELECT DISTINCT owner_account_id, owner_request_id FROM data_owners")
    at_risk: dict[str, set[str]] = {}
    for account, request in pairs:
        at_risk.setdefault(account, set()).add(request)
    assert len(owners) == len(at_risk) == 276  # 260 read by exposed responses, 140 by excluded
    for row in owners:
        if row["excluded_reason"]:
            continue
        listed = _listed_ids(_section(_notice(bundled_demo, row["account_id"]), OWNER))
        assert len(listed) == int(row["requests_at_risk"]) == len(set(listed))
        assert set(listed) == at_risk[row["account_id"]]


def test_bundled_case_messages_parse_back_to_their_notices(bundled_demo):
    accounts = {r["account_id"]: r for r in _csv(REPO / "sample_logs/glm53/accounts.csv")}
    for row in _index(bundled_demo):
        message = _message(bundled_demo, row["account_id"])
        assert message["To"] == accounts[row["account_id"]]["contact_email"]
        text, _ = _parts(message)
        assert "\\" not in text
        assert f"Reference: {row['reference']}" in text


def test_bundled_case_jurisdictions_reconcile_and_the_72_hours_run_from_the_declaration(
    bundled_demo,
):
    summary = json.loads((bundled_demo / "summary.json").read_text())
    rows = _csv(bundled_demo / "notify" / "jurisdictions.csv")
    assert [r["jurisdiction"] for r in rows] == [
        "europe",
        "japan",
        "singapore",
        "us-east",
        "us-west",
    ]
    assert sum(int(r["recipient_accounts"]) for r in rows) == summary["affected_accounts"] == 11
    assert sum(int(r["exposed_responses"]) for r in rows) == summary["exposure_count"] == 155
    assert sum(int(r["data_owner_accounts"]) for r in rows) == summary["data_owners"]["accounts"]
    assert sum(int(r["requests_at_risk"]) for r in rows) == summary["data_owners"]["requests"]
    assert sum(int(r["excluded_accounts"]) for r in rows) == 4  # 3 internal-test + researcher
    # declared 2026-09-09T13:22Z (sample_logs/glm53/incident.toml) + 72 h; us-west + 30 days
    deadlines = {r["jurisdiction"]: r["deadline"] for r in rows}
    assert (deadlines["europe"], deadlines["us-west"]) == (
        "2026-09-12T13:22:00Z",
        "2026-10-09T13:22:00Z",
    )
    assert "by 2026-09-12T13:22:00Z." in (bundled_demo / "notify/regulator_summary.md").read_text()


def test_bundled_case_headline_groups_thousands_and_says_what_it_counts(bundled_demo):
    summary = json.loads((bundled_demo / "summary.json").read_text())
    lines = {line.split(":", 1)[0]: line for line in headline(summary).splitlines()}
    # 72,007 gateway records + 5,724 engine-log lines (README); 3 quarantined, 4 duplicates
    assert lines["ingest"].startswith(
        "ingest: 77,731 record(s) read, 77,724 loaded, 4 duplicate(s), 3 quarantined"
    )
    assert lines["excluded (requests, by reason)"] == (
        "excluded (requests, by reason): internal-test 60, security-researcher 50"
    )
    assert lines["data owners"] == (
        "data owners: 276 account(s), 7,105 request(s) (pool-walkback, complete)"
    )
    # the gateway's 72,000 loaded records (72,007 read, 4 duplicates, 3 quarantined)
    assert lines["in scope"].endswith(" of 72,000 loaded requests")


def test_bundled_case_notify_again_gives_the_same_bytes(bundled_demo, tmp_path):
    (tmp_path / "summary.json").write_bytes((bundled_demo / "summary.json").read_bytes())
    pipeline.notify(BUNDLED, bundled_demo / "case.duckdb", tmp_path)
    assert _tree(tmp_path / "notify") == _tree(bundled_demo / "notify")


def test_notify_keeps_no_working_table_in_the_case_database(bundled_demo, tmp_path):
    db = tmp_path / "case.duckdb"
    shutil.copy(bundled_demo / "case.duckdb", db)
    with duckdb.connect(str(db)) as con:  # what an earlier version left: never read now
        con.execute("CREATE TABLE notify_exposed AS SELECT 'stale' AS account_id")
        con.execute("CREATE TABLE notify_owner_requests AS SELECT 'stale' AS account_id")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_bytes((bundled_demo / "summary.json").read_bytes())
    pipeline.notify(BUNDLED, db, out)
    assert _tree(out / "notify") == _tree(bundled_demo / "notify")
    with duckdb.connect(str(db), read_only=True) as con:
        tables = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    assert not [name for (name,) in tables if name.startswith("notify")]


# --- a status the logs do not record (tests/fixtures/partial, README.md) ---------------------


def test_a_response_without_a_status_says_its_delivery_is_not_recorded(tmp_path):
    # status.toml: acct-a's s1 gives status 200, s2 none; 10 tokens each
    pipeline.run(PARTIAL_DIR / "status.toml", tmp_path)
    section = _section(_notice(tmp_path, "acct-a"), RECIPIENT)
    assert (
        "- s1: received 2026-09-01T01:00:00Z, prompt of 600 tokens (prefill pool 500 tokens); "
        "10 tokens generated and delivered.\n"
        "- s2: received 2026-09-01T01:10:00Z, prompt of 600 tokens (prefill pool 500 tokens); "
        "10 tokens generated, delivery not recorded.\n\n"
        "In all, 20 tokens were generated in these responses (for 1 of them the logs do not "
        "record delivery).\n"
    ) in section


def test_a_response_from_a_log_without_status_says_its_delivery_is_not_recorded(tmp_path):
    # nostatus.toml: n1 (acct-c), 10 tokens, from a log whose mapping names no status
    pipeline.run(PARTIAL_DIR / "nostatus.toml", tmp_path)
    section = _section(_notice(tmp_path, "acct-c"), RECIPIENT)
    assert "10 tokens generated, delivery not recorded.\n" in section
    assert "generated and delivered" not in section


def test_a_cut_input_leaves_the_regulators_maximum_open(engine, tmp_path):
    """case_small's analysis (8 exposed, range 8-9, accounts 4-5, owners at least 6 / 11)
    with an input cut short: requests logged after the break are in no figure, so the
    regulator is never told 9 is a bound ("at most 9"); incident.json says so too."""
    summary = {**_analyzed(engine), "cut_inputs": ["logs/gw.jsonl.gz"]}
    text = _regulator(engine, tmp_path, summary=summary)
    assert "at most 9" not in text
    assert (
        "| Customers who received affected responses, which may hold other customers' data | "
        "4-5 or more | 8-9 or more responses |\n"
    ) in text
    assert (
        "Affected responses: 8 on the logs as read, at least 8 on the evidence; 9 is the most "
        "the records that could be read leave possible, not a bound: the true number may be "
        "higher, because 1 log file was cut short, so the requests logged after the break "
        "could not be read. Customers who received them: 4 "
    ) in text
    veris = json.loads((tmp_path / "notify" / "incident.json").read_text())
    assert veris["plus"]["kv_forensics"]["exposed_responses"] == {
        "min": 8,
        "likely": 8,
        "max": 9,
        "max_may_be_higher": True,
        "max_may_be_higher_because": ["1 input cut short (logs/gw.jsonl.gz)"],
    }
    assert veris["attribute"]["confidentiality"]["notes"].endswith(
        "; the exposed responses and data_total may be higher than given (requests the logs "
        "do not hold are in no figure): 1 input cut short (logs/gw.jsonl.gz)"
    )


def test_coverage_gaps_leave_the_regulators_maximum_open(engine, tmp_path):
    """As above with 2 hours of the window in which requests.csv holds no record (a logging
    outage) instead of a cut: the summary names the hours' count, and the owners' figures,
    complete or not, become lower bounds."""
    summary = _analyzed(engine)
    gaps = [
        {"source": "requests.csv", "hour": h, "records": 0, "expected": 3}
        for h in ("2026-09-01T02:00:00Z", "2026-09-01T03:00:00Z")
    ]
    summary = {**summary, "coverage": {**summary["coverage"], "gaps": gaps}}
    text = _regulator(engine, tmp_path, summary=summary)
    assert "at most 9" not in text
    assert (
        "the true number may be higher, because the logs hold no or few records for 2 hours "
        "of the period investigated (a logging outage, whole or partial), so requests made "
        "then could not be counted."
    ) in text
    veris = json.loads((tmp_path / "notify" / "incident.json").read_text())
    assert veris["plus"]["kv_forensics"]["exposed_responses"]["max_may_be_higher_because"] == [
        "2 hours of the window with no or few records (requests.csv)"
    ]


def test_the_regulator_summary_counts_excluded_owners_as_at_risk_and_says_so(tmp_path):
    """case_small: acct-qa (excluded, internal-test) is one of the 6 data owners with 1
    request at risk (r08, README "Notification lists"): the owners' row includes it and says
    so, the set-aside row no longer claims the set-aside accounts are in no figure above, and
    incident.json's data_total (11, the sum of data_owners.csv) says it holds them."""
    _notified(_case_copy(tmp_path / "case"), tmp_path / "out")
    text = (tmp_path / "out/notify/regulator_summary.md").read_text()
    owners = _csv(tmp_path / "out/notify/data_owners.csv")
    assert sum(int(r["requests_at_risk"]) for r in owners) == 11
    assert [r["account_id"] for r in owners if r["excluded_reason"]] == ["acct-qa"]
    assert "not counted above" not in text
    assert (
        "including 1 set-aside account with 1 request: their data was in the cache all the "
        "same | at least 6 | at least 11 requests |"
    ) in text
    veris = json.loads((tmp_path / "out/notify/incident.json").read_text())
    assert veris["attribute"]["confidentiality"]["data_total"] == 11
    assert veris["plus"]["kv_forensics"]["excluded_data_owners"] == {"accounts": 1, "requests": 1}
    assert (
        "including 1 request(s) of 1 account(s) the case file excludes"
        in veris["attribute"]["confidentiality"]["notes"]
    )


def test_the_regulator_summary_claims_delivery_only_where_the_logs_record_it(tmp_path):
    """partial/status.toml (README): s1-s4 exposed, 10 tokens each; only s1 gives a status,
    s2-s4 are `status_unknown`. The notices say their delivery is not recorded, and so must
    the regulator summary: 1 delivered, 3 generated with delivery not recorded."""
    pipeline.run(PARTIAL_DIR / "status.toml", tmp_path)
    text = (tmp_path / "notify" / "regulator_summary.md").read_text(encoding="utf-8")
    assert (
        "Content delivered: of the 4 affected responses, 1 carried generated content to the "
        "customer, 3 generated content whose delivery the logs do not record, 0 carried none, "
        "and for 0 the logs give no count.\n"
    ) in text


def test_the_regulator_summary_shows_labels_without_stray_escapes(tmp_path):
    """The summary is read as Markdown source: a label keeps its `:`, `.`, `(`, `#` as
    written (nothing of Markdown starts there), while what could start syntax is still escaped
    so it renders as its own text: `[x](http://e.example)` and `*b*` stay text."""
    events = (
        '\n[[event]]\nat = "2026-09-01T08:00:00Z"\nlabel = "Regulator-only: fix v1.2 (#36988)"\n'
        'audience = "regulator"\n'
        '\n[[event]]\nat = "2026-09-01T09:00:00Z"\nlabel = "[x](http://e.example) *b*"\n'
        'audience = "regulator"\n'
    )
    _notified(_case_copy(tmp_path / "case", events), tmp_path / "out")
    summary = (tmp_path / "out/notify/regulator_summary.md").read_text()
    timeline = _section(summary, "7. Timeline up to the 72-hour mark")
    assert timeline == (
        "\n- 2026-09-01T08:00:00Z: Regulator-only: fix v1.2 (#36988)\n"
        "- 2026-09-01T09:00:00Z: \\[x\\](http\\://e.example) \\*b\\*\n"
    )
    text, kinds = _rendered(timeline)
    assert "[x](http://e.example) *b*" in text
    assert not kinds & {"link_open", "em_open"}


def test_the_regulator_summary_says_1_request_not_1_requests(engine, tmp_path):
    """case_small's analysis with 1 data owner request and 1 set-aside request (by reason
    internal-test): each count of 1 takes the singular."""
    summary = _analyzed(engine)
    summary = {
        **summary,
        "data_owners": {**summary["data_owners"], "accounts": 1, "requests": 1},
        "excluded_by_reason": {"internal-test": 1},
    }
    text = _regulator(engine, tmp_path, summary=summary)
    assert "| at least 1 | at least 1 request |\n" in text
    assert "in the second | 3 | 1 request |\n" in text
    assert "Set aside by reason: internal-test 1 request.\n" in text
    assert "1 requests" not in text
