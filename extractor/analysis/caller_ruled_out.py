"""Checks every caller rules out: a private method that raises when ``self.x`` is missing, called
only where ``self.x`` was just found present.

``if self.plucker_embedder is not None: self._get_plucker_emb(...)`` at each call, and in
``_get_plucker_emb`` ``if self.plucker_embedder is None: raise``: the raise cannot run through the
class's own calls. A private method (``_name``) is called only from its own class, so every
call of it is in sight; a public one may be called from anywhere and is left alone. (A subclass
elsewhere may still call it unguarded: the record then says what the code in sight does.)
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from extractor.analysis.conditions import split_and
from extractor.analysis.facts import GuardAtom
from extractor.analysis.sites import RawSite
from extractor.analysis.walk import NEW_SCOPE, child_blocks, heads

__all__ = ["callers_rule_out"]


def callers_rule_out(raw: RawSite, atoms: Sequence[GuardAtom]) -> tuple[GuardAtom, GuardAtom] | None:
    """The failing atom of the site and the test every call of its method sits under that rules it
    out, when there is at least one call and each one does."""
    cls, scope = raw.class_node, raw.scope
    if cls is None or not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    name = scope.name
    if not name.startswith("_") or name.startswith("__"):
        return None
    failing = next((a for a in reversed(atoms) if a.kind != "except" and a.test is not None), None)
    attr = _missing_attribute(failing) if failing is not None else None
    if failing is None or attr is None:
        return None
    # Every mention of the method is a call we read: no callback, no call from a nested function.
    mentions = _self_mentions(cls).get(name, [])
    outside = [line for line in mentions if not scope.lineno <= line <= (scope.end_lineno or scope.lineno)]
    if not outside:
        return None
    found: GuardAtom | None = None
    calls = 0
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or method is scope:
            continue
        end = method.end_lineno or method.lineno
        if not any(method.lineno <= line <= end for line in outside):
            continue
        bound = _bound_once(method)
        for call, tests in _calls_of(method.body, name, []):
            calls += 1
            held = next((t for t in reversed(tests) if _present(t, attr, bound)), None)
            if held is None:
                return None
            if isinstance(held, ast.Name) and held.id in bound:
                held = bound[held.id]  # the test the local holds, as the reader sees it
            found = found or GuardAtom(
                ast.unparse(held), "if", held, False, getattr(held, "lineno", call.lineno)
            )
    if calls != len(outside):
        return None
    return (failing, found) if calls and found is not None else None


# The class's ``self.<name>`` mentions by name, kept on the class node: every site of the class
# asks for them.
_MENTIONS = "_sge_self_mentions"


def _self_mentions(cls: ast.ClassDef) -> dict[str, list[int]]:
    """name -> the lines of each ``self.<name>`` in the class (nested functions included)."""
    found: dict[str, list[int]] | None = getattr(cls, _MENTIONS, None)
    if found is None:
        found = {}
        for n in ast.walk(cls):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                found.setdefault(n.attr, []).append(n.lineno)
        setattr(cls, _MENTIONS, found)
    return found


def _missing_attribute(atom: GuardAtom) -> str | None:
    """``x`` of a failing test that ``self.x`` is missing: ``self.x is None``, ``not self.x``."""
    test = atom.test
    assert test is not None
    negated = atom.negated
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if _self_attr(test) is not None:
        return _self_attr(test) if negated else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _is_none(test.comparators[0]):
        attr = _self_attr(test.left)
        is_ = isinstance(test.ops[0], ast.Is)
        is_not = isinstance(test.ops[0], ast.IsNot)
        if attr is not None and ((is_ and not negated) or (is_not and negated)):
            return attr
    return None


def _present(test: ast.expr, attr: str, bound: dict[str, ast.expr], depth: int = 0) -> bool:
    """Whether ``test`` holding means ``self.<attr>`` is there (one of its ``and`` conjuncts, or
    of the one value a local it names was given: ``needs = ... and self.x is not None``)."""
    for part in split_and(test):
        if (
            isinstance(part, ast.Name)
            and part.id in bound
            and depth < 3
            and _present(bound[part.id], attr, bound, depth + 1)
        ):
            return True
        if _self_attr(part) == attr:
            return True
        if (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.ops[0], ast.IsNot)
            and _is_none(part.comparators[0])
            and _self_attr(part.left) == attr
        ):
            return True
    return False


def _bound_once(method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """The locals the method assigns exactly once, with their values."""
    # None: a store whose value is not the name's alone (unpacking, ``+=``, a loop target).
    seen: dict[str, list[ast.expr | None]] = {}
    for n in ast.walk(method):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for m in ast.walk(t):
                    if isinstance(m, ast.Name):
                        seen.setdefault(m.id, []).append(n.value if t is m else None)
        elif isinstance(n, ast.AugAssign | ast.AnnAssign | ast.NamedExpr | ast.For | ast.comprehension):
            for m in ast.walk(n.target):
                if isinstance(m, ast.Name):
                    seen.setdefault(m.id, []).append(None)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}


def _calls_of(
    body: Sequence[ast.stmt], name: str, tests: list[ast.expr]
) -> list[tuple[ast.Call, list[ast.expr]]]:
    """Each ``self.<name>(...)`` call in ``body`` with the tests of the ``if`` branches it sits in
    (a test only for its own branch; an ``else`` adds none)."""
    out: list[tuple[ast.Call, list[ast.expr]]] = []
    for stmt in body:
        if isinstance(stmt, NEW_SCOPE):
            continue
        if isinstance(stmt, ast.If):
            out.extend((c, tests) for c in _self_calls(stmt.test, name))
            out.extend(_calls_of(stmt.body, name, [*tests, stmt.test]))
            out.extend(_calls_of(stmt.orelse, name, tests))
            continue
        blocks = list(child_blocks(stmt))
        if blocks:
            for head in heads(stmt):
                out.extend((c, tests) for c in _self_calls(head, name))
            for block in blocks:
                out.extend(_calls_of(block, name, tests))
            continue
        for call in _self_calls(stmt, name):
            out.append((call, [*tests, *_ifexp_tests(stmt, call)]))
    return out


def _self_calls(node: ast.AST, name: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == name
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
    ]


def _ifexp_tests(stmt: ast.stmt, call: ast.Call) -> list[ast.expr]:
    """The tests of the conditional expressions whose true side holds ``call``."""
    return [
        n.test
        for n in ast.walk(stmt)
        if isinstance(n, ast.IfExp) and any(m is call for m in ast.walk(n.body))
    ]


def _self_attr(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
