"""Exception classes of the target file: what ``str(cls(...))`` prints and the HTTP status they carry.

A class whose ``__init__`` stores attributes and calls ``super().__init__(...)`` (or
``Base.__init__(self, ...)``) prints what that call passes; one with a ``__str__`` prints what it
returns, with the attributes ``__init__`` stored; one with neither prints what the constructor was
given, as its first base outside the file does. A class attribute such as ``status_code = 404``
is the status every instance carries.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from extractor.analysis.facts import Message, Placeholder, Raised
from extractor.analysis.http_status import STATUS_NAMES, code_of, status_value
from extractor.analysis.messages.expressions import MessageContext, expr_parts
from extractor.analysis.messages.patterns import WILDCARD, make_message
from extractor.analysis.walk import FunctionNode, own_returns

if TYPE_CHECKING:
    from extractor.analysis.resolver import Resolver


def class_chain(classes: dict[str, ast.ClassDef], cls: ast.ClassDef) -> tuple[list[ast.ClassDef], str]:
    """The class and its same-module bases (first base first), and the first outside base."""
    chain = [cls]
    outside = "Exception"
    node = cls
    while node.bases:
        base = ast.unparse(node.bases[0])
        nxt = classes.get(base)
        if nxt is None or nxt in chain:
            outside = base
            break
        chain.append(nxt)
        node = nxt
    return chain, outside


def from_class(
    resolver: Resolver, cls: ast.ClassDef, cls_name: str, call: ast.Call, ctx: MessageContext, depth: int
) -> Raised | None:
    """What ``str(cls(...))`` prints and the HTTP status it carries, read from the class."""
    chain, outside = class_chain(resolver.index.classes, cls)
    init: FunctionNode | None = None
    owner = cls
    for node in chain:
        init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is not None:
            owner = node
            break
    class_status = _class_status(chain, resolver.module_ctx)
    str_method = next(
        (s for node in chain for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__str__"),
        None,
    )
    if init is None:
        if str_method is not None:
            return Raised(
                cls_name, str_message(resolver, str_method, {}, call, ctx), class_status, code_of(call)
            )
        plain = resolver.builtin(outside, call, ctx)
        return Raised(cls_name, plain.message, plain.status or class_status, plain.code)
    bound = resolver.bind(init, call, ctx, skip_first=True)
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
                ictx = resolver.callee_context(init, stmt, bound)
                bound[f"self.{target.attr}"] = (stmt.value, ictx)
                continue
        found = _super_init(stmt) if super_call is None else None
        if found is not None:
            # Attributes set after the super call count too (a ``__str__`` may print them).
            super_call, super_stmt = found, stmt
    status = class_status
    for name in STATUS_NAMES:
        for key in (name, f"self.{name}"):
            if key in bound and status is None:
                value, vctx = bound[key]
                status = status_value(value, vctx)
    if str_method is not None:
        attrs = {k: v for k, v in bound.items() if k.startswith("self.")}
        return Raised(cls_name, str_message(resolver, str_method, attrs, call, ctx), status, code_of(call))
    if super_call is None or super_stmt is None:
        # No super().__init__ call: BaseException keeps the constructor's own arguments.
        plain = resolver.builtin(outside, call, ctx)
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
        inner = resolver.builtin(outside, super_call, ctx)
        return Raised(cls_name, inner.message, inner.status or status, code_of(call))
    sctx = resolver.callee_context(init, super_stmt, bound)
    index = chain.index(owner)
    if index + 1 < len(chain):
        parent = chain[index + 1]
        made = from_class(resolver, parent, cls_name, super_call, sctx, depth + 1)
        if made is None:
            return None
        return Raised(cls_name, made.message, made.status or status, made.code or code_of(call))
    inner = resolver.builtin(outside, super_call, sctx)
    return Raised(cls_name, inner.message, inner.status or status, code_of(call) or inner.code)


def str_message(
    resolver: Resolver,
    method: FunctionNode,
    attrs: dict[str, tuple[ast.expr, MessageContext]],
    call: ast.Call,
    ctx: MessageContext,
) -> Message | None:
    """What a class's ``__str__`` returns, with the attributes its ``__init__`` stored."""
    returns = own_returns(method)
    if len(returns) != 1 or returns[0].value is None:
        return dynamic(resolver, call, ctx)
    rctx = resolver.callee_context(method, returns[0], attrs)
    return make_message(expr_parts(returns[0].value, rctx))


def dynamic(resolver: Resolver, call: ast.Call, ctx: MessageContext) -> Message | None:
    """A ``__str__`` we cannot read: the template says what the call passes, any text matches."""
    passed = resolver.builtin("Exception", call, ctx).message
    if passed is None:
        return make_message([Placeholder(f"str({ctx.src(call)})")])
    return Message(template=passed.template, pattern=WILDCARD, parts=passed.parts)


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


def _class_status(chain: list[ast.ClassDef], ctx: MessageContext) -> int | None:
    for node in chain:
        for stmt in node.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id in STATUS_NAMES for t in targets):
                    value = status_value(stmt.value, ctx)
                    if value is not None:
                        return value
    return None
