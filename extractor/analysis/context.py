"""The source around a site: the window of whole lines shown in ``sourceCode``, the comments a
reader sees above the guard, and the permalink to those lines.

The window holds the innermost guard statement (the whole ``if``/``elif`` chain header, the
``try`` or ``match``), the assignments of local names the guard reads when they sit just above
it, the comments directly above all that, and the complete raise statement; at most
:data:`MAX_WINDOW` lines, trimmed from the top when the guard is far above the site.
"""

from __future__ import annotations

import ast

from extractor.analysis.conditions import innermost_guard_statement
from extractor.analysis.facts import LocalBinding
from extractor.analysis.parse import ParsedFile
from extractor.analysis.sites import RawSite
from extractor.records.model import permalink

MAX_WINDOW = 40
_BINDING_REACH = 12  # how far above the guard a binding may sit and still join the window
_CHAIN_HEAD = "_sge_chain_head"


_WINDOW_DEPTH = 2


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def comments_above(parsed: ParsedFile, line: int) -> tuple[int, list[str]]:
    """The first line of the run of comment lines directly above ``line``, and their text."""
    start = line
    texts: list[str] = []
    n = line - 1
    while n >= 1 and _is_comment(parsed.line(n)):
        texts.append(parsed.line(n).strip().lstrip("#").strip())
        start = n
        n -= 1
    texts.reverse()
    return start, [t for t in texts if t]


def _chain_start(site: RawSite, stmt: ast.stmt) -> int:
    # An elif is an If alone in its parent's orelse: the chain a reader sees starts at the first if.
    # The head found is kept on the statement: the sites of a long elif chain, in source order,
    # then each take one step instead of walking the whole chain again.
    guard = stmt
    frames = site.frames
    for i in range(len(frames) - 1, 0, -1):
        if frames[i].stmt is stmt:
            parent = frames[i - 1]
            while (
                isinstance(parent.stmt, ast.If)
                and parent.branch == "orelse"
                and len(parent.stmt.orelse) == 1
                and parent.stmt.orelse[0] is stmt
            ):
                stmt = parent.stmt
                known = getattr(stmt, _CHAIN_HEAD, None)
                if known is not None:
                    stmt = known
                    break
                i -= 1
                if i == 0:
                    break
                parent = frames[i - 1]
            break
    setattr(guard, _CHAIN_HEAD, stmt)
    return _first_line(stmt)


def _first_line(stmt: ast.stmt) -> int:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and stmt.decorator_list:
        return min(d.lineno for d in stmt.decorator_list)
    return stmt.lineno


def window_of(
    parsed: ParsedFile, site: RawSite, bindings: tuple[LocalBinding, ...]
) -> tuple[int, int, list[str]]:
    """``(start, end, comments)``: the source window of a site and the comments above its guard."""
    node = site.node
    end = node.end_lineno or node.lineno
    guard = innermost_guard_statement(site)
    start = _chain_start(site, guard) if guard is not None else node.lineno
    if guard is None and isinstance(site.scope, ast.FunctionDef | ast.AsyncFunctionDef):
        body = site.scope.body
        first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
        if len(site.frames) == 1 and site.frames[0].index <= first and end - site.scope.lineno < MAX_WINDOW:
            # A site that opens its function (``def f(): raise NotImplementedError``): show the def.
            start = _first_line(site.scope)
    for binding in bindings:
        # The window shows what the guard reads and what that is made from; a value further
        # back is for the cause to trace, not for a reader to scroll through.
        if binding.depth <= _WINDOW_DEPTH and start - _BINDING_REACH <= binding.line < start:
            start = binding.line
    start, comments = comments_above(parsed, start)
    if node.lineno > start:
        # Comments right above the raise (in its guarded block, or under the ``def`` the window
        # opens with) explain it too.
        _, inner = comments_above(parsed, node.lineno)
        comments = comments + [c for c in inner if c not in comments]
    if end - start + 1 > MAX_WINDOW:
        start = max(min(node.lineno, end - MAX_WINDOW + 1), 1)
    start = max(start, 1)
    end = min(max(end, start), max(len(parsed.lines), 1))
    return start, end, comments


__all__ = ["comments_above", "permalink", "window_of"]
