"""What ``raise name`` (or ``raise self.attr``) raises when no constructor call is written at the site.

Every value the name may hold at the site is read (:class:`~extractor.analysis.flow.ScopeFlow` for a
local, every binding of the module for a module-level name): an exception built there
(``err = ValueError(msg)``) gives its class and message; the exception an ``except E as e`` caught
and stored (``last_error = e``) gives ``E``; an exception class (``exc_cls = ValueError``) is raised
with no message; a string is no exception at all, and raising it raises ``TypeError``. ``None``
values are skipped: the guard keeps them from the raise.

When the values do not settle one class, the class is one the code shows: an ``isinstance(name, E)``
test on the guard path, then the name's annotation (``err: Optional[MyError]``), else
``BaseException``, which is all a ``raise`` guarantees. Never the variable's own name.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from extractor.analysis.facts import GuardAtom, Message, Placeholder, Raised
from extractor.analysis.flow import UNKNOWN, State, direct_binds
from extractor.analysis.messages.expressions import MessageContext
from extractor.analysis.messages.parts import Choice
from extractor.analysis.messages.patterns import WILDCARD, make_message
from extractor.analysis.sites import Frame, RawSite, ScopeNode
from extractor.analysis.walk import own_statements

if TYPE_CHECKING:
    from extractor.analysis.resolver import Resolver

_MAX_HOPS = 4
NOT_AN_EXCEPTION = Message(
    template="exceptions must derive from BaseException",
    pattern="exceptions must derive from BaseException",
    parts=("exceptions must derive from BaseException",),
)
"""What ``raise "text"`` raises instead: ``TypeError`` with this message."""

_UNKNOWN: object = UNKNOWN
_SKIP = object()  # a value that never reaches the raise (None) or is no exception (a module)


def name_raised(
    resolver: Resolver, exc: ast.Name | ast.Attribute, raw: RawSite, atoms: list[GuardAtom]
) -> Raised:
    """What raising the value of ``exc`` at ``raw`` raises."""
    ctx = resolver.context_at(raw.scope, raw.frames)
    text = ctx.src(exc)
    found: list[Raised | object] = []
    if resolver.class_like(exc, ctx, raw.class_node):
        # ``raise NotReady`` or ``exc_cls = ValueError ... raise exc_cls``: the class itself,
        # instantiated with no arguments.
        return resolver.from_call(ast.Call(func=exc, args=[], keywords=[]), ctx, raw.class_node, 0)
    if isinstance(exc, ast.Name):
        found = _name_values(resolver, exc.id, raw, 0)
    raised = [r for r in found if isinstance(r, Raised)]
    if raised and len(raised) == sum(1 for r in found if r is not _SKIP):
        classes = {r.error_class for r in raised}
        if len(classes) == 1:
            return _joined(raised, text)
    return Raised(_shown_class(resolver, exc, raw, atoms, text), _unknown_message(text))


def _joined(raised: list[Raised], text: str) -> Raised:
    first = raised[0]
    templates = {r.message.template if r.message else None for r in raised}
    message = first.message
    if len(templates) > 1:
        options = tuple(r.message.parts if r.message else () for r in raised)
        message = make_message([Choice(source=text, options=options)])
    statuses = {r.status for r in raised}
    return Raised(first.error_class, message, first.status if len(statuses) == 1 else None, first.code)


def _unknown_message(text: str) -> Message:
    return Message(template=f"{{{text}}}", pattern=WILDCARD, parts=(Placeholder(text),))


def _name_values(resolver: Resolver, name: str, raw: RawSite, hops: int) -> list[Raised | object]:
    """What each value ``name`` may hold at ``raw`` raises (``_UNKNOWN`` where it cannot be told)."""
    flow = resolver.flow(raw.scope)
    state: State | None = flow.values(name, raw.frames)
    if state is None:
        if isinstance(raw.scope, ast.Module) or name in flow.enclosing_locals:
            return [_UNKNOWN]
        return _bound_values(resolver, resolver.parsed.tree, name, raw, hops)
    out: list[Raised | object] = [_UNKNOWN] if not state else []
    for value in state:
        if value is UNKNOWN:
            out.append(_UNKNOWN)
        else:
            frames = flow.frames_to(value[1])
            out.append(_value_raised(resolver, value[0], raw.scope, frames, raw, hops))
    if _UNKNOWN in out and name not in flow.params:
        # A value set in a loop or a handler reaches the site on some path the flow does not
        # follow; whatever the path, the value is one the scope binds.
        return _bound_values(resolver, raw.scope, name, raw, hops)
    return out


def _bound_values(
    resolver: Resolver, scope: ScopeNode, name: str, raw: RawSite, hops: int
) -> list[Raised | object]:
    """What each binding of ``name`` in ``scope`` raises: the value at the site is one of them."""
    flow = resolver.flow(scope)
    out: list[Raised | object] = []
    for stmt in own_statements(scope.body):
        if name not in direct_binds(stmt, resolver.hints):
            continue
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef):
            out.append(_SKIP)  # a module or a function: the guard tells it from the error
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = stmt.value
                out.append(_value_raised(resolver, value, scope, flow.frames_to(stmt), raw, hops))
            else:
                out.append(_UNKNOWN)
        else:
            out.append(_UNKNOWN)
    return out or [_UNKNOWN]


def _value_raised(
    resolver: Resolver,
    value: ast.expr,
    scope: ScopeNode,
    frames: list[Frame] | None,
    raw: RawSite,
    hops: int,
) -> Raised | object:
    ctx: MessageContext = resolver.context_at(scope, frames)
    if isinstance(value, ast.Constant):
        if value.value is None:
            return _SKIP
        if isinstance(value.value, str):
            return Raised("TypeError", NOT_AN_EXCEPTION)
        return _UNKNOWN
    if isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.BinOp) and _is_text(value.left) and _is_text(value.right)
    ):
        return Raised("TypeError", NOT_AN_EXCEPTION)
    if isinstance(value, ast.Call):
        if resolver.class_like(value.func, ctx, raw.class_node):
            return resolver.from_call(value, ctx, raw.class_node, 0)
        return _UNKNOWN
    if isinstance(value, ast.Name):
        caught = _caught_type(value.id, frames)
        if caught is not None:
            return Raised(caught, _unknown_message(_site_text(raw)))
        if resolver.class_like(value, ctx, raw.class_node):
            return resolver.from_call(ast.Call(func=value, args=[], keywords=[]), ctx, raw.class_node, 0)
        if hops < _MAX_HOPS and scope is raw.scope and frames is not None:
            inner = RawSite(raw.node, frames, raw.qualname, scope, raw.class_name, raw.class_node)
            values = _name_values(resolver, value.id, inner, hops + 1)
            known = [v for v in values if isinstance(v, Raised)]
            if len(known) == 1 and len(values) == 1:
                return known[0]
        return _UNKNOWN
    if isinstance(value, ast.Attribute) and resolver.class_like(value, ctx, raw.class_node):
        return resolver.from_call(ast.Call(func=value, args=[], keywords=[]), ctx, raw.class_node, 0)
    return _UNKNOWN


def _site_text(raw: RawSite) -> str:
    node = raw.node
    exc = node.exc if isinstance(node, ast.Raise) else None
    return ast.unparse(exc) if exc is not None else "exc"


def _is_text(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and _is_text(node.left) and _is_text(node.right)


def _caught_type(name: str, frames: list[Frame] | None) -> str | None:
    """The type of the innermost enclosing ``except T as name`` (one type only), if any."""
    for frame in reversed(frames or []):
        stmt, branch = frame.stmt, frame.branch
        if isinstance(stmt, ast.Try | ast.TryStar) and branch.startswith("handler:"):
            handler = stmt.handlers[int(branch.split(":")[1])]
            if handler.name == name:
                if handler.type is None or isinstance(handler.type, ast.Tuple):
                    return "BaseException" if handler.type is None else None
                return ast.unparse(handler.type)
    return None


def _shown_class(
    resolver: Resolver, exc: ast.Name | ast.Attribute, raw: RawSite, atoms: list[GuardAtom], text: str
) -> str:
    for atom in reversed(atoms):
        test = atom.test
        if (
            not atom.negated
            and isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and ast.unparse(test.args[0]) == text
            and isinstance(test.args[1], ast.Name | ast.Attribute)
        ):
            return ast.unparse(test.args[1])
    annotation = _annotation(resolver, exc, raw)
    return annotation or "BaseException"


def _annotation(
    resolver: Resolver, exc: ast.Name | ast.Attribute, raw: RawSite, of_class: bool = False
) -> str | None:
    """The exception type the name's (or ``self`` attribute's) annotation names, ``Optional`` removed."""
    found: list[ast.expr] = []
    if isinstance(exc, ast.Name):
        scope = raw.scope
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            a = scope.args
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if p.arg == exc.id and p.annotation is not None:
                    found.append(p.annotation)
        for body in (scope.body, resolver.parsed.tree.body):
            for stmt in own_statements(body):
                if isinstance(stmt, ast.AnnAssign) and ast.unparse(stmt.target) == exc.id:
                    found.append(stmt.annotation)
            if found:
                break
    elif isinstance(exc.value, ast.Name) and exc.value.id == "self" and raw.class_node is not None:
        for stmt in own_statements(raw.class_node.body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in own_statements(stmt.body):
                    target = getattr(inner, "target", None)
                    if (
                        isinstance(inner, ast.AnnAssign)
                        and isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                        and target.attr == exc.attr
                    ):
                        found.append(inner.annotation)
            elif isinstance(stmt, ast.AnnAssign) and ast.unparse(stmt.target) == exc.attr:
                found.append(stmt.annotation)
    for annotation in found:
        shown = _exception_type(annotation, of_class)
        if shown is not None:
            return shown
    return None


def called_class(resolver: Resolver, func: ast.Name, raw: RawSite) -> str:
    """The class ``raise func(...)`` raises when ``func`` is a local whose value cannot be known:
    what its annotation says (``exc_type: type[MyError]``), else ``BaseException``."""
    return _annotation(resolver, func, raw, of_class=True) or "BaseException"


def _exception_type(node: ast.expr, of_class: bool = False) -> str | None:
    """``MyError`` for ``MyError``, ``Optional[MyError]``, ``MyError | None``, ``"MyError"``; with
    ``of_class``, for ``type[MyError]`` (the annotation of a name that holds the class)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if of_class:
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).rsplit(".", 1)[-1] in ("type", "Type"):
            return _exception_type(node.slice)
        if not isinstance(node, ast.Subscript | ast.BinOp):
            return None
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).rsplit(".", 1)[-1] in (
        "Optional",
        "Union",
    ):
        inner = node.slice
        options = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        kept = [o for o in options if not (isinstance(o, ast.Constant) and o.value is None)]
        return _exception_type(kept[0], of_class) if len(kept) == 1 else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return _exception_type(sides[0], of_class) if len(sides) == 1 else None
    if isinstance(node, ast.Name | ast.Attribute):
        text = ast.unparse(node)
        return text if text.rsplit(".", 1)[-1][:1].isupper() else None
    return None
