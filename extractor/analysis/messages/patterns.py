"""The regex that full-matches every runtime rendering of a message's parts.

The pattern escapes the literal parts and lets each dynamic part match any text, newlines
included; a :class:`~extractor.analysis.messages.parts.Choice` (a name that holds one of a few
known strings) matches exactly those. It is built to stay linear on hostile input: adjacent
wildcards merge, a literal between two wildcards is matched at its first occurrence inside an
atomic group (never retried), and a pattern with several wildcards checks its suffix and literal
anchors with cheap lookaheads before the backtracking part can run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extractor.analysis.facts import Message, Placeholder
from extractor.analysis.messages.parts import Choice, Loose, Part, escape, normalise, template_of

WILDCARD = "(?s:.*)"
_LAZY_WILDCARD = "(?s:.*?)"
_HAS_LETTER = re.compile(r"[A-Za-z]")
# Alternatives a pattern spells out for its choices before it matches them as any text instead.
_MAX_VARIANTS = 24

# A token of a pattern under construction: literal text, None for a wildcard, a ready-made regex
# group (a Choice's alternation) that matches a bounded set of strings, or a piece of a Loose
# literal: (escaped text, "text") or a run of blanks it allows, (regex, "blanks").
_Token = str | None | tuple[str] | tuple[str, str]
_TEXT = "text"
_BLANKS_RUN = "blanks"


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
    """A Loose literal's regex as escaped-text pieces and the blank runs (``[ \\t]*``, ``\\s*``) between them."""
    out: list[_Token] = []
    text: list[str] = []
    i = 0
    while i < len(regex):
        run = next((r for r in ("[ \\t]*", "\\s*") if regex.startswith(r, i)), None)
        if run is None:
            step = 2 if regex[i] == "\\" else 1  # an escaped character stays whole
            text.append(regex[i : i + step])
            i += step
            continue
        if text:
            out.append(("".join(text), _TEXT))
            text = []
        out.append((run, _BLANKS_RUN))
        i += len(run)
    if text:
        out.append(("".join(text), _TEXT))
    return out


def _absorb_blanks(tokens: list[_Token]) -> list[_Token]:
    """Drop the blank runs next to a wildcard: the wildcard matches those blanks as well."""
    out = list(tokens)
    changed = True
    while changed:
        changed = False
        for i, tok in enumerate(out):
            beside = (i > 0 and out[i - 1] is None) or (i + 1 < len(out) and out[i + 1] is None)
            if beside and isinstance(tok, tuple) and tok[1:] == (_BLANKS_RUN,):
                del out[i]
                changed = True
                break
    return _merge(out)


def fragment_of(parts: Sequence[Part]) -> str:
    """A pattern fragment for ``parts`` with no anchoring lookaheads (used inside alternations)."""
    return _join(_absorb_blanks(_tokens(parts)))


def _join(tokens: list[_Token]) -> str:
    """The regex text of ``tokens``; a literal between two wildcards is matched at its first occurrence.

    ``(?>(?s:.*?)L)`` finds the first ``L`` and never gives it back. That loses no match: another
    wildcard follows, so the leftmost ``L`` leaves the most room for the rest of the pattern (the
    greedy glob argument). It keeps ``k`` wildcards to one pass over the text where plain
    ``(?s:.*)L(?s:.*)M...`` retries every ``L`` for every ``M`` (n**k steps on text made of the
    literals in the wrong order, e.g. a 30 kB log line).
    """
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        following = [k for k in range(i + 1, len(tokens)) if tokens[k] is None]
        segment = tokens[i + 1 : following[0]] if tok is None and following else []
        if segment and _first_match_is_earliest(segment):
            out.append(f"(?>{_LAZY_WILDCARD}{''.join(_token_text(t) for t in segment)})")
            i += 1 + len(segment)
            continue
        out.append(_token_text(tok))
        i += 1
    return "".join(out)


def _first_match_is_earliest(segment: list[_Token]) -> bool:
    """Whether the first occurrence of ``segment`` also ends first, so an atomic group may keep it.

    True for literal text, and for literal text with blank runs (from a Loose literal) when each
    run is followed by a character it cannot match: the run is then forced to its full length, so
    every start has one end, and a later start never ends sooner.
    """
    for k, tok in enumerate(segment):
        if tok is None or (isinstance(tok, tuple) and tok[1:] not in ((_TEXT,), (_BLANKS_RUN,))):
            return False  # a Choice's alternation: options of different lengths
        if isinstance(tok, tuple) and tok[1:] == (_BLANKS_RUN,):
            nxt = segment[k + 1] if k + 1 < len(segment) else None
            if k == 0 or nxt is None or (isinstance(nxt, tuple) and nxt[1:] != (_TEXT,)):
                return False
            first = _first_char(nxt)
            if first is None or (first in " \t" if tok[0] == "[ \\t]*" else first.isspace()):
                return False
    return True


def _first_char(tok: _Token) -> str | None:
    if isinstance(tok, str):
        return tok[:1] or None
    if isinstance(tok, tuple) and tok[0]:
        text = tok[0]
        if text[0] != "\\":
            return text[0]
        return {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}.get(text[1:2], text[1:2]) or None
    return None


def _token_text(tok: _Token) -> str:
    if tok is None:
        return WILDCARD
    if isinstance(tok, tuple):
        return tok[0]
    return escape(tok)


def pattern_of(parts: Sequence[Part]) -> str:
    """A regex that full-matches every rendering of ``parts`` (each placeholder: any text)."""
    if any(isinstance(p, Choice) for p in parts) and fragment_of(parts).count("(?s:.*") >= 2:
        # An alternation with wildcards around or inside it backtracks like one more wildcard, and
        # no first-occurrence rule holds for it (its options differ in length). Spelled out as
        # one choice-free alternative per combination of options, each alternative is linear.
        variants = _variants(parts)
        if variants is None:
            return _plain_pattern(
                [Placeholder(p.source, p.prefix) if isinstance(p, Choice) else p for p in parts]
            )
        alternatives = sorted({_plain_pattern(v) for v in variants}, key=lambda b: (-len(b), b))
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
    return _plain_pattern(parts)


def _variants(parts: Sequence[Part]) -> list[list[Part]] | None:
    """Every spelling of ``parts`` with each choice replaced by one of its options; None past the cap."""
    out: list[list[Part]] = [[]]
    for part in parts:
        alternatives: list[list[Part]] = [[part]]
        if isinstance(part, Choice) and part.options:
            alternatives = []
            for option in part.options:
                spelled = _variants(option)
                if spelled is None:
                    return None
                alternatives += [[part.prefix, *s] for s in spelled]
        out = [[*o, *a] for o in out for a in alternatives]
        if len(out) > _MAX_VARIANTS:
            return None
    return out


def _plain_pattern(parts: Sequence[Part]) -> str:
    tokens = _absorb_blanks(_tokens(parts))
    wildcards = sum(1 for t in tokens if t is None)
    if wildcards >= 3:
        # Runs of wildcards separated only by punctuation, spaces or digits are where hostile text
        # (long runs of "1," or spaces) makes backtracking explode; such a run matches the same
        # strings as a single wildcard would, minus the separators, so fold it into one.
        tokens = _merge(_fold_weak(tokens))
        wildcards = sum(1 for t in tokens if t is None)
    body = _join(tokens)
    if wildcards < 2:
        return body
    guards = []
    suffix = tokens[-1]
    if isinstance(suffix, str):
        guards.append(f"(?=[\\s\\S]*{escape(suffix)}\\Z)")
    middle = sorted({t for t in tokens[1:-1] if isinstance(t, str) and t}, key=lambda t: (-len(t), t))
    guards.extend(f"(?=[\\s\\S]*?{escape(t)})" for t in middle[:4])
    return "".join(guards) + body


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


def _fold_weak(tokens: list[_Token]) -> list[_Token]:
    out: list[_Token] = []
    for i, tok in enumerate(tokens):
        between = 0 < i < len(tokens) - 1 and tokens[i - 1] is None and tokens[i + 1] is None
        if isinstance(tok, str) and between and not _HAS_LETTER.search(tok):
            continue
        out.append(tok)
    return out


def make_message(parts: Sequence[Part]) -> Message:
    parts = normalise(parts)
    return Message(template=template_of(parts), pattern=pattern_of(parts), parts=parts)
