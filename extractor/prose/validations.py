"""What the server-args validation demands of one flag, so a fix elsewhere does not trip it.

``ServerArgs`` checks its own values when it is built (``if self.page_size <= 0: raise``,
``assert self.tp_size % 2 == 0``, in ``__post_init__`` and the ``_handle_*`` / ``check_*``
methods it calls). A value suggested to pass a check deep in the runtime must still pass those,
or the user who follows it meets the next error at startup. :func:`validation_checks` reads, from the methods of
the classes that declare flags, the range and whitelist checks on one flag against literals that
sit directly in a method's body (a check nested under another condition applies only sometimes,
and is left out), as what must hold: ``(dest, op, values)``.
"""

from __future__ import annotations

import ast

__all__ = ["validation_checks"]

_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "eq",
    ast.NotEq: "ne",
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.In: "in",
    ast.NotIn: "not-in",
}
_FLIP = {
    "eq": "ne",
    "ne": "eq",
    "lt": "ge",
    "ge": "lt",
    "le": "gt",
    "gt": "le",
    "in": "not-in",
    "not-in": "in",
}


# A range or a whitelist holds for every launch; a demand that a flag equal (or avoid) one value
# is a mode's restriction (``if self.dcp_size != 1: raise`` in a handler run for one backend),
# and reading it as general would forbid good fixes.
_KEPT = frozenset({"lt", "le", "gt", "ge", "in"})


def _literal(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
        return None if isinstance(node.value, bool) else (str(node.value),)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        inner = _literal(node.operand)
        return (f"-{inner[0]}",) if inner else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        out: list[str] = []
        for e in node.elts:
            lit = _literal(e)
            if lit is None or len(lit) != 1:
                return None
            out.append(lit[0])
        return tuple(out)
    return None


def _must(test: ast.expr, holds: bool) -> tuple[str, str, tuple[str, ...]] | None:
    """``(dest, op, values)`` that must hold for the method to go on: ``test`` must be true
    (an assertion) or false (the test of an ``if`` that raises)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, holds = test.operand, not holds
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op = _OPS.get(type(test.ops[0]))
    left = test.left
    if op is None or not (
        isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self"
    ):
        return None
    values = _literal(test.comparators[0])
    if values is None:
        return None
    return left.attr, op if holds else _FLIP[op], values


def _raises(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[0], ast.Raise)


def validation_checks(tree: ast.Module, classes: set[str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The checks the methods of ``classes`` (the flag-declaring classes of one file) make on a
    single flag against a literal, as ``(dest, op, values)`` that must hold. Never raises."""
    out: list[tuple[str, str, tuple[str, ...]]] = []
    try:
        for cls in tree.body:
            if not (isinstance(cls, ast.ClassDef) and cls.name in classes):
                continue
            for func in cls.body:
                if not isinstance(func, ast.FunctionDef):
                    continue
                for stmt in func.body:
                    found = None
                    if isinstance(stmt, ast.Assert):
                        found = _must(stmt.test, True)
                    elif isinstance(stmt, ast.If) and _raises(stmt.body) and not stmt.orelse:
                        found = _must(stmt.test, False)
                    if found is not None and found[1] in _KEPT and found not in out:
                        out.append(found)
    except (AttributeError, RecursionError):
        return []
    return out
