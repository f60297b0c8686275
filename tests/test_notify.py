"""The notification lists on the hand-built fixture case (derivation: case_small/README.md)."""

from __future__ import annotations

import csv
import dataclasses

import pytest
from case_small_db import case_small, engine_with_requests

from forensics import pipeline
from forensics.analysis import exposure, owners
from forensics.errors import AnalysisError, InputError
from forensics.render import notify


@pytest.fixture
def engine():
    eng = engine_with_requests()
    yield eng
    eng.close()


def _lists(engine, tmp_path, case=None):
    case = case or case_small()
    pipeline.analyze_case(engine, case)
    return notify.write_lists(engine, case, tmp_path)


def test_recipients_rows_carry_contacts_and_keep_a_missing_account(engine, tmp_path):
    _lists(engine, tmp_path)
    # completion_tokens of the exposed responses (requests.csv): r02 9, r16 0; r03 20, r04 0,
    # r17 50; r19 50; r13 50, r21 10 -> sums 9, 70, 50, 60; empty (0) 1, 1, 0, 0; none unknown.
    # The range's only side is max: r10 (dave, unknown_capacity; README "Evidence"): no
    # exposed response is uncertain, so alice, bob, carol, erin are proven; dave is possible
    # with 1 request, no response, no time or ids, completion_tokens empty.
    assert (tmp_path / "notify" / "recipients.csv").read_text() == (
        "account_id,tier,responses,first_exposed_at,last_exposed_at,request_ids,"
        "completion_tokens,empty_responses,unknown_responses,uncertain_responses,"
        "possible_requests,name,email\n"
        "acct-alice,proven,2,2026-09-01T08:10:00Z,2026-09-01T11:59:59Z,r02;r16,9,1,0,0,0,"
        "Alice Ltd,alice@example.com\n"
        'acct-bob,proven,3,2026-09-01T08:20:00Z,2026-09-01T13:00:00Z,r03;r04;r17,70,1,0,0,0,"Bob, '
        'Inc.",bob@example.com\n'
        "acct-carol,proven,1,2026-09-01T13:20:00Z,2026-09-01T13:20:00Z,r19,50,0,0,0,0,Carol GmbH,"
        "carol@example.com\n"
        "acct-dave,possible,0,,,,,0,0,0,1,Dave Co,dave@example.com\n"
        "acct-erin,proven,2,2026-09-01T10:00:00Z,2026-09-01T13:40:00Z,r13;r21,60,0,0,0,0,,\n"
    )


def test_missing_affected_account_is_warned_about(engine, tmp_path):
    result = _lists(engine, tmp_path)
    assert (
        "1 affected account(s) not in accounts.csv, listed with empty contacts in "
        "notify/recipients.csv: acct-erin"
    ) in result.warnings


def test_data_owner_rows_per_account(engine, tmp_path):
    _lists(engine, tmp_path)
    assert (tmp_path / "notify" / "data_owners.csv").read_text() == (
        "account_id,requests_at_risk,exposures,first_at,last_at,excluded_reason,read_by,name,"
        "email\n"
        "acct-alice,3,2,2026-09-01T08:01:00Z,2026-09-01T12:00:30Z,,exposed,Alice Ltd,"
        "alice@example.com\n"
        'acct-bob,2,2,2026-09-01T08:22:00Z,2026-09-01T08:31:00Z,,exposed,"Bob, Inc.",'
        "bob@example.com\n"
        "acct-carol,1,1,2026-09-01T08:25:00Z,2026-09-01T08:25:00Z,,exposed,Carol GmbH,"
        "carol@example.com\n"
        "acct-dave,1,1,2026-09-01T08:05:00Z,2026-09-01T08:05:00Z,,exposed,Dave Co,"
        "dave@example.com\n"
        "acct-frank,3,3,2026-09-01T07:00:30Z,2026-09-01T13:10:00Z,,exposed,Frank SA,"
        "frank@example.com\n"
        "acct-qa,1,1,2026-09-01T09:11:00Z,2026-09-01T09:11:00Z,internal-test,exposed,Ops QA,"
        "qa@example.internal\n"
    )


def test_data_owners_say_which_accounts_the_case_excludes_and_why(engine, tmp_path):
    _lists(engine, tmp_path)
    with (tmp_path / "notify" / "data_owners.csv").open(newline="") as f:
        reasons = {row["account_id"]: row["excluded_reason"] for row in csv.DictReader(f)}
    # acct-qa (internal-test) owns r08, read back by r16; no other owner is excluded
    assert reasons == {
        "acct-alice": "",
        "acct-bob": "",
        "acct-carol": "",
        "acct-dave": "",
        "acct-frank": "",
        "acct-qa": "internal-test",
    }


def test_data_owners_without_accounts_file_still_say_who_is_excluded(engine, tmp_path):
    case = dataclasses.replace(case_small(), accounts_path=None)
    _lists(engine, tmp_path, case)
    lines = (tmp_path / "notify" / "data_owners.csv").read_text().splitlines()
    assert lines[0] == (
        "account_id,requests_at_risk,exposures,first_at,last_at,excluded_reason,read_by"
    )
    assert lines[-1] == (
        "acct-qa,1,1,2026-09-01T09:11:00Z,2026-09-01T09:11:00Z,internal-test,exposed"
    )


def test_excluded_lists_every_configured_account_with_its_requests(engine, tmp_path):
    _lists(engine, tmp_path)
    # no [[exclude]] entry says notify = true: none is notified
    assert (tmp_path / "notify" / "excluded.csv").read_text() == (
        "account_id,reason,notified,requests\n"
        "acct-qa,internal-test,false,1\n"
        "acct-qa2,internal-test,false,0\n"
        "acct-res,security-researcher,false,2\n"
    )


def test_without_accounts_file_lists_have_no_contact_columns(engine, tmp_path):
    case = dataclasses.replace(case_small(), accounts_path=None)
    result = _lists(engine, tmp_path, case)
    header = (tmp_path / "notify" / "recipients.csv").read_text().splitlines()[0]
    assert header == (
        "account_id,tier,responses,first_exposed_at,last_exposed_at,request_ids,"
        "completion_tokens,empty_responses,unknown_responses,uncertain_responses,possible_requests"
    )
    assert result.warnings[0] == (
        "the case names no [accounts] file: the lists carry no contact columns"
    )


def test_accounts_file_without_account_id_column_is_refused(engine, tmp_path):
    bad = tmp_path / "accounts.csv"
    bad.write_text("id,email\nacct-alice,a@example.com\n")
    case = dataclasses.replace(case_small(), accounts_path=bad)
    with pytest.raises(InputError, match="no account_id column"):
        _lists(engine, tmp_path, case)


def test_accounts_file_with_a_duplicate_account_is_refused(engine, tmp_path):
    bad = tmp_path / "accounts.csv"
    bad.write_text("account_id,email\nacct-bob,a@example.com\nacct-bob,b@example.com\n")
    case = dataclasses.replace(case_small(), accounts_path=bad)
    with pytest.raises(InputError, match="more than once: acct-bob"):
        _lists(engine, tmp_path, case)


def test_notify_before_analyze_is_refused(engine, tmp_path):
    with pytest.raises(AnalysisError, match="no bands table"):
        notify.write_lists(engine, case_small(), tmp_path)


def test_notify_without_the_exposure_range_is_refused(engine, tmp_path):
    """The tiers rest on the range's sides: lists without them would call every recipient
    proven on evidence nobody looked at."""
    exposure.compute_bands(engine, case_small())
    owners.attribute(engine, case_small())
    with pytest.raises(AnalysisError, match="no exposure_range_requests table"):
        notify.write_lists(engine, case_small(), tmp_path)
