"""Notices: one per account, written from one template as Markdown (for review), plain text
and HTML (the two parts of its e-mail message), and the regulator summary (docs/notices.md).

Pure rendering: `forensics.render.notify` reads the analysis tables and hands the rows here;
this module turns them into text through Jinja2 templates (bundled in `templates/`, or the
case file's `[notify] template`) and names the files.

- **One template, three forms.** A template is written in Markdown. Each value it prints is
  data (`Text`), text the toolkit formats itself (`Markdown`: times, counts), or a block
  ready in all three forms (`Block`: a list of requests, the responder's `[notify]` texts).
  A notice is rendered once, each value replaced by a placeholder; that skeleton is turned
  into HTML (CommonMark, raw HTML off) and plain text (the same parse, markup dropped) once per
  distinct skeleton, and each form gets its own spelling of every value: Markdown escaped by
  `md`, plain text as it is (control characters as escapes), HTML escaped. So the three forms
  say the same, a customer reads no backslash escape, and the CommonMark parse runs once for
  thousands of notices of the same shape.
- **Data is escaped, never Markdown.** `md` shows control characters, U+2028/2029 and
  bidirectional controls as visible escapes (`\\x01`, `\\u202e`), puts a backslash before
  every ASCII punctuation character that can start or end Markdown syntax (links, images,
  HTML, emphasis, code, tables, autolinks, math) and before a leading `-`, so an account id,
  request id or contact value renders as its own text and cannot open a link, an HTML tag or
  a new block. The HTML form escapes `& < > "`, as CommonMark's HTML does.
- **File names come from ids safely** (`notice_file_name`): a stem of at most 60 of
  `[A-Za-z0-9_-]` (every other run of characters is `_`; leading and trailing `_`/`-` cut;
  `account` when nothing is left), then `-` and the first 16 hex digits of the sha256 of the
  exact id (UTF-8). No name holds a path separator, a dot before the extension, a control
  character or a Windows device name (`CON-...` is not `CON`), and two ids (even differing
  only by case) never share a name, on a case-insensitive file system too.
- A case file's own template runs in Jinja2's sandbox with undefined names as errors; an
  error in one is one line naming the template file and its line.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import jinja2.meta
import jinja2.nodes
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..case import Case
from ..errors import InputError
from ..formats import iso, printable
from . import shapes
from .headline import MaxOpen, max_open

STEM_CHARS = 60
HASH_CHARS = 16
AWARENESS_HOURS = 72
NOTICE_NAME = re.compile(r"-[0-9a-f]{16}\.(md|eml)$")
NOTICE_TEMPLATE = "notice.md.j2"
REGULATOR_TEMPLATE = "regulator_summary.md.j2"
SKELETONS = 4096  # distinct notice shapes whose HTML and text forms are kept

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")
# ASCII punctuation that starts or ends Markdown syntax (CommonMark, GFM tables, strike-
# through and autolinks, math): escaped everywhere in a value. `-` only at its start (a
# list item); `,` `;` `?` `%` `/` `'` `"` never start anything once `[`, `(` and `<` are
# escaped, and are kept as they are for legibility.
_MD_SYNTAX = re.compile(r"([\\`*_\[\]<>&|~$!(){}^#+=:@.])")
_ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")
# A value's place in a skeleton: private-use characters, never produced by a template's
# own Markdown, around the value's index.
_OPEN, _CLOSE = "\ue000", "\ue001"
_SLOT = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_HTML_SLOT_ALONE = re.compile(f"<p>{_OPEN}(\\d+){_CLOSE}</p>\n")


class Markdown(str):
    """Text the toolkit formatted (a time, a count): the same in Markdown, plain text and
    (escaped) HTML; shown as it is by the templates (`md` escapes the rest)."""


@dataclass(frozen=True)
class Block:
    """A value ready in each form: Markdown (`md`), plain text (`text`), an HTML fragment
    (`html`). A template prints it on a line of its own (a paragraph, a list)."""

    md: str
    text: str
    html: str

    def __bool__(self) -> bool:
        return bool(self.md)

    def __str__(self) -> str:
        return self.md


@dataclass(frozen=True)
class Rendered:
    """One document in its three forms; `html` is the body's HTML (no `<html>` around)."""

    md: str
    text: str
    html: str


@functools.lru_cache(maxsize=1 << 16)
def md(text: str) -> str:
    """`text` (data: an id, a contact, a label) as Markdown that renders as that text.
    Cached: a case's notices repeat the same models, nodes and labels thousands of times."""
    return _escaped(printable(text, one_line=True))


def _escaped(shown: str) -> str:
    """`md` of a text `printable` has made one line."""
    escaped = _MD_SYNTAX.sub(r"\\\1", shown)
    return "\\" + escaped if escaped.startswith("-") else escaped


# What `prose_md` escapes wherever it is: code, emphasis, links, HTML, entities, tables,
# strikethrough, math, e-mail autolinks; a `:` before `/` (a URL autolink); the `.` of `www.`
_PROSE_SYNTAX = re.compile(r"([\\`*_\[\]<>&|~$@])|:(?=/)|(?<![0-9A-Za-z])(?i:www)\.")
# What starts a block at the start of a line: a heading, list item, thematic break, setext
# underline, ordered list item (`1.` `1)`)
_PROSE_START = re.compile(r"^(?:([#+=-])|([0-9]{1,9})([.)]))")


@functools.lru_cache(maxsize=1 << 14)
def prose_md(text: str) -> str:
    """`text` (data) as Markdown that renders as that text, with a backslash only before what
    could start Markdown syntax where it stands (`Regulator-only: upstream fix` stays as it
    is, `GLM-5.3 (beta)` too); `md` escapes every punctuation character that ever could."""
    shown = printable(text, one_line=True)
    escaped = _PROSE_SYNTAX.sub(
        lambda m: m.group()[:-1] + "\\." if len(m.group()) > 1 else "\\" + m.group(), shown
    )
    return _PROSE_START.sub(
        lambda m: "\\" + m.group(1) if m.group(1) else f"{m.group(2)}\\{m.group(3)}", escaped
    )


def plain(text: str) -> str:
    """`text` (data) as plain text: control characters and bidi controls as escapes."""
    return printable(text, one_line=True)


def html_text(text: str) -> str:
    """`text` (data) as HTML text: `plain`, then `& < > "` escaped (as CommonMark's HTML
    escapes text)."""
    return _html_escape(printable(text, one_line=True))


def time_text(value: str | None) -> str | None:
    """A time the analysis formatted (ISO 8601 UTC `Z`) as Markdown; anything else stays data."""
    if value is None:
        return None
    return Markdown(value) if _ISO_TIME.match(value) else value


def notice_file_name(account_id: str, suffix: str = ".md") -> str:
    """The notice file's name for an account (see the module doc): safe on every file
    system, unique per exact id."""
    stem = _UNSAFE_NAME.sub("_", account_id)[:STEM_CHARS].strip("_-") or "account"
    digest = hashlib.sha256(account_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{stem}-{digest[:HASH_CHARS]}{suffix}"


def deadline(at: datetime) -> str:
    """The 72-hour mark after the operator became aware (GDPR Art. 33(1))."""
    return iso(at + timedelta(hours=AWARENESS_HOURS))


# --- Markdown into HTML and plain text ---------------------------------------------------

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def markdown_block(text: str) -> Block:
    """Markdown written by the responder (a `[notify]` text) in the three forms."""
    text = text.strip("\r\n")
    return Block(text, to_text(text), to_html(text))


def lines_block(text: str) -> Block:
    """Plain text whose lines are kept (a signature): each line is data; a blank line
    separates paragraphs."""
    paragraphs = [
        [line.rstrip() for line in part.splitlines() if line.strip()]
        for part in re.split(r"\n\s*\n", text.strip("\r\n").replace("\r\n", "\n"))
    ]
    paragraphs = [p for p in paragraphs if p]
    return Block(
        "\n\n".join("\\\n".join(md(line) for line in p) for p in paragraphs),
        "\n\n".join("\n".join(plain(line) for line in p) for p in paragraphs),
        "".join("<p>" + "<br />\n".join(html_text(x) for x in p) + "</p>\n" for p in paragraphs),
    )


def list_block(items: Sequence[tuple[str, str]]) -> Block:
    """A list of `- LEAD: text` items: `LEAD` the toolkit's own (a time), `text` data; as
    CommonMark renders it."""
    if not items:
        return Block("", "", "")
    return Block(
        "\n".join(f"- {lead}: {md(text)}" for lead, text in items),
        "\n".join(f"- {lead}: {plain(text)}" for lead, text in items),
        "<ul>\n"
        + "".join(f"<li>{_html_escape(lead)}: {html_text(text)}</li>\n" for lead, text in items)
        + "</ul>\n",
    )


def to_html(markdown: str) -> str:
    """CommonMark (tables and strike-through too) as an HTML fragment; raw HTML in it is
    shown as text, and links with an unsafe scheme (`javascript:`) are not made."""
    return str(_PARSER.render(markdown))


def to_text(markdown: str) -> str:
    """CommonMark as plain text: what a reader of the rendered document reads, without its
    markup. Headings are underlined (`=` for the first level, `-` below), list items keep
    `- ` or their number, quotes `> `, code blocks are indented, a link is `text (url)`,
    emphasis and escapes are dropped; blocks are separated by a blank line."""
    return _PlainText(_PARSER.parse(markdown)).text()


class _PlainText:
    """The plain-text form of a markdown-it token stream (`to_text`)."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens

    def text(self) -> str:
        return _join(self._blocks(iter(self.tokens), None), "\n\n").rstrip("\n")

    def _blocks(self, tokens: Iterator[Token], until: str | None) -> list[tuple[str, bool]]:
        """(text, visible) of each block up to the token of type `until` (consumed);
        `visible` is false for a paragraph of a tight list (no blank line around it)."""
        out: list[tuple[str, bool]] = []
        for tok in tokens:
            kind = tok.type
            if kind == until:
                break
            if kind == "heading_open":
                title = self._inline(next(tokens))
                next(tokens)  # heading_close
                rule = "=" if tok.tag == "h1" else "-"
                out.append((f"{title}\n{rule * max(3, len(title))}", True))
            elif kind == "paragraph_open":
                body = self._inline(next(tokens))
                next(tokens)
                out.append((body, not tok.hidden))
            elif kind in ("bullet_list_open", "ordered_list_open"):
                close = kind.replace("_open", "_close")
                start = int(tok.attrs.get("start", 1) or 1) if kind == "ordered_list_open" else 0
                out.append(self._list(tokens, close, start))
            elif kind == "blockquote_open":
                inner = _join(self._blocks(tokens, "blockquote_close"), "\n\n")
                out.append(("\n".join(f"> {x}".rstrip() for x in inner.split("\n")), True))
            elif kind in ("fence", "code_block"):
                code = tok.content.rstrip("\n")
                out.append(("\n".join(f"    {x}".rstrip() for x in code.split("\n")), True))
            elif kind == "hr":
                out.append(("----", True))
            elif kind == "table_open":
                out.append((self._table(tokens), True))
            elif kind == "html_block":  # not made with raw HTML off; kept as text if it is
                out.append((tok.content.rstrip("\n"), True))
        return out

    def _list(self, tokens: Iterator[Token], close: str, start: int) -> tuple[str, bool]:
        items: list[str] = []
        tight = True
        number = start
        for tok in tokens:
            if tok.type == close:
                break
            if tok.type != "list_item_open":
                continue
            marker = f"{number}. " if start else "- "
            number += 1
            inner = self._blocks(tokens, "list_item_close")
            tight = tight and not any(visible for _, visible in inner)
            lines = _join(inner, "\n" if tight else "\n\n").split("\n")
            pad = " " * len(marker)
            items.append(marker + "\n".join([lines[0], *(pad + x if x else x for x in lines[1:])]))
        return ("\n" if tight else "\n\n").join(items), not tight

    def _table(self, tokens: Iterator[Token]) -> str:
        rows: list[list[str]] = []
        for tok in tokens:
            if tok.type == "table_close":
                break
            if tok.type == "tr_open":
                rows.append([])
            elif tok.type == "inline":
                rows[-1].append(self._inline(tok))
        return "\n".join(" | ".join(cells) for cells in rows)

    @staticmethod
    def _inline(tok: Token) -> str:
        parts: list[str] = []
        links: list[tuple[int, str]] = []  # (where its text starts in parts, its target)
        for child in tok.children or []:
            kind = child.type
            if kind in ("text", "code_inline", "html_inline"):
                parts.append(child.content)
            elif kind in ("softbreak", "hardbreak"):
                parts.append("\n")
            elif kind == "image":
                parts.append(child.content or "")
            elif kind == "link_open":
                links.append((len(parts), str(child.attrs.get("href", ""))))
            elif kind == "link_close" and links:
                start, target = links.pop()
                label = "".join(parts[start:])
                # an autolink's text is its target already
                if target and target not in (label, f"mailto:{label}"):
                    parts.append(f" ({target})")
        return "".join(parts).strip()


def _join(blocks: list[tuple[str, bool]], gap: str) -> str:
    """The blocks' texts separated by `gap`."""
    return gap.join(text for text, _ in blocks)


# --- templates ---------------------------------------------------------------------------


class Template:
    """A notice template: bundled, or a file the case file names (`where`: its key's place)."""

    def __init__(
        self, path: Path | None, bundled: str, where: str | None = None, prose: bool = False
    ):
        """`prose`: data is escaped in the Markdown form only where it could start Markdown
        syntax there (`prose_md`), for a document read as Markdown source (the regulator
        summary); notices escape every syntax character (`md`)."""
        self.name = str(path) if path is not None else bundled
        self.prose = prose
        self._values: list[Any] = []
        self._forms: OrderedDict[str, _Shape] = OrderedDict()
        if path is None:
            # the bundled templates are ours: no sandbox (its check of every attribute a
            # template reads was about a fifth of rendering 21,000 notices)
            env = self._environment(
                jinja2.PackageLoader("forensics.render", "templates"), sandboxed=False
            )
            self.template = env.get_template(bundled)
            self._globals = dict(self.template.globals)
            self.file: str | None = self.template.filename
            self.names = self._names(env, bundled)
            return
        self.file = str(path)
        env = self._environment(jinja2.FileSystemLoader(str(path.parent)))
        fix = "give the path of a Jinja2 template, relative to the case file"
        if not path.is_file():
            raise InputError(f"template file not found: {path}", where=where or str(path), fix=fix)
        try:
            self.template = env.get_template(path.name)
            self._globals = dict(self.template.globals)
            self.names = self._names(env, path.name)
        except jinja2.TemplateSyntaxError as e:
            raise _template_error(e, f"{e.filename or path}:{e.lineno}") from None
        except UnicodeDecodeError:
            raise InputError(
                "the template is not UTF-8 text", where=str(path), fix="save it as UTF-8"
            ) from None
        except jinja2.TemplateError as e:  # an include or import that is missing
            raise _template_error(e, str(path)) from None

    def uses(self, name: str) -> bool:
        """Whether the template reads the variable `name` (so a costly one is made only
        when read)."""
        return self.names is None or name in self.names

    def render(self, context: Mapping[str, Any]) -> Rendered:
        """The document in its three forms, each ending with one newline; a failure is one
        line naming the template line."""
        self._values = []
        skeleton = self._render(context)
        return self._document(self._shape(skeleton), self._values)

    def bind(self, shared: Mapping[str, Any]) -> Bound:
        """Documents that share the values `shared` (not changed meanwhile), each rendered
        from its own values (`Bound.render`): Jinja runs once per shape (`shapes`)."""
        return Bound(self, shared)

    def _shape(self, rendered: str) -> _Shape:
        """The shape of a skeleton as Jinja rendered it."""
        skeleton = rendered.rstrip("\n") + "\n"
        shape = self._forms.get(skeleton)
        if shape is None:
            shape = _Shape(skeleton)
            shown = {i for i, _ in shape.html_cut[1]} & set(shape.text_cut[1])
            if not shown.issuperset(shape.md_cut[1]):  # Markdown encoded or dropped a slot
                raise InputError(
                    "template error: a value is printed inside a link's or image's address "
                    "or title, where the message's text and HTML cannot show it",
                    where=self.name,
                    fix="print the value as text, outside the link's parentheses",
                )
            self._forms[skeleton] = shape
            if len(self._forms) > SKELETONS:
                self._forms.popitem(last=False)
        return shape

    def _document(self, shape: _Shape, values: list[Any]) -> Rendered:
        """A document of this shape with these values in its slots."""
        if self.prose:
            return shape.fill(values, [self._forms_of(v) for v in values])
        return shape.fill(values, [_forms(v) for v in values])

    def _forms_of(self, value: Any) -> tuple[str, str, str]:
        """A value in each form (`_forms`; a text as `prose_md` escapes it when `prose`)."""
        forms = _forms(value)
        if self.prose and isinstance(value, str) and not isinstance(value, Markdown):
            return (prose_md(value), forms[1], forms[2])
        return forms

    def _trace(
        self, shared: Mapping[str, Any], values: Mapping[str, Any]
    ) -> tuple[shapes.Tracer, str] | None:
        """Jinja's run with stand-ins for the document's own `values` (`shapes`): what it
        asked and the skeleton; None when a stand-in could not record a use."""
        tracer = shapes.Tracer(values)
        tracer.ask(shapes.KEYS)
        stand_ins = {k: shapes.Value(shapes.own(k), tracer) for k in values}
        token = shapes.TRACING.set(tracer)
        try:
            return tracer, self._run({**shared, **stand_ins})
        except Exception:  # Untraceable, or a failure Jinja meets again, to say it its way
            return None
        finally:
            shapes.TRACING.reset(token)

    def _run(self, context: Mapping[str, Any]) -> str:
        """Template.render's own steps without its two copies of the context, one of them
        walking the globals' ChainMap (a fifth of Jinja's time a notice); its errors raised as
        they are."""
        template = self.template
        ctx = template.new_context({**self._globals, **context}, shared=True)
        return template.environment.concat(template.root_render_func(ctx))

    def _render(self, context: Mapping[str, Any]) -> str:
        try:
            return self._run(context)
        except Exception:
            self._values = []  # rendered again as Template.render does: its error and line
        try:
            return self.template.render(context)
        except jinja2.TemplateSyntaxError as e:  # in an included template
            raise _template_error(e, f"{e.filename or self.name}:{e.lineno}") from None
        except Exception as e:
            line = _template_line(e.__traceback__, self.file)
            where = f"{self.name}:{line}" if line else self.name
            raise _template_error(e, where) from None

    @jinja2.pass_eval_context  # so Jinja never calls it while compiling (a literal printed)
    def _finalize(self, _: Any, value: Any) -> str:
        """Each printed value becomes a slot (its forms are filled in by `render`)."""
        tracer = shapes.TRACING.get()
        if tracer is not None:
            slot = tracer.slot(value)
            return "" if slot is None else f"{_OPEN}{slot}{_CLOSE}"
        if value is None:
            return ""
        if isinstance(value, jinja2.Undefined):
            value = str(value)  # an undefined name fails here, inside the render
        self._values.append(value)
        return f"{_OPEN}{len(self._values) - 1}{_CLOSE}"

    def _environment(self, loader: jinja2.BaseLoader, sandboxed: bool = True) -> jinja2.Environment:
        """A Jinja2 environment for notices: a case file's own templates run sandboxed."""
        kind = shapes.SandboxedEnvironment if sandboxed else shapes.Environment
        env = kind(
            loader=loader,
            autoescape=False,
            undefined=jinja2.StrictUndefined,
            finalize=self._finalize,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["n"] = _count
        env.filters["counted"] = _counted
        shapes.traceable(env)
        return env

    @staticmethod
    def _names(env: jinja2.Environment, name: str) -> set[str] | None:
        """The variables a template reads (None when it includes others: all of them); a
        construct whose output Jinja captures as text (`_CAPTURES`), here or in a template it
        includes or imports, is refused."""
        tree = _parsed(env, name, set())
        if any(True for _ in jinja2.meta.find_referenced_templates(tree)):
            return None
        return set(jinja2.meta.find_undeclared_variables(tree))


# what Jinja renders into text that is then printed as a value (its values' slots with it)
_CAPTURES: dict[type[jinja2.nodes.Node], str] = {
    jinja2.nodes.Macro: "{% macro %}",
    jinja2.nodes.CallBlock: "{% call %}",
    jinja2.nodes.FilterBlock: "{% filter %}",
    jinja2.nodes.AssignBlock: "a {% set %} block",
}


def _parsed(env: jinja2.Environment, name: str, seen: set[str]) -> jinja2.nodes.Template:
    """A template's syntax tree, once each template it includes or imports is checked too;
    an InputError naming the line of a construct in `_CAPTURES`."""
    assert env.loader is not None
    source, filename, _ = env.loader.get_source(env, name)
    tree = env.parse(source, name, filename)
    for node in tree.find_all(tuple(_CAPTURES)):
        raise InputError(
            f"template error: {_CAPTURES[type(node)]} is not supported in a notice (its text "
            "would be printed as one value)",
            where=f"{filename or name}:{node.lineno}",
            fix="write its text where it is used",
        )
    for other in jinja2.meta.find_referenced_templates(tree):
        if other is not None and other not in seen:
            seen.add(other)
            _parsed(env, other, seen)
    return tree


class Bound:
    """A template bound to the values its documents share (`Template.bind`)."""

    def __init__(self, template: Template, shared: Mapping[str, Any]):
        self.template = template
        self.shared = shared
        self.shapes: shapes.Shapes[_Plan] = shapes.Shapes(SKELETONS)

    def render(self, values: Mapping[str, Any]) -> Rendered:
        """The document of these own values (with the shared ones), as `Template.render`
        renders it."""
        template = self.template
        if self.shapes.on:
            plan = self.shapes.find(values)
            if plan is not None:
                return plan.fill(values)
            traced = template._trace(self.shared, values)
            if traced is not None:
                tracer, skeleton = traced
                try:
                    plan = _Plan(template, template._shape(skeleton), tracer)
                    self.shapes.add(tracer.asked, plan)
                    return plan.fill(values)
                except Exception:  # a shape it cannot keep: every notice goes to Jinja
                    pass
            self.shapes.on = False
        return template.render({**self.shared, **values})


class _Plan:
    """A shape as traced (`shapes`): the values that are no document's own (the shared
    ones, the template's) filled in once, each form cut at the document's own values, and
    how each of those is written in each form, by its type."""

    def __init__(self, template: Template, shape: _Shape, tracer: shapes.Tracer):
        self.template, self.shape = template, shape
        kinds = tracer.kinds
        slots = tracer.slots
        self.fixed = {i: e.get({}) for i, e in enumerate(slots) if e.key[0] == "constant"}
        own = [i for i in range(len(slots)) if i not in self.fixed]
        self.own = own
        # each own value: how it is read, how it is written in the three forms
        self.written = [(slots[i].get, _former(kinds[slots[i].key], template)) for i in own]
        at = {slot: j for j, slot in enumerate(own)}  # slot -> its place among the own ones
        fixed = {i: template._forms_of(v) for i, v in self.fixed.items()}
        self.md = _merged(shape.md_cut, fixed, at, 0)
        self.text = _merged(shape.text_cut, fixed, at, 1)
        # the HTML as `_Shape._html` fills it: each own value inline (0), as a paragraph
        # (1), or a block's HTML as it is (2)
        literals, html_slots = shape.html_cut
        lits, places = [literals[0]], []
        self.general = not shape.plain
        for (slot, alone), after in zip(html_slots, literals[1:], strict=True):
            if slot in at:
                block = alone and issubclass(kinds[slots[slot].key], Block)
                places.append((at[slot], 2 if block else int(alone)))
                lits.append(after)
                continue
            value = self.fixed[slot]
            if not alone:
                lits[-1] += fixed[slot][2] + after
            elif not isinstance(value, Block):
                lits[-1] += f"<p>{fixed[slot][2]}</p>\n" + after
            elif _OPEN in value.html or _CLOSE in value.html:
                self.general = True  # substituted in two passes (`_Shape._html`)
            else:
                lits[-1] += value.html + after
        self.html = (lits, places)

    def fill(self, values: Mapping[str, Any]) -> Rendered:
        """The document of these own values."""
        if self.general:
            return self._general(values)
        forms = [form(get(values)) for get, form in self.written]
        literals, places = self.html
        filled: list[str] = []
        for j, mode in places:
            if mode == 0:
                filled.append(forms[j][2])
            elif mode == 1:
                filled.append(f"<p>{forms[j][2]}</p>\n")
            else:  # a block's HTML (`_block_forms`)
                html = forms[j][2]
                if _OPEN in html or _CLOSE in html:  # holding a marker
                    return self._general(values)
                filled.append(html)
        return Rendered(
            _fill(self.md, [forms[j][0] for j in self.md[1]]),
            _fill(self.text, [forms[j][1] for j in self.text[1]]),
            _fill((literals, []), filled),
        )

    def _general(self, own: Mapping[str, Any]) -> Rendered:
        """The document filled as `Template.render` fills it (every slot)."""
        values: list[Any] = [None] * (len(self.fixed) + len(self.written))
        for i, value in self.fixed.items():
            values[i] = value
        for slot, (get, _) in zip(self.own, self.written, strict=True):
            values[slot] = get(own)
        forms_of = [self.template._forms_of(v) for v in values]
        return self.shape.fill(values, forms_of)


def _merged(
    cut: tuple[list[str], list[int]],
    fixed: Mapping[int, tuple[str, str, str]],
    at: Mapping[int, int],
    form: int,
) -> tuple[list[str], list[int]]:
    """A form's cut (`_cut`) with the fixed slots' `form` joined into the texts around them,
    the others numbered by their place among the own values (`at`)."""
    literals, slots = cut
    texts, places = [literals[0]], []
    for slot, after in zip(slots, literals[1:], strict=True):
        if slot in at:
            places.append(at[slot])
            texts.append(after)
        else:
            texts[-1] += fixed[slot][form] + after
    return texts, places


def _former(kind: type, template: Template) -> Callable[[Any], tuple[str, str, str]]:
    """How a value of this type is written in each form (`_forms`)."""
    if issubclass(kind, Block):
        return _block_forms
    if issubclass(kind, str) and not template.prose:
        return _text_forms
    return template._forms_of


def _block_forms(block: Block) -> tuple[str, str, str]:
    return (block.md, block.text, block.html)


class _Shape:
    """A skeleton (a notice rendered with a slot for each value) in its three forms, cut
    once at its slots: a notice of this shape is its values' forms joined between the
    pieces. A value the HTML shows as a paragraph of its own (`<p>slot</p>`) is a block's
    HTML as it is, any other value's HTML in that paragraph."""

    def __init__(self, skeleton: str) -> None:
        self.html = to_html(skeleton)
        self.text = to_text(skeleton) + "\n"
        self.md_cut = _cut(skeleton)
        self.text_cut = _cut(self.text)
        # each HTML slot: (index, alone in its paragraph)
        literals: list[str] = []
        slots: list[tuple[int, bool]] = []
        parts = _HTML_SLOT_ALONE.split(self.html)
        for at, part in enumerate(parts):
            if at % 2:
                slots.append((int(part), True))
                continue
            inner, inner_slots = _cut(part)
            literals.append(inner[0])
            for index, text in zip(inner_slots, inner[1:], strict=True):
                slots.append((index, False))
                literals.append(text)
        self.html_cut = (literals, slots)
        # markers the cut did not take as slots (only a case file's own template could hold
        # them): the two-pass substitution decides, as it always did
        rest = _SLOT.sub("", self.html)
        self.plain = _OPEN not in rest and _CLOSE not in rest

    def fill(self, values: list[Any], forms_of: list[tuple[str, str, str]]) -> Rendered:
        """The notice of these values (`forms_of`: each value's forms, `_forms`)."""
        return Rendered(
            _fill(self.md_cut, [forms_of[i][0] for i in self.md_cut[1]]),
            _fill(self.text_cut, [forms_of[i][1] for i in self.text_cut[1]]),
            self._html(values, forms_of),
        )

    def _html(self, values: list[Any], forms_of: list[tuple[str, str, str]]) -> str:
        literals, slots = self.html_cut
        filled: list[str] = []
        for index, alone in slots:
            if not alone:
                filled.append(forms_of[index][2])
                continue
            value = values[index]
            if not isinstance(value, Block):
                filled.append(f"<p>{forms_of[index][2]}</p>\n")
            elif self.plain and _OPEN not in value.html and _CLOSE not in value.html:
                filled.append(value.html)
            else:  # a block holding a marker: substituted as before, in two passes
                skeleton = _HTML_SLOT_ALONE.sub(
                    lambda m: _alone(values[int(m.group(1))], m.group()), self.html
                )
                return _SLOT.sub(lambda m: forms_of[int(m.group(1))][2], skeleton)
        out = [""] * (2 * len(literals) - 1)
        out[0::2] = literals
        out[1::2] = filled
        return "".join(out)


def _cut(text: str) -> tuple[list[str], list[int]]:
    """`text` cut at its slots: (the texts around them, the slots' indexes)."""
    parts = _SLOT.split(text)
    return parts[0::2], [int(p) for p in parts[1::2]]


def _fill(cut: tuple[list[str], list[int]], filled: list[str]) -> str:
    """The texts of `cut` with `filled` between them."""
    literals = cut[0]
    out = [""] * (2 * len(literals) - 1)
    out[0::2] = literals
    out[1::2] = filled
    return "".join(out)


def _forms(value: Any) -> tuple[str, str, str]:
    """A value in each form: Markdown, plain text, HTML."""
    if isinstance(value, Block):
        return (value.md, value.text, value.html)
    if isinstance(value, bool):
        word = "yes" if value else "no"
        return (word, word, word)
    if isinstance(value, int | float):
        digits = str(value)
        return (digits, digits, digits)
    if isinstance(value, str):
        return _text_forms(value)
    return _text_forms(str(value))


@functools.lru_cache(maxsize=1 << 14, typed=True)
def _text_forms(value: str) -> tuple[str, str, str]:
    """The forms of a text: the toolkit's own (`Markdown`) as it is, data escaped. Cached
    (typed): the same labels, times and names recur in every notice."""
    if isinstance(value, Markdown):
        text = str(value)
        return (text, text, _html_escape(text))
    shown = printable(value, one_line=True)  # `md`, `plain` and `html_text` of it
    return (_escaped(shown), shown, _html_escape(shown))


def _html_escape(text: str) -> str:
    """`& < > "` as entities: what CommonMark's HTML writes for text."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _alone(value: Any, slot: str) -> str:
    """A block that is a paragraph of its own in the HTML: the block's HTML replaces it."""
    return value.html if isinstance(value, Block) else slot


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


def _count(value: Any) -> Any:
    """A count with thousands separators (`6,074`); text and None pass through."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Markdown(f"{value:,}")
    return value


def _counted(value: Any, word: str, more: str = "") -> Any:
    """A count and its noun, singular for exactly 1 (`1 request`, `6,074 requests`, `1 or
    more requests` with `more`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Markdown(f"{value:,}{more} {word}{'' if value == 1 and not more else 's'}")
    return value


# --- what the templates see (docs/notices.md lists every name) ----------------------------

TO_COMPLETE = {
    "measures": "the measures taken or proposed",
    "contact": "the contact point",
    "consequences": "the likely consequences",
}


def case_context(case: Case, audience: str) -> dict[str, Any]:
    """What every notice (`audience` customer) or the regulator summary (regulator) shares:
    the case, the events that audience reads, the awareness event and the 72-hour mark, the
    responder's [notify] texts as blocks."""
    aware = case.awareness
    texts = case.notify
    shown = [
        e for e in sorted(case.events, key=lambda e: (e.at, e.label)) if audience in e.audience
    ]
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
            {"at": Markdown(iso(e.at)), "label": e.label, "awareness": e.awareness, "when": e.at}
            for e in shown
        ],
        "timeline_list": list_block([(iso(e.at), e.label) for e in shown]),
        "awareness": None
        if aware is None
        else {
            "at": Markdown(iso(aware.at)),
            "label": aware.label,
            "deadline": Markdown(deadline(aware.at)),
            "when": aware.at,
        },
        "notify": {
            **{
                key: None if value is None else markdown_block(value)
                for key, value in (
                    ("description", texts.description),
                    ("consequences", texts.consequences),
                    ("measures", texts.measures),
                    ("contact", texts.contact),
                )
            },
            "signature": None if texts.signature is None else lines_block(texts.signature),
        },
        "to_complete": {
            key: Markdown(f"[TO BE COMPLETED: {what}]") for key, what in TO_COMPLETE.items()
        },
    }


def delivery(completion_tokens: int | None) -> str:
    """What reached the client: delivered (> 0 tokens), empty (0) or unknown (no count)."""
    if completion_tokens is None:
        return "unknown"
    return "delivered" if completion_tokens > 0 else "empty"


def values(row: Mapping[str, Any]) -> dict[str, Any]:
    """A list row for a template: times the analysis formatted as Markdown, the rest as is."""
    return {key: time_text(v) if isinstance(v, str) else v for key, v in row.items()}


def regulator_context(
    shared: Mapping[str, Any],
    summary: Mapping[str, Any],
    *,
    tiers: Mapping[str, int],
    excluded_accounts: int,
    jurisdictions: Sequence[Mapping[str, Any]] | None,
    deadlines: Sequence[Mapping[str, Any]],
    excluded_owners: tuple[int, int] = (0, 0),
    delivery: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The regulator summary: every figure from summary.json (the analysis), the tiers,
    excluded accounts and jurisdictions from the lists' tables; `excluded_owners` the
    (accounts, requests at risk) of data_owners.csv's excluded accounts; `delivery` the
    exposed responses by the notices' delivery rule (notify/delivery.sql; default summary.json's
    split); why the maximum may be higher (`headline.max_open`); the events split at the
    72-hour mark."""
    exclusions = summary.get("exclusions") or {}
    aware = shared.get("awareness")
    mark = aware["when"] + timedelta(hours=AWARENESS_HOURS) if aware else None
    events = list(shared["events"])
    return {
        **shared,
        "figures": {
            "exposure_count": summary["exposure_count"],
            "affected_accounts": summary["affected_accounts"],
            "tiers": dict(tiers),
            "delivery": delivery if delivery is not None else summary.get("exposed_by_delivery"),
            "range": summary.get("exposure_range"),
            "max_open": [Markdown(max_open_text(m)) for m in max_open(summary)],
            "excluded_owners": excluded_owners,
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
        "owners_why": owners_why((summary.get("data_owners") or {}).get("reason")),
        "events_before": [e for e in events if mark is None or e["when"] <= mark],
        "events_after": [e for e in events if mark is not None and e["when"] > mark],
        "jurisdictions": jurisdictions,
        "deadlines": list(deadlines),
    }


def max_open_text(reason: MaxOpen) -> str:
    """Why the maximum may be higher (`headline.max_open`), in a regulator's words."""
    if reason.kind == "cut":
        what = "1 log file was" if reason.count == 1 else f"{reason.count:,} log files were"
        return f"{what} cut short, so the requests logged after the break could not be read"
    hours = "1 hour" if reason.count == 1 else f"{reason.count:,} hours"
    return (
        f"the logs hold no or few records for {hours} of the period investigated (a logging "
        "outage, whole or partial), so requests made then could not be counted"
    )


_NO_NODES = "the logs name no decode node"
_NO_NODE = re.compile(r"^(\d+) (exposed|excluded) request\(s\) have no decode node$")
_NO_POOL = re.compile(r"^(\d+) (exposed|excluded) request\(s\) ran on a decode node with no ")
# the responses of owners.attribute's reason, by band (excluded: the set-aside accounts')
_RESPONSES = {"exposed": "affected response(s)", "excluded": "response(s) to set-aside accounts"}


def owners_why(reason: str | None) -> Markdown | None:
    """Why data owners could not (all) be attributed, in a regulator's words: the
    analysis' reason without the names of fields and case-file keys it gives the responder."""
    if not reason:
        return None
    parts = []
    for part in reason.split("; "):
        node, pool = _NO_NODE.match(part), _NO_POOL.match(part)
        if part.startswith(_NO_NODES):
            parts.append("the logs do not record which server generated the responses")
        elif node:
            parts.append(
                f"for {int(node.group(1)):,} {_RESPONSES[node.group(2)]} the logs do not record "
                "which server generated them"
            )
        elif pool:
            parts.append(
                f"{int(pool.group(1)):,} {_RESPONSES[pool.group(2)]} were generated on a server "
                "whose cache pool size is not known"
            )
        else:
            parts.append(part)
    text = "; ".join(parts)
    return Markdown(text[:1].upper() + text[1:])
