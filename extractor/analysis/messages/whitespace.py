"""``textwrap.dedent`` / ``inspect.cleandoc`` and ``str.strip`` applied to parts.

They run on the rendered message, so the values decide how much whitespace survives: the literal
text keeps its shape in the template and becomes :class:`~extractor.analysis.messages.parts.Loose`
where the pattern must let the affected whitespace vary.
"""

from __future__ import annotations

from collections.abc import Callable

from extractor.analysis.facts import Placeholder
from extractor.analysis.messages.parts import Loose, Part
from extractor.records.message_pattern import BLANK_RUN, SPACE_RUN, escape

_SENTINEL_BASE = 0xF0000  # private-use plane: never in real source text


def dedent_parts(parts: list[Part], fn: Callable[[str], str]) -> list[Part]:
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
    buf: list[str] = []
    for ch in mapped:
        code = ord(ch) - _SENTINEL_BASE
        if 0 <= code < len(holders):
            out.append("".join(buf))
            buf = []
            out.append(holders[code])
        else:
            buf.append(ch)
    out.append("".join(buf))
    if not holders:
        return out
    # The values take part in the runtime dedent (a blank value blanks its line, a value with a
    # newline changes the common margin): indentation and line-end blanks may differ.
    loose: list[Part] = []
    for i, part in enumerate(out):
        if isinstance(part, str):
            loose.append(Loose.of(part, _loose_lines(part, at_line_start=i == 0)))
        else:
            loose.append(part)
    return loose


def _loose_lines(text: str, at_line_start: bool) -> str:
    lines = text.split("\n")
    out = []
    for j, line in enumerate(lines):
        piece = line
        head = tail = ""
        if j > 0 or at_line_start:
            piece = piece.lstrip(" \t")
            head = BLANK_RUN
        if j < len(lines) - 1:
            piece = piece.rstrip(" \t")
            tail = BLANK_RUN
        out.append(head + escape(piece) + tail if piece else (BLANK_RUN if head or tail else ""))
    return "\\n".join(out)


def strip_parts(parts: list[Part], how: str) -> list[Part]:
    """``.strip()`` of the rendered text: the edge literals lose their blanks, and past a dynamic
    part that may render blank, the strip may reach further into the next literal."""
    n = len(parts)
    cut_head = [False] * n  # blanks surely stripped from the start of literal i
    may_head = [False] * n  # blanks maybe stripped
    cut_tail = [False] * n
    may_tail = [False] * n
    for cut, may, order in (
        (cut_head, may_head, range(n) if how in ("strip", "lstrip") else range(0)),
        (cut_tail, may_tail, range(n - 1, -1, -1) if how in ("strip", "rstrip") else range(0)),
    ):
        reach = False
        for i in order:
            part = parts[i]
            if not isinstance(part, str):
                reach = True
                continue
            (may if reach else cut)[i] = True
            if part.strip():
                break
    out: list[Part] = []
    for i, part in enumerate(parts):
        if not isinstance(part, str) or not (cut_head[i] or may_head[i] or cut_tail[i] or may_tail[i]):
            out.append(part)
            continue
        text = part.lstrip() if cut_head[i] else part
        text = text.rstrip() if cut_tail[i] else text
        if not (may_head[i] or may_tail[i]):
            out.append(text)
            continue
        core = text.lstrip() if may_head[i] else text
        core = core.rstrip() if may_tail[i] else core
        regex = (
            (SPACE_RUN if may_head[i] else "") + escape(core) + (SPACE_RUN if may_tail[i] and core else "")
        )
        out.append(Loose.of(text, regex))
    return out
