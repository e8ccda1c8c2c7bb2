"""The value flow of one scope: what a local name may hold when a statement runs.

:class:`ScopeFlow` follows a name through the statements that run before a point: one sure value
(an assignment), a few values that branches decide, or :data:`UNKNOWN` (a parameter, a loop
target, an unpacked tuple element). The message and resolver stages read names through it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from extractor.analysis.conditions import terminates
from extractor.analysis.sites import Frame, ScopeNode
from extractor.analysis.walk import branches, child_blocks, header_expressions, own_statements, walk_inner

_MAX_VALUES = 6

UNKNOWN: Any = object()
"""A value the analysis cannot know (a parameter, a loop target, an unpacked tuple element)."""

Value = tuple[ast.expr, ast.stmt]
State = list[Any]  # of Value or UNKNOWN; [] is "not bound yet"

# Whether a file may hold a construct that only a walk of every expression finds: its text is
# checked once, and files without a ":=" (or a ``global``) skip those walks.
_WALRUS_TEXT = re.compile(r":=")
_GLOBAL_TEXT = re.compile(r"\bglobal\b")  # a continuation line may follow the keyword


@dataclass(frozen=True)
class TextHints:
    """What a file's text rules out: a walrus anywhere, a ``global`` statement anywhere."""

    walrus: bool = True
    global_: bool = True

    @classmethod
    def of(cls, lines: list[str]) -> TextHints:
        return cls(
            walrus=any(_WALRUS_TEXT.search(line) for line in lines),
            global_=any(_GLOBAL_TEXT.search(line) for line in lines),
        )


FULL_WALKS = TextHints()
"""No construct ruled out: every walk is made."""


def target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def direct_binds(stmt: ast.stmt, hints: TextHints = FULL_WALKS) -> set[str]:
    """Names ``stmt`` itself binds (not counting the statements nested in its blocks)."""
    names: set[str] = set()
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            names.update(target_names(t))
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        names.update(target_names(stmt.target))
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        for item in stmt.items:
            if item.optional_vars is not None:
                names.update(target_names(item.optional_vars))
    elif isinstance(stmt, ast.Try | ast.TryStar):
        names.update(h.name for h in stmt.handlers if h.name)
    elif isinstance(stmt, ast.Import | ast.ImportFrom):
        for alias in stmt.names:
            names.add((alias.asname or alias.name).split(".")[0])
    elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        names.add(stmt.name)
    elif isinstance(stmt, ast.Delete):
        for t in stmt.targets:
            names.update(target_names(t))
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            for node in ast.walk(case.pattern):
                if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                    names.add(node.name)
                elif isinstance(node, ast.MatchMapping) and node.rest:
                    names.add(node.rest)
    # A walrus binds in the enclosing scope, even inside a comprehension. Finding one means walking
    # every expression, so it is skipped in files whose text has no ":=" at all.
    for child in header_expressions(stmt) if hints.walrus else ():
        for node in walk_inner(child):
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


class ScopeFlow:
    """Follows what a name holds along the statements that run before a point of one scope."""

    def __init__(
        self, scope: ScopeNode, enclosing_locals: frozenset[str] = frozenset(), hints: TextHints = FULL_WALKS
    ) -> None:
        self.scope = scope
        self.hints = hints
        self.params: set[str] = set()
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            a = scope.args
            self.params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            if a.vararg:
                self.params.add(a.vararg.arg)
            if a.kwarg:
                self.params.add(a.kwarg.arg)
        self.declared: set[str] = set()
        self._binds: dict[int, frozenset[str]] = {}
        self._direct: dict[int, frozenset[str]] = {}
        self._frames: dict[int, list[Frame]] = {}
        self.enclosing_locals = enclosing_locals
        self.local_names: frozenset[str] = self._index(scope.body)
        for stmt in own_statements(scope.body):
            if isinstance(stmt, ast.Global | ast.Nonlocal):
                self.declared.update(stmt.names)
        self._walk_frames(scope.body, [])

    def _index(self, block: list[ast.stmt]) -> frozenset[str]:
        names: set[str] = set()
        for stmt in block:
            direct = frozenset(direct_binds(stmt, self.hints))
            self._direct[id(stmt)] = direct
            own = set(direct)
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for child in child_blocks(stmt):
                    own |= self._index(child)
            self._binds[id(stmt)] = frozenset(own)
            names |= own
        return frozenset(names)

    def _walk_frames(self, block: list[ast.stmt], frames: list[Frame]) -> None:
        for index, stmt in enumerate(block):
            here = [*frames, Frame(block, index, stmt, "")]
            self._frames[id(stmt)] = here
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for branch, child in branches(stmt):
                self._walk_frames(child, [*frames, Frame(block, index, stmt, branch)])

    def frames_to(self, stmt: ast.stmt) -> list[Frame] | None:
        return self._frames.get(id(stmt))

    def is_local(self, name: str) -> bool:
        if name in self.declared:
            return False
        return name in self.local_names or name in self.params

    def values(self, name: str, frames: list[Frame]) -> State | None:
        """What ``name`` may hold when the last frame's statement runs; ``None`` when not local."""
        if not self.is_local(name):
            return None
        state: State = [UNKNOWN] if name in self.params else []
        for frame in frames:
            for stmt in frame.block[: frame.index]:
                after = self._apply(stmt, name, state)
                if after is not None:
                    state = after
            if not frame.branch:
                break
            state = self._enter(frame, name, state)
        return state

    def _enter(self, frame: Frame, name: str, state: State) -> State:
        stmt, branch = frame.stmt, frame.branch
        binds = self._binds.get(id(stmt), frozenset())
        if name not in binds:
            return state
        if name in self._direct.get(id(stmt), frozenset()):
            # Bound by the header itself: a loop target, ``with ... as``, a walrus in the test.
            return [UNKNOWN]
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            # A later statement of the loop body may have set it in an earlier iteration.
            return _union(state, [UNKNOWN])
        if isinstance(stmt, ast.Try | ast.TryStar):
            if branch.startswith("handler:"):
                handler = stmt.handlers[int(branch.split(":")[1])]
                if handler.name == name:
                    return [UNKNOWN]
                return _union(state, self._block(stmt.body, name, state) or [])
            if branch == "orelse":
                return self._block(stmt.body, name, state) or state
            if branch == "finalbody":
                return _union(state, [UNKNOWN])
        return state

    def _block(self, block: list[ast.stmt], name: str, state: State) -> State | None:
        """State after a block; ``None`` when every path through it leaves (return, raise, ...)."""
        for stmt in block:
            after = self._apply(stmt, name, state)
            if after is None:
                return None
            state = after
        return state

    def _apply(self, stmt: ast.stmt, name: str, state: State) -> State | None:
        if name not in self._binds.get(id(stmt), frozenset()):
            return None if terminates([stmt]) else state
        if isinstance(stmt, ast.Assign):
            plain = all(isinstance(t, ast.Name) for t in stmt.targets)
            if not any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return [UNKNOWN]  # unpacked, or bound by a walrus inside the value
            if not plain or _reads(stmt.value, name):
                if plain and _reads_only_in_concat(stmt.value, name):
                    return _concat(state, stmt.value, name, stmt)
                return [UNKNOWN]
            return [(stmt.value, stmt)]
        if isinstance(stmt, ast.AnnAssign):
            if not isinstance(stmt.target, ast.Name) or stmt.target.id != name:
                return [UNKNOWN]
            if stmt.value is None:
                return state
            return [(stmt.value, stmt)] if not _reads(stmt.value, name) else [UNKNOWN]
        if isinstance(stmt, ast.AugAssign):
            ok = isinstance(stmt.target, ast.Name) and stmt.target.id == name and isinstance(stmt.op, ast.Add)
            if not ok or not state or UNKNOWN in state or _reads(stmt.value, name):
                return [UNKNOWN]
            return _cap([(ast.BinOp(left=v[0], op=ast.Add(), right=stmt.value), stmt) for v in state])
        if name in self._direct.get(id(stmt), frozenset()):
            # Bound by a compound statement's header: a loop target, ``with ... as``, a walrus.
            return [UNKNOWN]
        if isinstance(stmt, ast.If):
            results = [self._block(stmt.body, name, state), self._block(stmt.orelse, name, state)]
            return _union_all(results)
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            # A value set in a loop reaches the code after it through ``continue``, ``break`` and
            # later iterations as much as through the end of the body: not one known value.
            return _union(state, [UNKNOWN])
        if isinstance(stmt, ast.With | ast.AsyncWith):
            return self._block(stmt.body, name, state)
        if isinstance(stmt, ast.Try | ast.TryStar):
            body = self._block(stmt.body, name, state)
            entry = _union(state, body or [])
            ends = [self._block(h.body, name, entry) for h in stmt.handlers]
            ends.append(self._block(stmt.orelse, name, body) if body is not None else None)
            after = _union_all(ends)
            if stmt.finalbody:
                return self._block(stmt.finalbody, name, after if after is not None else entry)
            return after
        if isinstance(stmt, ast.Match):
            ends = [self._block(case.body, name, state) for case in stmt.cases]
            ends.append(state)
            return _union_all(ends)
        if isinstance(stmt, ast.Delete):
            return []
        return [UNKNOWN]


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _reads_only_in_concat(node: ast.expr, name: str) -> bool:
    # ``msg = msg + "..."``: the old value is the left operand of a ``+`` chain, and read nowhere else.
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        if _reads(node.right, name):
            return False
        node = node.left
    return isinstance(node, ast.Name) and node.id == name


def _concat(state: State, value: ast.expr, name: str, stmt: ast.stmt) -> State:
    if not state or UNKNOWN in state:
        return [UNKNOWN]
    out: State = []
    for prior, _ in state:
        out.append((_replace_leftmost(value, prior), stmt))
    return _cap(out)


def _replace_leftmost(node: ast.expr, prior: ast.expr) -> ast.expr:
    if isinstance(node, ast.BinOp):
        return ast.BinOp(left=_replace_leftmost(node.left, prior), op=node.op, right=node.right)
    return prior


def _union(a: State, b: State) -> State:
    out = list(a)
    for v in b:
        if not any(v is w or (v is not UNKNOWN and w is not UNKNOWN and v[0] is w[0]) for w in out):
            out.append(v)
    return _cap(out)


def _union_all(states: list[State | None]) -> State | None:
    live = [s for s in states if s is not None]
    if not live:
        return None
    out: State = []
    for s in live:
        out = _union(out, s)
    return out


def _cap(state: State) -> State:
    return [UNKNOWN] if len(state) > _MAX_VALUES else state
