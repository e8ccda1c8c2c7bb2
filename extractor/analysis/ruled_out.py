"""Checks their own path rules out: the guard that leads to the site already requires the
opposite of the condition that makes it fail.

``if self.n > 0: ... else: raise`` twice in one constructor: the second ``else`` runs only
when the first passed, so ``self.n > 0`` holds there and the second raise cannot run. ``if
self.fp8: ... if not self.fp8: raise`` is the same. Such a check is dead as the code stands:
what a user meets is the first check, and a record of the second must not invent a setting
that trips it.

The two tests must be the same expression, and nothing the failing test reads may be assigned
(or have a method of its object called, or be passed to a call outside a test) between them: a loop that fetches
``response`` again between ``if response.ok: continue`` and ``if not response.ok: raise`` is
no contradiction.
"""

from __future__ import annotations

import ast

from extractor.analysis.conditions import split_and, unparse
from extractor.analysis.facts import GuardAtom
from extractor.analysis.sites import RawSite

__all__ = ["asserted_before", "ruled_out"]


# How far back in each block an earlier ``assert`` is looked for: a check repeated is near.
_ASSERT_LOOKBACK = 40
# What an ``assert`` requires, kept on the statement: every later site of its block reads it.
_REQUIRES = "_sge_requires"


def asserted_before(site: RawSite) -> list[GuardAtom]:
    """What the ``assert`` statements that run before the site on every path to it require: past
    ``assert t``, ``t`` holds (an earlier assert adds no guard atom, but it rules out the same
    failing test twice, ``assert n == m, "A"`` then ``assert n == m, "B"``)."""
    out: list[GuardAtom] = []
    for frame in site.frames:
        for stmt in frame.block[max(0, frame.index - _ASSERT_LOOKBACK) : frame.index]:
            if isinstance(stmt, ast.Assert):
                out.extend(_requires(stmt))
    return out


def _requires(stmt: ast.Assert) -> tuple[GuardAtom, ...]:
    """The atoms ``assert a and b`` leaves holding (``a``, ``b``), read once per statement."""
    found: tuple[GuardAtom, ...] | None = getattr(stmt, _REQUIRES, None)
    if found is None:
        found = tuple(
            GuardAtom(unparse(t), "assert", t, False, stmt.lineno, "gate") for t in split_and(stmt.test)
        )
        setattr(stmt, _REQUIRES, found)
    return found


def ruled_out(site: RawSite, atoms: list[GuardAtom]) -> tuple[GuardAtom, GuardAtom] | None:
    """``(failing, path)``: a deciding atom and the path atom that rules it out, or None."""
    plain = [a for a in atoms if a.test is not None and a.kind != "except"]
    typing_only = next(
        (a for a in plain if not a.negated and a.test is not None and _type_checking(a.test)), None
    )
    if typing_only is not None:
        # ``if TYPE_CHECKING:`` is false when the program runs: only a type checker reads the block.
        failing = next((a for a in plain if a.role == "deciding"), typing_only)
        return failing, typing_only
    if not any(a.role == "deciding" for a in plain):
        return None
    plain += asserted_before(site)
    if len(plain) < 2:
        return None
    # What each written atom requires: ``x`` (true) or ``not x`` (false), ``x`` as printed.
    holds = {a.text: a for a in plain if not a.negated and not _is_not(a.test)}
    fails = {a.text[4:]: a for a in plain if not a.negated and _is_not(a.test)}
    for d in plain:
        if d.role != "deciding" or d.test is None:
            continue
        against: list[GuardAtom] = []
        if d.negated:
            # ``not (a and b)`` cannot hold where the path already requires ``a`` and ``b``.
            parts = split_and(d.test) if any(t in d.text for t in holds) else []
            found = [holds.get(unparse(p)) for p in parts] if len(parts) <= 4 else []
            if found and all(g is not None and g is not d for g in found):
                against = [g for g in found if g is not None]
        elif _is_not(d.test):
            g = holds.get(d.text[4:])
            against = [g] if g is not None and g is not d else []
        else:
            g = fails.get(d.text)
            if g is None:
                g = next((n for n in plain if n.negated and n is not d and d.text in n.text), None)
                if g is not None and (g.test is None or unparse(g.test) != d.text):
                    g = None
            against = [g] if g is not None and g is not d else []
        fail_text = _failing_text(d)
        named = None
        if not against and fail_text is not None:
            against = next(
                (
                    ruling
                    for n in plain
                    if n.negated and n is not d and (ruling := _other_parts_hold(n, d, fail_text, holds))
                ),
                [],
            )
            # The branch not taken is what the reader should look at.
            named = against[0] if against else None
        if (
            against
            and all(g.line <= d.line for g in against)
            and not _calls(d.test)
            and _unchanged(site, d, against)
        ):
            return d, named or max(against, key=lambda g: g.line)
    return None


def _failing_text(d: GuardAtom) -> str | None:
    """What holds where the deciding atom ``d`` fails, as printed: ``x`` for ``if x: raise`` and
    for ``assert not x``; None for anything else."""
    if d.test is None:
        return None
    if d.negated:
        return (
            unparse(d.test.operand)
            if isinstance(d.test, ast.UnaryOp) and isinstance(d.test.op, ast.Not)
            else None
        )
    return None if _is_not(d.test) else d.text


def _other_parts_hold(
    taken: GuardAtom, d: GuardAtom, failing: str, holds: dict[str, GuardAtom]
) -> list[GuardAtom]:
    """``elif a and b: ... elif a: assert not b``: the branch not taken requires ``not (a and b)``;
    where the path (or the failing test) also requires ``a``, ``b`` cannot hold. The atoms that
    say so, or none."""
    if taken.test is None or not isinstance(taken.test, ast.BoolOp):
        return []
    parts = split_and(taken.test)
    if len(parts) > 4 or not any(unparse(p) == failing for p in parts):
        return []
    others = [holds.get(unparse(p)) for p in parts if unparse(p) != failing]
    if not others or any(g is None or g is d for g in others):
        return []
    return [taken, *(g for g in others if g is not None)]


def _type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: the constant a type checker alone reads as true."""
    name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else ""
    return name == "TYPE_CHECKING"


# Calls whose result for the same arguments is the same each time they are made.
_PURE_CALLS = frozenset({"len", "isinstance", "issubclass", "hasattr", "getattr", "type", "callable"})


def _calls(test: ast.expr) -> bool:
    """Whether ``test`` calls anything whose result may differ the second time (``r.read()``)."""
    return any(
        isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _PURE_CALLS)
        for n in ast.walk(test)
    )


def _is_not(test: ast.expr | None) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)


def _unchanged(site: RawSite, d: GuardAtom, against: list[GuardAtom]) -> bool:
    """Whether nothing the failing test reads is assigned (or mutated through a method of its
    object) after the earliest of ``against`` and before the failing test."""
    assert d.test is not None
    names = {n.id for n in ast.walk(d.test) if isinstance(n, ast.Name)}
    chains = {unparse(n) for n in ast.walk(d.test) if isinstance(n, ast.Attribute)}
    start, end = min(g.line for g in against), d.line
    stmts = [t for t in site.scope.body if (t.end_lineno or t.lineno) > start and t.lineno <= end]
    # A call in a test reads (``if resolved_view(args).x``); one elsewhere may change its argument.
    in_tests = {
        id(n)
        for t in stmts
        for node in ast.walk(t)
        if isinstance(node, ast.If | ast.While | ast.Assert)
        for n in ast.walk(node.test)
    }
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not start < getattr(node, "lineno", 0) <= end:
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del) and node.id in names:
                return False
            stored = isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del)
            if stored and unparse(node) in chains:
                return False
            if isinstance(node, ast.Call) and id(node) not in in_tests and _touches(node, names):
                return False  # ``self.setup()`` or ``apply(args)`` may set what ``self.x`` reads
            if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await | ast.With | ast.AsyncWith):
                return False  # other code runs there (a scheduler step, a context's exit)
    return True


def _touches(call: ast.Call, names: set[str]) -> bool:
    """Whether ``call`` is a method of one of ``names`` or passes one of them."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names:
        return True
    args = [*call.args, *(k.value for k in call.keywords)]
    return any(isinstance(a, ast.Name) and a.id in names for a in args)
