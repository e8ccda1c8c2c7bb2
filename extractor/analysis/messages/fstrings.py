"""f-strings read into parts through LibCST, which keeps the exact text of each replacement field."""

from __future__ import annotations

import ast

import libcst as cst

from extractor.analysis.facts import Placeholder
from extractor.analysis.messages.parts import Part

_EMPTY_MODULE = cst.Module(body=[])


def fstring_parts(source: str, node: ast.JoinedStr | None = None) -> list[Part] | None:
    """Parts of a (possibly implicitly concatenated) string expression written in ``source``.

    LibCST gives the exact source text of every replacement field; when the ``ast`` node is at
    hand its constant pieces give the literal text exactly as Python evaluates it (escapes,
    ``{{``, quotes inside triple-quoted strings), so only the fields' text is taken from LibCST.
    """
    if len(source) > FSTRING_CST_LIMIT:
        # LibCST's parse grows faster than linearly on huge f-strings (generated code): read
        # those from the ast alone, with each field's text as ast.unparse prints it.
        return _ast_fstring_parts(node) if node is not None else None
    try:
        tree = cst.parse_expression("(" + source + "\n)")
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return _ast_fstring_parts(node) if node is not None else None
    parts = _cst_string_parts(tree)
    if parts is None or node is None:
        return parts
    return _with_ast_text(parts, node) or parts


FSTRING_CST_LIMIT = 20_000
"""f-strings longer than this (in source characters) are read from the ast instead of LibCST."""


def _ast_fstring_parts(node: ast.JoinedStr) -> list[Part] | None:
    out: list[Part] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out.append(value.value)
        elif isinstance(value, ast.FormattedValue):
            text = ast.unparse(value.value)
            if value.conversion != -1:
                text += "!" + chr(value.conversion)
            if isinstance(value.format_spec, ast.JoinedStr):
                spec = ast.unparse(value.format_spec)
                # unparse gives f'...'; the spec is what sits between the quotes.
                text += ":" + spec[2:-1]
            out.append(Placeholder(text))
        else:
            return None
    return out


def _with_ast_text(parts: list[Part], node: ast.JoinedStr) -> list[Part] | None:
    fields = [p for p in parts if not isinstance(p, str)]
    values = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    if len(fields) != len(values):
        return None
    out: list[Part] = []
    text: list[str] = []
    k = 0
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            text.append(value.value)
            continue
        if not isinstance(value, ast.FormattedValue):
            return None
        before = "".join(text)
        holder = fields[k]
        k += 1
        if holder.prefix:
            # The self-documenting ``{x=}`` puts its "x=" text into the constant before it.
            if not before.endswith(holder.prefix):
                return None
            before = before[: len(before) - len(holder.prefix)]
        out.append(before)
        out.append(holder)
        text = []
    out.append("".join(text))
    return out


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
            text = _eval_text(prefix, quote, part.value)
            if text is None:
                return None
            out.append(text.replace("{{", "{").replace("}}", "}"))
        elif isinstance(part, cst.FormattedStringExpression):
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


def _eval_text(prefix: str, quote: str, value: str) -> str | None:
    """The literal text of an f-string piece (used when no ``ast`` node is at hand)."""
    for q in (quote, "'''", '"""'):
        try:
            text = ast.literal_eval(prefix + q + value + q)
        except (SyntaxError, ValueError):
            continue
        return text if isinstance(text, str) else None
    return value
