"""Message templates, and the regex that full-matches every runtime rendering of them.

A message is reduced to *parts*: literal text and :class:`~extractor.facts.Placeholder` for each
dynamic piece, written as its source text (``{dtype!r}``, ``{x:.2f}``, ``{x=}``). Every form sglang
uses is read: literals and implicit concatenation, ``+``, ``%`` (tuple and mapping), ``.format()``
(positional and keyword), f-strings (through LibCST, which keeps the exact text of each
replacement field), ``textwrap.dedent``, and a message held in a local variable or module constant.

The pattern escapes the literal parts and lets each dynamic part match any text, newlines
included. It is built to stay linear-ish on hostile input: adjacent wildcards merge, and a
pattern with several wildcards checks its suffix and literal anchors with cheap lookaheads before
the backtracking part can run.
"""

from __future__ import annotations

import ast
import re
import string
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from extractor.facts import Message, Placeholder
from extractor.parse import ParsedFile

Part = str | Placeholder
WILDCARD = "(?s:.*)"
_EMPTY_MODULE = cst.Module(body=[])
_HAS_LETTER = re.compile(r"[A-Za-z]")


# --------------------------------------------------------------------------- parts -> text


_SPECIAL = frozenset("\\.^$*+?{}[]|()")
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\v": "\\v"}


def escape(text: str) -> str:
    """Escape regex metacharacters only, so patterns stay readable (``re.escape`` also escapes spaces)."""
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch in _CONTROL:
            out.append(_CONTROL[ch])
        else:
            out.append(ch)
    return "".join(out)


def normalise(parts: Sequence[Part]) -> tuple[Part, ...]:
    """Join adjacent literals and drop empty ones."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if out and isinstance(out[-1], str):
                out[-1] = out[-1] + part
                continue
        out.append(part)
    return tuple(out)


def template_of(parts: Sequence[Part]) -> str:
    """The template form: literal text as is, each dynamic part as ``{source}``."""
    return "".join(p if isinstance(p, str) else "{" + p.source + "}" for p in parts)


def pattern_of(parts: Sequence[Part]) -> str:
    """A regex that full-matches every rendering of ``parts`` (each placeholder: any text)."""
    tokens: list[str | None] = []  # literal text, or None for a wildcard
    for part in normalise(parts):
        if isinstance(part, str):
            tokens.append(part)
        else:
            if part.prefix:
                tokens.append(part.prefix)
            tokens.append(None)
    tokens = _merge(tokens)
    wildcards = sum(1 for t in tokens if t is None)
    if wildcards >= 3:
        # Runs of wildcards separated only by punctuation, spaces or digits are where hostile text
        # (long runs of "1," or spaces) makes backtracking explode; such a run matches the same
        # strings as a single wildcard would, minus the separators, so fold it into one.
        tokens = _merge(_fold_weak(tokens))
        wildcards = sum(1 for t in tokens if t is None)
    body = "".join(WILDCARD if t is None else escape(t) for t in tokens)
    if wildcards < 2:
        return body
    guards = []
    suffix = tokens[-1]
    if isinstance(suffix, str):
        guards.append(f"(?=[\\s\\S]*{escape(suffix)}\\Z)")
    middle = sorted({t for t in tokens[1:-1] if isinstance(t, str)}, key=lambda t: (-len(t), t))
    guards.extend(f"(?=[\\s\\S]*?{escape(t)})" for t in middle[:4])
    return "".join(guards) + body


def _merge(tokens: list[str | None]) -> list[str | None]:
    out: list[str | None] = []
    for tok in tokens:
        if tok is None and out and out[-1] is None:
            continue
        if isinstance(tok, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + tok
            continue
        out.append(tok)
    return out


def _fold_weak(tokens: list[str | None]) -> list[str | None]:
    out: list[str | None] = []
    for i, tok in enumerate(tokens):
        between = 0 < i < len(tokens) - 1 and tokens[i - 1] is None and tokens[i + 1] is None
        if isinstance(tok, str) and between and not _HAS_LETTER.search(tok):
            continue
        out.append(tok)
    return out


def make_message(parts: Sequence[Part]) -> Message:
    parts = normalise(parts)
    return Message(template=template_of(parts), pattern=pattern_of(parts), parts=parts)


EMPTY_MESSAGE = Message(template="", pattern="", parts=())


# --------------------------------------------------------------------------- f-strings via LibCST


def fstring_parts(source: str) -> list[Part] | None:
    """Parts of a (possibly implicitly concatenated) string expression written in ``source``."""
    try:
        node = cst.parse_expression("(" + source + "\n)")
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    return _cst_string_parts(node)


def _cst_string_parts(node: cst.BaseExpression) -> list[Part] | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [value] if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left = _cst_string_parts(node.left)
        right = _cst_string_parts(node.right)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(node, cst.FormattedString):
        return _formatted_parts(node)
    return None


def _formatted_parts(node: cst.FormattedString) -> list[Part] | None:
    prefix = "".join(c for c in node.prefix if c.lower() != "f")
    quote = node.end
    out: list[Part] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            try:
                text = ast.literal_eval(prefix + quote + part.value + quote)
            except (SyntaxError, ValueError):
                text = part.value
            if not isinstance(text, str):
                return None
            out.append(text.replace("{{", "{").replace("}}", "}"))
        else:
            raw = _EMPTY_MODULE.code_for_node(part)
            inner = raw[1:-1]
            self_doc = ""
            if part.equal is not None:
                expr_code = _EMPTY_MODULE.code_for_node(part.expression)
                upto = inner.find(expr_code)
                eq = inner.find("=", upto + len(expr_code) if upto >= 0 else 0)
                if eq >= 0:
                    end = eq + 1
                    while end < len(inner) and inner[end] == " ":
                        end += 1
                    self_doc = inner[:end]
            out.append(Placeholder(source=inner.strip() if not self_doc else inner, prefix=self_doc))
    return out


# --------------------------------------------------------------------------- %-format and .format()

_PERCENT = re.compile(r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[#0\- +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])")


def percent_parts(fmt: str, args: ast.expr, src: Callable[[ast.AST], str]) -> list[Part] | None:
    """``"fmt" % args`` rendered as parts; ``None`` when the shapes do not line up."""
    positional: list[ast.expr] = []
    mapping: dict[str, ast.expr] = {}
    whole: ast.expr | None = None
    if isinstance(args, ast.Tuple):
        positional = list(args.elts)
    elif isinstance(args, ast.Dict):
        for key, value in zip(args.keys, args.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                mapping[key.value] = value
    else:
        whole = args
    out: list[Part] = []
    pos = 0
    index = 0
    for m in _PERCENT.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        conv = m.group("conv")
        if conv == "%":
            out.append("%")
            continue
        key = m.group("key")
        expr_text: str
        if key is not None:
            if key in mapping:
                expr_text = src(mapping[key])
            elif whole is not None:
                expr_text = f"{src(whole)}[{key!r}]"
            else:
                return None
        elif whole is not None and index == 0:
            expr_text = src(whole)
            index += 1
        elif index < len(positional):
            expr_text = src(positional[index])
            index += 1
        else:
            return None
        spec = (m.group("flags") or "") + (m.group("width") or "")
        if m.group("prec"):
            spec += "." + m.group("prec")
        suffix = ""
        if conv in "ra":
            suffix = "!" + conv
        elif conv not in "sdiu" or spec:
            suffix = ":" + spec + (conv if conv not in "diu" else "d")
        out.append(Placeholder(source=expr_text + suffix))
    out.append(fmt[pos:])
    return out


def format_parts(fmt: str, call: ast.Call, src: Callable[[ast.AST], str]) -> list[Part] | None:
    """``"fmt".format(*args, **kwargs)`` rendered as parts."""
    args = call.args
    kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
    out: list[Part] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    for literal, field, spec, conv in parsed:
        out.append(literal)
        if field is None:
            continue
        name, rest = _split_field(field)
        if name == "":
            name = str(auto)
            auto += 1
        if name.isdigit():
            i = int(name)
            if i >= len(args) or isinstance(args[i], ast.Starred):
                return None
            base = src(args[i])
        elif name in kwargs:
            base = src(kwargs[name])
        else:
            return None
        text = base + rest
        if conv:
            text += "!" + conv
        if spec:
            text += ":" + spec
        out.append(Placeholder(source=text))
    return out


def _split_field(field: str) -> tuple[str, str]:
    for i, ch in enumerate(field):
        if ch in ".[":
            return field[:i], field[i:]
    return field, ""


# --------------------------------------------------------------------------- expressions


@dataclass
class MessageContext:
    """What resolving a message can look at: the file, and the assignments reaching the site."""

    parsed: ParsedFile
    lookup: Callable[[str], ast.expr | None]
    """Resolve a local or module-level name to the one expression it surely holds at the site."""

    def src(self, node: ast.AST) -> str:
        return self.parsed.segment(node)


_DEDENT = {"dedent", "textwrap.dedent", "inspect.cleandoc", "cleandoc"}


def expr_parts(node: ast.expr, ctx: MessageContext, depth: int = 0) -> list[Part]:
    """Parts of any message expression; unknown shapes become one placeholder of their source."""
    if depth > 8:
        return [Placeholder(ctx.src(node))]
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return [node.value]
        if isinstance(node.value, bytes):
            return [repr(node.value)]
        return [str(node.value)] if node.value is not None else ["None"]
    if isinstance(node, ast.JoinedStr):
        parts = fstring_parts(ctx.src(node))
        return parts if parts is not None else [Placeholder(ctx.src(node))]
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add) and _stringish(node, ctx):
            return expr_parts(node.left, ctx, depth + 1) + expr_parts(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mod):
            fmt = _literal_text(node.left, ctx)
            if fmt is not None:
                parts = percent_parts(fmt, node.right, ctx.src)
                if parts is not None:
                    return parts
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            fmt = _literal_text(func.value, ctx)
            if fmt is not None:
                parts = format_parts(fmt, node, ctx.src)
                if parts is not None:
                    return parts
        name = ctx.src(func)
        if name in _DEDENT and len(node.args) == 1 and not node.keywords:
            inner = expr_parts(node.args[0], ctx, depth + 1)
            return _map_literal_text(inner, textwrap.dedent if "dedent" in name else _cleandoc)
        if isinstance(func, ast.Attribute) and func.attr in ("strip", "rstrip", "lstrip") and not node.args:
            inner = expr_parts(func.value, ctx, depth + 1)
            if all(isinstance(p, str) for p in inner) or _stringish(func.value, ctx):
                return _strip_parts(inner, func.attr)
        if name == "str" and len(node.args) == 1 and not node.keywords and _stringish(node.args[0], ctx):
            return expr_parts(node.args[0], ctx, depth + 1)
    if isinstance(node, ast.Name):
        value = ctx.lookup(node.id)
        if value is not None and _stringish(value, ctx):
            return expr_parts(value, ctx, depth + 1)
    return [Placeholder(ctx.src(node))]


def _cleandoc(text: str) -> str:
    import inspect

    return inspect.cleandoc(text)


def _literal_text(node: ast.expr, ctx: MessageContext) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        value = ctx.lookup(node.id)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def _stringish(node: ast.expr, ctx: MessageContext, depth: int = 0) -> bool:
    """Whether ``node`` is certainly a string built from literals (so ``+`` is concatenation)."""
    if depth > 8:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return _stringish(node.left, ctx, depth + 1) or _stringish(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mod):
            return _stringish(node.left, ctx, depth + 1)
        return False
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("format", "strip", "rstrip", "lstrip", "join"):
            return _stringish(func.value, ctx, depth + 1)
        name = ctx.src(func)
        if name in _DEDENT:
            return True
        return name in ("str", "repr")
    if isinstance(node, ast.Name):
        value = ctx.lookup(node.id)
        return value is not None and _stringish(value, ctx, depth + 1)
    return False


_SENTINEL_BASE = 0xF0000  # private-use plane: never in real source text


def _map_literal_text(parts: list[Part], fn: Callable[[str], str]) -> list[Part]:
    """Apply a text transformation (dedent) across parts, keeping placeholders in place."""
    holders: list[Placeholder] = []
    text = []
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(chr(_SENTINEL_BASE + len(holders)))
            holders.append(part)
    mapped = fn("".join(text))
    out: list[Part] = []
    buf = []
    for ch in mapped:
        code = ord(ch) - _SENTINEL_BASE
        if 0 <= code < len(holders):
            out.append("".join(buf))
            buf = []
            out.append(holders[code])
        else:
            buf.append(ch)
    out.append("".join(buf))
    return out


def _strip_parts(parts: list[Part], how: str) -> list[Part]:
    out = list(parts)
    if how in ("strip", "lstrip") and out and isinstance(out[0], str):
        out[0] = out[0].lstrip()
    if how in ("strip", "rstrip") and out and isinstance(out[-1], str):
        out[-1] = out[-1].rstrip()
    return out


# --------------------------------------------------------------------------- str(exc) shapes


def message_from_args(
    error_class: str, args: Sequence[ast.expr], ctx: MessageContext
) -> Message | None:
    """The message ``str(exc)`` prints for ``error_class(*args)``; ``None`` when there is none."""
    plain = [a for a in args if not isinstance(a, ast.Starred)]
    if not args:
        return None
    if len(args) != len(plain):
        return make_message([Placeholder(", ".join(ctx.src(a) for a in args))])
    first = expr_parts(plain[0], ctx)
    base = error_class.rsplit(".", 1)[-1]
    if len(plain) > 1:
        # BaseException.__str__ of several args prints the tuple's repr.
        msg = make_message(first)
        pattern = "\\(" + WILDCARD + "\\)"
        return Message(template=msg.template, pattern=pattern, parts=msg.parts)
    msg = make_message(first)
    if base == "KeyError":
        # KeyError.__str__ prints the repr of its argument.
        inner = msg.pattern
        pattern = f"(?:'{inner}'|\"{inner}\")" if inner else "''"
        return Message(template=msg.template, pattern=pattern, parts=msg.parts)
    return msg
