"""The scorer's census of sites (``shared/eval/score.py``), for tests that compare against it."""

from __future__ import annotations

import ast
from collections import Counter


def census(tree: ast.Module, *, bare: bool = True) -> Counter[int]:
    """Lines of every raise that makes an error and every assert (a Counter: two sites can share a
    line); without ``bare``, only the asserts with a message (the scorer's ``coverage``; ``bare`` is
    its ``coverageAll``). A re-raise of the name an enclosing ``except ... as name`` bound is not a
    new error and is left out."""
    bound: set[int] = set()
    for handler in ast.walk(tree):
        if isinstance(handler, ast.ExceptHandler) and handler.name:
            for n in ast.walk(handler):
                if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Name) and n.exc.id == handler.name:
                    bound.add(id(n))
    lines: Counter[int] = Counter()
    for n in ast.walk(tree):
        if isinstance(n, ast.Raise):
            counted = n.exc is not None and id(n) not in bound
        elif isinstance(n, ast.Assert):
            counted = bare or n.msg is not None
        else:
            continue
        if counted:
            lines[n.lineno] += 1
    return lines
