"""A template run by Jinja once per shape of its documents, not once per document.

Thousands of notices differ only in their values. What a template writes depends on its
values only through what it asks of them: whether one is true, equal to a constant or
`none`, what a filter makes of it, which of its attributes it reads, whether one that is
printed is there at all. So a document's own values (those not shared by every document)
are handed to Jinja as stand-ins (`Value`) that put each such question to the real value,
and record the question and its answer (`Tracer`); each value printed becomes a slot of
the skeleton. Jinja's output is then fixed by the answers. `Shapes` keeps the answers of
every run so traced as a tree: a later document has the same questions put to its own
values directly, without Jinja, and takes the skeleton whose answers it matches, its own
values in the slots.

Anything a stand-in cannot record (its text, iterating it, arithmetic, hashing, a filter
that is given the template's context, a random one, a stand-in inside another value, a value
not equal to itself) raises `Untraceable`: that document is rendered by Jinja as it is, and
so is every later one (`Shapes.on`). Every attribute, item and filter Jinja evaluates is
evaluated again for each later document, its type a question, so a lookup Jinja would fail
on fails there too (and the document goes to Jinja, which raises it its way).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import functools
import operator
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Generic, TypeVar, cast

import jinja2
import jinja2.sandbox
from jinja2.utils import _PassArg

S = TypeVar("S")
Values = Mapping[str, Any]  # a document's own values, by name
Get = Callable[[Values], Any]
Called = tuple[tuple[Any, ...], dict[str, Any]]  # a call's arguments
NOT_TRACED = frozenset({"random"})  # filters whose result is not a function of their input


class Untraceable(Exception):
    """A question a stand-in cannot record: the document is rendered by Jinja instead."""


class Expr:
    """What a question or a slot computes from a document's own values (`get`); `key`
    says what, compared between runs (`Shapes.add`)."""

    __slots__ = ("get", "key")

    def __init__(self, key: tuple[Any, ...], get: Get):
        self.key = key
        self.get = get


def own(name: str) -> Expr:
    """A document's own value `name`."""
    return Expr(("own", name), operator.itemgetter(name))


def constant(value: Any) -> Expr:
    """A value printed that is no document's own (the shared values, the template's)."""
    return Expr(("constant", _frozen(value)), lambda _: value)


class Tracer:
    """The questions asked of one document's own values (`own`), with their answers, and
    the values its skeleton's slots hold, in order."""

    def __init__(self, values: Mapping[str, Any]):
        self.values = values
        self.asked: list[tuple[Expr, Any]] = []
        self.slots: list[Expr] = []
        self.kinds: dict[Any, type] = {}  # the type of each value asked, by its `Expr.key`

    def ask(self, expr: Expr) -> Any:
        answer = expr.get(self.values)
        self.asked.append((expr, answer))
        return answer

    def kind(self, expr: Expr) -> type:
        """The type of a value (a question, asked once a run)."""
        kind = self.kinds.get(expr.key)
        if kind is None:
            kind = self.kinds[expr.key] = self.ask(_kind(expr))
        return kind

    def slot(self, value: Any) -> int | None:
        """The slot of a value printed (None: it prints nothing, as `None` does)."""
        if type(value) is Value:
            kind = self.kind(value.expr)
            if kind is type(None):
                return None
            if issubclass(kind, jinja2.Undefined):
                raise Untraceable("an undefined value printed")
            expr = value.expr
        elif value is None:
            return None
        elif not _inert(value):  # a stand-in inside it, or an object of its own
            raise Untraceable("a value printed that is not plain data")
        else:
            expr = constant(value)
        self.slots.append(expr)
        return len(self.slots) - 1


TRACING: ContextVar[Tracer | None] = ContextVar("TRACING", default=None)  # the run traced


def derived(expr: Expr, tracer: Tracer) -> Any:
    """What Jinja gets for a value computed from a stand-in's (an attribute, an item, a
    filter's result): its type a question, so a later document evaluates it too; a stand-in,
    or the real value when it is undefined (Jinja then treats it as its own)."""
    kind = tracer.kind(expr)
    if issubclass(kind, jinja2.Undefined):
        return expr.get(tracer.values)
    return Value(expr, tracer)


_ATOMS = (str, int, float, bytes, type(None), datetime.date, datetime.timedelta, decimal.Decimal)


def _inert(value: Any) -> bool:
    """Whether `value` is plain data (no stand-in in it, nothing that computes): what a
    question or slot may hold as it is."""
    if isinstance(value, _ATOMS):
        return True
    kind = type(value)
    if kind in (list, tuple, set, frozenset):
        return all(_inert(v) for v in value)
    if kind is dict:
        return all(_inert(k) and _inert(v) for k, v in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.__dataclass_params__.frozen and all(  # type: ignore[attr-defined]
            _inert(getattr(value, f.name)) for f in dataclasses.fields(value)
        )
    return False


def _frozen(value: Any) -> Any:
    """A plain value (`_inert`) as a key: hashable, and typed (1, 1.0 and True differ)."""
    kind = type(value)
    if kind in (list, tuple):
        return (kind, tuple(_frozen(v) for v in value))
    if kind in (set, frozenset):
        return (kind, frozenset(_frozen(v) for v in value))
    if kind is dict:
        return (kind, tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return (kind, id(value))  # never equal to another run's: ends tracing, safely
    return (kind, value)


def _kind(expr: Expr) -> Expr:
    get = expr.get
    return Expr(("kind", expr.key), lambda values: type(get(values)))


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Value:
    """A stand-in for a document's own value (or what a filter made of one): each question
    Jinja puts to it is put to the real value and recorded; any other use raises
    `Untraceable`."""

    __slots__ = ("expr", "tracer")

    def __init__(self, expr: Expr, tracer: Tracer):
        self.expr = expr
        self.tracer = tracer

    def __bool__(self) -> bool:
        get = self.expr.get
        return bool(self.tracer.ask(Expr(("bool", self.expr.key), lambda v: bool(get(v)))))

    def _compare(self, op: str, other: object) -> Any:
        if not _inert(other):
            raise Untraceable("a value compared with another value")
        try:
            itself = bool(other == other)
        except Exception:
            itself = False
        if not itself:  # NaN: Python's `in` finds it by identity, which a stand-in cannot
            raise Untraceable("a value compared with one not equal to itself")
        get, how = self.expr.get, _COMPARE[op]
        key = ("compare", op, self.expr.key, _frozen(other))
        return self.tracer.ask(Expr(key, lambda v: how(get(v), other)))

    __eq__ = functools.partialmethod(_compare, "==")
    __ne__ = functools.partialmethod(_compare, "!=")
    __lt__ = functools.partialmethod(_compare, "<")
    __le__ = functools.partialmethod(_compare, "<=")
    __gt__ = functools.partialmethod(_compare, ">")
    __ge__ = functools.partialmethod(_compare, ">=")

    def _refuse(self, *_: object, **__: object) -> Any:
        raise Untraceable("a use of a value that is not recorded")

    __hash__ = _refuse
    __str__ = __repr__ = __format__ = __iter__ = __len__ = __contains__ = _refuse
    __getitem__ = __call__ = __getattr__ = __index__ = __int__ = __float__ = _refuse


class _Tracing:
    """An environment whose attribute and item lookups on a stand-in are recorded."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is Value:
            return _lookup(obj, "attr", super().getattr, attribute)  # type: ignore[misc]
        return super().getattr(obj, attribute)  # type: ignore[misc]

    def getitem(self, obj: Any, argument: Any) -> Any:
        if type(obj) is Value:
            if not _inert(argument):
                raise Untraceable("an item looked up by a value")
            return _lookup(obj, "item", super().getitem, argument)  # type: ignore[misc]
        if type(argument) is Value:
            raise Untraceable("a value used as a key")
        return super().getitem(obj, argument)  # type: ignore[misc]


_DICT_ATTRIBUTES = frozenset(dir(dict))  # `getattr` prefers these to a dict's items


def _lookup(value: Value, how: str, look: Callable[[Any, Any], Any], name: Any) -> Any:
    """An attribute or item of a stand-in's value, as the environment reads it (`derived`);
    a dict holding the key is read directly where the environment would read the item."""
    get = value.expr.get
    direct = how == "item" or name not in _DICT_ATTRIBUTES

    def read(values: Mapping[str, Any]) -> Any:
        obj = get(values)
        if direct and type(obj) is dict and name in obj:
            return obj[name]
        return look(obj, name)

    return derived(Expr((how, _frozen(name), value.expr.key), read), value.tracer)


class Environment(_Tracing, jinja2.Environment):
    """A Jinja environment that can trace (`traceable`)."""


class SandboxedEnvironment(_Tracing, jinja2.sandbox.ImmutableSandboxedEnvironment):
    """A sandboxed Jinja environment that can trace (`traceable`); a template changes no
    value it is given (each notice is written from the same shared values)."""


def traceable(env: jinja2.Environment) -> None:
    """Wrap `env`'s filters and tests (call before loading a template): given a stand-in,
    a test is a recorded question, a filter a stand-in of what it makes."""
    for name, fn in list(env.filters.items()):
        env.filters[name] = _filter(name, fn)
    for name, test in list(env.tests.items()):
        env.tests[name] = _test(name, cast("Callable[..., Any]", test))


def _traced(args: tuple[Any, ...], kwargs: Mapping[str, Any], skip: int) -> bool:
    """Whether a call (its first `skip` arguments Jinja's own) is given a stand-in; a
    stand-in inside another argument, or an argument that is not plain data beside one, is
    `Untraceable`."""
    given = [*args[skip:], *kwargs.values()]
    if any(type(a) is Value for a in given):
        if not all(type(a) is Value or _inert(a) for a in given):
            raise Untraceable("an argument beside a value that is not plain data")
        return True
    if any(_holds_value(a) for a in given):
        raise Untraceable("a value inside an argument")
    return False


def _holds_value(value: Any) -> bool:
    """Whether a stand-in is inside `value` (as far as Python's containers go)."""
    if type(value) is Value:
        return True
    if type(value) in (list, tuple, set, frozenset):
        return any(_holds_value(v) for v in value)
    if type(value) is dict:
        return any(_holds_value(k) or _holds_value(v) for k, v in value.items())
    return False


def _real(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Callable[[Values], Called]:
    """The arguments with each stand-in's real value, for a document's own values."""
    gets = [(i, a.expr.get) for i, a in enumerate(args) if type(a) is Value]
    kgets = [(k, a.expr.get) for k, a in kwargs.items() if type(a) is Value]

    def real(values: Values) -> Called:
        out = list(args)
        for i, get in gets:
            out[i] = get(values)
        kw = dict(kwargs)
        for k, get in kgets:
            kw[k] = get(values)
        return tuple(out), kw

    return real


def _keys(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a call's arguments are, to compare (a stand-in by what it computes)."""
    return (
        tuple(_key(a) for a in args),
        tuple(sorted((k, _key(a)) for k, a in kwargs.items())),
    )


def _key(arg: Any) -> Any:
    return arg.expr.key if type(arg) is Value else ("arg", _frozen(arg))


def _passes(fn: Callable[..., Any]) -> _PassArg | None:
    return _PassArg.from_obj(fn)


def _filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A filter that, given a stand-in, gives a stand-in of what it makes (`derived`)."""
    return _call("filter", name, fn, derived)


def _test(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A test that, given a stand-in, is a recorded question."""
    return _call("test", name, fn, lambda expr, tracer: tracer.ask(expr))


def _call(
    kind: str, name: str, fn: Callable[..., Any], given: Callable[[Expr, Tracer], Any]
) -> Callable[..., Any]:
    """`fn` as Jinja calls it; while a run is traced and a stand-in is among its arguments,
    what it computes for a document's own values, handed to `given`."""
    passes = _passes(fn)
    skip = 0 if passes is None else 1

    def traced(*args: Any, **kwargs: Any) -> Any:
        tracer = TRACING.get()
        if tracer is None or not _traced(args, kwargs, skip):
            return fn(*args, **kwargs)
        if name in NOT_TRACED or passes in (_PassArg.context, _PassArg.eval_context):
            raise Untraceable(f"the {kind} {name}")
        real = _real(args, kwargs)

        def get(values: Mapping[str, Any]) -> Any:
            a, k = real(values)
            return fn(*a, **k)

        return given(Expr((kind, name, fn, _keys(args[skip:], kwargs)), get), tracer)

    if passes is not None:
        traced.jinja_pass_arg = passes  # type: ignore[attr-defined]
    return traced


class _Node:
    """A question, and what follows each answer met so far: another question, or a shape."""

    __slots__ = ("answers", "get", "key")

    def __init__(self, expr: Expr):
        self.key = expr.key
        self.get = expr.get
        self.answers: dict[Any, Any] = {}


KEYS = Expr(("keys",), tuple)  # the names of a document's own values: the first question


class Shapes(Generic[S]):
    """The shapes of the documents traced so far, as a tree of questions (see the module
    doc); at most `limit` of them."""

    def __init__(self, limit: int):
        self.limit = limit
        self.on = True
        self._root: Any = None  # a _Node, a shape, or None
        self._leaves = 0

    def find(self, values: Values) -> S | None:
        """The shape of a document with these own values, or None when no document traced
        so far answers as it does."""
        node = self._root
        try:
            while type(node) is _Node:
                node = node.answers.get(node.get(values))
        except Exception:  # an answer Jinja would have failed on: it is rendered by Jinja
            return None
        return node

    def add(self, asked: list[tuple[Expr, Any]], shape: S) -> None:
        """Keep a traced document's shape under its questions and answers (`asked`). A run
        that does not ask as the ones before did (never seen) ends tracing."""
        if self._leaves >= self.limit:
            return
        try:
            hash(tuple(answer for _, answer in asked))
        except TypeError:  # an answer that cannot be looked up
            self.on = False
            return
        if self._root is None:
            self._root = _chain(asked, shape)
            self._leaves += 1
            return
        node = self._root
        for at, (expr, answer) in enumerate(asked):
            if type(node) is not _Node or node.key != expr.key:
                self.on = False
                return
            after = node.answers.get(answer)
            if after is None:
                node.answers[answer] = _chain(asked[at + 1 :], shape)
                self._leaves += 1
                return
            node = after
        self.on = False  # the same answers as a shape kept: `find` would have found it


def _chain(asked: list[tuple[Expr, Any]], shape: Any) -> Any:
    """The questions `asked` one after the other, ending at `shape`."""
    after = shape
    for expr, answer in reversed(asked):
        node = _Node(expr)
        node.answers[answer] = after
        after = node
    return after
