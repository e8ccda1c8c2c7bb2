"""The one statement walk every analysis stage shares: a statement's blocks, and a scope's statements.

A compound statement holds blocks (``if``/``else`` bodies, ``try`` handlers, ``match`` cases); the
analysis names each one the way :class:`~extractor.analysis.sites.Frame` does (``body``, ``orelse``,
``finalbody``, ``handler:<k>``, ``case:<k>``). Nested functions and classes open a new scope: the
walks of a scope's own statements do not enter them.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
NEW_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
# The statements that hold blocks (:func:`branches` names none for any other).
_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)


def branches(stmt: ast.stmt) -> Iterator[tuple[str, list[ast.stmt]]]:
    """The blocks of a compound statement in source order, each with its name; none for a scope."""
    if isinstance(stmt, ast.If | ast.For | ast.AsyncFor | ast.While):
        yield "body", stmt.body
        if stmt.orelse:
            yield "orelse", stmt.orelse
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        yield "body", stmt.body
    elif isinstance(stmt, ast.Try | ast.TryStar):
        yield "body", stmt.body
        for k, handler in enumerate(stmt.handlers):
            yield f"handler:{k}", handler.body
        if stmt.orelse:
            yield "orelse", stmt.orelse
        if stmt.finalbody:
            yield "finalbody", stmt.finalbody
    elif isinstance(stmt, ast.Match):
        for k, case in enumerate(stmt.cases):
            yield f"case:{k}", case.body


def heads(stmt: ast.stmt) -> list[ast.expr]:
    """The expressions a compound statement evaluates outside its blocks: a loop's iterable or
    test, the context managers of a ``with``, the subject of a ``match`` (an ``if`` test is a
    test, left to each walk)."""
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return [stmt.iter]
    if isinstance(stmt, ast.While):
        return [stmt.test]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return []


def child_blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The blocks of a compound statement, without their names."""
    for _, block in branches(stmt):
        yield block


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a block in source order, nested blocks included, nested scopes' bodies not."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        # Most statements hold no block: asking them for their blocks was most of this walk.
        if not isinstance(stmt, _COMPOUND):
            continue
        for block in reversed(list(child_blocks(stmt))):
            stack.extend(reversed(block))


def every_statement(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a block at any depth, the bodies of nested functions and classes too
    (in no promised order): where a statement-only construct (``global``) may sit."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, NEW_SCOPE):
            stack.extend(stmt.body)
            continue
        if isinstance(stmt, _COMPOUND):
            for block in child_blocks(stmt):
                stack.extend(block)


def statements_in(stmt: ast.stmt) -> Iterator[ast.stmt]:
    """``stmt`` and every statement nested in its blocks (not inside a nested scope)."""
    return own_statements([stmt])


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, in its order, without a generator per field: the
    whole-tree walks call it for every node of every file."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([v for v in value if isinstance(v, ast.AST)])
    return out


def _leaf_types() -> frozenset[type]:
    kinds: set[type] = {ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.alias}
    for base in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop):
        kinds.update(base.__subclasses__())
    return frozenset(kinds)


LEAF_TYPES = _leaf_types()
"""Nodes that hold no other node: names, constants, contexts, operators, ``pass``. Walks that look
for statements, calls or bindings skip them; the others keep their order."""
_INNER_FIELDS: dict[type, tuple[str, ...]] = {}
# Fields that hold a string, a number or a context (a leaf) in every node that has them.
_SCALAR_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "asname", "module", "level", "conversion", "type_comment"}
)
_SCALAR_FIELDS |= {"kind", "is_async", "simple", "name", "names", "op"}


def inner_nodes(node: ast.AST) -> list[ast.AST]:
    """:func:`child_nodes` without the leaves (:data:`LEAF_TYPES`), in the same order."""
    kind = type(node)
    fields = _INNER_FIELDS.get(kind)
    if fields is None:
        fields = _INNER_FIELDS[kind] = tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)
    out: list[ast.AST] = []
    leaves = LEAF_TYPES
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend([v for v in value if isinstance(v, ast.AST) and type(v) not in leaves])
        elif isinstance(value, ast.AST) and type(value) not in leaves:
            out.append(value)
    return out


def walk_inner(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without the leaves: every other node, in its breadth-first order."""
    todo = deque([node])
    while todo:
        here = todo.popleft()
        todo.extend(inner_nodes(here))
        yield here


def walk_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk``: the same nodes in the same (breadth-first) order, with :func:`child_nodes`."""
    todo = deque([node])
    while todo:
        here = todo.popleft()
        todo.extend(child_nodes(here))
        yield here


def header_expressions(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The parts of a statement outside its blocks (tests, targets, values); none for a scope."""
    if isinstance(stmt, NEW_SCOPE):
        return
    for name, value in ast.iter_fields(stmt):
        if name in _BLOCK_FIELDS:
            continue
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))


def own_returns(func: FunctionNode) -> list[ast.Return]:
    """The ``return <value>`` statements of a function's own body, in source order."""
    return [s for s in own_statements(func.body) if isinstance(s, ast.Return) and s.value is not None]


def called_name(node: ast.AST) -> str:
    """The last name of what a call calls (``f(...)`` -> ``f``, ``a.b.m(...)`` -> ``m``); ``""``
    for anything else."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return ""


def last_name(node: ast.AST) -> str:
    """The last name of a name or attribute chain (``c`` of ``a.b.c`` or of ``c``); ``""`` for
    anything else."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def dotted_name(node: ast.AST) -> str | None:
    """Dotted text of a name or attribute chain (``os.environ``); None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def getattr_read(node: ast.AST) -> ast.Attribute | None:
    """``getattr(obj, "name", ...)`` of a literal name as the read ``obj.name`` it stands for;
    None for any other node."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())
    return None


def none_test(node: ast.AST) -> tuple[ast.expr, bool] | None:
    """``(x, False)`` for ``x is None``, ``(x, True)`` for ``x is not None``; None for any other node."""
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Is | ast.IsNot)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    ):
        return node.left, isinstance(node.ops[0], ast.IsNot)
    return None


def read_path(node: ast.AST) -> tuple[str | None, list[str]]:
    """The root name of a read (None when it is not a plain name) and the attributes it goes
    through, a ``getattr`` of a literal key counting as one: ``config.text_config.hidden_size`` and
    ``getattr(config.text_config, "hidden_size", None)`` both give ``("config", ["text_config",
    "hidden_size"])``."""
    tail: list[str] = []
    read = getattr_read(node)
    if read is not None:
        tail = [read.attr]
        node = read.value
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), [*reversed(chain), *tail]


def key_read(node: ast.AST) -> tuple[str, str, str] | None:
    """``(mapping, how, key)`` of a read of a literal key from a named mapping: ``cfg["k"]``
    (how ``[]``), ``cfg.get("k", d)`` (``get``) or ``cfg.pop("k", d)`` (``pop``); None otherwise."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return node.value.id, "[]", key.value
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop")
        and isinstance(node.func.value, ast.Name)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.func.value.id, node.func.attr, node.args[0].value
    return None
