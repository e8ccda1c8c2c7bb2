"""Rewriting a field's source text in the call site's terms (a helper's parameter -> the argument)."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Mapping


def substitute_names(text: str, names: Mapping[str, str]) -> str:
    """Rewrite ``text`` (an expression, maybe with ``!conv``/``:spec``) with names replaced.

    Keys are plain names (``rank``) or ``self.attr``; values are the source text that stands for
    them at the call site. Attribute names (``x.rank``), keyword-argument names and the
    conversion letter are left alone; a replacement that is not a single atom is parenthesised
    when the name is part of a larger expression.
    """
    if not names or not any(k.rsplit(".", 1)[-1] in text for k in names):
        return text
    wrapped = "(" + text + "\n)"
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(wrapped).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    starts = [0]
    for line in wrapped.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    sig = [
        t
        for t in toks
        if t.type
        not in (
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.COMMENT,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        )
    ]
    edits: list[tuple[int, int, str]] = []
    stack: list[str] = []
    mode = "expr"  # "conv" after a top-level "!", "spec" after a top-level ":"
    lone = len(sig) <= 3  # "(", name, ")": the name is the whole expression
    i = 0
    while i < len(sig):
        tok = sig[i]
        s = tok.string
        if s in "([{" and tok.type == tokenize.OP:
            stack.append(s)
            i += 1
            continue
        if s in ")]}" and tok.type == tokenize.OP:
            if stack:
                stack.pop()
            i += 1
            continue
        depth = len(stack)
        if depth == 1 and s == "!" and mode == "expr":
            mode = "conv"
            i += 1
            continue
        if depth == 1 and s == ":" and mode in ("expr", "conv"):
            mode = "spec"
            i += 1
            continue
        active = mode == "expr" or (mode == "spec" and depth >= 2)
        if active and tok.type == tokenize.NAME:
            prev = sig[i - 1].string if i > 0 else ""
            nxt = sig[i + 1].string if i + 1 < len(sig) else ""
            keyword = nxt == "=" and stack and stack[-1] == "(" and depth >= 2
            if prev != "." and not keyword:
                key = s
                end_tok = tok
                if s == "self" and nxt == "." and i + 2 < len(sig) and f"self.{sig[i + 2].string}" in names:
                    key = f"self.{sig[i + 2].string}"
                    end_tok = sig[i + 2]
                if key in names:
                    repl = names[key]
                    if not lone and not _atomic(repl):
                        repl = "(" + repl + ")"
                    edits.append((offset(tok.start), offset(end_tok.end), repl))
                    i = sig.index(end_tok) + 1
                    continue
        i += 1
    if not edits:
        return text
    out = wrapped
    for start, end, repl in sorted(edits, reverse=True):
        out = out[:start] + repl + out[end:]
    return out[1:-2]


def _atomic(text: str) -> bool:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(
        node,
        ast.Name
        | ast.Attribute
        | ast.Subscript
        | ast.Call
        | ast.Constant
        | ast.List
        | ast.Dict
        | ast.Set
        | ast.JoinedStr,
    ) or (isinstance(node, ast.Tuple) and text.strip().startswith("("))
