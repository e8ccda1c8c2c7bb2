"""What ``str(exc)`` prints for ``error_class(*args)``.

Several arguments print as a tuple's repr, ``KeyError`` prints the repr of its argument,
``OSError(errno, strerror)`` prints ``[Errno n] strerror``, and a class from elsewhere may wrap
its message in anything.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Sequence

from extractor.analysis.facts import Message, Placeholder
from extractor.analysis.messages.expressions import MessageContext, expr_parts, is_stringish
from extractor.analysis.messages.parts import Choice, Loose, Part
from extractor.analysis.messages.patterns import WILDCARD, fragment_of, make_message, pattern_of
from extractor.records.message_pattern import escape

_OSERROR_FAMILY = frozenset(
    {
        "OSError", "IOError", "EnvironmentError", "FileNotFoundError", "FileExistsError",
        "PermissionError", "IsADirectoryError", "NotADirectoryError", "TimeoutError",
        "ConnectionError", "ConnectionResetError", "ConnectionRefusedError", "ConnectionAbortedError",
        "BrokenPipeError", "BlockingIOError", "InterruptedError", "ChildProcessError",
        "ProcessLookupError",
    }
)  # fmt: skip


def message_from_args(error_class: str, args: Sequence[ast.expr], ctx: MessageContext) -> Message | None:
    """The message ``str(exc)`` prints for ``error_class(*args)``; ``None`` when there is none."""
    if not args:
        return None
    if any(isinstance(a, ast.Starred) for a in args):
        return make_message([Placeholder(", ".join(ctx.src(a) for a in args))])
    base = error_class.rsplit(".", 1)[-1]
    builtin = base in _BUILTIN_EXCEPTIONS and error_class in (base, f"builtins.{base}")
    if len(args) > 1 and not builtin:
        # A class from elsewhere may format its arguments any way it likes: keep the part that
        # reads as the message, and let anything surround it.
        chosen = _message_arg(args, ctx)
        msg = make_message(expr_parts(chosen, ctx))
        inner = fragment_of(msg.parts)
        pattern = WILDCARD if inner == WILDCARD or not inner else WILDCARD + inner + WILDCARD
        return Message(template=msg.template, pattern=pattern, parts=msg.parts)
    if base in _OSERROR_FAMILY and builtin and len(args) in (2, 3):
        # OSError(errno, strerror[, filename]) prints "[Errno n] strerror[: 'filename']".
        parts: list[Part] = ["[Errno ", *expr_parts(args[0], ctx), "] ", *expr_parts(args[1], ctx)]
        if len(args) == 3:
            parts += [": ", *_repr_template(args[2], ctx)]
            msg = make_message(parts)
            head = pattern_of(parts[: len(parts) - len(_repr_template(args[2], ctx))])
            return Message(msg.template, head + _repr_body(args[2], ctx), msg.parts)
        return make_message(parts)
    if len(args) > 1:
        # BaseException.__str__ of several args prints the tuple's repr.
        return _tuple_repr(args, ctx)
    msg = make_message(expr_parts(args[0], ctx))
    if base == "KeyError" and builtin:
        # KeyError.__str__ prints the repr of its argument.
        return Message(template=msg.template, pattern=_repr_pattern(args[0], ctx), parts=msg.parts)
    return msg


def _tuple_repr(items: Sequence[ast.expr], ctx: MessageContext) -> Message:
    """The repr of a tuple of ``items``: ``('a', 2)``, and ``('a',)`` for one item."""
    tparts: list[Part] = ["("]
    bodies = []
    for i, arg in enumerate(items):
        if i:
            tparts.append(", ")
        tparts.extend(_repr_template(arg, ctx))
        bodies.append(_repr_body(arg, ctx))
    tail = ",)" if len(items) == 1 else ")"
    tparts.append(tail)
    msg = make_message(tparts)
    return Message(template=msg.template, pattern="\\(" + ", ".join(bodies) + escape(tail), parts=msg.parts)


def assert_message(msg: ast.expr, ctx: MessageContext) -> Message | None:
    """What ``assert t, msg`` prints after ``AssertionError: ``: ``str(msg)``. An exception built
    as the message prints as that exception does (``ValueError("x")`` as ``x``), and a tuple
    (``assert t, (f"...",)``, a stray comma) as its repr."""
    if isinstance(msg, ast.Call) and isinstance(msg.func, ast.Name) and not msg.keywords:
        name = msg.func.id
        if name in _BUILTIN_EXCEPTIONS and name not in ("ExceptionGroup", "BaseExceptionGroup"):
            return message_from_args(name, msg.args, ctx)
    if isinstance(msg, ast.Tuple) and msg.elts and not any(isinstance(e, ast.Starred) for e in msg.elts):
        # The template keeps the expression as written, as for any value; what it prints is
        # the tuple's repr, which the pattern matches.
        printed = _tuple_repr(msg.elts, ctx)
        return Message(template="{" + ctx.src(msg) + "}", pattern=printed.pattern, parts=printed.parts)
    return make_message(expr_parts(msg, ctx))


_BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
_MESSAGE_NAME = re.compile(
    r"(?:^|_)(?:msg|message|reason|error|err|detail|text|description)s?$", re.IGNORECASE
)


def _message_arg(args: Sequence[ast.expr], ctx: MessageContext) -> ast.expr:
    """Of several constructor arguments, the one that reads as the message."""
    for arg in args:
        if is_stringish(arg, ctx):
            return arg
    for arg in args:
        name = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else ""
        if _MESSAGE_NAME.search(name):
            return arg
    return args[0]


def _repr_inner(text: str, quote: str) -> str:
    """``text`` as it appears inside a repr that uses ``quote``."""
    if quote == "'":
        # A string holding both quote kinds is printed in single quotes with ' escaped.
        return repr("'\"" + text)[4:-1]
    return repr("'" + text)[2:-1]


def _repr_alternatives(parts: Sequence[Part]) -> list[list[Part]]:
    out: list[list[Part]] = []
    for quote in ("'", '"'):
        if quote == '"' and any(isinstance(p, str) and '"' in p for p in parts):
            continue  # a string holding " is printed in single quotes
        out.append([quote, *(_repr_part(p, quote) for p in parts), quote])
    return out


def _repr_part(part: Part, quote: str) -> Part:
    if isinstance(part, Loose):
        # Its whitespace is decided at runtime; inside a repr any text will do.
        return Placeholder(part)
    if isinstance(part, str):
        return _repr_inner(part, quote)
    if isinstance(part, Choice):
        options = tuple(tuple(_repr_part(p, quote) for p in opt) for opt in part.options)
        return Choice(source=part.source, prefix=_repr_inner(part.prefix, quote), options=options)
    if part.prefix:
        return Placeholder(source=part.source, prefix=_repr_inner(part.prefix, quote))
    return part


def _repr_pattern(arg: ast.expr, ctx: MessageContext) -> str:
    """A full pattern for ``repr(arg)``."""
    if isinstance(arg, ast.Constant):
        return escape(repr(arg.value))
    if not is_stringish(arg, ctx):
        return WILDCARD
    parts = expr_parts(arg, ctx)
    alts = [pattern_of(a) for a in _repr_alternatives(parts)]
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _repr_body(arg: ast.expr, ctx: MessageContext) -> str:
    """A pattern fragment for ``repr(arg)`` inside a larger pattern."""
    if isinstance(arg, ast.Constant):
        return escape(repr(arg.value))
    if not is_stringish(arg, ctx):
        return WILDCARD
    parts = expr_parts(arg, ctx)
    alts = sorted({fragment_of(a) for a in _repr_alternatives(parts)})
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _repr_template(arg: ast.expr, ctx: MessageContext) -> list[Part]:
    """Template parts for ``repr(arg)``: a string literal in quotes, anything else as ``{x!r}``."""
    if isinstance(arg, ast.Constant):
        return [repr(arg.value)]
    if is_stringish(arg, ctx):
        return ["'", *expr_parts(arg, ctx), "'"]
    return [Placeholder(ctx.src(arg) + "!r")]
