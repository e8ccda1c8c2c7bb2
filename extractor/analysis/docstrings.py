"""The code's own words about a site beyond the comments above it: the docstring of its
function and of its class, and what the function's parameters are (their annotations, and what
the callers in the same file pass for them).

These are the facts the prose needs to say *why* a check exists and *what* a value it tests
stands for: a ``model_type`` parameter that its one caller fills from
``getattr(self.vision_config, "model_type")`` is the checkpoint's ``vision_config.model_type``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from extractor.analysis.facts import Param
from extractor.analysis.walk import inner_nodes, walk_inner

__all__ = ["CallIndex", "class_doc", "first_paragraph", "function_doc", "parameters"]

_MAX_DOC = 400
_MAX_PASSED = 3
_SECTION_HEADS = ("args:", "arguments:", "parameters", "returns:", "raises:", "example", ":param", "note:")


def first_paragraph(doc: str | None) -> str:
    """The opening paragraph of a docstring on one line, without an ``Args:``-style section;
    capped at :data:`_MAX_DOC` characters."""
    if not doc:
        return ""
    lines: list[str] = []
    for raw in doc.strip().splitlines():
        line = raw.strip()
        if not line:
            if lines:
                break
            continue
        if line.lower().startswith(_SECTION_HEADS):
            break
        lines.append(line)
    text = " ".join(lines)
    if len(text) > _MAX_DOC:
        text = text[: _MAX_DOC - 3].rstrip() + "..."
    return text


def _docstring(node: ast.AST) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
        try:
            return ast.get_docstring(node, clean=True)
        except (TypeError, ValueError):
            return None
    return None


def function_doc(scope: ast.AST) -> str:
    """The first paragraph of the docstring of the site's function (``""`` at module level)."""
    if isinstance(scope, ast.Module):
        return ""
    return first_paragraph(_docstring(scope))


def class_doc(node: ast.ClassDef | None) -> str:
    return first_paragraph(_docstring(node)) if node is not None else ""


@dataclass
class _Call:
    call: ast.Call
    caller: ast.FunctionDef | ast.AsyncFunctionDef | None
    owner: ast.ClassDef | None


@dataclass
class CallIndex:
    """Every call in one file to a plain name (``f(...)``) or to a method of ``self``/``cls``,
    by the called name, with the function and class it sits in. Built once per file."""

    calls: dict[str, list[_Call]] = field(default_factory=dict)
    _bindings: dict[int, dict[str, list[tuple[int, ast.expr]]]] = field(default_factory=dict)
    """id of a caller -> name -> (line, value) of each binding: one walk of a caller serves all
    its calls' arguments (walking it again per argument was a fifth of a cold run)."""
    _params: dict[tuple[int, int], tuple[Param, ...]] = field(default_factory=dict)
    """(id of the scope, id of its class) -> its parameters: a function's many sites ask once."""

    @classmethod
    def of(cls, tree: ast.Module) -> CallIndex:
        index = cls()
        stack: list[tuple[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None, ast.ClassDef | None]] = [
            (tree, None, None)
        ]
        while stack:
            node, func, owner = stack.pop()
            for child in inner_nodes(node):
                f, o = func, owner
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    f = child
                elif isinstance(child, ast.ClassDef):
                    f, o = None, child
                elif isinstance(child, ast.Call):
                    name = _called_name(child.func)
                    if name is not None:
                        index.calls.setdefault(name, []).append(_Call(child, func, owner))
                stack.append((child, f, o))
        return index


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        return "." + func.attr
    return None


def _bindings(func: ast.AST) -> dict[str, list[tuple[int, ast.expr]]]:
    """Every value bound to a name anywhere in ``func`` (an assignment or a walrus), with its line."""
    out: dict[str, list[tuple[int, ast.expr]]] = {}
    for node in walk_inner(func):
        if isinstance(node, ast.Assign):
            # A name assigned twice in one statement (``a = a = v``) is one binding.
            for name in dict.fromkeys(t.id for t in node.targets if isinstance(t, ast.Name)):
                out.setdefault(name, []).append((node.lineno, node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                out.setdefault(node.target.id, []).append((node.lineno, node.value))
        elif isinstance(node, ast.NamedExpr):
            out.setdefault(node.target.id, []).append((node.lineno, node.value))
    return out


def _assigned_in(bound: dict[str, list[tuple[int, ast.expr]]], name: str, before: int) -> ast.expr | None:
    """The value last bound to ``name`` (in the caller whose :func:`_bindings` these are) before
    line ``before``, when there is exactly one such binding."""
    found = [value for line, value in bound.get(name, ()) if line <= before]
    return found[0] if len(found) == 1 else None


def _arguments(call: ast.Call, names: list[str]) -> Iterator[tuple[str, ast.expr]]:
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return
        if i < len(names):
            yield names[i], arg
    for kw in call.keywords:
        if kw.arg is not None:
            yield kw.arg, kw.value


def _source(expr: ast.expr, caller: ast.AST | None, line: int, index: CallIndex) -> str:
    if isinstance(expr, ast.Name) and caller is not None:
        names = index._bindings.get(id(caller))
        if names is None:
            names = index._bindings[id(caller)] = _bindings(caller)
        bound = _assigned_in(names, expr.id, line)
        if bound is not None:
            expr = bound
    try:
        text = ast.unparse(expr)
    except Exception:
        return ""
    return text if len(text) <= 160 else ""


def parameters(scope: ast.AST, owner: ast.ClassDef | None, index: CallIndex | None) -> tuple[Param, ...]:
    """The parameters of the site's function with their annotations and, from the callers in
    the same file (``self.f(...)`` inside its class, ``f(...)`` for a module function), the
    expressions passed for them (a name is followed to its one binding in the caller)."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return ()
    if index is None:
        return _parameters(scope, owner, None)
    key = (id(scope), id(owner))
    found = index._params.get(key)
    if found is None:
        found = index._params[key] = _parameters(scope, owner, index)
    return found


def _parameters(
    scope: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, index: CallIndex | None
) -> tuple[Param, ...]:
    a = scope.args
    ordered = [*a.posonlyargs, *a.args]
    method = owner is not None and ordered and ordered[0].arg in ("self", "cls")
    positional = [p.arg for p in ordered[1:]] if method else [p.arg for p in ordered]
    every = [*ordered, *a.kwonlyargs]
    passed: dict[str, list[str]] = {}
    if index is not None:
        key = "." + scope.name if method else scope.name
        calls = [c for c in index.calls.get(key, []) if not method or c.owner is owner]
        if method and owner is not None and scope.name == "__init__":
            # A constructor is called by building the class: ``Foo(...)`` anywhere in the file, or
            # ``cls(...)`` in its own class methods (``from_config`` filling it from a config).
            calls += index.calls.get(owner.name, [])
            calls += [c for c in index.calls.get("cls", []) if c.owner is owner]
        for c in calls:
            for name, expr in _arguments(c.call, positional):
                text = _source(expr, c.caller, c.call.lineno, index)
                if text and text != name:
                    got = passed.setdefault(name, [])
                    if text not in got and len(got) < _MAX_PASSED:
                        got.append(text)
    out = []
    for p in every:
        if method and p is ordered[0]:
            continue
        ann = ""
        if p.annotation is not None:
            try:
                ann = ast.unparse(p.annotation)
            except Exception:
                ann = ""
        out.append(Param(p.arg, ann, tuple(passed.get(p.arg, ()))))
    return tuple(out)
