"""A notice template run by Jinja once per shape of notice, each document replayed from the
questions its template asks of its values (forensics/render/shapes.py): every document is
what Jinja renders for it, whatever its values; a template that uses a value in a way that
is not recorded is rendered by Jinja, document by document; errors are Jinja's own.

The oracle is Jinja itself: each document is compared with `Template.render` of a
template loaded afresh, given the shared and own values together.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from forensics.errors import InputError
from forensics.render.notices import NOTICE_TEMPLATE, Block, Markdown, Template, case_context
from forensics.render.shapes import Shapes

SHARED = {"case": {"name": "Case A", "models": ["glm-5.3", "glm-5.2"]}, "motto": Markdown("*")}
# values of every kind a notice holds, hostile ones too: the slot markers themselves, Markdown
# syntax, a line that starts a list, a block whose HTML holds a marker
VALUES = [
    None,
    0,
    1,
    2,
    True,
    "",
    "x",
    "- a [link](http://e.example) <b>",
    "\ue0001\ue001",
    Markdown("2026-09-01T08:20:00Z"),
    Block("- a\n- b", "- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"),
    Block("- \ue0000\ue001", "- \ue0000\ue001", "<ul>\n<li>\ue0000\ue001</li>\n</ul>\n"),
]
BRANCHY = """\
# Notice {{ ref }}

{% if who %}
Dear {{ who }}, of {{ case.name }} ({{ case.models|join(", ") }}).
{% else %}
Dear customer.
{% endif %}
{% if n == 1 %}
One response.
{% elif n is none %}
No count.
{% elif n > 1 %}
{{ n|n }} responses {{ n|counted("request") }}.
{% endif %}
{{ listed }}

- first: {{ row.first }}
- kind: {% if row.first is string %}text{% else %}other{% endif %}
{% if row.flag and not row.other %}
Flagged {{ row.first|default("none") }} {{ motto }}
{% endif %}
{% if ref in ["R-1", "R-2"] %}known{% endif %}
"""


def _template(tmp_path: Path, text: str) -> Template:
    path = tmp_path / "t.md.j2"
    path.write_text(text, encoding="utf-8")
    return Template(path, NOTICE_TEMPLATE)


def _documents() -> list[dict[str, object]]:
    """Own values over a grid of every kind (VALUES), in several combinations."""
    out = []
    counts = [None, 0, 1, 2, True, 1_234_567]
    grid = itertools.product(VALUES, counts, VALUES, VALUES)
    for i, (who, n, first, listed) in enumerate(grid):
        if i % 2:  # half the grid: every value in every place, still thousands
            continue
        out.append(
            {
                "ref": f"R-{i % 3}",
                "who": who,
                "n": n,
                "listed": listed,
                "row": {"first": first, "flag": i % 4 == 0, "other": i % 5 == 0},
            }
        )
    return out


def test_each_document_is_what_jinja_renders_for_it(tmp_path):
    template, oracle = _template(tmp_path, BRANCHY), _template(tmp_path, BRANCHY)
    bound = template.bind(SHARED)
    documents = _documents()
    assert len(documents) > 2_000
    for own in documents:
        assert bound.render(own) == oracle.render({**SHARED, **own}), own
    assert bound.shapes.on  # every document replayed or traced: none fell back to Jinja


def test_jinja_runs_once_per_shape_of_document(tmp_path):
    """2,000 documents of two shapes (who given or not): two runs of Jinja."""
    template = _template(tmp_path, BRANCHY)
    bound = template.bind(SHARED)
    runs = []
    trace = template._trace
    template._trace = lambda *a: runs.append(1) or trace(*a)
    for i in range(2_000):
        who = f"customer {i}" if i % 2 else None
        row = {"first": "a", "flag": False, "other": False}
        own = {"ref": f"X-{i}", "who": who, "n": 3, "listed": "", "row": row}
        bound.render(own)
    assert len(runs) == 2 and bound.shapes.on


def test_the_bundled_notice_is_what_jinja_renders(tmp_path):
    """The bundled template, with every role present or not and values of each kind."""
    template, oracle = Template(None, NOTICE_TEMPLATE), Template(None, NOTICE_TEMPLATE)
    from forensics.case import load_case

    case = load_case(Path(__file__).resolve().parent.parent / "sample_logs/glm53/incident.toml")
    shared = case_context(case, "customer")
    bound = template.bind(shared)
    block = Block("- r1: x", "- r1: x", "<ul>\n<li>r1: x</li>\n</ul>\n")
    recipient = {
        "responses": 1,
        "first_exposed_at": Markdown("2026-09-01T08:20:00Z"),
        "last_exposed_at": Markdown("2026-09-01T08:20:00Z"),
        "completion_tokens": None,
        "unknown_responses": 1,
        "empty_responses": 0,
        "delivery_unrecorded": 0,
    }
    owner = {
        "requests_at_risk": 2,
        "first_at": Markdown("2026-09-01T08:00:00Z"),
        "last_at": "not a time",
        "exposures": 3,
    }
    for r, p, o, tier, tokens in itertools.product(
        (None, recipient), (None, {"requests": 1}), (None, owner), ("proven", "likely"), (None, 5)
    ):
        own = {
            "reference": Markdown("AAAA-BBBB-CCCC-DDDD"),
            "account": {"id": "Tidal Bio Co.", "contacts": []},
            "roles": [],
            "tier": tier,
            "excluded_reason": None,
            "recipient": None if r is None else {**r, "completion_tokens": tokens},
            "possible": p,
            "data_owner": o,
            "responses_list": block,
            "possible_list": block,
            "requests_list": block,
            "responses": [],
            "possible_requests": [],
            "requests": [],
        }
        assert bound.render(own) == oracle.render({**shared, **own})
    assert bound.shapes.on


def test_a_template_that_loops_over_a_documents_own_list_is_rendered_by_jinja(tmp_path):
    text = "{% for r in rows %}- {{ r }}\n{% endfor %}{{ ref }}\n"
    template, oracle = _template(tmp_path, text), _template(tmp_path, text)
    bound = template.bind({})
    for own in (
        {"rows": ["a", "b"], "ref": "1"},
        {"rows": [], "ref": "2"},
        {"rows": ["c"], "ref": 3},
    ):
        assert bound.render(own) == oracle.render(own)
    assert not bound.shapes.on


@pytest.mark.parametrize(
    ("text", "x"),
    [
        ("{% if x == y %}same{% endif %}\n", ("a", "b")),  # two values compared
        ("{{ x ~ 'a' }}\n", ("a", "b")),  # the value's text
        ("{% if 'a' in x %}in{% endif %}\n", ("abc", "b")),  # in a value
        ("{{ x + 1 if x is number else x }}\n", (1, 2)),  # arithmetic
        ("{{ x|length }} {{ x|random }}\n", ("aa", "aa")),  # a result not of the value alone
    ],
)
def test_a_use_of_a_value_that_is_not_recorded_is_rendered_by_jinja(tmp_path, text, x):
    template, oracle = _template(tmp_path, text), _template(tmp_path, text)
    bound = template.bind({})
    for value in x:
        own = {"x": value, "y": "a"}
        if "random" in text:
            assert bound.render(own).md == "2 a\n"
        else:
            assert bound.render(own) == oracle.render(own)
    assert not bound.shapes.on


def test_a_template_error_in_a_later_document_is_jinjas_naming_its_line(tmp_path):
    template = _template(
        tmp_path, "{{ ref }}\n{% if bad %}\n{{ ref.missing.deeper }}\n{% endif %}\n"
    )
    bound = template.bind({})
    bound.render({"ref": "a", "bad": False})
    with pytest.raises(InputError) as e:
        bound.render({"ref": "a", "bad": True})
    assert e.value.where == f"{tmp_path / 't.md.j2'}:3"


def test_a_limit_on_shapes_keeps_every_document_right(tmp_path):
    """Past its limit of shapes kept, a document of a new shape is traced and not kept."""
    template, oracle = _template(tmp_path, BRANCHY), _template(tmp_path, BRANCHY)
    bound = template.bind(SHARED)
    bound.shapes = Shapes(2)
    for own in _documents()[:300]:
        assert bound.render(own) == oracle.render({**SHARED, **own})


def _outcome(render, values):
    """What rendering gives: the document, or the error's one line."""
    try:
        return render(values)
    except InputError as e:
        return str(e)


# found by a hostile review of the replay: each once gave a document other than Jinja's
HOSTILE = [
    # a dict's key named like a dict method: Jinja's attribute lookup prefers the method
    (
        "{% if row.items %}has{% else %}none{% endif %} {{ row.values }}\n",
        {},
        [{"row": {"items": 0, "values": "v"}}],
        {},
    ),
    # a lookup or filter whose result is never used still fails where Jinja's does
    ("{% set y = row.missing.deeper %}ok {{ z }}\n", {}, [{"row": {}, "z": "a"}], {}),
    (
        "{% set when = owner.first_at|string %}{% if owner %}since {{ when }}{% else %}none"
        "{% endif %}\n",
        {},
        [{"owner": {"first_at": "t1"}}, {"owner": None}],
        {},
    ),
    # a value holding a stand-in, printed
    ("{{ [x] }}\n", {}, [{"x": "a"}], {}),
    # a filter given a list, and one given an undefined name beside a value
    ("{{ x|default(case.models, true) }}\n", {"case": {"models": ["a", "b"]}}, [{"x": ""}], {}),
    ("Dear {{ nickname|default(name) }}\n", {}, [{"name": "Ann"}], {}),
    (
        "{% if nickname|default(name) %}Dear {{ name }}{% else %}Dear customer{% endif %}\n",
        {},
        [{"name": "Ann"}, {"name": ""}],
        {},
    ),
    # a literal printed in an included template, compiled while a document is traced
    (
        "{% if a %}{{ a }}{% endif %}{% include 'inc.j2' %}\n",
        {},
        [{"a": "", "y": "Y"}, {"a": "q", "y": "Y"}],
        {"inc.j2": "[{{ 'lit' }}]{{ y }}"},
    ),
    # a value inside a test's argument list
    (
        '{% if y is in [x, "c"] %}yes{% else %}no{% endif %}\n',
        {},
        [{"x": "a", "y": "b"}, {"x": "z", "y": "z"}],
        {},
    ),
    # `in` finds NaN by identity
    (
        "{% if x in marks %}missing{% else %}value {{ x }}{% endif %}\n",
        {"marks": [None, math.nan]},
        [{"x": math.nan}],
        {},
    ),
    # literals printed, Jinja's way to print braces
    ("A{{ 'lit' }}B{{ x }} {{ '{{' }} name {{ '}}' }}\n", {}, [{"x": "zz"}, {"x": "yy"}], {}),
]


@pytest.mark.parametrize(("text", "shared", "documents", "others"), HOSTILE)
def test_hostile_templates_give_jinjas_document_or_error(tmp_path, text, shared, documents, others):
    for name, other in others.items():
        (tmp_path / name).write_text(other, encoding="utf-8")
    template, oracle = _template(tmp_path, text), _template(tmp_path, text)
    bound = template.bind(shared)
    for own in documents:
        expected = _outcome(lambda v: oracle.render({**shared, **v}), own)
        assert _outcome(bound.render, own) == expected, own


def test_a_literal_printed_is_the_literal():
    """Jinja never finalizes a literal while compiling (a slot number baked in the code)."""
    template = Template(None, NOTICE_TEMPLATE)
    template.template = template.template.environment.from_string(
        "A{{ 'lit' }}B{{ x }} {{ '{{' }}n{{ '}}' }}\n"
    )
    assert template.render({"x": "zz"}).text == "AlitBzz {{n}}\n"


def test_a_template_cannot_change_a_value_it_is_given(tmp_path):
    """Each notice is written from the same shared values: a case file's template that
    would change one (`append`) is an error naming its line."""
    template = _template(tmp_path, "{{ lst|length }}{% set _ = lst.append(1) %}\n")
    with pytest.raises(InputError, match=r"t\.md\.j2:1: template error"):
        template.bind({"lst": []}).render({})


@pytest.mark.parametrize(
    ("text", "line", "construct"),
    [
        ("{{ x }}\n{% macro m(v) %}[{{ v }}]{% endmacro %}\n{{ m(x) }}\n", 2, "{% macro %}"),
        ("{% set s %}\n{{ x }}\n{% endset %}{{ s }}\n", 1, "a {% set %} block"),
        ("a\n\n{% filter upper %}{{ x }}{% endfilter %}\n", 3, "{% filter %}"),
        ("{% include 'inc.j2' %}\n", 1, "{% macro %}"),
    ],
)
def test_a_construct_whose_text_jinja_captures_is_refused_naming_its_line(
    tmp_path, text, line, construct
):
    """A macro's, call's, filter block's or set block's output is text holding its values'
    slots, printed as one value: the notice would show the slots' markers. Refused at load,
    in an included template too."""
    (tmp_path / "inc.j2").write_text(
        "{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ x }}{% endcall %}\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as e:
        _template(tmp_path, text)
    name = "inc.j2" if "include" in text else "t.md.j2"
    assert e.value.where == f"{tmp_path / name}:{line}"
    assert construct in str(e.value)


@pytest.mark.parametrize(
    "text",
    [
        "See [the page]({{ x }}).\n",
        "![logo]({{ x }})\n",
        '[the page](https://e.example "{{ x }}")\n',
    ],
)
def test_a_value_inside_a_links_address_or_title_is_refused(tmp_path, text):
    """Markdown percent-encodes an address and the plain text drops a title: the value's
    slot would show as `%EE%80%80...` or nothing. Refused, naming the template."""
    with pytest.raises(InputError) as e:
        _template(tmp_path, text).render({"x": "https://e.example/a"})
    assert e.value.where == str(tmp_path / "t.md.j2")
    assert "inside a link's or image's address" in str(e.value)


def test_a_value_as_a_links_text_is_shown():
    template = Template(None, NOTICE_TEMPLATE)
    template.template = template.template.environment.from_string("[{{ x }}](https://e.example)\n")
    rendered = template.render({"x": "a_b"})
    assert rendered.md == "[a\\_b](https://e.example)\n"
    assert rendered.html == '<p><a href="https://e.example">a_b</a></p>\n'
    assert rendered.text == "a_b (https://e.example)\n"
