"""From lists to notices: delivered content, jurisdictions, one notice per account, safe file
names and Markdown, the regulator summary, the column dictionary (docs/notices.md).

Figures are derived by hand from tests/fixtures/case_small (README.md there, "Notices").
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from case_small_db import CASE_DIR, case_small, engine_with_requests
from conftest import messages
from markdown_it import MarkdownIt
from partial_case import PARTIAL_DIR

from forensics import pipeline
from forensics.case import Event, NotifySettings, load_case, parse_utc
from forensics.cli import app
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError, InputError
from forensics.formats import printable
from forensics.render import notify
from forensics.render.notices import md, notice_file_name

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "sample_logs" / "glm53" / "incident.toml"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*-[0-9a-f]{16}\.md$")
WINDOWS_DEVICES = {"con", "prn", "aux", "nul"} | {
    f"{d}{i}" for d in ("com", "lpt") for i in "123456789"
}

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


def _notified(case_path: Path, out: Path) -> dict:
    """Ingest, analyze and notify a case file in memory (what `run` does, without the
    report); the summary dict (summary.json's content)."""
    case = load_case(case_path)
    with DuckDBEngine() as eng:
        pipeline.ingest_sources(eng, case)
        summary, _ = pipeline.analyze_case(eng, case)
        notify.write_lists(eng, case, out, summary)
    return summary


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _notice(out: Path, kind: str, account: str) -> str:
    """The notice of `account` (kind recipient or data_owner), found through index.csv."""
    rows = [
        r
        for r in _csv(out / "notify" / "notices" / "index.csv")
        if (r["kind"], r["account_id"]) == (kind, account)
    ]
    assert len(rows) == 1
    return (out / "notify" / "notices" / rows[0]["file"]).read_text(encoding="utf-8")


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


# --- 1. delivered content ---------------------------------------------------------------------


def test_exposed_by_delivery_splits_the_exposure_count(engine):
    # exposed and their completion_tokens: r02 9, r03 20, r04 0, r13 50, r16 0, r17 50, r19 50,
    # r21 10 -> delivered 6 (> 0), empty 2 (r04, r16), unknown 0; 6 + 2 + 0 = 8 exposed
    summary = _analyzed(engine)
    assert summary["exposed_by_delivery"] == {"delivered": 6, "empty": 2, "unknown": 0}
    assert summary["exposure_count"] == 8


def test_a_missing_completion_count_is_unknown_never_empty(engine, tmp_path):
    engine.execute("UPDATE requests SET completion_tokens = NULL WHERE request_id = 'r17'")
    summary = _analyzed(engine)
    assert summary["exposed_by_delivery"] == {"delivered": 5, "empty": 2, "unknown": 1}
    notify.write_lists(engine, case_small(), tmp_path, summary)
    bob = {r["account_id"]: r for r in _csv(tmp_path / "notify" / "recipients.csv")}["acct-bob"]
    # r03 20, r04 0, r17 unknown: no partial sum (it would understate), 1 empty, 1 unknown
    assert (bob["completion_tokens"], bob["empty_responses"], bob["unknown_responses"]) == (
        "",
        "1",
        "1",
    )
    notice = _notice(tmp_path, "recipient", "acct-bob")
    assert "- r17: received 2026-09-01T13:00:00Z, prompt of 850 tokens (prefill pool 800 " in notice
    assert "tokens); the logs do not say whether content was delivered.\n" in notice
    assert "For 1 of these responses the logs give no count of generated tokens" in notice


def test_an_unmapped_completion_tokens_makes_every_exposed_response_unknown(tmp_path):
    case = _case_copy(tmp_path / "case")
    (case.parent / "no_completion.mapping.toml").write_text(
        'format = "csv"\n[fields]\nrequest_id = "request_id"\nts = "ts"\n'
        'account_id = "account_id"\nmodel = "model"\nprompt_tokens = "prompt_tokens"\n'
        'status = "status"\nprefill_node = "prefill_node"\ndecode_node = "decode_node"\n'
        'ts_end = "ts_end"\n',
        encoding="utf-8",
    )
    text = case.read_text().replace(
        'profile = "canonical"', 'mapping = "no_completion.mapping.toml"'
    )
    case.write_text(text)
    out = tmp_path / "out"
    summary = _notified(case, out)
    assert summary["exposure_count"] == 8  # the exposure count does not change
    assert summary["exposed_by_delivery"] == {"delivered": 0, "empty": 0, "unknown": 8}
    rows = _csv(out / "notify" / "recipients.csv")
    assert [
        (r["completion_tokens"], r["empty_responses"], r["unknown_responses"]) for r in rows
    ] == [
        ("", "0", "2"),
        ("", "0", "3"),
        ("", "0", "1"),
        ("", "0", "2"),
    ]


# --- 2. jurisdictions -------------------------------------------------------------------------


def _region_case(tmp_path: Path) -> object:
    accounts = tmp_path / "accounts.csv"
    accounts.write_text(REGION_ACCOUNTS, encoding="utf-8")
    return dataclasses.replace(
        case_small(), accounts_path=accounts, notify=NotifySettings(jurisdiction="region")
    )


def test_jurisdictions_count_each_list_per_value_of_the_column(engine, tmp_path):
    case = _region_case(tmp_path)
    notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))
    # recipients alice 2, bob 3, carol 1, erin 2; data owners alice 3, bob 2, carol 1, dave 1,
    # frank 3, qa 1 (requests at risk); excluded qa, qa2, res.
    # eu: alice, carol -> recipients 2 (2+1 = 3 responses), owners 2 (3+1 = 4), excluded 0
    # us: bob, frank, qa -> recipients 1 (3), owners 3 (2+3+1 = 6), excluded 1 (qa)
    # apac: zed -> all 0 (listed: every value of the column)
    # (unknown): erin (not in the file), dave (no value), qa2 and res (not in the file)
    #   -> recipients 1 (erin: 2), owners 1 (dave: 1), excluded 2
    assert (tmp_path / "notify" / "jurisdictions.csv").read_text() == (
        "jurisdiction,recipient_accounts,exposed_responses,data_owner_accounts,"
        "requests_at_risk,excluded_accounts\n"
        "apac,0,0,0,0,0\n"
        "eu,2,3,2,4,0\n"
        "us,1,3,3,6,1\n"
        "(unknown),1,2,1,1,2\n"
    )


def test_jurisdiction_values_are_trimmed_so_one_value_is_one_row(engine, tmp_path):
    # REGION_ACCOUNTS with whitespace around the values: alice " eu", carol "eu\t", bob
    # "us ", frank NBSP "us", qa " us", zed " apac ", dave "  " (empty once trimmed). Read as
    # written, " eu" and "eu\t" were two rows of one jurisdiction; trimmed, the rows are those
    # of the test above, derived by hand there
    case = _region_case(tmp_path)
    padded = {"eu": [" eu", "eu\t"], "us": ["us ", "\u00a0us", " us"], "apac": [" apac "]}
    lines = REGION_ACCOUNTS.splitlines()
    for value, spellings in padded.items():
        for spelling in spellings:
            i = next(i for i, ln in enumerate(lines) if ln.endswith(f",{value}"))
            lines[i] = lines[i].removesuffix(value) + spelling
    lines = [ln + "  " if ln.startswith("acct-dave,") else ln for ln in lines]
    (tmp_path / "accounts.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))
    assert (tmp_path / "notify" / "jurisdictions.csv").read_text() == (
        "jurisdiction,recipient_accounts,exposed_responses,data_owner_accounts,"
        "requests_at_risk,excluded_accounts\n"
        "apac,0,0,0,0,0\n"
        "eu,2,3,2,4,0\n"
        "us,1,3,3,6,1\n"
        "(unknown),1,2,1,1,2\n"
    )


def test_jurisdictions_reconcile_with_summary_and_the_lists(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    out = tmp_path / "out"
    summary = _notified(case, out)
    rows = _csv(out / "notify" / "jurisdictions.csv")

    def total(column: str) -> int:
        return sum(int(r[column]) for r in rows)

    recipients = _csv(out / "notify" / "recipients.csv")
    owners = _csv(out / "notify" / "data_owners.csv")
    assert total("recipient_accounts") == summary["affected_accounts"] == len(recipients) == 4
    assert total("exposed_responses") == summary["exposure_count"] == 8
    assert total("exposed_responses") == sum(int(r["responses"]) for r in recipients)
    assert total("data_owner_accounts") == summary["data_owners"]["accounts"] == len(owners) == 6
    assert total("requests_at_risk") == summary["data_owners"]["requests"] == 11
    assert total("requests_at_risk") == sum(int(r["requests_at_risk"]) for r in owners)
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


def test_a_jurisdiction_without_an_accounts_file_is_refused(engine, tmp_path):
    case = _case_copy(tmp_path, '\n[notify]\njurisdiction = "region"\n')
    case = dataclasses.replace(load_case(case), accounts_path=None)
    _analyzed(engine, case)
    with pytest.raises(InputError, match=r"incident\.toml:\d+: notify\.jurisdiction names a"):
        notify.write_lists(engine, case, tmp_path)


def test_the_value_unknown_in_the_column_is_refused(engine, tmp_path):
    case = _region_case(tmp_path)
    (tmp_path / "accounts.csv").write_text("account_id,region\nacct-bob,(unknown)\n")
    _analyzed(engine, case)
    with pytest.raises(InputError, match="holds the value '\\(unknown\\)'"):
        notify.write_lists(engine, case, tmp_path)


def test_without_a_jurisdiction_key_no_jurisdictions_csv_is_written(engine, tmp_path):
    (tmp_path / "notify").mkdir()
    (tmp_path / "notify" / "jurisdictions.csv").write_text("stale\n")
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    assert not (tmp_path / "notify" / "jurisdictions.csv").exists()
    assert "## jurisdictions.csv" not in (tmp_path / "notify" / "README.md").read_text()


# --- 3. notices -------------------------------------------------------------------------------


def test_one_notice_per_recipient_and_data_owner_named_in_the_index(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    index = _csv(tmp_path / "notify" / "notices" / "index.csv")

    def name(account: str) -> str:  # docs/notices.md: stem, then 16 hex digits of its sha256
        return f"{account}-{hashlib.sha256(account.encode()).hexdigest()[:16]}.md"

    recipients = ["acct-alice", "acct-bob", "acct-carol", "acct-erin"]
    owners = ["acct-alice", "acct-bob", "acct-carol", "acct-dave", "acct-frank", "acct-qa"]
    assert [(r["account_id"], r["kind"], r["file"]) for r in index] == [
        *((a, "data_owner", f"data_owners/{name(a)}") for a in owners),
        *((a, "recipient", f"recipients/{name(a)}") for a in recipients),
    ]
    folder = tmp_path / "notify" / "notices"
    for row in index:
        assert hashlib.sha256((folder / row["file"]).read_bytes()).hexdigest() == row["sha256"]
    assert sorted(p.name for p in (folder / "recipients").iterdir()) == sorted(
        map(name, recipients)
    )
    assert len(list((folder / "data_owners").iterdir())) == 6


def test_a_recipient_notice_lists_each_exposed_response_with_its_content(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "recipient", "acct-bob")
    assert notice.startswith(
        "# Notice: responses to your account may hold another customer's data\n\n"
        "- Incident: Fixture\\: small two-group case\n"
        "- Account: acct-bob\n"
        "- name: Bob, Inc\\.\n"
        "- email: bob\\@example\\.com\n"
    )
    # bob's exposed responses (README "Bands"): r03 08:20 500 > pool 400, 20 tokens; r04 08:30
    # 1000 > 400, 0 tokens; r17 13:00 850 > 800, 50 tokens: 70 in all, one empty
    assert _section(notice, "Your affected responses") == (
        "\n3 response(s) to your account were answered in this condition, the first received "
        "at 2026-09-01T08:20:00Z and the last at 2026-09-01T13:00:00Z:\n\n"
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


def test_a_recipient_missing_from_the_accounts_file_has_a_notice_without_contacts(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "recipient", "acct-erin")
    assert "- Account: acct-erin\n- No contact details are on file for this account.\n" in notice
    assert _listed_ids(_section(notice, "Your affected responses")) == ["r13", "r21"]


def test_a_data_owner_notice_lists_its_requests_at_risk(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "data_owner", "acct-alice")
    # alice owns r01 (read back by r03), r02 (by r03), r16 (by r17): README "Data owners"
    assert _section(notice, "Your requests at risk") == (
        "\n3 request(s) of your account, finished between 2026-09-01T08:01:00Z and "
        "2026-09-01T12:00:30Z, were held in a decode server's cache that 2 exposed response(s) "
        "to other customers could have read:\n\n"
        "- r01: received 2026-09-01T08:00:00Z, finished 2026-09-01T08:01:00Z; could have been "
        "read by 1 exposed response(s).\n"
        "- r02: received 2026-09-01T08:10:00Z, finished 2026-09-01T08:12:00Z; could have been "
        "read by 1 exposed response(s).\n"
        "- r16: received 2026-09-01T11:59:59Z, finished 2026-09-01T12:00:30Z; could have been "
        "read by 1 exposed response(s).\n\n"
        "Whether data of a given request was in fact read cannot be told from the logs: these "
        "are the requests whose data could have been.\n"
    )
    qa = _notice(tmp_path, "data_owner", "acct-qa")
    assert "- Excluded by the case file (`[[exclude]]`), reason: internal-test.\n" in qa


def test_notices_carry_the_case_texts_as_written_and_the_timeline(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    out = tmp_path / "out"
    _notified(case, out)
    notice = _notice(out, "recipient", "acct-carol")
    assert _section(notice, "What happened") == "\nThe *pool* was too small.\n"
    assert (
        _section(notice, "Timeline") == "\n- 2026-09-01T14:25:00Z: Status page\\: incident began\n"
    )
    assert _section(notice, "What we have done") == (
        "\n- Pool enlarged.\n- Patch rejects oversized prompts.\n"
    )
    assert notice.endswith("## Contact\n\nDPO, dpo@provider.example\n")


def test_without_texts_the_notices_say_what_is_missing(engine, tmp_path):
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    notice = _notice(tmp_path, "data_owner", "acct-dave")
    assert "**[TO BE COMPLETED: the case file gives no `[notify] measures`.]**" in notice
    assert "**[TO BE COMPLETED: the case file gives no `[notify] contact`.]**" in notice


def test_a_case_template_replaces_the_bundled_one(tmp_path):
    extra = '\n[notify]\nrecipient_template = "letters/recipient.md.j2"\n'
    case = _case_copy(tmp_path / "case", extra)
    (case.parent / "letters").mkdir()
    (case.parent / "letters" / "recipient.md.j2").write_text(
        "Dear {{ account.id }}: {{ row.responses }} response(s), "
        "{{ responses|map(attribute='request_id')|join(' ') }}; aware {{ awareness.at }}, "
        "deadline {{ awareness.deadline }}.\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    _notified(case, out)
    # the awareness event is 2026-09-01T10:25:00-04:00 = 14:25Z; + 72 h = 2026-09-04T14:25Z
    assert _notice(out, "recipient", "acct-bob") == (
        "Dear acct-bob: 3 response(s), r03 r04 r17; aware 2026-09-01T14:25:00Z, "
        "deadline 2026-09-04T14:25:00Z.\n"
    )
    assert _notice(out, "data_owner", "acct-bob").startswith("# Notice: data of your account")


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
    case = _case_copy(tmp_path / "case", '\n[notify]\ndata_owner_template = "owner.md.j2"\n')
    (case.parent / "owner.md.j2").write_text(template, encoding="utf-8")
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    message = "".join(messages(result.stderr))
    assert message.startswith(f"error: {case.parent.resolve() / 'owner.md.j2'}:{line}: {what}")
    assert message.endswith("fix the template (its variables are listed in docs/notices.md)")
    assert not (tmp_path / "out").exists()  # a failed run leaves no outputs


def test_a_missing_template_names_the_case_file_key_and_line(runner, tmp_path):
    case = _case_copy(tmp_path / "case", '\n[notify]\nrecipient_template = "nope.md.j2"\n')
    line = case.read_text().splitlines().index('recipient_template = "nope.md.j2"') + 1
    result = runner.invoke(app, ["run", str(case), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"error: {case.resolve()}:{line}: template file not found:" in result.output


def test_notices_of_an_earlier_run_are_removed_and_other_files_kept(engine, tmp_path):
    stale = tmp_path / "notify" / "notices" / "recipients"
    stale.mkdir(parents=True)
    (stale / "acct-gone-0123456789abcdef.md").write_text("old")
    (stale / "notes.txt").write_text("mine")
    notify.write_lists(engine, case_small(), tmp_path, _analyzed(engine))
    assert not (stale / "acct-gone-0123456789abcdef.md").exists()
    assert (stale / "notes.txt").read_text() == "mine"
    assert len(list(stale.glob("*.md"))) == 4


# --- 3b. file names from hostile account ids ---------------------------------------------------


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
    index = _csv(out / "notify" / "notices" / "index.csv")
    # the same 4 recipients and 6 data owners as case_small, renamed
    recipients = {HOSTILE[a] for a in ("acct-alice", "acct-bob", "acct-carol", "acct-erin")}
    owners = {HOSTILE[a] for a in ("acct-alice", "acct-bob", "acct-carol")} | {
        HOSTILE["acct-dave"],
        HOSTILE["acct-frank"],
        "acct-qa",
    }
    assert {r["account_id"] for r in index if r["kind"] == "recipient"} == recipients
    assert {r["account_id"] for r in index if r["kind"] == "data_owner"} == owners
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    notices = [p for p in files if p.suffix == ".md" and p.parent.name != "notify"]
    assert len(notices) == 10 and len({(p.parent, p.name.lower()) for p in notices}) == 10
    assert all(p.resolve().is_relative_to((out / "notify" / "notices").resolve()) for p in notices)
    assert all(p.resolve().is_relative_to((out / "notify").resolve()) for p in files)


# --- 3c. ids and contacts are text, never Markdown ----------------------------------------------


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


def test_hostile_ids_and_contacts_in_a_notice_stay_text(engine, tmp_path):
    hostile_id = "[click](http://evil.example/)<img src=x>"
    engine.execute(
        "UPDATE requests SET account_id = $n WHERE account_id = 'acct-bob'", n=hostile_id
    )
    engine.execute("UPDATE requests SET request_id = '<b>r03</b>' WHERE request_id = 'r03'")
    accounts = tmp_path / "accounts.csv"
    with accounts.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [
                ["account_id", "name", "<i>email</i>"],
                [hostile_id, "**Bob** <script>x</script>", "[mail](javascript:alert(1))"],
            ]
        )
    case = dataclasses.replace(case_small(), accounts_path=accounts)
    notify.write_lists(engine, case, tmp_path, _analyzed(engine, case))
    notice = _notice(tmp_path, "recipient", hostile_id)
    text, kinds = _rendered(notice)
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}
    assert f"Account: {hostile_id}" in text
    assert "name: **Bob** <script>x</script>" in text
    assert "<i>email</i>: [mail](javascript:alert(1))" in text
    assert _listed_ids(_section(notice, "Your affected responses")) == ["<b>r03</b>", "r04", "r17"]


# --- 4. the regulator summary -----------------------------------------------------------------


def _regulator(engine, tmp_path, summary=None, **changes) -> str:
    case = dataclasses.replace(case_small(), **changes)
    summary = summary or _analyzed(engine, case)
    notify.write_lists(engine, case, tmp_path, summary)
    return (tmp_path / "notify" / "regulator_summary.md").read_text(encoding="utf-8")


def test_the_regulator_summary_counts_accounts_and_requests_from_the_analysis(engine, tmp_path):
    text = _regulator(engine, tmp_path)
    # README: 4 affected accounts, 8 exposed; data owners 6 accounts, 11 requests; excluded
    # accounts qa, qa2, res (3) with 1 + 2 = 3 requests in band excluded
    assert _section(
        text,
        "2. Categories and approximate numbers of accounts and requests concerned (Art. 33(3)(a))",
    ).startswith(
        "\n| category | accounts | requests |\n| --- | ---: | ---: |\n"
        "| Recipients: received exposed responses, which may hold other customers' data | 4 | "
        "8 exposed responses |\n"
        "| Data owners: their requests could have been read by an exposed response | 6 | 11 "
        "requests at risk |\n"
        "| Set aside by the case file's exclusions (reasons below), not counted as recipients "
        "| 3 | 3 requests |\n\n"
        # the analysis' range (case_small README): 8 likely, r10 unknown_capacity widens it to 9
        "Exposed responses: 8 (likely), within 8 to 9 on the evidence.\n\n"
        "| what widens the range | direction | requests |\n| --- | --- | ---: |\n"
        "| unknown\\_capacity | max | 1 |\n\n"
        "Content delivered: of the 8 exposed responses, 6 carried generated content to the "
        "client, 2 carried none (nothing was generated), and for 0 the logs give no count.\n\n"
        "Data owners: attribution partial (policy pool-walkback): 1 exposed request\\(s\\) "
        "have no decode node.\n\n"
        "Set aside by reason: internal-test 1 request(s), security-researcher 2 "
        "request(s).\n"
    )


def test_the_regulator_summary_gives_the_exposure_range_when_the_analysis_has_one(engine, tmp_path):
    summary = _analyzed(engine)
    summary["exposure_range"] = {
        "min": 7,
        "likely": 8,
        "max": 10,
        "contributions": [
            {"category": "unknown_capacity", "direction": "max", "requests": 2},
            {"category": "status_unknown", "direction": "min", "requests": 1},
        ],
    }
    text = _regulator(engine, tmp_path, summary)
    assert (
        "Exposed responses: 8 (likely), within 7 to 10 on the evidence.\n\n"
        "| what widens the range | direction | requests |\n| --- | --- | ---: |\n"
        "| unknown\\_capacity | max | 2 |\n| status\\_unknown | min | 1 |\n"
    ) in text


def test_the_72_hour_mark_runs_from_the_awareness_event(engine, tmp_path):
    events = (
        Event(parse_utc("2026-09-08T00:00:00Z"), "Researcher reports the issue"),
        Event(parse_utc("2026-09-09T13:22:00Z"), "Incident declared", awareness=True),
    )
    text = _regulator(engine, tmp_path, events=events)
    assert _section(text, "6. Awareness and the 72-hour mark (Art. 33(1))") == (
        "\nThe operator became aware of the breach at 2026-09-09T13:22:00Z (Incident declared). "
        "Notification to the supervisory authority is due within 72 hours of that time: by "
        "2026-09-12T13:22:00Z. Where it is made later, the reasons for the delay go with it.\n"
    )
    assert "- 2026-09-09T13:22:00Z: Incident declared (the operator becomes aware)\n" in text


def test_without_an_awareness_event_the_summary_says_it_cannot_compute_the_mark(engine, tmp_path):
    text = _regulator(engine, tmp_path)
    assert "no `[[event]]` of the case file is marked `awareness = true`" in text


def test_the_regulator_summary_carries_the_case_texts_in_article_order(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    out = tmp_path / "out"
    _notified(case, out)
    text = (out / "notify" / "regulator_summary.md").read_text()
    titles = re.findall(r"^## (.*)$", text, re.M)
    assert titles == [
        "1. Nature of the breach (Art. 33(3)(a))",
        "2. Categories and approximate numbers of accounts and requests concerned (Art. 33(3)(a))",
        "3. Contact point (Art. 33(3)(b))",
        "4. Likely consequences (Art. 33(3)(c))",
        "5. Measures taken or proposed (Art. 33(3)(d))",
        "6. Awareness and the 72-hour mark (Art. 33(1))",
    ]
    assert _section(text, "3. Contact point (Art. 33(3)(b))") == "\nDPO, dpo@provider.example\n"
    assert "\nOthers' prompts could be read.\n" in _section(
        text, "4. Likely consequences (Art. 33(3)(c))"
    )
    assert "| us | 1 | 3 | 3 | 6 | 1 |\n| \\(unknown\\) | 1 | 2 | 1 | 1 | 2 |\n" in text


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


# --- 5. the column dictionary -----------------------------------------------------------------


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
    ):
        with (out / "notify" / name).open(newline="") as f:
            header = next(csv.reader(f))
        documented = re.findall(r"^\| `([a-z_0-9]+)` \|", _section(readme, name), re.M)
        assert header[: len(documented)] == documented, name
        contacts = header[len(documented) :]
        if contacts:  # the accounts file's columns, named in the last row
            assert f"| {', '.join(contacts)} | the columns of accounts\\.csv" in readme
    assert "## regulator_summary.md\n\nThe figures and texts for a supervisory" in readme


# --- determinism and the bundled case -----------------------------------------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_two_runs_write_byte_identical_notify_folders(tmp_path):
    case = _case_copy(tmp_path / "case", TEXTS, REGION_ACCOUNTS)
    _notified(case, tmp_path / "a")
    _notified(case, tmp_path / "b")
    a, b = _tree(tmp_path / "a" / "notify"), _tree(tmp_path / "b" / "notify")
    assert len(a) == 1 + 3 + 1 + 1 + 1 + 4 + 6  # README, 3 lists, jurisdictions, regulator,
    # index, 4 recipient and 6 data-owner notices
    assert a == b


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    pipeline.demo(out)
    return out


def test_bundled_case_every_recipient_has_one_notice_with_its_request_ids(demo):
    recipients = _csv(demo / "notify" / "recipients.csv")
    index = _csv(demo / "notify" / "notices" / "index.csv")
    assert len(recipients) == 11
    assert sorted(r["account_id"] for r in index if r["kind"] == "recipient") == [
        r["account_id"] for r in recipients
    ]
    for row in recipients:
        notice = _notice(demo, "recipient", row["account_id"])
        listed = _listed_ids(_section(notice, "Your affected responses"))
        assert sorted(listed) == row["request_ids"].split(";")
        assert len(listed) == int(row["responses"])


def test_bundled_case_every_data_owner_has_one_notice_with_its_requests_at_risk(demo):
    owners = _csv(demo / "notify" / "data_owners.csv")
    index = _csv(demo / "notify" / "notices" / "index.csv")
    assert sorted(r["account_id"] for r in index if r["kind"] == "data_owner") == [
        r["account_id"] for r in owners
    ]
    with DuckDBEngine(demo / "case.duckdb") as eng:
        pairs = eng.rows("SELECT DISTINCT owner_account_id, owner_request_id FROM data_owners")
    at_risk: dict[str, set[str]] = {}
    for account, request in pairs:
        at_risk.setdefault(account, set()).add(request)
    assert len(owners) == len(at_risk) == 260
    for row in owners:
        listed = _listed_ids(_section(_notice(demo, "data_owner", row["account_id"]),
                                      "Your requests at risk"))  # fmt: skip
        assert len(listed) == int(row["requests_at_risk"]) == len(set(listed))
        assert set(listed) == at_risk[row["account_id"]]


def test_bundled_case_jurisdictions_reconcile_and_the_72_hours_run_from_the_declaration(demo):
    summary = json.loads((demo / "summary.json").read_text())
    rows = _csv(demo / "notify" / "jurisdictions.csv")
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
    text = (demo / "notify" / "regulator_summary.md").read_text()
    # declared 2026-09-09T13:22Z (sample_logs/glm53/incident.toml) + 72 h
    assert "by 2026-09-12T13:22:00Z." in text


def test_bundled_case_notify_again_gives_the_same_bytes(demo, tmp_path):
    (tmp_path / "summary.json").write_bytes((demo / "summary.json").read_bytes())
    pipeline.notify(BUNDLED, demo / "case.duckdb", tmp_path)
    assert _tree(tmp_path / "notify") == _tree(demo / "notify")


# --- a status the logs do not record (tests/fixtures/partial, README.md) ---------------------


def test_a_response_without_a_status_says_its_delivery_is_not_recorded(tmp_path):
    # status.toml: acct-a's s1 gives status 200, s2 none; 10 tokens each
    pipeline.run(PARTIAL_DIR / "status.toml", tmp_path)
    section = _section(_notice(tmp_path, "recipient", "acct-a"), "Your affected responses")
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
    section = _section(_notice(tmp_path, "recipient", "acct-c"), "Your affected responses")
    assert "10 tokens generated, delivery not recorded.\n" in section
    assert "generated and delivered" not in section
