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
that is given the template's context, a random one) raises `Untraceable`: that document
is rendered by Jinja as it is, and so is every later one (`Shapes.on`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
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
    return Expr(("constant", value), lambda _: value)


class Tracer:
    """The questions asked of one document's own values (`own`), with their answers, and
    the values its skeleton's slots hold, in order."""

    def __init__(self, values: Mapping[str, Any]):
        self.values = values
        self.asked: list[tuple[Expr, Any]] = []
        self.slots: list[Expr] = []

    def ask(self, expr: Expr) -> Any:
        answer = expr.get(self.values)
        self.asked.append((expr, answer))
        return answer

    def slot(self, value: Any) -> int | None:
        """The slot of a value printed (None: it prints nothing, as `None` does)."""
        if type(value) is Value:
            kind = self.ask(_kind(value.expr))
            if kind is type(None):
                return None
            if issubclass(kind, jinja2.Undefined):
                raise Untraceable("an undefined value printed")
            expr = value.expr
        elif value is None:
            return None
        elif isinstance(value, jinja2.Undefined):
            raise Untraceable("an undefined value printed")
        else:
            expr = constant(value)
        self.slots.append(expr)
        return len(self.slots) - 1


def _kind(expr: Expr) -> Expr:
    get = expr.get
    return Expr(("kind", expr.key), lambda values: type(get(values)))


def kinds(asked: list[tuple[Expr, Any]]) -> dict[Any, type]:
    """The type of each value printed, by what it computes (`Expr.key`), as `asked` found."""
    return {expr.key[1]: answer for expr, answer in asked if expr.key[0] == "kind"}


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
        if type(other) is Value:
            raise Untraceable("two values compared")
        get, how = self.expr.get, _COMPARE[op]
        return self.tracer.ask(
            Expr(("compare", op, self.expr.key, other), lambda v: how(get(v), other))
        )

    def __eq__(self, other: object) -> Any:
        return self._compare("==", other)

    def __ne__(self, other: object) -> Any:
        return self._compare("!=", other)

    def __lt__(self, other: object) -> Any:
        return self._compare("<", other)

    def __le__(self, other: object) -> Any:
        return self._compare("<=", other)

    def __gt__(self, other: object) -> Any:
        return self._compare(">", other)

    def __ge__(self, other: object) -> Any:
        return self._compare(">=", other)

    def _refuse(self, *_: object, **__: object) -> Any:
        raise Untraceable("a use of a value that is not recorded")

    __hash__ = _refuse
    __str__ = __repr__ = __format__ = __iter__ = __len__ = __contains__ = _refuse
    __getitem__ = __call__ = __getattr__ = __index__ = __int__ = __float__ = _refuse


class _Tracing:
    """An environment whose attribute and item lookups on a stand-in are recorded."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is Value:
            return _lookup(obj, ("attr", attribute), super().getattr, attribute)  # type: ignore[misc]
        return super().getattr(obj, attribute)  # type: ignore[misc]

    def getitem(self, obj: Any, argument: Any) -> Any:
        if type(argument) is Value:
            raise Untraceable("a value used as a key")
        if type(obj) is Value:
            return _lookup(obj, ("item", argument), super().getitem, argument)  # type: ignore[misc]
        return super().getitem(obj, argument)  # type: ignore[misc]


def _lookup(
    value: Value, what: tuple[Any, ...], look: Callable[[Any, Any], Any], name: Any
) -> Value:
    """The stand-in of an attribute or item of a stand-in's value (as the environment reads
    it; a dict holding the key is read directly, as the environment would)."""
    get = value.expr.get

    def read(values: Mapping[str, Any]) -> Any:
        obj = get(values)
        if type(obj) is dict and name in obj:
            return obj[name]
        return look(obj, name)

    return Value(Expr((*what, value.expr.key), read), value.tracer)


class Environment(_Tracing, jinja2.Environment):
    """A Jinja environment that can trace (`traceable`)."""


class SandboxedEnvironment(_Tracing, jinja2.sandbox.SandboxedEnvironment):
    """A sandboxed Jinja environment that can trace (`traceable`)."""


def traceable(env: jinja2.Environment) -> None:
    """Wrap `env`'s filters and tests (call before loading a template): given a stand-in,
    a test is a recorded question, a filter a stand-in of what it makes."""
    for name, fn in list(env.filters.items()):
        env.filters[name] = _filter(name, fn)
    for name, test in list(env.tests.items()):
        env.tests[name] = _test(name, cast("Callable[..., Any]", test))


def _traced(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Tracer | None:
    for a in args:
        if type(a) is Value:
            return a.tracer
    for a in kwargs.values():
        if type(a) is Value:
            return a.tracer
    return None


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
    return arg.expr.key if type(arg) is Value else ("arg", arg)


def _passes(fn: Callable[..., Any]) -> _PassArg | None:
    return _PassArg.from_obj(fn)


def _filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    passes = _passes(fn)

    def traced(*args: Any, **kwargs: Any) -> Any:
        tracer = _traced(args, kwargs)
        if tracer is None:
            return fn(*args, **kwargs)
        if name in NOT_TRACED or passes in (_PassArg.context, _PassArg.eval_context):
            raise Untraceable(f"the filter {name}")
        real = _real(args, kwargs)

        def get(values: Mapping[str, Any]) -> Any:
            a, k = real(values)
            return fn(*a, **k)

        return Value(Expr(("filter", name, fn, _keys(args, kwargs)), get), tracer)

    if passes is not None:
        traced.jinja_pass_arg = passes  # type: ignore[attr-defined]
    return traced


def _test(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    passes = _passes(fn)

    def traced(*args: Any, **kwargs: Any) -> Any:
        tracer = _traced(args, kwargs)
        if tracer is None:
            return fn(*args, **kwargs)
        if passes in (_PassArg.context, _PassArg.eval_context):
            raise Untraceable(f"the test {name}")
        real = _real(args, kwargs)

        def get(values: Mapping[str, Any]) -> Any:
            a, k = real(values)
            return fn(*a, **k)

        return tracer.ask(Expr(("test", name, fn, _keys(args, kwargs)), get))

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
