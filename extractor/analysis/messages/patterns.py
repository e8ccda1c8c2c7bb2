"""The regex that full-matches every runtime rendering of a message's parts.

The pattern is written in the portable dialect of :mod:`extractor.records.message_pattern`: the
literal parts escaped, each dynamic part ``[\\s\\S]*?`` (any text, newlines included), a
:class:`~extractor.analysis.messages.parts.Choice` (a name that holds one of a few known strings)
as ``(?:…|…)`` of exactly those, and the blanks a runtime dedent or strip may change as blank
runs. Adjacent wildcards merge, and blank runs beside a wildcard are left to it. Nothing in the
pattern guards against backtracking: matching it in linear time is the matcher's job.
"""

from __future__ import annotations

from collections.abc import Sequence

from extractor.analysis.facts import Message
from extractor.analysis.messages.parts import Choice, Loose, Part, normalise, template_of
from extractor.records.message_pattern import BLANK_RUN, SPACE_RUN, WILDCARD, escape

__all__ = ["WILDCARD", "fragment_of", "make_message", "pattern_of"]

# A token of a pattern under construction: literal text, None for a wildcard, a ready-made regex
# (escaped literal text from a Loose part, a blank run it allows, or a Choice's alternation),
# marked by the one-element tuple.
_Token = str | None | tuple[str]
_RUNS = (BLANK_RUN, SPACE_RUN)


def _tokens(parts: Sequence[Part]) -> list[_Token]:
    tokens: list[_Token] = []
    for part in normalise(parts):
        if isinstance(part, Loose):
            tokens.extend(_loose_tokens(part.regex))
            continue
        if isinstance(part, str):
            tokens.append(part)
            continue
        if part.prefix:
            tokens.append(part.prefix)
        if isinstance(part, Choice) and part.options:
            bodies = sorted({fragment_of(opt) for opt in part.options}, key=lambda b: (-len(b), b))
            if len(bodies) == 1:
                # One known value: its own literal text and wildcards, merged with the neighbours.
                tokens.extend(_tokens(part.options[0]))
            elif WILDCARD in bodies:
                tokens.append(None)
            else:
                tokens.append(("(?:" + "|".join(bodies) + ")",))
        else:
            tokens.append(None)
    return _merge(tokens)


def _loose_tokens(regex: str) -> list[_Token]:
    """A Loose literal's regex as escaped-text pieces and the blank runs between them."""
    out: list[_Token] = []
    text: list[str] = []
    i = 0
    while i < len(regex):
        run = next((r for r in _RUNS if regex.startswith(r, i)), None)
        if run is None:
            # An escape stays whole: \xHH is four characters, any other escape two.
            step = 1 if regex[i] != "\\" else 4 if regex[i + 1 : i + 2] == "x" else 2
            text.append(regex[i : i + step])
            i += step
            continue
        if text:
            out.append(("".join(text),))
            text = []
        out.append((run,))
        i += len(run)
    if text:
        out.append(("".join(text),))
    return out


def _absorb_blanks(tokens: list[_Token]) -> list[_Token]:
    """Drop the blank runs next to a wildcard: the wildcard matches those blanks as well."""
    out = list(tokens)
    changed = True
    while changed:
        changed = False
        for i, tok in enumerate(out):
            beside = (i > 0 and out[i - 1] is None) or (i + 1 < len(out) and out[i + 1] is None)
            if beside and isinstance(tok, tuple) and tok[0] in _RUNS:
                del out[i]
                changed = True
                break
    return _merge(out)


def _merge(tokens: list[_Token]) -> list[_Token]:
    out: list[_Token] = []
    for tok in tokens:
        if tok == "":
            continue
        if tok is None and out and out[-1] is None:
            continue
        if isinstance(tok, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + tok
            continue
        out.append(tok)
    return out


def _token_text(tok: _Token) -> str:
    if tok is None:
        return WILDCARD
    if isinstance(tok, tuple):
        return tok[0]
    return escape(tok)


def fragment_of(parts: Sequence[Part]) -> str:
    """The pattern text of ``parts``, to stand alone or inside a larger pattern."""
    return "".join(_token_text(t) for t in _absorb_blanks(_tokens(parts)))


def pattern_of(parts: Sequence[Part]) -> str:
    """A regex that full-matches every rendering of ``parts`` (each placeholder: any text)."""
    return fragment_of(parts)


def make_message(parts: Sequence[Part]) -> Message:
    parts = normalise(parts)
    return Message(template=template_of(parts), pattern=pattern_of(parts), parts=parts)
