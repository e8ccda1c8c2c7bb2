"""Getters of a shared settings holder, read back to the flag that fills the field they return.

sglang keeps some launch settings in a process-wide holder instead of passing the server args on:
one function copies a flag into a field (``moe = get_flags().moe; moe.tbo_enabled =
server_args.enable_two_batch_overlap``) and a getter elsewhere in the same file returns it
(``def is_tbo_enabled(): ...; return moe.tbo_enabled``). A test of the getter's value
(``if is_tbo_enabled():``) is then a test of the flag. The holder is recognised by the text of
the expression that reaches it (``get_flags().moe``), which both functions spell the same way; a
field filled from different flags in different places says nothing sure and is left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from extractor.analysis.walk import own_statements
from extractor.reach.guard_atoms import GuardReader

__all__ = ["holder_getters"]


def holder_getters(tree: ast.Module, guards: GuardReader) -> list[tuple[str, str]]:
    """``(getter name, flag destination)`` for the module-level getters of ``tree`` whose value is a
    holder field that the same file fills from exactly one flag."""
    module_level = [s for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
    methods = [
        s
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for s in cls.body
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    filled: dict[tuple[str, str], set[str]] = {}
    for func in [*module_level, *methods]:
        for key, dest in _fills(func, guards):
            filled.setdefault(key, set()).add(dest)
    if not filled:
        return []
    out = []
    for func in module_level:
        field = _returned_field(func)
        dests = filled.get(field) if field is not None else None
        if dests is not None and len(dests) == 1:
            out.append((func.name, next(iter(dests))))
    return out


def _holder(node: ast.expr, bound: dict[str, ast.expr]) -> str | None:
    """The text naming a holder: a local bound to it, or the expression itself (never ``self``)."""
    if isinstance(node, ast.Name):
        value = bound.get(node.id)
        return _holder(value, {}) if value is not None else None
    if isinstance(node, ast.Attribute | ast.Call):
        text = ast.unparse(node)
        return None if text.startswith(("self.", "cls.")) else text
    return None


def _bind(stmt: ast.stmt, bound: dict[str, ast.expr]) -> None:
    # The value is kept, not its text: most locals never name a holder, and writing each one out
    # cost more than the rest of the search.
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        name = stmt.targets[0].id
        if isinstance(stmt.value, ast.Attribute | ast.Call):
            bound[name] = stmt.value
        else:
            bound.pop(name, None)


def _fills(
    func: ast.FunctionDef | ast.AsyncFunctionDef, guards: GuardReader
) -> Iterator[tuple[tuple[str, str], str]]:
    """``((holder, field), flag destination)`` for each ``holder.field = <flag>`` in ``func``."""
    bound: dict[str, ast.expr] = {}
    local: dict[str, tuple[str, str]] = {}
    for stmt in own_statements(func.body):
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Name):
            _bind(stmt, bound)
            subject = guards.subject(value, local) if isinstance(value, ast.Attribute) else None
            if subject is not None and subject[1] == "args":
                local[target.id] = subject
            else:
                local.pop(target.id, None)
            continue
        if not isinstance(target, ast.Attribute):
            continue
        subject = guards.subject(value, local) if isinstance(value, ast.Attribute | ast.Name) else None
        if subject is None or subject[1] != "args":
            continue
        holder = _holder(target.value, bound)
        if holder is not None:
            yield (holder, target.attr), subject[0]


def _returned_field(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str] | None:
    """``(holder, field)`` a parameterless function ends by returning, unconditionally."""
    args = func.args
    if args.args or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        return None
    last = func.body[-1] if func.body else None
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Attribute)):
        return None
    bound: dict[str, ast.expr] = {}
    for stmt in func.body[:-1]:
        _bind(stmt, bound)
    holder = _holder(last.value.value, bound)
    return (holder, last.value.attr) if holder is not None else None
