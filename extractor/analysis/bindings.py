"""The local assignments a site's guard reads: which ones run before it, on every path or not.

:func:`local_bindings` follows the names the guard atoms read back to their assignments in the
enclosing scope (transitively, a bounded number of steps), and :func:`case_bindings` adds the names
a ``match`` case binds; :mod:`extractor.analysis.conditions` puts them into the guard.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable

from extractor.analysis.facts import GuardAtom, LocalBinding
from extractor.analysis.sites import RawSite, ScopeNode
from extractor.analysis.walk import branches, own_statements, statements_in, walk_nodes

_ASSIGNMENTS = "_sge_assignments"
# How many assignments back a guard's name is followed: ``port = int(port_str)`` after ``host,
# port_str = addr.rsplit(":", 1)`` after ``addr = str(value).strip()`` reaches the parameter.
_DEPTH = 4


def unparse(node: ast.AST) -> str:
    return ast.unparse(node)


def _assigned_names(stmt: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif (isinstance(stmt, ast.AnnAssign) and stmt.value is not None) or isinstance(stmt, ast.AugAssign):
        targets = [stmt.target]
    names: list[str] = []
    stack = list(targets)
    while stack:
        target = stack.pop()
        # Only names are bound: ``x.attr = v`` and ``x[k] = v`` change an object, not ``x``.
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            stack.extend(target.elts)
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
    return names


def scope_statements(scope: ScopeNode) -> Iterable[ast.stmt]:
    """Every statement of a scope's own body, nested blocks included, nested scopes excluded."""
    return own_statements(scope.body)


def _assignments(scope: ScopeNode) -> dict[str, list[ast.stmt]]:
    """Every assignment to a plain name in ``scope``, by name in source order (once per scope)."""
    memo: dict[str, list[ast.stmt]] | None = getattr(scope, _ASSIGNMENTS, None)
    if memo is None:
        memo = {}
        for stmt in scope_statements(scope):
            for name in _assigned_names(stmt):
                memo.setdefault(name, []).append(stmt)
        for stmts in memo.values():
            stmts.sort(key=lambda s: (s.lineno, s.col_offset))
        setattr(scope, _ASSIGNMENTS, memo)
    return memo


def assignments_before(scope: ScopeNode, line: int) -> dict[str, list[ast.stmt]]:
    """Assignments to plain names in ``scope`` that start before ``line``, in source order."""
    found: dict[str, list[ast.stmt]] = {}
    for name, stmts in _assignments(scope).items():
        before = [s for s in stmts if s.lineno < line]
        if before:
            found[name] = before
    return found


def _assigned_before(scope: ScopeNode, name: str, line: int) -> list[ast.stmt]:
    stmts = _assignments(scope).get(name, [])
    return stmts[: bisect.bisect_left(stmts, line, key=lambda s: s.lineno)]


def _names_read(nodes: Iterable[ast.AST]) -> list[str]:
    seen: list[str] = []
    for root in nodes:
        for node in walk_nodes(root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in seen:
                seen.append(node.id)
    return seen


def _exclusive_statements(site: RawSite) -> set[int]:
    """Statements in the branches the path to the site does not take (they never run before it)."""
    out: set[int] = set()
    for frame in site.frames[:-1]:
        stmt, branch = frame.stmt, frame.branch
        # A try body and its finally run on every path through the statement: no alternative.
        shared = ("body", "finalbody") if isinstance(stmt, ast.Try | ast.TryStar) else ()
        for name, block in branches(stmt):
            if name == branch or name in shared:
                continue
            for inner in block:
                out.update(id(s) for s in statements_in(inner))
    return out


# Where each statement of a scope's ``except`` handlers sits: its ``try`` statement, kept on the
# scope node (every name a guard reads asks).
_HANDLED = "_sge_handled"


def _tried_first(scope: ScopeNode, stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``try: x = get_size()`` / ``except E: x = 1``: when the last assignment is a handler's
    fallback, the one in the ``try`` body (the value when nothing failed) can reach the read too."""
    handled: dict[int, ast.Try | ast.TryStar] | None = getattr(scope, _HANDLED, None)
    if handled is None:
        handled = {
            id(s): node
            for node in walk_nodes(scope)
            if isinstance(node, ast.Try | ast.TryStar)
            for h in node.handlers
            for t in h.body
            for s in statements_in(t)
        }
        setattr(scope, _HANDLED, handled)
    found = handled.get(id(stmts[-1]))
    if found is None:
        return []
    tried = {id(s) for t in found.body for s in statements_in(t)}
    return [s for s in stmts[-2::-1] if id(s) in tried][:1]


def local_bindings(site: RawSite, atoms: list[GuardAtom]) -> list[LocalBinding]:
    """For each local name the guard reads, the last assignment that can run before it is read.

    Assignments in branches the path does not take, and those below the test that reads the
    name, are left out; the names those assignments read are followed back up to ``_DEPTH`` levels.
    """
    excluded: set[int] | None = None
    chosen: dict[int, tuple[str, ast.stmt, int]] = {}
    frontier: list[tuple[str, int]] = []
    for atom in atoms:
        if atom.test is not None:
            line = atom.line or site.node.lineno
            frontier.extend((name, line) for name in _names_read([atom.test]))
    for depth in range(1, _DEPTH + 1):
        next_frontier: list[tuple[str, int]] = []
        for name, before in frontier:
            stmts = _assigned_before(site.scope, name, min(before, site.node.lineno))
            if not stmts:
                continue
            if excluded is None:  # only needed when some assignment could be chosen
                excluded = _exclusive_statements(site)
            stmts = [s for s in stmts if id(s) not in excluded]
            if not stmts:
                continue
            # ``x += 1`` only makes sense after the assignment it updates: carry the run back to it.
            run = [stmts[-1]]
            while isinstance(run[-1], ast.AugAssign) and len(run) < len(stmts):
                run.append(stmts[-1 - len(run)])
            run.extend(_tried_first(site.scope, stmts))
            for stmt in run:
                if id(stmt) in chosen:
                    continue
                chosen[id(stmt)] = (name, stmt, depth)
                value = getattr(stmt, "value", None)
                if value is not None:
                    next_frontier.extend((n, stmt.lineno) for n in _names_read([value]))
        frontier = next_frontier
    on_path = {id(s) for frame in site.frames for s in frame.block[: frame.index]}
    out = []
    for name, stmt, depth in sorted(chosen.values(), key=lambda p: (p[1].lineno, p[1].col_offset)):
        value = getattr(stmt, "value", None)
        out.append(
            LocalBinding(
                name,
                unparse(stmt),
                value if isinstance(value, ast.expr) else None,
                stmt.lineno,
                always=id(stmt) in on_path,
                depth=depth,
            )
        )
    return out


def case_captures(subject: ast.expr, pattern: ast.pattern) -> list[tuple[str, ast.expr]]:
    """The names a ``match`` pattern binds, each with the expression on the subject it takes.

    ``case {"mode": mode}`` binds ``mode`` to ``subject['mode']``, ``case Point(x=x0)`` binds ``x0``
    to ``subject.x``, ``case [a, b]`` binds ``a`` to ``subject[0]``; a capture whose value cannot be
    written as an expression (after a ``*rest``, a positional class argument) is left out.
    """
    out: list[tuple[str, ast.expr]] = []

    def visit(node: ast.expr, pat: ast.pattern) -> None:
        if isinstance(pat, ast.MatchAs):
            if pat.name is not None:
                out.append((pat.name, node))
            if pat.pattern is not None:
                visit(node, pat.pattern)
        elif isinstance(pat, ast.MatchMapping):
            for key, sub in zip(pat.keys, pat.patterns, strict=True):
                visit(ast.Subscript(value=node, slice=key, ctx=ast.Load()), sub)
        elif isinstance(pat, ast.MatchClass):
            for attr, sub in zip(pat.kwd_attrs, pat.kwd_patterns, strict=True):
                visit(ast.Attribute(value=node, attr=attr, ctx=ast.Load()), sub)
        elif isinstance(pat, ast.MatchSequence):
            for i, sub in enumerate(pat.patterns):
                if isinstance(sub, ast.MatchStar):
                    break
                visit(ast.Subscript(value=node, slice=ast.Constant(i), ctx=ast.Load()), sub)

    visit(subject, pattern)
    return out


def case_bindings(site: RawSite, atoms: list[GuardAtom]) -> list[LocalBinding]:
    """Bindings for the names the taken ``match`` cases capture and the guard reads."""
    read = set(_names_read([a.test for a in atoms if a.test is not None]))
    out: list[LocalBinding] = []
    for frame in site.frames:
        if isinstance(frame.stmt, ast.Match) and frame.branch.startswith("case:"):
            case = frame.stmt.cases[int(frame.branch.split(":")[1])]
            for name, value in case_captures(frame.stmt.subject, case.pattern):
                if name in read:
                    out.append(LocalBinding(name, f"{name} = {unparse(value)}", value, case.pattern.lineno))
    return out
