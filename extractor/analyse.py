"""From a raw site to :class:`~extractor.facts.Site`: its class, message, HTTP status and guard.

What a ``raise`` raises is read the way a reader of the file would: ``raise X(...)`` and
``raise pkg.X(...)`` as written; ``raise err`` where ``err = X(...)`` earlier in the scope as ``X``;
``raise _bad_request(msg)`` where ``_bad_request`` is a function (or ``self._error`` a method) of the
same file that returns ``X(...)`` as ``X``, with the message the call passes; and a class of the same
file whose ``__init__`` fixes or formats the message resolves to what ``str(exc)`` prints.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from http import HTTPStatus

from extractor.conditions import assignments_before, guard_of
from extractor.context import window_of
from extractor.facts import Message, Placeholder, Site
from extractor.messages import (
    MessageContext,
    expr_parts,
    make_message,
    message_from_args,
    pattern_of,
    template_of,
)
from extractor.parse import ParsedFile
from extractor.sites import RawSite, ScopeNode, find_sites

_STATUS_ATTR = re.compile(r"HTTP_(\d{3})(?:_|$)")
_HTTP_CLASSES = ("HTTPException", "StarletteHTTPException")
_MESSAGE_KWARGS = ("message", "msg", "detail", "reason", "description")
_CODE_KWARGS = ("error_code", "err_code", "code")


@dataclass
class ModuleIndex:
    """Module-level facts used while resolving sites: functions, classes and constants."""

    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)

    @classmethod
    def of(cls, module: ast.Module) -> ModuleIndex:
        index = cls()
        reassigned: set[str] = set()
        for stmt in module.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                index.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                index.classes[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        if target.id in index.constants:
                            reassigned.add(target.id)
                        index.constants[target.id] = stmt.value
        for name in reassigned:
            # A module name assigned twice holds no one sure value.
            index.constants.pop(name, None)
        return index


def _returned_exception(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    """The ``X(...)`` a helper returns, when every return of it builds the same class."""
    found: ast.Call | None = None
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name | ast.Attribute):
                return None
            if found is not None and ast.unparse(found.func) != ast.unparse(value.func):
                return None
            found = value
    if found is None:
        return None
    name = ast.unparse(found.func).rsplit(".", 1)[-1]
    # Only names shaped like exception classes: a helper returning ``dict(...)`` is no exception.
    if not name[:1].isupper() or not re.search(r"(Error|Exception|Exit|Interrupt|Warning)$", name):
        return None
    return found


class Resolver:
    """Resolves each raw site of one parsed file into a :class:`Site`."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.index = ModuleIndex.of(parsed.tree)
        self._assign_cache: dict[tuple[int, int], dict[str, list[ast.stmt]]] = {}

    # -- names ---------------------------------------------------------------------------

    def lookup_for(self, site: RawSite) -> MessageContext:
        scope = site.scope
        line = site.node.lineno

        def lookup(name: str) -> ast.expr | None:
            stmts = self._assignments(scope, line).get(name)
            if stmts:
                return _sure_value(stmts, site)
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and _is_param(scope, name):
                return None
            return self.index.constants.get(name)

        return MessageContext(self.parsed, lookup)

    def _assignments(self, scope: ScopeNode, line: int) -> dict[str, list[ast.stmt]]:
        key = (id(scope), line)
        found = self._assign_cache.get(key)
        if found is None:
            found = assignments_before(scope, line)
            self._assign_cache[key] = found
        return found

    # -- sites ---------------------------------------------------------------------------

    def resolve(self, raw: RawSite) -> Site:
        ctx = self.lookup_for(raw)
        node = raw.node
        status: int | None = None
        code: str | None = None
        if isinstance(node, ast.Assert):
            assert node.msg is not None
            error_class = "AssertionError"
            message: Message | None = make_message(expr_parts(node.msg, ctx))
        else:
            assert node.exc is not None
            error_class, message, status, code = self._raised(node.exc, raw, ctx)
        guard = guard_of(raw)
        start, end, comments = window_of(self.parsed, raw, guard.bindings)
        return Site(
            path=self.parsed.path,
            kind="assert" if isinstance(node, ast.Assert) else "raise",
            line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            error_class=error_class,
            qualname=raw.qualname,
            message=message,
            guard=guard,
            http_status=status,
            statement=self.parsed.segment(node),
            comments=tuple(comments),
            window=(start, end),
            source_lines=tuple(self.parsed.line(n) for n in range(start, end + 1)),
            error_code=code,
            is_async=isinstance(raw.scope, ast.AsyncFunctionDef),
            in_class=raw.class_name,
        )

    def _raised(
        self, exc: ast.expr, raw: RawSite, ctx: MessageContext
    ) -> tuple[str, Message | None, int | None, str | None]:
        if isinstance(exc, ast.Name):
            value = ctx.lookup(exc.id)
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name | ast.Attribute):
                return self._raised(value, raw, ctx)
            return exc.id, None, None, None
        if not isinstance(exc, ast.Call):
            return ctx.src(exc), None, None, None
        func_text = ctx.src(exc.func)
        helper = self._helper(exc.func, raw)
        if helper is not None:
            built = _returned_exception(helper)
            if built is not None:
                cls_name = ast.unparse(built.func)
                message = message_from_args(cls_name, exc.args, ctx) if exc.args else None
                status = _status_of(built, ctx) or _status_of(exc, ctx)
                return cls_name, message, status, _code_of(exc, ctx)
        cls_name = func_text
        status = _status_of(exc, ctx)
        base = cls_name.rsplit(".", 1)[-1]
        if base in _HTTP_CLASSES:
            return cls_name, _http_message(exc, ctx, status), status, _code_of(exc, ctx)
        custom = self.index.classes.get(cls_name)
        if custom is not None:
            resolved = custom_class_message(custom, exc, ctx)
            if resolved is not None:
                return cls_name, resolved, status, _code_of(exc, ctx)
        args = list(exc.args)
        if not args:
            for kw in exc.keywords:
                if kw.arg in _MESSAGE_KWARGS:
                    args = [kw.value]
                    break
        return cls_name, message_from_args(cls_name, args, ctx), status, _code_of(exc, ctx)

    def _helper(self, func: ast.expr, raw: RawSite) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if isinstance(func, ast.Name):
            return self.index.functions.get(func.id)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and raw.class_node is not None
        ):
            for stmt in raw.class_node.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == func.attr:
                    return stmt
        return None


def _is_param(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    a = func.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        names.append(a.vararg.arg)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return name in names


def _sure_value(stmts: list[ast.stmt], site: RawSite) -> ast.expr | None:
    """The value a name surely holds at the site, following ``+=``; ``None`` when a branch decides it."""
    # Statements that run before the site on every path: those directly in the blocks of its path.
    on_path = {id(f.block[i]) for f in site.frames for i in range(f.index)}
    value: ast.expr | None = None
    for stmt in stmts:
        if id(stmt) not in on_path:
            value = None
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            plain = len(targets) == 1 and isinstance(targets[0], ast.Name)
            value = stmt.value if plain else None
        elif isinstance(stmt, ast.AugAssign):
            ok = value is not None and isinstance(stmt.op, ast.Add)
            value = ast.BinOp(left=value, op=ast.Add(), right=stmt.value) if ok else None
    return value


def _status_value(node: ast.expr, ctx: MessageContext) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value if 100 <= node.value <= 599 else None
    if isinstance(node, ast.Attribute):
        if node.attr in ("value",) and isinstance(node.value, ast.Attribute):
            return _status_value(node.value, ctx)
        m = _STATUS_ATTR.search(node.attr)
        if m:
            return int(m.group(1))
        base = ctx.src(node.value).rsplit(".", 1)[-1]
        if base == "HTTPStatus" and node.attr in HTTPStatus.__members__:
            return int(HTTPStatus[node.attr].value)
    if isinstance(node, ast.Call) and ctx.src(node.func).endswith("HTTPStatus") and node.args:
        return _status_value(node.args[0], ctx)
    if isinstance(node, ast.Name):
        value = ctx.lookup(node.id)
        if value is not None and value is not node:
            return _status_value(value, ctx)
    return None


def _status_of(call: ast.Call, ctx: MessageContext) -> int | None:
    for kw in call.keywords:
        if kw.arg in ("status_code", "status", "http_status", "code"):
            value = _status_value(kw.value, ctx)
            if value is not None:
                return value
    base = ctx.src(call.func).rsplit(".", 1)[-1]
    if base in _HTTP_CLASSES and call.args:
        return _status_value(call.args[0], ctx)
    for arg in call.args:
        if isinstance(arg, ast.Attribute) and ctx.src(arg).split(".")[0] in ("HTTPStatus", "status"):
            return _status_value(arg, ctx)
    return None


def _code_of(call: ast.Call, ctx: MessageContext) -> str | None:
    for kw in call.keywords:
        if kw.arg in _CODE_KWARGS and isinstance(kw.value, ast.Constant):
            if isinstance(kw.value.value, str | int) and not isinstance(kw.value.value, bool):
                if kw.arg == "code" and isinstance(kw.value.value, int) and 100 <= kw.value.value <= 599:
                    continue
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
    prefix = f"(?:{status}: )?" if status is not None else "(?:\\d{3}: )?"
    return Message(template=msg.template, pattern=prefix + msg.pattern, parts=msg.parts)


def custom_class_message(cls: ast.ClassDef, call: ast.Call, ctx: MessageContext) -> Message | None:
    """What ``str(cls(...))`` prints when the class's ``__init__`` builds the message itself."""
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"),
        None,
    )
    if init is None:
        return None
    passed: ast.expr | None = None
    for node in ast.walk(init):
        if not isinstance(node, ast.Call) or not node.args and not node.keywords:
            continue
        func = node.func
        is_super = (
            isinstance(func, ast.Attribute)
            and func.attr == "__init__"
            and (
                isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super"
                or isinstance(func.value, ast.Name)
            )
        )
        if is_super:
            args = node.args
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and args:
                args = args[1:]  # Base.__init__(self, msg)
            if args:
                passed = args[0]
            break
    if passed is None:
        return None
    params = [p.arg for p in init.args.args[1:]]
    defaults = dict(
        zip(params[len(params) - len(init.args.defaults) :], init.args.defaults, strict=True)
    )
    bound: dict[str, str] = {}
    for i, arg in enumerate(call.args):
        if i < len(params) and not isinstance(arg, ast.Starred):
            bound[params[i]] = ctx.src(arg)
    for kw in call.keywords:
        if kw.arg is not None:
            bound[kw.arg] = ctx.src(kw.value)
    inner_ctx = MessageContext(ctx.parsed, lambda name: None)
    parts = expr_parts(passed, inner_ctx)
    out: list[str | Placeholder] = []
    for part in parts:
        if isinstance(part, Placeholder) and part.source in params:
            if part.source in bound:
                out.append(Placeholder(bound[part.source]))
                continue
            default = defaults.get(part.source)
            if isinstance(default, ast.Constant) and isinstance(default.value, str):
                out.append(default.value)
                continue
        elif isinstance(part, Placeholder):
            # An expression over the parameters: substitute argument text by name.
            text = part.source
            for name, value in bound.items():
                text = re.sub(rf"\b{re.escape(name)}\b", lambda _m, v=value: v, text)
            out.append(Placeholder(text, part.prefix))
            continue
        out.append(part)
    return Message(template=template_of(out), pattern=pattern_of(out), parts=tuple(out))


def analyse(parsed: ParsedFile) -> list[Site]:
    """Every site of a parsed file, resolved, in source order."""
    resolver = Resolver(parsed)
    return [resolver.resolve(raw) for raw in find_sites(parsed.tree)]
