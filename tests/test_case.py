"""Case file validation: each refusal names the file, the line and the key."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from forensics.case import Deadline, load_case
from forensics.errors import CaseError

HEAD = """name = "t"
models = ["m"]
context_window = 1000

[window]
start = "2026-09-01T00:00:00Z"
end = "2026-09-02T00:00:00Z"
"""


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "incident.toml"
    path.write_text(HEAD + body)
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(CaseError) as info:
        load_case(path)
    return info.value.line()


def test_fixture_case_loads_with_times_in_utc():
    case = load_case(Path(__file__).parent / "fixtures" / "case_small" / "incident.toml")
    assert case.window_start == datetime(2026, 9, 1, tzinfo=UTC)
    assert case.events[0].at == datetime(2026, 9, 1, 14, 25, tzinfo=UTC)
    assert case.excluded_accounts() == {
        "acct-qa": "internal-test",
        "acct-qa2": "internal-test",
        "acct-res": "security-researcher",
    }
    assert case.attribution.lookback == timedelta(hours=1)
    assert [c.tokens for c in case.capacity] == [200, 600, 900, 400, 800, 1000, 500]


def test_unknown_top_level_key_is_refused_with_file_line_and_key(tmp_path):
    path = _write(tmp_path, "")
    path.write_text(HEAD.replace('models = ["m"]\n', 'models = ["m"]\ncolour = "red"\n'))
    assert _refusal(path).startswith(f"{path.resolve()}:3: colour: unknown key")


def test_unknown_key_in_a_capacity_entry_is_refused(tmp_path):
    path = _write(
        tmp_path,
        '\n[[capacity]]\nrole = "prefill"\ntokens = 5\nstart = "2026-09-01T00:00:00Z"\npool = 3\n',
    )
    assert _refusal(path).startswith(f"{path.resolve()}:13: capacity[1].pool: unknown key")


def test_wrong_type_is_refused(tmp_path):
    path = _write(tmp_path, "")
    path.write_text(HEAD.replace("context_window = 1000", 'context_window = "1000"'))
    assert _refusal(path).startswith(
        f"{path.resolve()}:3: context_window: expected an integer, got a string"
    )


def test_boolean_token_count_is_a_wrong_type(tmp_path):
    path = _write(
        tmp_path, '\n[[capacity]]\nrole = "decode"\ntokens = true\nstart = "2026-09-01T00:00:00Z"\n'
    )
    assert _refusal(path).startswith(f"{path.resolve()}:11: capacity[1].tokens: expected an")


def test_unparsable_time_is_refused(tmp_path):
    path = _write(tmp_path, "")
    path.write_text(HEAD.replace('end = "2026-09-02T00:00:00Z"', 'end = "yesterday noon"'))
    line = _refusal(path)
    assert line.startswith(f"{path.resolve()}:7: window.end: unparsable time 'yesterday noon'")
    assert "ISO 8601" in line


def test_capacity_ending_before_it_starts_is_refused(tmp_path):
    path = _write(
        tmp_path,
        '\n[[capacity]]\nrole = "prefill"\ntokens = 5\nstart = "2026-09-01T12:00:00Z"\n'
        'end = "2026-09-01T11:00:00Z"\n',
    )
    assert _refusal(path).startswith(
        f"{path.resolve()}:13: capacity[1].end: end must be after start"
    )


def test_overlapping_contradictory_capacity_is_refused(tmp_path):
    entry = '\n[[capacity]]\nrole = "prefill"\nnodes = "pf-*"\ntokens = {t}\nstart = "{s}"\n'
    path = _write(
        tmp_path,
        entry.format(t=600, s="2026-09-01T00:00:00Z")
        + entry.format(t=900, s="2026-09-01T06:00:00Z"),
    )
    line = _refusal(path)
    assert line.startswith(f"{path.resolve()}:15: capacity[2]: contradicts capacity[1]")
    assert "(600 vs 900)" in line


def test_adjacent_capacity_spans_of_one_glob_are_accepted(tmp_path):
    path = _write(
        tmp_path,
        '\n[[capacity]]\nrole = "prefill"\ntokens = 600\nstart = "2026-09-01T00:00:00Z"\n'
        'end = "2026-09-01T12:00:00Z"\n'
        '\n[[capacity]]\nrole = "prefill"\ntokens = 900\nstart = "2026-09-01T12:00:00Z"\n',
    )
    assert [c.tokens for c in load_case(path).capacity] == [600, 900]


def test_account_excluded_twice_with_different_reasons_is_refused(tmp_path):
    path = _write(
        tmp_path,
        '\n[[exclude]]\nreason = "internal-test"\naccounts = ["acct-a"]\n'
        '\n[[exclude]]\nreason = "security-researcher"\naccounts = ["acct-b", "acct-a"]\n',
    )
    line = _refusal(path)
    assert line.startswith(f"{path.resolve()}:15: exclude[2].accounts: account 'acct-a'")
    assert "'internal-test'" in line


def test_account_from_an_exclusion_file_with_a_second_reason_names_the_file_key(tmp_path):
    (tmp_path / "researchers.txt").write_text("acct-a\n")
    path = _write(
        tmp_path,
        '\n[[exclude]]\nreason = "internal-test"\naccounts = ["acct-a"]\n'
        '\n[[exclude]]\nreason = "security-researcher"\nfile = "researchers.txt"\n',
    )
    assert _refusal(path).startswith(f"{path.resolve()}:15: exclude[2].file: account 'acct-a'")


def test_same_account_twice_with_the_same_reason_is_accepted(tmp_path):
    path = _write(
        tmp_path,
        '\n[[exclude]]\nreason = "internal-test"\naccounts = ["acct-a"]\n'
        '\n[[exclude]]\nreason = "internal-test"\naccounts = ["acct-a"]\n',
    )
    assert load_case(path).excluded_accounts() == {"acct-a": "internal-test"}


def test_missing_exclusion_file_is_refused(tmp_path):
    path = _write(tmp_path, '\n[[exclude]]\nreason = "r"\nfile = "nope.txt"\n')
    assert _refusal(path).startswith(f"{path.resolve()}:11: exclude[1].file: cannot read")


def test_invalid_toml_is_refused_with_its_line(tmp_path):
    path = _write(tmp_path, "\n[window\n")
    assert _refusal(path).startswith(f"{path}:9: not valid TOML")


def test_missing_case_file_is_refused(tmp_path):
    assert "case file not found" in _refusal(tmp_path / "none.toml")


# --- values no later step could represent are refused here, as one line ---------------------


@pytest.mark.parametrize(
    "lookback", ["10000000000d", "99999999999999999999ms", "36501d", "876025h"]
)
def test_a_lookback_longer_than_100_years_is_refused(tmp_path, lookback):
    path = _write(tmp_path, f'\n[attribution]\npolicy = "time-window"\nlookback = "{lookback}"\n')
    assert _refusal(path).startswith(
        f"{path.resolve()}:11: attribution.lookback: duration '{lookback}' is longer than "
        "36500 days"
    )


def test_a_lookback_of_100_years_is_accepted(tmp_path):
    path = _write(tmp_path, '\n[attribution]\npolicy = "time-window"\nlookback = "36500d"\n')
    assert load_case(path).attribution.lookback == timedelta(days=36500)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('"0001-01-01T00:00:00Z"', "0001-01-01T00:00:00Z"),
        ('"9999-12-31T23:59:59Z"', "9999-12-31T23:59:59Z"),
        ("0001-01-01T00:00:00+05:00", "0001-01-01T00:00:00+05:00"),  # before year 1 in UTC
        ("9999-12-31T23:59:59-05:00", "9999-12-31T23:59:59-05:00"),  # after year 9999 in UTC
        ('"1969-12-31T23:59:59Z"', "1969-12-31T23:59:59Z"),
        ('"3000-01-01T00:00:00Z"', "3000-01-01T00:00:00Z"),
    ],
)
def test_a_time_outside_1970_to_2999_is_refused(tmp_path, text, shown):
    path = _write(tmp_path, f'\n[[event]]\nat = {text}\nlabel = "x"\n')
    assert _refusal(path) == (
        f"{path.resolve()}:10: event[1].at: time {shown} is outside 1970-01-01 .. 2999-12-31; "
        "give the real time of the incident (request logs start in 1970)"
    )


def test_the_edges_of_the_time_range_are_accepted(tmp_path):
    path = _write(tmp_path, "")
    path.write_text(
        HEAD.replace("2026-09-01T00:00:00Z", "1970-01-01T00:00:00Z").replace(
            "2026-09-02T00:00:00Z", "2999-12-31T23:59:59.999999Z"
        )
    )
    case = load_case(path)
    assert (case.window_start.year, case.window_end.year) == (1970, 2999)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("", "context_window"),
        ('\n[[capacity]]\nrole = "prefill"\ntokens = BIG\nstart = "2026-09-01T00:00:00Z"\n',
         "capacity[1].tokens"),
        ("\n[baseline]\nmin_prompt_tokens = BIG\n", "baseline.min_prompt_tokens"),
    ],
)  # fmt: skip
def test_an_integer_of_2_to_the_63_or_more_is_refused(tmp_path, body, where):
    path = _write(tmp_path, body.replace("BIG", str(2**63)))
    if not body:
        path.write_text(HEAD.replace("1000", str(2**63)))
    assert f": {where}: number too large; give a value below 2^63" in _refusal(path)


def test_a_case_file_that_is_not_utf8_names_the_line_and_byte(tmp_path):
    path = tmp_path / "incident.toml"
    path.write_bytes(HEAD.replace('"t"', '"caf\xe9"').encode("latin-1"))
    assert _refusal(path) == (
        f"{path}:1: not UTF-8 text (byte 0xe9 on line 1); save the file as UTF-8"
    )


def test_an_exclusion_file_that_is_not_utf8_is_refused(tmp_path):
    (tmp_path / "ids.txt").write_bytes(b"acct-1\nacct-\xff\n")
    path = _write(tmp_path, '\n[[exclude]]\nreason = "r"\nfile = "ids.txt"\n')
    assert _refusal(path).startswith(f"{tmp_path.resolve() / 'ids.txt'}:2: not UTF-8 text")


def test_a_case_file_saved_with_a_byte_order_mark_loads_as_without_it(tmp_path):
    # Notepad starts a UTF-8 file with EF BB BF; tomllib alone refuses it ("Invalid
    # statement (at line 1, column 1)")
    plain = _write(tmp_path, "")
    marked = tmp_path / "marked.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert load_case(marked) == replace(load_case(plain), path=marked.resolve())


# --- [notify] and the awareness event (docs/notices.md) --------------------------------------

EVENT = '\n[[event]]\nat = "{at}"\nlabel = "{label}"\n'


def test_notify_section_reads_texts_as_written_and_the_template_beside_the_case(tmp_path):
    path = _write(
        tmp_path,
        '\n[notify]\njurisdiction = "region"\ntemplate = "t/notice.md.j2"\n'
        "measures = '''\n- Model made *private*.\n'''\n",
    )
    notify = load_case(path).notify
    assert notify.jurisdiction == "region"
    assert notify.template == tmp_path.resolve() / "t" / "notice.md.j2"
    assert notify.measures == "- Model made *private*.\n"  # TOML trims the first newline
    assert (notify.description, notify.consequences, notify.contact) == (None, None, None)


def test_notify_message_keys_are_read(tmp_path):
    path = _write(
        tmp_path,
        '\n[notify]\nsender = "Security <sec@provider.example>"\nreply_to = "dpo@provider.example"'
        '\nsignature = "Jane\\nSecurity"\npossible = "none"\naddress_columns = ["email"]\n'
        'date = "2026-10-01T09:00:00+02:00"\n'
        'discovery_method = { external = ["Security researcher"] }\n'
        '[notify.deadlines]\neu = { within = "72h", to = "authority" }\n"us-ca" = "30d"\n',
    )
    notify = load_case(path).notify
    assert (notify.sender, notify.reply_to, notify.signature) == (
        "Security <sec@provider.example>",
        "dpo@provider.example",
        "Jane\nSecurity",
    )
    assert (notify.possible, notify.address_columns) == ("none", ("email",))
    assert notify.date == datetime(2026, 10, 1, 7, 0, tzinfo=UTC)
    assert notify.discovery_method == (("external", ("Security researcher",)),)
    assert notify.deadlines == (
        Deadline("eu", timedelta(hours=72), "72h", "authority"),
        Deadline("us-ca", timedelta(days=30), "30d", "individuals"),
    )


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ('sender = "not an address"', "notify.sender: 'not an address' is not an e-mail address"),
        ('reply_to = "a@b.example\\nBcc: c@d.example"', "notify.reply_to: 'a@b.example\\\\x0aBcc"),
        ('possible = "maybe"', "notify.possible: must be one of notice, none"),
        ("address_columns = []", "notify.address_columns: must be a list of column names"),
        ('recipient_template = "r.md.j2"', "notify.recipient_template: replaced by template"),
        ('discovery_method = { outside = ["x"] }', "notify.discovery_method: keys must be"),
    ],
)
def test_a_bad_notify_message_key_is_refused_naming_it(tmp_path, body, what):
    path = _write(tmp_path, f"\n[notify]\n{body}\n")
    assert _refusal(path).startswith(f"{path.resolve()}:10: {what}")


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ('"30 days"', "unparsable duration '30 days': give hours or days"),
        ('"90m"', "unparsable duration '90m': give hours or days"),
        ('{ within = "3d", to = "press" }', "to must be one of individuals, authority"),
        ("30", "must be a duration or a table (within, to)"),
    ],
)
def test_a_bad_deadline_is_refused_naming_its_jurisdiction_and_line(tmp_path, value, what):
    path = _write(tmp_path, f"\n[notify.deadlines]\neu = {value}\n")
    assert _refusal(path).startswith(f"{path.resolve()}:10: notify.deadlines.eu: {what}")


def test_an_exclusion_is_not_notified_unless_it_says_so(tmp_path):
    path = _write(
        tmp_path,
        '\n[[exclude]]\nreason = "qa"\naccounts = ["a"]\n'
        '\n[[exclude]]\nreason = "researcher"\naccounts = ["b"]\nnotify = true\n',
    )
    assert [e.notify for e in load_case(path).exclusions] == [False, True]


def test_an_event_is_internal_unless_it_names_its_audience(tmp_path):
    path = _write(
        tmp_path,
        EVENT.format(at="2026-09-08T00:00:00Z", label="a")
        + EVENT.format(at="2026-09-09T00:00:00Z", label="b")
        + 'audience = "customer"\n'
        + EVENT.format(at="2026-09-10T00:00:00Z", label="c")
        + 'audience = ["customer", "regulator", "customer"]\n',
    )
    assert [e.audience for e in load_case(path).events] == [
        ("internal",),
        ("customer",),
        ("customer", "regulator"),
    ]


def test_an_unknown_audience_is_refused_naming_its_line(tmp_path):
    event = EVENT.format(at="2026-09-08T00:00:00Z", label="a")
    path = _write(tmp_path, event + 'audience = "press"\n')
    assert _refusal(path).startswith(
        f"{path.resolve()}:12: event[1].audience: must be one of customer, regulator, internal"
    )


def test_a_case_without_notify_has_no_settings_and_no_awareness(tmp_path):
    case = load_case(_write(tmp_path, EVENT.format(at="2026-09-01T10:00:00Z", label="x")))
    assert case.notify.jurisdiction is None and case.notify.measures is None
    assert case.awareness is None


def test_unknown_notify_key_is_refused_naming_the_allowed_ones(tmp_path):
    path = _write(tmp_path, '\n[notify]\njuristiction = "region"\n')
    line = _refusal(path)
    assert line.startswith(f"{path.resolve()}:10: notify.juristiction: unknown key")
    assert "jurisdiction, template, description" in line


def test_an_empty_notify_text_is_refused(tmp_path):
    path = _write(tmp_path, '\n[notify]\ncontact = "  "\n')
    assert _refusal(path).startswith(f"{path.resolve()}:10: notify.contact: must not be empty")


def test_the_event_marked_awareness_is_the_cases_awareness(tmp_path):
    path = _write(
        tmp_path,
        EVENT.format(at="2026-09-08T00:00:00Z", label="report")
        + EVENT.format(at="2026-09-09T13:22:00Z", label="declared")
        + "awareness = true\n"
        + EVENT.format(at="2026-09-09T14:00:00Z", label="private")
        + "awareness = false\n",
    )
    case = load_case(path)
    assert case.awareness is not None
    assert (case.awareness.at, case.awareness.label) == (
        datetime(2026, 9, 9, 13, 22, tzinfo=UTC),
        "declared",
    )
    assert [e.awareness for e in case.events] == [False, True, False]


def test_a_second_awareness_event_is_refused_naming_its_line(tmp_path):
    path = _write(
        tmp_path,
        EVENT.format(at="2026-09-08T00:00:00Z", label="report")
        + "awareness = true\n"
        + EVENT.format(at="2026-09-09T13:22:00Z", label="declared")
        + "awareness = true\n",
    )
    # lines 9-12 the first event, 14-17 the second: its awareness key on line 17
    line = _refusal(path)
    assert line.startswith(
        f"{path.resolve()}:17: event[2].awareness: event[1] is already marked awareness = true"
    )


def test_awareness_must_be_a_boolean(tmp_path):
    path = _write(tmp_path, EVENT.format(at="2026-09-08T00:00:00Z", label="r") + "awareness = 1\n")
    assert _refusal(path).startswith(
        f"{path.resolve()}:12: event[1].awareness: expected a boolean, got an integer"
    )


def test_capacity_reject_from_is_optional_and_read(tmp_path):
    path = _write(
        tmp_path,
        '\n[[capacity]]\nrole = "prefill"\ntokens = 600\nreject_from = 594\n'
        'start = "2026-09-01T00:00:00Z"\n'
        '\n[[capacity]]\nrole = "decode"\ntokens = 900\nstart = "2026-09-01T00:00:00Z"\n',
    )
    prefill, decode = load_case(path).capacity
    assert (prefill.reject_from, prefill.over_from) == (594, 594)
    assert (decode.reject_from, decode.over_from) == (None, 901)  # tokens + 1


@pytest.mark.parametrize(("value", "ok"), [(0, False), (1, True), (601, True), (602, False)])
def test_capacity_reject_from_must_lie_in_one_to_tokens_plus_one(tmp_path, value, ok):
    path = _write(
        tmp_path,
        f'\n[[capacity]]\nrole = "prefill"\ntokens = 600\nreject_from = {value}\n'
        'start = "2026-09-01T00:00:00Z"\n',
    )
    if ok:
        assert load_case(path).capacity[0].reject_from == value
    else:
        line = _refusal(path)
        assert line.startswith(
            f"{path.resolve()}:12: capacity[1].reject_from: must be in 1 .. tokens + 1 (601)"
        )


def test_overlapping_capacity_with_another_reject_from_is_refused(tmp_path):
    entry = (
        '\n[[capacity]]\nrole = "prefill"\nnodes = "pf-*"\ntokens = 600\nreject_from = {r}\n'
        'start = "{s}"\n'
    )
    path = _write(
        tmp_path,
        entry.format(r=594, s="2026-09-01T00:00:00Z")
        + entry.format(r=600, s="2026-09-01T06:00:00Z"),
    )
    line = _refusal(path)
    assert line.startswith(f"{path.resolve()}:16: capacity[2]: contradicts capacity[1]")
    assert "(600 reject_from 594 vs 600 reject_from 600)" in line


# --- [uncertainty] ------------------------------------------------------------------------------


def test_uncertainty_defaults_to_none():
    case = load_case(Path(__file__).parent / "fixtures" / "case_small" / "incident.toml")
    assert (case.uncertainty.clock_skew, case.uncertainty.prompt_tokens_tolerance) == (
        timedelta(0),
        0,
    )


def test_uncertainty_reads_a_clock_skew_and_a_token_tolerance(tmp_path):
    path = _write(tmp_path, '\n[uncertainty]\nclock_skew = "2m"\nprompt_tokens_tolerance = 512\n')
    case = load_case(path)
    assert case.uncertainty.clock_skew == timedelta(minutes=2)
    assert case.uncertainty.prompt_tokens_tolerance == 512


def test_a_clock_skew_of_zero_is_accepted(tmp_path):
    path = _write(tmp_path, '\n[uncertainty]\nclock_skew = "0s"\n')
    assert load_case(path).uncertainty.clock_skew == timedelta(0)


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (
            'clock_skew = "2 minutes"',
            ":10: uncertainty.clock_skew: unparsable duration '2 minutes'; write e.g. \"2m\"",
        ),
        (
            'clock_skew = "25h"',
            ":10: uncertainty.clock_skew: duration '25h' is longer than 1 day",
        ),
        (
            "prompt_tokens_tolerance = -1",
            ":10: uncertainty.prompt_tokens_tolerance: must be >= 0",
        ),
        ("clock_skew = 120", ":10: uncertainty.clock_skew: expected a string, got an integer"),
        ("skew = 1", ":10: uncertainty.skew: unknown key; allowed keys in [uncertainty]"),
    ],
)
def test_a_bad_uncertainty_value_is_refused_naming_its_line(tmp_path, body, shown):
    path = _write(tmp_path, f"\n[uncertainty]\n{body}\n")
    assert _refusal(path).startswith(f"{path.resolve()}{shown}")


def test_capacity_models_glob_is_optional_and_read(tmp_path):
    entry = '\n[[capacity]]\nrole = "prefill"\ntokens = {t}\n{m}start = "2026-09-01T00:00:00Z"\n'
    path = _write(
        tmp_path, entry.format(t=600, m='models = "glm-5.*"\n') + entry.format(t=900, m="")
    )
    for_glm, for_all = load_case(path).capacity
    assert (for_glm.models, for_all.models) == ("glm-5.*", None)
    assert [for_glm.applies_to(m) for m in ("glm-5.3", "glm-4")] == [True, False]
    assert for_all.applies_to("glm-4")


def test_an_empty_capacity_models_glob_is_refused(tmp_path):
    path = _write(
        tmp_path,
        '\n[[capacity]]\nrole = "prefill"\nmodels = " "\ntokens = 5\n'
        'start = "2026-09-01T00:00:00Z"\n',
    )
    assert _refusal(path).startswith(f"{path.resolve()}:11: capacity[1].models: must not be empty")


def test_overlapping_capacity_of_one_node_glob_for_other_models_is_accepted(tmp_path):
    entry = '\n[[capacity]]\nrole = "prefill"\nnodes = "pf-*"\nmodels = "{m}"\ntokens = {t}\n'
    entry += 'start = "2026-09-01T00:00:00Z"\n'
    path = _write(tmp_path, entry.format(m="m-a", t=600) + entry.format(m="m-b", t=900))
    assert [(c.models, c.tokens) for c in load_case(path).capacity] == [("m-a", 600), ("m-b", 900)]


def test_overlapping_capacity_of_the_same_nodes_and_models_is_refused(tmp_path):
    entry = '\n[[capacity]]\nrole = "prefill"\nnodes = "pf-*"\nmodels = "m-a"\ntokens = {t}\n'
    entry += 'start = "2026-09-01T00:00:00Z"\n'
    path = _write(tmp_path, entry.format(t=600) + entry.format(t=900))
    line = _refusal(path)
    assert line.startswith(
        f"{path.resolve()}:16: capacity[2]: contradicts capacity[1]: same role, nodes and models"
    )
