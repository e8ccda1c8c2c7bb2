"""The shapes of syntax the per-file index walks: which nodes end a walk, which fields hold
nodes, module-level statements behind top-level ``if`` / ``try``, a loop's or ``with``'s heads."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = [
    "COLLECTORS",
    "LEAVES",
    "SCOPES",
    "TESTS",
    "TYPE_TESTS",
    "class_name",
    "f_string_ends",
    "flat",
    "gated",
    "handler_names",
    "is_class_name",
    "node_fields",
    "spelled_names",
]

# Only the comparisons and tests of these read a name; they never hand its value on.
TESTS = frozenset({ast.Compare, ast.BoolOp, ast.UnaryOp})
TYPE_TESTS = frozenset({"isinstance", "issubclass", "type", "getattr", "hasattr", "setattr"})
# Methods that put a value into a container (``types.append(Foo)``).
COLLECTORS = frozenset({"append", "add"})


_WORD_RE = re.compile(r"[A-Za-z_]\w{2,}")


def spelled_names(text: str) -> list[str]:
    """The names a string may look a definition up by: the words of one without spaces
    (``"load_thing"``, ``"sglang.srt.x:load_thing"``); a sentence (a message, a log line) is prose."""
    if not text or len(text) > _MAX_SPELLED or any(c.isspace() for c in text):
        return []
    return _WORD_RE.findall(text)


_MAX_SPELLED = 200
_TAIL_RE = re.compile(r"[A-Za-z_]\w*$")
_HEAD_RE = re.compile(r"^\w+")


def f_string_ends(node: ast.JoinedStr) -> list[str]:
    """The name pieces an f-string glues a value to: ``forward_*`` of ``f"forward_{key}"`` and
    ``*_communicator`` of ``f"{kind}_communicator"`` (a name looked up that way is any name so shaped)."""
    out = []
    parts = node.values
    for i, part in enumerate(parts):
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            continue
        if i + 1 < len(parts) and (m := _TAIL_RE.search(part.value)):
            out.append(f"{m.group()}*")
        if i > 0 and (m := _HEAD_RE.match(part.value)):
            out.append(f"*{m.group()}")
    return out


LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue})
SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
# Fields that never hold a syntax node (names, flags, contexts): the walk skips them. The order of
# the rest is ``ast.iter_child_nodes``'s, so calls are found in the same order.
_SCALAR_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "asname", "module", "level", "conversion", "type_comment", "kind"}
    | {"is_async", "simple", "name"}
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def node_fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SCALAR_FIELDS)
    return found


def flat(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """Module-level statements, including those inside top-level ``if`` / ``try`` blocks."""
    return (stmt for stmt, _ in gated(body, lambda _test: None))


def gated(
    body: Sequence[ast.stmt], platform_of: Callable[[ast.expr], str | None], platform: str = ""
) -> Iterator[tuple[ast.stmt, str]]:
    """The statements of :func:`flat`, each with the platform a gate around it runs it on alone
    (``if is_npu():`` as ``platform_of`` reads the test; ``""`` for none)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from gated(stmt.body, platform_of, platform_of(stmt.test) or platform)
            yield from gated(stmt.orelse, platform_of, platform)
        elif isinstance(stmt, ast.Try):
            yield from gated(stmt.body, platform_of, platform)
            for handler in stmt.handlers:
                yield from gated(handler.body, platform_of, platform)
        else:
            yield stmt, platform


def handler_names(node: ast.expr | None) -> list[str]:
    if node is None:
        return []
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    out = []
    for item in items:
        if isinstance(item, ast.Name):
            out.append(item.id)
        elif isinstance(item, ast.Attribute):
            out.append(item.attr)
    return out


def is_class_name(name: str) -> bool:
    """Whether ``name`` is spelled as a class is (``FooPool``), not a function or a constant."""
    return name[:1].isupper() and not name.isupper()


def class_name(node: ast.expr) -> str:
    """The last name of ``Foo`` or ``mod.Foo`` when it is spelled as a class; ``""`` otherwise."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name if is_class_name(name) else ""
