"""From a raw site to :class:`~extractor.analysis.facts.Site`: its class, message, HTTP status and guard.

What a ``raise`` raises is read the way a reader of the file would: ``raise X(...)`` and
``raise pkg.X(...)`` as written; ``raise err`` where ``err = X(...)`` earlier in the scope as ``X``;
``raise exc_cls(msg)`` where ``exc_cls = X`` as ``X``; ``raise _bad_request(msg)`` where
``_bad_request`` is a function (or ``self._error`` a method) of the same file that returns
``X(...)`` as ``X``, with the message that call builds from the arguments passed; and a class of
the same file whose ``__init__`` (or ``__str__``) fixes or formats the message resolves to what
``str(exc)`` prints, and to the HTTP status it carries.

A name a message is held in is followed through the statements that run before the site
(:class:`ScopeFlow`): one sure value is read as that value, a few values that branches decide
become a :class:`~extractor.analysis.messages.parts.Choice` (template ``{name}``, pattern matching each value).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from extractor.analysis.conditions import guard_of, terminates
from extractor.analysis.context import window_of
from extractor.analysis.facts import Message, Placeholder, Site
from extractor.analysis.messages.exception_str import message_from_args
from extractor.analysis.messages.expressions import MessageContext, expr_parts
from extractor.analysis.messages.parts import Choice
from extractor.analysis.messages.patterns import WILDCARD, make_message
from extractor.analysis.parse import ParsedFile
from extractor.analysis.sites import Frame, RawSite, ScopeNode, error_response_call, find_sites
from extractor.records.message_pattern import DIGIT

_STATUS_ATTR = re.compile(r"HTTP_(\d{3})(?:_|$)")
_HTTP_CLASSES = ("HTTPException", "StarletteHTTPException")
_MESSAGE_KWARGS = ("message", "msg", "detail", "reason", "description")
_CODE_KWARGS = ("error_code", "err_code", "code")
_STATUS_NAMES = ("status_code", "status", "http_status", "code")
_EXCEPTION_NAME = re.compile(r"(Error|Exception|Exit|Interrupt|Warning|Failure|Timeout)$")
_MAX_DEPTH = 4
_MAX_VALUES = 6

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class ModuleIndex:
    """Module-level facts used while resolving sites: functions, classes and constants."""

    functions: dict[str, FunctionNode] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)

    @classmethod
    def of(cls, module: ast.Module) -> ModuleIndex:
        index = cls()
        for stmt in module.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                index.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                index.classes[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        index.constants[target.id] = stmt.value
        # A module name bound more than once (in any block of the module, or by a function that
        # declares it ``global``) holds no one sure value.
        counts: dict[str, int] = {}
        for stmt in _own_statements(module.body):
            for name in _direct_binds(stmt):
                counts[name] = counts.get(name, 0) + 1
        for node in ast.walk(module) if _MAY_HAVE["global"].get() else ():
            if isinstance(node, ast.Global):
                for name in node.names:
                    counts[name] = counts.get(name, 0) + 2
        for name, count in counts.items():
            if count > 1:
                index.constants.pop(name, None)
        return index


# --------------------------------------------------------------------------- value flow

_UNKNOWN: Any = object()
"""A value the analysis cannot know (a parameter, a loop target, an unpacked tuple element)."""

Value = tuple[ast.expr, ast.stmt]
State = list[Any]  # of Value or _UNKNOWN; [] is "not bound yet"


def _own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a block, nested blocks included, nested function and class bodies not."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        stack.extend(reversed(list(_child_statements(stmt))))


def _child_statements(stmt: ast.stmt) -> Iterator[ast.stmt]:
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if isinstance(value, list):
            yield from value
    for handler in getattr(stmt, "handlers", None) or []:
        yield from handler.body
    for case in getattr(stmt, "cases", None) or []:
        yield from case.body


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _direct_binds(stmt: ast.stmt) -> set[str]:
    """Names ``stmt`` itself binds (not counting the statements nested in its blocks)."""
    names: set[str] = set()
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            names.update(_target_names(t))
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        names.update(_target_names(stmt.target))
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        for item in stmt.items:
            if item.optional_vars is not None:
                names.update(_target_names(item.optional_vars))
    elif isinstance(stmt, ast.Try | ast.TryStar):
        names.update(h.name for h in stmt.handlers if h.name)
    elif isinstance(stmt, ast.Import | ast.ImportFrom):
        for alias in stmt.names:
            names.add((alias.asname or alias.name).split(".")[0])
    elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        names.add(stmt.name)
    elif isinstance(stmt, ast.Delete):
        for t in stmt.targets:
            names.update(_target_names(t))
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            for node in ast.walk(case.pattern):
                if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                    names.add(node.name)
                elif isinstance(node, ast.MatchMapping) and node.rest:
                    names.add(node.rest)
    # A walrus binds in the enclosing scope, even inside a comprehension. Finding one means walking
    # every expression, so it is skipped in files whose text has no ":=" at all.
    for child in _expressions_of(stmt) if _MAY_HAVE["walrus"].get() else ():
        for node in ast.walk(child):
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def _expressions_of(stmt: ast.stmt) -> Iterator[ast.AST]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))


class ScopeFlow:
    """Follows what a name holds along the statements that run before a point of one scope."""

    def __init__(self, scope: ScopeNode, enclosing_locals: frozenset[str] = frozenset()) -> None:
        self.scope = scope
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
        self._augmented: dict[int, frozenset[str]] = {}
        self._frames: dict[int, list[Frame]] = {}
        self.enclosing_locals = enclosing_locals
        self.local_names: frozenset[str] = self._index(scope.body)
        for stmt in _own_statements(scope.body):
            if isinstance(stmt, ast.Global | ast.Nonlocal):
                self.declared.update(stmt.names)
        self._walk_frames(scope.body, [])

    def _index(self, block: list[ast.stmt]) -> frozenset[str]:
        names: set[str] = set()
        for stmt in block:
            direct = frozenset(_direct_binds(stmt))
            self._direct[id(stmt)] = direct
            own = set(direct)
            aug: set[str] = set()
            if isinstance(stmt, ast.AugAssign):
                aug.update(_target_names(stmt.target))
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for child in self._child_blocks(stmt):
                    own |= self._index(child)
                    for s in child:
                        aug |= self._augmented.get(id(s), frozenset())
            self._binds[id(stmt)] = frozenset(own)
            self._augmented[id(stmt)] = frozenset(aug)
            names |= own
        return frozenset(names)

    @staticmethod
    def _child_blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
        for name in ("body", "orelse", "finalbody"):
            value = getattr(stmt, name, None)
            if isinstance(value, list):
                yield value
        for handler in getattr(stmt, "handlers", None) or []:
            yield handler.body
        for case in getattr(stmt, "cases", None) or []:
            yield case.body

    def _walk_frames(self, block: list[ast.stmt], frames: list[Frame]) -> None:
        for index, stmt in enumerate(block):
            here = [*frames, Frame(block, index, stmt, "")]
            self._frames[id(stmt)] = here
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for branch, child in _branches(stmt):
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
        state: State = [_UNKNOWN] if name in self.params else []
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
            return [_UNKNOWN]
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            # A later statement of the loop body may have set it in an earlier iteration.
            return _union(state, [_UNKNOWN])
        if isinstance(stmt, ast.Try | ast.TryStar):
            if branch.startswith("handler:"):
                handler = stmt.handlers[int(branch.split(":")[1])]
                if handler.name == name:
                    return [_UNKNOWN]
                return _union(state, self._block(stmt.body, name, state) or [])
            if branch == "orelse":
                return self._block(stmt.body, name, state) or state
            if branch == "finalbody":
                return _union(state, [_UNKNOWN])
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
                return [_UNKNOWN]  # unpacked, or bound by a walrus inside the value
            if not plain or _reads(stmt.value, name):
                if plain and _reads_only_in_concat(stmt.value, name):
                    return _concat(state, stmt.value, name, stmt)
                return [_UNKNOWN]
            return [(stmt.value, stmt)]
        if isinstance(stmt, ast.AnnAssign):
            if not isinstance(stmt.target, ast.Name) or stmt.target.id != name:
                return [_UNKNOWN]
            if stmt.value is None:
                return state
            return [(stmt.value, stmt)] if not _reads(stmt.value, name) else [_UNKNOWN]
        if isinstance(stmt, ast.AugAssign):
            ok = isinstance(stmt.target, ast.Name) and stmt.target.id == name and isinstance(stmt.op, ast.Add)
            if not ok or not state or _UNKNOWN in state or _reads(stmt.value, name):
                return [_UNKNOWN]
            return _cap([(ast.BinOp(left=v[0], op=ast.Add(), right=stmt.value), stmt) for v in state])
        if name in self._direct.get(id(stmt), frozenset()):
            # Bound by a compound statement's header: a loop target, ``with ... as``, a walrus.
            return [_UNKNOWN]
        if isinstance(stmt, ast.If):
            results = [self._block(stmt.body, name, state), self._block(stmt.orelse, name, state)]
            return _union_all(results)
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            # A value set in a loop reaches the code after it through ``continue``, ``break`` and
            # later iterations as much as through the end of the body: not one known value.
            return _union(state, [_UNKNOWN])
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
        return [_UNKNOWN]


def _branches(stmt: ast.stmt) -> Iterator[tuple[str, list[ast.stmt]]]:
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
    if not state or _UNKNOWN in state:
        return [_UNKNOWN]
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
        if not any(v is w or (v is not _UNKNOWN and w is not _UNKNOWN and v[0] is w[0]) for w in out):
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
    return [_UNKNOWN] if len(state) > _MAX_VALUES else state


# --------------------------------------------------------------------------- helpers and classes


def _own_returns(func: FunctionNode) -> list[ast.Return]:
    return [s for s in _own_statements(func.body) if isinstance(s, ast.Return) and s.value is not None]


def _is_static(func: FunctionNode) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


def _super_init(stmt: ast.stmt) -> ast.Call | None:
    """``super().__init__(...)`` or ``Base.__init__(self, ...)`` as a call with the message args."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "__init__":
        return None
    if (
        isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    ):
        return call
    if isinstance(func.value, ast.Name | ast.Attribute) and call.args:
        return ast.Call(func=call.func, args=call.args[1:], keywords=call.keywords)
    return None


@dataclass(frozen=True)
class Raised:
    """What a raise statement raises: class as written, message, HTTP status, error code."""

    error_class: str
    message: Message | None = None
    status: int | None = None
    code: str | None = None


# sglang's OpenAI-compatible serving base declares these defaults for create_error_response
# (err_type="BadRequestError", status_code=400); a call that omits them gets them.
_RESPONSE_DEFAULT_TYPE = "BadRequestError"
_RESPONSE_DEFAULT_STATUS = 400


def _error_response(call: ast.Call, ctx: MessageContext) -> Raised:
    """An error response: its ``type`` as the class, ``message`` as the message, ``status_code``."""
    named = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
    args = [a for a in call.args if not isinstance(a, ast.Starred)]

    def arg(position: int, name: str) -> ast.expr | None:
        if name in named:
            return named[name]
        return args[position] if position < len(args) else None

    message_node = arg(0, "message")
    type_node = arg(1, "err_type")
    status_node = arg(2, "status_code")
    error_class = _RESPONSE_DEFAULT_TYPE
    if isinstance(type_node, ast.Constant) and isinstance(type_node.value, str) and type_node.value:
        error_class = type_node.value
    elif type_node is not None:
        error_class = ctx.src(type_node)
    status = _status_value(status_node, ctx) if status_node is not None else _RESPONSE_DEFAULT_STATUS
    message = make_message(expr_parts(message_node, ctx)) if message_node is not None else None
    return Raised(error_class, message, status)


class Resolver:
    """Resolves each raw site of one parsed file into a :class:`Site`."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.index = ModuleIndex.of(parsed.tree)
        self._flows: dict[int, ScopeFlow] = {}
        self._enclosing: dict[int, frozenset[str]] = {}
        self._index_scopes(parsed.tree.body, frozenset())
        self._contexts: dict[tuple[int, int], MessageContext] = {}
        self._module_ctx = MessageContext(parsed, self._module_lookup)

    # -- scopes and names ------------------------------------------------------------------

    def _index_scopes(self, body: list[ast.stmt], outer: frozenset[str]) -> None:
        # Names local to enclosing functions: a closure reading one must not see a module constant.
        for stmt in _own_statements(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._enclosing[id(stmt)] = outer
                inner = outer | {n for s in _own_statements(stmt.body) for n in _direct_binds(s)}
                a = stmt.args
                inner |= {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
                self._index_scopes(stmt.body, inner)
            elif isinstance(stmt, ast.ClassDef):
                self._index_scopes(stmt.body, outer)

    def flow(self, scope: ScopeNode) -> ScopeFlow:
        found = self._flows.get(id(scope))
        if found is None:
            found = ScopeFlow(scope, self._enclosing.get(id(scope), frozenset()))
            self._flows[id(scope)] = found
        return found

    def _module_lookup(self, name: str) -> tuple[ast.expr, MessageContext] | None:
        value = self.index.constants.get(name)
        return (value, self._module_ctx) if value is not None else None

    def context_at(self, scope: ScopeNode, frames: list[Frame] | None) -> MessageContext:
        """A context whose names hold what they hold when the last frame's statement runs."""
        if frames is None:
            return self._module_ctx
        key = (id(scope), id(frames[-1].stmt))
        found = self._contexts.get(key)
        if found is not None:
            return found
        flow = self.flow(scope)
        memo: dict[str, State | None] = {}

        def state(name: str) -> State | None:
            if name not in memo:
                memo[name] = flow.values(name, frames)
            return memo[name]

        def value_ctx(value: Value) -> MessageContext:
            return self.context_at(scope, flow.frames_to(value[1]))

        def lookup(name: str) -> tuple[ast.expr, MessageContext] | None:
            s = state(name)
            if s is None:
                if isinstance(scope, ast.Module) or name in flow.enclosing_locals:
                    return None
                return self._module_lookup(name)
            if len(s) == 1 and s[0] is not _UNKNOWN:
                return s[0][0], value_ctx(s[0])
            return None

        def choices(name: str) -> list[tuple[ast.expr, MessageContext]] | None:
            s = state(name)
            if not s or len(s) < 2 or _UNKNOWN in s:
                return None
            return [(v[0], value_ctx(v)) for v in s]

        ctx = MessageContext(self.parsed, lookup, choices)
        self._contexts[key] = ctx
        return ctx

    # -- sites ---------------------------------------------------------------------------

    def resolve(self, raw: RawSite) -> Site:
        ctx = self.context_at(raw.scope, raw.frames)
        node = raw.node
        response = error_response_call(node) if isinstance(node, ast.Return | ast.Expr) else None
        if isinstance(node, ast.Assert):
            assert node.msg is not None
            raised = Raised("AssertionError", make_message(expr_parts(node.msg, ctx)))
        elif response is not None:
            raised = _error_response(response, ctx)
        else:
            assert isinstance(node, ast.Raise) and node.exc is not None
            raised = self._raised(node.exc, raw.class_node, ctx)
        guard = guard_of(raw)
        start, end, comments = window_of(self.parsed, raw, guard.bindings)
        return Site(
            path=self.parsed.path,
            kind="assert"
            if isinstance(node, ast.Assert)
            else "response"
            if response is not None
            else "raise",
            line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            error_class=raised.error_class,
            qualname=raw.qualname,
            message=raised.message,
            guard=guard,
            http_status=raised.status,
            statement=self.parsed.segment(node),
            comments=tuple(comments),
            window=(start, end),
            source_lines=tuple(self.parsed.line(n) for n in range(start, end + 1)),
            error_code=raised.code,
            is_async=isinstance(raw.scope, ast.AsyncFunctionDef),
            in_class=raw.class_name,
        )

    def _raised(self, exc: ast.expr, class_node: ast.ClassDef | None, ctx: MessageContext) -> Raised:
        if isinstance(exc, ast.Name):
            resolved = ctx.resolve(exc.id)
            if resolved is not None:
                value, vctx = resolved
                if isinstance(value, ast.Call) and self._class_like(value.func, vctx, class_node):
                    return self._call(value, vctx, class_node, 0)
            return Raised(exc.id)
        if isinstance(exc, ast.Call):
            return self._call(exc, ctx, class_node, 0)
        return Raised(ctx.src(exc))

    def _class_like(
        self, func: ast.expr, ctx: MessageContext, class_node: ast.ClassDef | None, strict: bool = True
    ) -> bool:
        """Whether calling ``func`` builds an exception (``strict``: its name says so)."""
        if self._helper(func, class_node) is not None:
            return True
        text = self._class_text(func, ctx)
        if text in self.index.classes:
            return True
        last = text.rsplit(".", 1)[-1]
        if not last[:1].isupper():
            return False
        return not strict or bool(_EXCEPTION_NAME.search(last) or last in _HTTP_CLASSES)

    def _class_text(self, func: ast.expr, ctx: MessageContext) -> str:
        # ``exc_cls = ValueError`` earlier in the scope: ``exc_cls(...)`` raises a ValueError.
        if isinstance(func, ast.Name) and func.id not in self.index.classes:
            resolved = ctx.resolve(func.id)
            if resolved is not None and isinstance(resolved[0], ast.Name | ast.Attribute):
                return resolved[1].src(resolved[0])
        return ctx.src(func)

    def _call(
        self, call: ast.Call, ctx: MessageContext, class_node: ast.ClassDef | None, depth: int
    ) -> Raised:
        helper = self._helper(call.func, class_node)
        if helper is not None and depth < _MAX_DEPTH:
            built = self._from_helper(helper, call, ctx, class_node, depth)
            if built is not None:
                return built
        cls_name = self._class_text(call.func, ctx)
        custom = self.index.classes.get(cls_name)
        if custom is not None and depth < _MAX_DEPTH:
            made = self._from_class(custom, cls_name, call, ctx, depth)
            if made is not None:
                return made
        return self._builtin(cls_name, call, ctx)

    def _builtin(self, cls_name: str, call: ast.Call, ctx: MessageContext) -> Raised:
        status = _status_of(call, ctx)
        base = cls_name.rsplit(".", 1)[-1]
        if base in _HTTP_CLASSES:
            return Raised(cls_name, _http_message(call, ctx, status), status, _code_of(call))
        args: list[ast.expr] = list(call.args)
        if not args:
            for kw in call.keywords:
                if kw.arg in _MESSAGE_KWARGS:
                    args = [kw.value]
                    break
        return Raised(cls_name, message_from_args(cls_name, args, ctx), status, _code_of(call))

    def _helper(self, func: ast.expr, class_node: ast.ClassDef | None) -> FunctionNode | None:
        if isinstance(func, ast.Name):
            return self.index.functions.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner: ast.ClassDef | None = None
            if func.value.id in ("self", "cls"):
                owner = class_node
            elif func.value.id in self.index.classes:
                owner = self.index.classes[func.value.id]
            if owner is not None:
                # The method may come from a base class defined in the same module.
                for node in self._class_chain(owner)[0]:
                    for stmt in node.body:
                        if (
                            isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                            and stmt.name == func.attr
                        ):
                            return stmt
        return None

    def _bind(
        self, func: FunctionNode, call: ast.Call, ctx: MessageContext, skip_first: bool
    ) -> dict[str, tuple[ast.expr, MessageContext]] | None:
        """The callee's parameters bound to the call's arguments (defaults where none is passed)."""
        a = func.args
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        if skip_first and positional:
            positional = positional[1:]
        kwonly = [p.arg for p in a.kwonlyargs]
        if any(isinstance(x, ast.Starred) for x in call.args) or any(kw.arg is None for kw in call.keywords):
            return None
        if len(call.args) > len(positional) and a.vararg is None:
            return None
        bound: dict[str, tuple[ast.expr, MessageContext]] = {}
        for name, arg in zip(positional, call.args, strict=False):
            bound[name] = (arg, ctx)
        for kw in call.keywords:
            assert kw.arg is not None
            if kw.arg in positional or kw.arg in kwonly:
                bound[kw.arg] = (kw.value, ctx)
            elif a.kwarg is None:
                return None
        defaults = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=False))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
        for name, default in defaults.items():
            bound.setdefault(name, (default, self._module_ctx))
        # A parameter the callee reassigns no longer holds what the caller passed.
        flow = self.flow(func)
        return {k: v for k, v in bound.items() if k not in flow.local_names}

    def _callee_context(
        self, func: FunctionNode, stmt: ast.stmt, bound: dict[str, tuple[ast.expr, MessageContext]]
    ) -> MessageContext:
        base = self.context_at(func, self.flow(func).frames_to(stmt))
        return MessageContext(self.parsed, base.lookup, base.choices, dict(bound))

    def _from_helper(
        self,
        helper: FunctionNode,
        call: ast.Call,
        ctx: MessageContext,
        class_node: ast.ClassDef | None,
        depth: int,
    ) -> Raised | None:
        skip = isinstance(call.func, ast.Attribute) and not _is_static(helper)
        bound = self._bind(helper, call, ctx, skip)
        returns = _own_returns(helper)
        if bound is None or not returns:
            return None
        results: list[Raised] = []
        for ret in returns:
            assert ret.value is not None
            rctx = self._callee_context(helper, ret, bound)
            value: ast.expr = ret.value
            if isinstance(value, ast.Name):
                resolved = rctx.resolve(value.id)
                if resolved is None:
                    return None
                value, rctx = resolved
            # Whatever a raised helper returns is an exception: any class-shaped name will do.
            if not isinstance(value, ast.Call) or not self._class_like(
                value.func, rctx, class_node, strict=False
            ):
                return None
            results.append(self._call(value, rctx, class_node, depth + 1))
        if len({r.error_class for r in results}) != 1:
            return None
        first = results[0]
        messages = [r.message for r in results]
        message = first.message
        if len({m.template if m else None for m in messages}) > 1:
            options = tuple(m.parts for m in messages if m is not None)
            message = make_message([Choice(source=ctx.src(call), options=options)])
        statuses = {r.status for r in results}
        status = first.status if len(statuses) == 1 else None
        return Raised(first.error_class, message, status, first.code or _code_of(call))

    def _class_chain(self, cls: ast.ClassDef) -> tuple[list[ast.ClassDef], str]:
        """The class and its same-module bases (first base first), and the first outside base."""
        chain = [cls]
        outside = "Exception"
        node = cls
        while node.bases:
            base = ast.unparse(node.bases[0])
            nxt = self.index.classes.get(base)
            if nxt is None or nxt in chain:
                outside = base
                break
            chain.append(nxt)
            node = nxt
        return chain, outside

    def _from_class(
        self, cls: ast.ClassDef, cls_name: str, call: ast.Call, ctx: MessageContext, depth: int
    ) -> Raised | None:
        """What ``str(cls(...))`` prints and the HTTP status it carries, read from the class."""
        chain, outside = self._class_chain(cls)
        init: FunctionNode | None = None
        owner = cls
        for node in chain:
            init = next(
                (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
            if init is not None:
                owner = node
                break
        class_status = _class_status(chain, self._module_ctx)
        str_method = next(
            (
                s
                for node in chain
                for s in node.body
                if isinstance(s, ast.FunctionDef) and s.name == "__str__"
            ),
            None,
        )
        if init is None:
            if str_method is not None:
                return Raised(
                    cls_name, self._str_message(str_method, {}, call, ctx), class_status, _code_of(call)
                )
            plain = self._builtin(outside, call, ctx)
            return Raised(cls_name, plain.message, plain.status or class_status, plain.code)
        bound = self._bind(init, call, ctx, skip_first=True)
        if bound is None:
            return None
        super_call: ast.Call | None = None
        super_stmt: ast.stmt | None = None
        for stmt in init.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    ictx = self._callee_context(init, stmt, bound)
                    bound[f"self.{target.attr}"] = (stmt.value, ictx)
                    continue
            found = _super_init(stmt)
            if found is not None:
                super_call, super_stmt = found, stmt
                break
        status = class_status
        for name in _STATUS_NAMES:
            for key in (name, f"self.{name}"):
                if key in bound and status is None:
                    value, vctx = bound[key]
                    status = _status_value(value, vctx)
        if str_method is not None:
            attrs = {k: v for k, v in bound.items() if k.startswith("self.")}
            return Raised(cls_name, self._str_message(str_method, attrs, call, ctx), status, _code_of(call))
        if super_call is None or super_stmt is None:
            # No super().__init__ call: BaseException keeps the constructor's own arguments.
            plain = self._builtin(outside, call, ctx)
            return Raised(cls_name, plain.message, status or plain.status, plain.code)
        a = init.args
        if (
            a.vararg is not None
            and len(super_call.args) == 1
            and isinstance(super_call.args[0], ast.Starred)
            and isinstance(super_call.args[0].value, ast.Name)
            and super_call.args[0].value.id == a.vararg.arg
        ):
            # ``super().__init__(*args)``: the constructor's own positional arguments.
            super_call = ast.Call(func=super_call.func, args=list(call.args), keywords=[])
            inner = self._builtin(outside, super_call, ctx)
            return Raised(cls_name, inner.message, inner.status or status, _code_of(call))
        sctx = self._callee_context(init, super_stmt, bound)
        index = chain.index(owner)
        if index + 1 < len(chain):
            parent = chain[index + 1]
            made = self._from_class(parent, cls_name, super_call, sctx, depth + 1)
            if made is None:
                return None
            return Raised(cls_name, made.message, made.status or status, made.code or _code_of(call))
        inner = self._builtin(outside, super_call, sctx)
        return Raised(cls_name, inner.message, inner.status or status, _code_of(call) or inner.code)

    def _str_message(
        self,
        method: FunctionNode,
        attrs: dict[str, tuple[ast.expr, MessageContext]],
        call: ast.Call,
        ctx: MessageContext,
    ) -> Message | None:
        """What a class's ``__str__`` returns, with the attributes its ``__init__`` stored."""
        returns = _own_returns(method)
        if len(returns) != 1 or returns[0].value is None:
            return self._dynamic(call, ctx)
        rctx = self._callee_context(method, returns[0], attrs)
        return make_message(expr_parts(returns[0].value, rctx))

    def _dynamic(self, call: ast.Call, ctx: MessageContext) -> Message | None:
        """A ``__str__`` we cannot read: the template says what the call passes, any text matches."""
        passed = self._builtin("Exception", call, ctx).message
        if passed is None:
            return make_message([Placeholder(f"str({ctx.src(call)})")])
        return Message(template=passed.template, pattern=WILDCARD, parts=passed.parts)


def _class_status(chain: list[ast.ClassDef], ctx: MessageContext) -> int | None:
    for node in chain:
        for stmt in node.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id in _STATUS_NAMES for t in targets):
                    value = _status_value(stmt.value, ctx)
                    if value is not None:
                        return value
    return None


def _status_value(node: ast.expr, ctx: MessageContext, depth: int = 0) -> int | None:
    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value if 100 <= node.value <= 599 else None
    if isinstance(node, ast.Attribute):
        if node.attr in ("value",) and isinstance(node.value, ast.Attribute):
            return _status_value(node.value, ctx, depth + 1)
        m = _STATUS_ATTR.search(node.attr)
        if m:
            return int(m.group(1))
        base = ast.unparse(node.value).rsplit(".", 1)[-1]
        if base == "HTTPStatus" and node.attr in HTTPStatus.__members__:
            return int(HTTPStatus[node.attr].value)
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("HTTPStatus", "int")) and node.args:
        return _status_value(node.args[0], ctx, depth + 1)
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is not None and resolved[0] is not node:
            return _status_value(resolved[0], resolved[1], depth + 1)
    return None


def _status_of(call: ast.Call, ctx: MessageContext) -> int | None:
    for kw in call.keywords:
        if kw.arg in ("status_code", "status", "http_status", "code"):
            value = _status_value(kw.value, ctx)
            if value is not None:
                return value
    base = ast.unparse(call.func).rsplit(".", 1)[-1]
    if base in _HTTP_CLASSES and call.args:
        return _status_value(call.args[0], ctx)
    for arg in call.args:
        if isinstance(arg, ast.Attribute) and ast.unparse(arg).split(".")[0] in ("HTTPStatus", "status"):
            return _status_value(arg, ctx)
    return None


def _code_of(call: ast.Call) -> str | None:
    for kw in call.keywords:
        if (
            kw.arg in _CODE_KWARGS
            and isinstance(kw.value, ast.Constant)
            and isinstance(kw.value.value, str | int)
            and not isinstance(kw.value.value, bool)
        ):
            if kw.arg == "code" and isinstance(kw.value.value, int) and 100 <= kw.value.value <= 599:
                continue  # an HTTP status, not an error code
            return str(kw.value.value)
    return None


def _http_message(call: ast.Call, ctx: MessageContext, status: int | None) -> Message | None:
    detail: ast.expr | None = None
    for kw in call.keywords:
        if kw.arg == "detail":
            detail = kw.value
    if detail is None and len(call.args) >= 2:
        detail = call.args[1]
    if detail is None:
        return None
    msg = make_message(expr_parts(detail, ctx))
    # str() of Starlette's HTTPException is "<status>: <detail>"; a response body carries the detail alone.
    prefix = f"(?:{status}: |)" if status is not None else f"(?:{DIGIT * 3}: |)"
    return Message(template=msg.template, pattern=prefix + msg.pattern, parts=msg.parts)


def custom_class_message(cls: ast.ClassDef, call: ast.Call, ctx: MessageContext) -> Message | None:
    """What ``str(cls(...))`` prints when ``cls`` is a class of the file ``ctx`` reads."""
    resolver = Resolver(ctx.parsed)
    made = resolver._from_class(cls, cls.name, call, ctx, 0)
    return made.message if made is not None else None


# Whether the file being analysed may hold a construct that only a walk of every expression finds
# (its text is checked once; a caller that does not go through analyse() keeps the full walks).
_WALRUS_TEXT = re.compile(r":=")
_GLOBAL_TEXT = re.compile(r"\bglobal\b")  # a continuation line may follow the keyword
_MAY_HAVE: dict[str, ContextVar[bool]] = {
    "walrus": ContextVar("may_have_walrus", default=True),
    "global": ContextVar("may_have_global", default=True),
}


def analyse(parsed: ParsedFile) -> list[Site]:
    """Every site of a parsed file, resolved, in source order."""
    raws = find_sites(parsed.tree)
    if not raws:
        return []  # no index of the file's scopes is needed
    tokens = [
        (var, var.set(any(text.search(line) for line in parsed.lines)))
        for var, text in ((_MAY_HAVE["walrus"], _WALRUS_TEXT), (_MAY_HAVE["global"], _GLOBAL_TEXT))
    ]
    try:
        resolver = Resolver(parsed)
        return [resolver.resolve(raw) for raw in raws]
    finally:
        for var, token in tokens:
            var.reset(token)


def site_facts(site: Site) -> dict[str, Any]:
    """The analysis-level facts of a site as plain data (what the golden files hold).

    Prose fields are left out on purpose: they belong to enrichment and change for other reasons.
    """
    message = site.message
    return {
        "line": site.line,
        "kind": site.kind,
        "errorClass": site.error_class,
        "qualname": site.qualname,
        "template": message.template if message else None,
        "pattern": message.pattern if message else None,
        "atoms": [a.text for a in site.guard.atoms],
        "validationCode": site.guard.validation_code(),
        "httpStatus": site.http_status,
    }
