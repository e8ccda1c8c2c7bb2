"""Source that a newer Python accepts, rewritten in place into source this Python's parser reads.

The dataset must not depend on the interpreter that runs the extractor: a file using PEP 695 type
parameters (``def first[T](...)``, ``type Alias = ...``) or PEP 701 f-strings (``f"{d["k"]}"``) is
valid Python 3.12, but ``ast`` under 3.11 rejects it. LibCST's own parser reads both. For such a
file the few constructs are rewritten with every other character where it was: type parameters
are blanked, ``type X = v`` becomes ``X      = v``, and an f-string that reuses its own quote
inside takes the other quote character. Lines and columns of every other node are unchanged, so
the tree is read against the file's original text as usual. Anything else returns ``None``: the
file stays a syntax error.
"""

from __future__ import annotations

import ast
import re
import warnings

__all__ = ["downgrade"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def downgrade(text: str) -> str | None:
    """``text`` rewritten as described above, or ``None`` if LibCST cannot read it either."""
    try:
        import libcst as cst
        from libcst.metadata import MetadataWrapper, PositionProvider
    except ImportError:
        return None
    try:
        module = cst.parse_module(text, config=cst.PartialParserConfig(python_version="3.12"))
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        positions = wrapper.resolve(PositionProvider)
    except Exception:  # LibCST rejects it too (or fails on it): the syntax error stands
        return None
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    chars = list(text)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column

    def span(node: cst.CSTNode) -> tuple[int, int]:
        where = positions[node]
        return offset(where.start.line, where.start.column), offset(where.end.line, where.end.column)

    def blank(start: int, end: int) -> None:
        for i in range(start, end):
            if chars[i] not in "\r\n":
                chars[i] = " "

    for node in positions:
        if isinstance(node, cst.FunctionDef | cst.ClassDef) and node.type_parameters is not None:
            blank(*span(node.type_parameters))
        elif isinstance(node, cst.TypeAlias):
            start, _ = span(node)
            name_start, name_end = span(node.name)
            params_end = span(node.type_parameters)[1] if node.type_parameters is not None else name_end
            eq = text.find("=", params_end)
            if eq < 0 or "\n" in text[start:eq] or "\r" in text[start:eq]:
                return None
            name = text[name_start:name_end]
            chars[start:eq] = list(name.ljust(eq - start))
        elif isinstance(node, cst.FormattedString):
            start, end = span(node)
            literal = text[start:end]
            if _parses(f"({literal})"):
                continue
            quote = node.start[len(node.prefix) :]
            other = {'"': "'", "'": '"'}.get(quote)
            if other is None or other in literal[len(node.start) : -len(quote)]:
                return None
            swapped = literal[: len(node.prefix)] + other + literal[len(node.start) : -1] + other
            if not _parses(f"({swapped})"):
                return None
            chars[start:end] = list(swapped)
    out = "".join(chars)
    return out if len(out) == len(text) and _parses(out) else None
