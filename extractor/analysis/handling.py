"""Whether a raise reaches whoever called its function, or its own function handles it.

For a site, the ``try`` statements whose body holds it (inside its own function: a nested
function's raise is not caught by the ``try`` around its definition) are read from the innermost
out, as Python runs them: the first ``except`` clause whose classes are in the raised class's
ancestry (:mod:`extractor.analysis.exception_keys`) takes the error, and what that handler does
(:mod:`extractor.analysis.handler_outcome`) decides. A handler that re-raises hands it to the next
``try`` out; one that swallows it, converts it into another class or exits is where it ends. An
``except`` clause nobody can read (``except self.errors:``) ends the walk with no answer.

:func:`call_handling` gives the same facts for every call of the file that sits in a ``try``, so
that the whole-target step can ask whether every caller of a function handles its raise.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from extractor.analysis.exception_keys import ancestry_of, handler_keys, key_of
from extractor.analysis.handled_facts import Ancestry, Outcome
from extractor.analysis.handler_outcome import class_test, outcome_of, reported_later
from extractor.analysis.parse import ParsedFile
from extractor.analysis.resolver import OtherModules, Resolver
from extractor.analysis.sites import Frame
from extractor.analysis.walk import called_name, every_statement, header_expressions, inner_nodes

__all__ = [
    "Caught",
    "Handled",
    "call_handling",
    "catches_in",
    "file_call_handling",
    "site_handling",
]

# One ``except`` clause as plain data: its keys (None: unreadable), bare (0/1), what it does.
PlainClause = list[object]


@dataclass(frozen=True)
class Caught:
    """Where and how a raise is handled: the scope that catches it, its clause and what it does."""

    scope: str
    clause: str
    """The ``except`` clause as written (``except (OSError, ValueError) as e``)."""
    outcome: Outcome


@dataclass(frozen=True)
class Handled:
    """What becomes of a site's raise: ``caught`` here, or it ``escapes`` its function (else unknown)."""

    caught: Caught | None = None
    escapes: Ancestry | None = None
    """The ancestry of the class that leaves the function, when nothing in it takes the error."""
    key: str = ""
    """The key of the raised class itself."""


def _clause_text(handler: ast.ExceptHandler) -> str:
    if handler.type is None:
        return "except"
    text = f"except {ast.unparse(handler.type)}"
    return f"{text} as {handler.name}" if handler.name else text


def _suppressed(stmt: ast.With | ast.AsyncWith, resolver: Resolver) -> tuple[str, ...] | None:
    """The keys a ``with contextlib.suppress(...)`` item takes, else None."""
    for item in stmt.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and ast.unparse(call.func).rsplit(".", 1)[-1] == "suppress":
            keys: list[str] = []
            for arg in call.args:
                found = handler_keys(resolver, arg)
                if found is None:
                    return None
                keys.extend(found)
            return tuple(keys)
    return None


def catches_in(
    frames: list[tuple[ast.stmt, str]], ancestry: Ancestry, resolver: Resolver, scope: str, own_key: str = ""
) -> Handled:
    """What the ``try`` statements of ``frames`` (outermost first, each with the branch entered) do
    with a raise of ``ancestry``."""

    def key(text: str) -> str:
        return key_of(resolver, text)[0]

    for stmt, branch in reversed(frames):
        if branch != "body":
            continue
        if isinstance(stmt, ast.With | ast.AsyncWith):
            keys = _suppressed(stmt, resolver)
            if keys is not None and ancestry.caught_by(keys, False):
                items = ", ".join(ast.unparse(i.context_expr) for i in stmt.items)
                return Handled(Caught(scope, f"with {items}", Outcome("swallow", line=stmt.lineno)))
            continue
        if not isinstance(stmt, ast.Try | ast.TryStar) or isinstance(stmt, ast.TryStar):
            continue
        for handler in stmt.handlers:
            keys = handler_keys(resolver, handler.type)
            hit = ancestry.caught_by(keys, handler.type is None)
            if hit is None:
                return Handled()
            if not hit:
                continue
            outcome = outcome_of(
                handler,
                keys or (),
                key,
                resolver.module_ctx,
                lambda classes: ancestry.caught_by(handler_keys(resolver, classes), False),
            )
            if outcome.kind == "mixed":
                return Handled()
            if outcome.kind == "convert" and outcome.raised_key == own_key:
                break  # raised again as the same class, with another message
            if outcome.kind != "reraise":
                return Handled(Caught(scope, _clause_text(handler), outcome))
            break  # re-raised: the next ``try`` out gets it
    return Handled(escapes=ancestry)


def site_handling(
    resolver: Resolver, frames: list[Frame], error_class: str, scope: str, node: ast.AST | None = None
) -> Handled:
    """What becomes of the raise of ``error_class`` at the end of ``frames`` in ``scope`` (``node``:
    the function or module that is the scope)."""
    ancestry = ancestry_of(resolver, error_class)
    own_key = key_of(resolver, error_class)[0]
    found = catches_in([(f.stmt, f.branch) for f in frames], ancestry, resolver, scope, own_key)
    if found.caught is not None:
        outcome = reported_later(found.caught.outcome, node, resolver.module_ctx)
        if outcome is not found.caught.outcome:
            found = Handled(dataclasses.replace(found.caught, outcome=outcome), found.escapes)
    escapes = (
        found.escapes
        if found.escapes is not None and _called_by_name(scope, node, resolver.parsed.tree)
        else None
    )
    return Handled(found.caught, escapes, own_key)


# Decorators that leave a function called the way it is written; any other one (a route, a
# registration, a hook) may have it called by a framework nobody here sees.
_PLAIN_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "property", "cached_property", "lru_cache", "cache", "wraps",
     "no_grad", "inference_mode", "override", "abstractmethod", "torch.compile"}
)  # fmt: skip


def _called_by_name(scope: str, node: ast.AST | None, tree: ast.Module | None = None) -> bool:
    """Whether the function's callers can all be found as calls of its name: not behind another
    decorator, and, for a nested function (often handed around as a callback or a thread
    target), one its enclosing function only ever calls."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if "<locals>" in scope and not _only_called_where_defined(scope, node, tree):
        return False
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        text = ast.unparse(target)
        if text not in _PLAIN_DECORATORS and text.rsplit(".", 1)[-1] not in _PLAIN_DECORATORS:
            return False
    return True


def _only_called_where_defined(
    scope: str, node: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module | None
) -> bool:
    """Whether nested function ``node`` (of qualname ``scope``) is directly enclosed by a function
    that names it only to call it: never hands it on as a value."""
    parts = scope.split(".<locals>.")
    if tree is None or len(parts) != 2:
        return False
    parent = _function_at(tree, parts[0])
    if parent is None or not any(s is node for s in parent.body):
        return False
    called = {id(n.func) for n in ast.walk(parent) if isinstance(n, ast.Call)}
    return all(
        id(n) in called
        for n in ast.walk(parent)
        if isinstance(n, ast.Name) and n.id == node.name and isinstance(n.ctx, ast.Load)
    )


def _function_at(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function (or method) of ``qualname`` (``f``, ``Cls.m``) at the module's top levels."""
    body: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = next(
            (
                s
                for s in body
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and s.name == part
            ),
            None,
        )
        if found is None:
            return None
        body = found.body
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


# ---------------------------------------------------------------------------- calls in a ``try``


def _call_names(stmt: ast.stmt) -> Iterator[str]:
    for expr in header_expressions(stmt):
        todo: list[ast.AST] = [expr]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Lambda):
                continue  # runs later, elsewhere
            name = called_name(node)
            if name:
                yield name
            todo.extend(inner_nodes(node))


def _plain_try(stmt: ast.stmt, resolver: Resolver) -> list[PlainClause] | None:
    """The clauses of a ``try`` (or a ``with suppress``) as plain data, None for other statements."""

    def key(text: str) -> str:
        return key_of(resolver, text)[0]

    if isinstance(stmt, ast.With | ast.AsyncWith):
        keys = _suppressed(stmt, resolver)
        if keys is None:
            return None
        return [[list(keys), 0, Outcome("swallow", line=stmt.lineno).to_plain(), "with suppress"]]
    if not isinstance(stmt, ast.Try) or not stmt.handlers:
        return None
    out: list[PlainClause] = []
    for handler in stmt.handlers:
        keys = handler_keys(resolver, handler.type)
        outcome = outcome_of(handler, keys or (), key, resolver.module_ctx)
        plain_keys = None if keys is None else list(keys)
        clause: PlainClause = [
            plain_keys,
            int(handler.type is None),
            outcome.to_plain(),
            _clause_text(handler),
        ]
        tested = _class_split(handler, resolver)
        if tested is not None:
            # ``if isinstance(e, X): <one way> else: <another>``: which way the caller's error
            # takes is told where its class is known (:func:`extractor.reach.handled`).
            yes = outcome_of(handler, keys or (), key, resolver.module_ctx, lambda _: True)
            no = outcome_of(handler, keys or (), key, resolver.module_ctx, lambda _: False)
            clause.append([list(tested), yes.to_plain(), no.to_plain()])
        out.append(clause)
    return out


def _class_split(handler: ast.ExceptHandler, resolver: Resolver) -> tuple[str, ...] | None:
    """The keys of the classes a handler's first ``if isinstance(<error>, X):`` tests, when it
    has one at its top and ``X`` names classes."""
    for stmt in handler.body:
        classes = class_test(stmt, handler.name)
        if classes is not None:
            return handler_keys(resolver, classes) or None
    return None


def call_handling(resolver: Resolver) -> dict[str, dict[str, list[list[list[PlainClause]]]]]:
    """caller qualname -> called name -> one entry per call: its enclosing ``try`` clauses, outermost first.

    Only (caller, name) pairs with at least one call inside a ``try`` are kept: a pair missing
    here has no call that anything in its own function catches.
    """
    out: dict[str, dict[str, list[list[list[PlainClause]]]]] = {}
    cache: dict[int, list[PlainClause] | None] = {}

    def walk(body: list[ast.stmt], qual: str, prefix: str, stack: list[list[PlainClause]]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}.{stmt.name}" if prefix else stmt.name
                walk(stmt.body, name, f"{name}.<locals>", [])
                continue
            if isinstance(stmt, ast.ClassDef):
                name = f"{prefix}.{stmt.name}" if prefix else stmt.name
                walk(stmt.body, qual, name, stack)
                continue
            for called in _call_names(stmt):
                out.setdefault(qual, {}).setdefault(called, []).append(list(stack))
            if id(stmt) not in cache:
                cache[id(stmt)] = _plain_try(stmt, resolver)
            clauses = cache[id(stmt)]
            if isinstance(stmt, ast.Try | ast.TryStar):
                walk(stmt.body, qual, prefix, [*stack, clauses] if clauses else stack)
                for handler in stmt.handlers:
                    walk(handler.body, qual, prefix, stack)
                walk(stmt.orelse, qual, prefix, stack)
                walk(stmt.finalbody, qual, prefix, stack)
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                walk(stmt.body, qual, prefix, [*stack, clauses] if clauses else stack)
            elif isinstance(stmt, ast.If | ast.For | ast.AsyncFor | ast.While):
                walk(stmt.body, qual, prefix, stack)
                walk(stmt.orelse, qual, prefix, stack)
            elif isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    walk(case.body, qual, prefix, stack)

    walk(resolver.parsed.tree.body, "<module>", "", [])
    return {
        q: {n: calls for n, calls in sorted(by_name.items()) if any(calls)}
        for q, by_name in sorted(out.items())
        if any(any(calls) for calls in by_name.values())
    }


def file_call_handling(
    parsed: ParsedFile, modules: OtherModules | None, resolver: Resolver | None = None
) -> dict[str, Any]:
    """:func:`call_handling` of a parsed file (empty when it has no ``try`` and no ``with``);
    ``resolver``, the file's own when the analysis built one, saves indexing its scopes twice."""
    if not any(isinstance(n, ast.Try | ast.With | ast.AsyncWith) for n in every_statement(parsed.tree.body)):
        return {}
    return call_handling(resolver if resolver is not None else Resolver(parsed, modules))
