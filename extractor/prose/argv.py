"""Flags a class or function reads straight from the raw command line.

Some code looks for a flag in the argument list itself, before argparse has run: a YAML config
merger finds ``--config`` with ``args.index("--config")`` or ``[i for i, a in enumerate(args) if
a == "--config"]`` and then reads, validates and converts the file that follows it. Its checks
read no parsed flag, so the guard alone makes them internal; yet every one of them is about the
value given with that flag (the path, the file's contents). :func:`argv_flags` finds, per
top-level class or function of a file, the flag literals it looks for that way, and
:func:`argv_flag` names that flag as the cause of an internal site inside such a scope.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from extractor.analysis.walk import walk_inner
from extractor.prose.flag_spelling import declared_flag

if TYPE_CHECKING:
    # Only for annotations: the declarations module reads these scopes while it is imported.
    from extractor.analysis.facts import Site
    from extractor.prose.declarations import FlagInfo

__all__ = ["argv_flag", "argv_flags"]

_FLAG_LITERAL_RE = re.compile(r"^--[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


def _flag_literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _FLAG_LITERAL_RE.match(node.value):
        return node.value
    return None


def _looked_up(node: ast.AST) -> str | None:
    """The flag literal ``node`` looks for in an argument list, if it does that."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        # ``arg == "--config"``: an element of the list compared with the flag.
        if isinstance(op, ast.Eq):
            for lit, other in ((left, right), (right, left)):
                flag = _flag_literal(lit)
                if flag is not None and isinstance(other, ast.Name):
                    return flag
        # ``"--config" in argv``: membership in a list of arguments, not in an option's spellings.
        if isinstance(op, ast.In) and isinstance(right, ast.Name) and "arg" in right.id.lower():
            return _flag_literal(left)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "index"
        and len(node.args) == 1
    ):
        return _flag_literal(node.args[0])
    return None


def argv_flags(module: ast.Module) -> dict[str, tuple[str, ...]]:
    """Top-level class or function name -> the flags it looks for in a raw argument list.
    Never raises."""
    out: dict[str, tuple[str, ...]] = {}
    try:
        for stmt in module.body:
            if not isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            # Comparisons and calls are never leaves: the walk without them keeps their order.
            found = [f for node in walk_inner(stmt) if (f := _looked_up(node)) is not None]
            if found:
                out[stmt.name] = tuple(dict.fromkeys(found))
    except RecursionError:
        return {}
    return out


def argv_flag(site: Site, flags: Mapping[str, FlagInfo], scopes: Mapping[str, tuple[str, ...]]) -> str | None:
    """The flag that causes an internal site inside a scope that reads exactly one declared flag from
    the raw command line: what that scope checks is the value given with it. Two flags read there
    would leave the cause open, and a literal no flag declares (a subcommand's own option) is not
    one the launcher takes."""
    if site.guard.handlers:
        return None
    scope = site.qualname.split(".", 1)[0]
    found = scopes.get(scope, ())
    if not found:
        # Before any look at the flags: a file's cached result is kept under what it read.
        return None
    if len(found) != 1:
        return None
    # One spelling looked up, not the set of every flag's: the lookup is what gets recorded.
    named = [f for f in found if declared_flag(f, flags) is not None]
    return named[0] if len(named) == 1 else None
