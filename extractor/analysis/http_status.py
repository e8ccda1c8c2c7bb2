"""HTTP status codes and error codes a raise or an error response carries, and HTTP exception messages.

A status is read from what the code writes: an integer in 100-599, ``status.HTTP_404_NOT_FOUND``,
``HTTPStatus.NOT_FOUND`` (or its ``.value``), ``HTTPStatus(404)``, or a name bound to one of them.
"""

from __future__ import annotations

import ast
import re
from http import HTTPStatus

from extractor.analysis.facts import Message, Raised
from extractor.analysis.messages.expressions import MessageContext, expr_parts
from extractor.analysis.messages.patterns import make_message
from extractor.records.message_pattern import DIGIT

_STATUS_ATTR = re.compile(r"HTTP_(\d{3})(?:_|$)")
HTTP_CLASSES = ("HTTPException", "StarletteHTTPException")
_CODE_KWARGS = ("error_code", "err_code", "code")
STATUS_NAMES = ("status_code", "status", "http_status", "code")

# sglang's OpenAI-compatible serving base declares these defaults for create_error_response
# (err_type="BadRequestError", status_code=400); a call that omits them gets them.
_RESPONSE_DEFAULT_TYPE = "BadRequestError"
_RESPONSE_DEFAULT_STATUS = 400


def error_response(call: ast.Call, ctx: MessageContext) -> Raised:
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
    status = status_value(status_node, ctx) if status_node is not None else _RESPONSE_DEFAULT_STATUS
    message = make_message(expr_parts(message_node, ctx)) if message_node is not None else None
    return Raised(error_class, message, status)


def status_value(node: ast.expr, ctx: MessageContext, depth: int = 0) -> int | None:
    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value if 100 <= node.value <= 599 else None
    if isinstance(node, ast.Attribute):
        if node.attr in ("value",) and isinstance(node.value, ast.Attribute):
            return status_value(node.value, ctx, depth + 1)
        m = _STATUS_ATTR.search(node.attr)
        if m:
            return int(m.group(1))
        base = ast.unparse(node.value).rsplit(".", 1)[-1]
        if base == "HTTPStatus" and node.attr in HTTPStatus.__members__:
            return int(HTTPStatus[node.attr].value)
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("HTTPStatus", "int")) and node.args:
        return status_value(node.args[0], ctx, depth + 1)
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is not None and resolved[0] is not node:
            return status_value(resolved[0], resolved[1], depth + 1)
    return None


def status_of(call: ast.Call, ctx: MessageContext) -> int | None:
    for kw in call.keywords:
        if kw.arg in STATUS_NAMES:
            value = status_value(kw.value, ctx)
            if value is not None:
                return value
    base = ast.unparse(call.func).rsplit(".", 1)[-1]
    if base in HTTP_CLASSES and call.args:
        return status_value(call.args[0], ctx)
    for arg in call.args:
        if isinstance(arg, ast.Attribute) and ast.unparse(arg).split(".")[0] in ("HTTPStatus", "status"):
            return status_value(arg, ctx)
    return None


def code_of(call: ast.Call) -> str | None:
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


def http_message(call: ast.Call, ctx: MessageContext, status: int | None) -> Message | None:
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
