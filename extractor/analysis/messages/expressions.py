"""Any message expression read into parts: literals, ``+``, ``%``, ``.format()``, f-strings,
``textwrap.dedent``, ``sep.join([...])`` over a literal list, ``.strip()``, and names followed to
the value (or the few values) they hold at the site.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

from extractor.analysis.facts import Placeholder
from extractor.analysis.messages.formats import format_parts, percent_parts
from extractor.analysis.messages.fstrings import fstring_parts
from extractor.analysis.messages.names import substitute_names
from extractor.analysis.messages.parts import Choice, Part
from extractor.analysis.messages.whitespace import dedent_parts, strip_parts
from extractor.analysis.parse import ParsedFile

_MAX_CHOICES = 6

Lookup = Callable[[str], "tuple[ast.expr, MessageContext] | None"]
Choices = Callable[[str], "list[tuple[ast.expr, MessageContext]] | None"]


def _no_choices(_name: str) -> list[tuple[ast.expr, MessageContext]] | None:
    return None


@dataclass
class MessageContext:
    """What resolving a message can look at: the file, and the values names hold at the site.

    ``lookup`` gives the one expression a local (or module-level) name surely holds at the site;
    ``choices`` the few expressions it may hold when branches decide; ``bound`` maps the
    parameters of a helper or an exception's ``__init__`` being read to the arguments the call
    site passes (each with the context it must be read in).
    """

    parsed: ParsedFile
    lookup: Lookup
    choices: Choices = _no_choices
    bound: dict[str, tuple[ast.expr, MessageContext]] = field(default_factory=dict)
    _names: dict[str, str] | None = field(default=None, repr=False)

    def src(self, node: ast.AST) -> str:
        return self.rewrite(self.parsed.segment(node))

    def rewrite(self, text: str) -> str:
        """Source text written in this context, rewritten in the call site's terms."""
        if not self.bound:
            return text
        if self._names is None:
            self._names = {name: c.src(value) for name, (value, c) in self.bound.items()}
        return substitute_names(text, self._names)

    def resolve(self, name: str) -> tuple[ast.expr, MessageContext] | None:
        """The expression ``name`` surely stands for here, and the context to read it in."""
        if name in self.bound:
            return self.bound[name]
        return self.lookup(name)


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
        parts = fstring_parts(ctx.parsed.segment(node), node)
        if parts is None:
            return [Placeholder(ctx.src(node))]
        return [_refine(p, ctx, depth) if isinstance(p, Placeholder) else p for p in parts]
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add) and is_stringish(node, ctx):
            return expr_parts(node.left, ctx, depth + 1) + expr_parts(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mod):
            fmt = literal_text(node.left, ctx)
            if fmt is not None:
                parts = percent_parts(fmt, node.right, ctx.src)
                if parts is not None:
                    return parts
    if isinstance(node, ast.Call):
        parts = _call_parts(node, ctx, depth)
        if parts is not None:
            return parts
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is not None:
            value, vctx = resolved
            if is_stringish(value, vctx):
                return expr_parts(value, vctx, depth + 1)
            return [Placeholder(ctx.src(node))]
        options = _string_choices(node.id, ctx)
        if options is not None:
            return [
                Choice(
                    source=ctx.src(node),
                    options=tuple(tuple(expr_parts(o, c, depth + 1)) for o, c in options),
                )
            ]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        # ``self.message`` inside an exception's ``__init__``: what the constructor stored there.
        resolved = ctx.resolve(f"self.{node.attr}")
        if resolved is not None:
            return expr_parts(resolved[0], resolved[1], depth + 1)
    return [Placeholder(ctx.src(node))]


def _call_parts(node: ast.Call, ctx: MessageContext, depth: int) -> list[Part] | None:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "format":
        fmt = literal_text(func.value, ctx)
        if fmt is not None:
            parts = format_parts(fmt, node, ctx.src)
            if parts is not None:
                return parts
    if isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1 and not node.keywords:
        sep = literal_text(func.value, ctx)
        seq = node.args[0]
        if (
            sep is not None
            and isinstance(seq, ast.List | ast.Tuple)
            and seq.elts
            and all(not isinstance(e, ast.Starred) and is_stringish(e, ctx) for e in seq.elts)
        ):
            out: list[Part] = []
            for i, elt in enumerate(seq.elts):
                if i:
                    out.append(sep)
                out.extend(expr_parts(elt, ctx, depth + 1))
            return out
    name = ctx.parsed.segment(func)
    if name in _DEDENT and len(node.args) == 1 and not node.keywords:
        inner = expr_parts(node.args[0], ctx, depth + 1)
        return dedent_parts(inner, textwrap.dedent if "dedent" in name else _cleandoc)
    if isinstance(func, ast.Attribute) and func.attr in ("strip", "rstrip", "lstrip") and not node.args:
        inner = expr_parts(func.value, ctx, depth + 1)
        if all(isinstance(p, str) for p in inner) or is_stringish(func.value, ctx):
            return strip_parts(inner, func.attr)
    if name == "str" and len(node.args) == 1 and not node.keywords and is_stringish(node.args[0], ctx):
        return expr_parts(node.args[0], ctx, depth + 1)
    return None


def _refine(part: Placeholder, ctx: MessageContext, depth: int) -> Part:
    """An f-string field in the call site's terms; ``{name}`` of a known string becomes a Choice."""
    if not part.prefix:
        inlined = _inline_bound(part.source, ctx)
        if inlined is not None:
            return inlined
    source = ctx.rewrite(part.source) if not part.prefix else part.source
    if not part.prefix and part.source.isidentifier():
        resolved = ctx.resolve(part.source)
        if resolved is not None:
            value, vctx = resolved
            if is_stringish(value, vctx):
                return Choice(source=source, options=(tuple(expr_parts(value, vctx, depth + 1)),))
            return Placeholder(source)
        options = _string_choices(part.source, ctx)
        if options is not None:
            return Choice(
                source=source, options=tuple(tuple(expr_parts(o, c, depth + 1)) for o, c in options)
            )
    if source == part.source:
        return part
    return Placeholder(source=source, prefix=part.prefix)


_FIELD = re.compile(r"^(?P<name>(?:self\.)?[A-Za-z_]\w*)\s*(?:!(?P<conv>[rsa]))?(?::(?P<spec>[^{}]*))?$")


def _inline_bound(source: str, ctx: MessageContext) -> str | None:
    """A field over a helper's parameter that the call site passes as a literal: its text."""
    m = _FIELD.match(source)
    if m is None or m.group("name") not in ctx.bound:
        return None
    value, vctx = ctx.bound[m.group("name")]
    for _ in range(4):
        if not isinstance(value, ast.Name) or value.id not in vctx.bound:
            break
        value, vctx = vctx.bound[value.id]
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str | int | float):
        return None
    conv = m.group("conv")
    shown: object = value.value
    if conv == "r":
        shown = repr(shown)
    elif conv == "a":
        shown = ascii(shown)
    elif conv == "s":
        shown = str(shown)
    try:
        return format(shown, m.group("spec") or "")
    except (ValueError, TypeError):
        return None


def _string_choices(name: str, ctx: MessageContext) -> list[tuple[ast.expr, MessageContext]] | None:
    if name in ctx.bound:
        return None
    options = ctx.choices(name)
    if not options or len(options) > _MAX_CHOICES or not all(is_stringish(o, c) for o, c in options):
        return None
    return options


def _cleandoc(text: str) -> str:
    return inspect.cleandoc(text)


def literal_text(node: ast.expr, ctx: MessageContext) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is not None:
            value, vctx = resolved
            if value is not node:
                return literal_text(value, vctx)
    return None


def is_stringish(node: ast.expr, ctx: MessageContext, depth: int = 0) -> bool:
    """Whether ``node`` is certainly a string built from literals (so ``+`` is concatenation)."""
    if depth > 8:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return is_stringish(node.left, ctx, depth + 1) or is_stringish(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mod):
            return is_stringish(node.left, ctx, depth + 1)
        return False
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("format", "strip", "rstrip", "lstrip", "join"):
            return is_stringish(func.value, ctx, depth + 1)
        name = ctx.parsed.segment(func)
        if name in _DEDENT:
            return True
        return name in ("str", "repr")
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is None:
            return False
        value, vctx = resolved
        return value is not node and is_stringish(value, vctx, depth + 1)
    return False
