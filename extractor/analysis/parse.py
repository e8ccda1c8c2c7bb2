"""Target bytes to a syntax tree, returning a failure value instead of raising.

The hot path parses with the C parser (:mod:`ast`) to find sites, guards and line ranges; LibCST
re-parses only the message expressions whose exact source text matters (f-strings), which keeps a
whole-tree run within a small factor of a bare ``ast.parse``.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass, field

from extractor.reasons import Reason

# Python's tokenizer breaks lines on \r\n, \r and \n only (str.splitlines also breaks on \x0c,
# \x1c, \u2028 and others, which would shift every line number after them).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class ParsedFile:
    """A parsed target file: its tree, decoded text split into lines, and a byte view for offsets."""

    path: str
    tree: ast.Module
    lines: list[str]
    _bytes_lines: dict[int, bytes] = field(default_factory=dict, repr=False)

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its line break, or ``""`` past the end."""
        if 1 <= number <= len(self.lines):
            return self.lines[number - 1]
        return ""

    def _encoded(self, number: int) -> bytes:
        cached = self._bytes_lines.get(number)
        if cached is None:
            cached = self.line(number).encode("utf-8")
            self._bytes_lines[number] = cached
        return cached

    def segment(self, node: ast.AST) -> str:
        """The exact source text of ``node`` (ast column offsets are UTF-8 byte offsets)."""
        lineno = getattr(node, "lineno", None)
        end_lineno = getattr(node, "end_lineno", None)
        col = getattr(node, "col_offset", None)
        end_col = getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return ast.unparse(node)
        if lineno == end_lineno:
            return self._encoded(lineno)[col:end_col].decode("utf-8", "replace")
        parts = [self._encoded(lineno)[col:].decode("utf-8", "replace")]
        parts.extend(self.line(n) for n in range(lineno + 1, end_lineno))
        parts.append(self._encoded(end_lineno)[:end_col].decode("utf-8", "replace"))
        return "\n".join(parts)


@dataclass(frozen=True)
class ParseFailure:
    """A file that could not be parsed, and why (reported and skipped, never fatal)."""

    path: str
    reason: str
    too_deep: bool = False
    """The parser ran out of recursion: a larger recursion limit might parse it (see the pipeline)."""
    code: Reason = Reason.UNPARSEABLE


_GRAMMAR = f"Python {sys.version_info.major}.{sys.version_info.minor}"


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_source(data: bytes) -> str:
    """Decode Python source the way the interpreter does: BOM, then coding cookie, then UTF-8.

    Raises :class:`UnicodeDecodeError` (with a readable ``reason``) for bytes the declared or
    default encoding cannot decode, an unknown encoding, or a codec that is not a text encoding
    (``# coding: rot13`` names a transform the interpreter refuses too).
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        reason = str(exc)
        if data.startswith(codecs.BOM_UTF8):
            reason += " (a UTF-8 byte order mark and a coding cookie naming another encoding)"
        else:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad:
                reason = (
                    f"not valid utf-8 at line {_line_of(data, bad.start)} and no coding cookie: {bad.reason}"
                )
        raise UnicodeDecodeError("utf-8", data[:1], 0, 1, reason) from exc
    try:
        info = codecs.lookup(encoding)
    except LookupError as exc:
        raise UnicodeDecodeError("utf-8", data[:1], 0, 1, f"unknown encoding {encoding!r}") from exc
    if not getattr(info, "_is_text_encoding", True):
        raise UnicodeDecodeError("utf-8", data[:1], 0, 1, f"{encoding!r} is not a text encoding")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        raise UnicodeDecodeError(
            exc.encoding, exc.object, exc.start, exc.end, f"not valid {encoding} at line {line}: {exc.reason}"
        ) from exc
    except LookupError as exc:
        raise UnicodeDecodeError("utf-8", data[:1], 0, 1, f"cannot decode as {encoding!r}: {exc}") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def parse_source(path: str, data: bytes) -> ParsedFile | ParseFailure:
    """Parse one target file; never raises: any failure is a :class:`ParseFailure` naming the reason.

    The tree is built by this interpreter's own parser, so code it cannot read (Python 2, syntax
    newer than the running Python, binary content, nesting past the parser's limits) is a failure
    whose reason names the line and, for syntax errors, the grammar used.
    """
    try:
        return _parse(path, data)
    except Exception as exc:  # the promise is a value, whatever the input
        return ParseFailure(path, f"cannot parse: {type(exc).__name__}: {exc}")


def _parse(path: str, data: bytes) -> ParsedFile | ParseFailure:
    nul = data.find(b"\x00")
    if nul >= 0:
        return ParseFailure(
            path,
            f"source contains a NUL byte at line {_line_of(data, nul)} (binary content?)",
            code=Reason.NUL_BYTE,
        )
    try:
        text = decode_source(data)
    except UnicodeDecodeError as exc:
        return ParseFailure(path, f"cannot decode source: {exc.reason}", code=Reason.UNDECODABLE)
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences in the target are its business, not ours.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "unknown line"
        return ParseFailure(
            path, f"syntax error at {where}: {exc.msg} ({_GRAMMAR} grammar)", code=Reason.SYNTAX_ERROR
        )
    except (RecursionError, MemoryError) as exc:
        # CPython's parser reports nesting past its stack limit as a MemoryError with no message
        # (or a RecursionError while it builds the tree), not as a SyntaxError.
        return ParseFailure(
            path,
            f"nested too deeply for the {_GRAMMAR} parser ({type(exc).__name__})",
            too_deep=True,
            code=Reason.TOO_DEEP,
        )
    except ValueError as exc:
        return ParseFailure(path, f"cannot parse: {exc}")
    return ParsedFile(path=path, tree=tree, lines=_LINE_BREAK.split(text))
