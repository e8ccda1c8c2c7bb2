"""``messagePattern``: the portable regex dialect it is written in, and a linear-time matcher for it.

The dialect is the common subset of Python ``re`` (3.8+), ECMA-262 (with and without the ``u``
flag) and RE2, so any consumer can compile a pattern as it stands. A pattern is a sequence of

* literal characters, all but the syntax characters ``^$\\.*+?()[]{}|`` and control characters;
* an escaped syntax character or slash (``\\.``, ``\\/``), ``\\n \\r \\t \\f \\v``, or ``\\xHH`` (two
  lowercase hex digits) for any other control character;
* ``[\\s\\S]*?`` (or ``[\\s\\S]*``): a dynamic part, any text, newlines included;
* ``[0-9]``: one digit;
* ``[ \\t]*`` and :data:`SPACE_RUN`: blanks that the runtime may add or strip (``textwrap.dedent``,
  ``str.strip``);
* ``(?:`` … ``|`` … ``)``: a choice between a few known renderings.

There are no inline flags, anchors, look-around, atomic groups, possessive or counted quantifiers.
A pattern is meant for a *full* match: ``re.fullmatch(p, msg)`` in Python, ``new
RegExp("^(?:" + p + ")$", "u")`` in JavaScript (without the ``m`` flag), ``RE2::FullMatch``.

Every pattern of the dialect is matched here in time linear in the text (:func:`matcher_for`):
choices are spelled out as alternatives when there are few, and each alternative made of
literals and wildcards is matched as a glob (the prefix, the suffix, and the leftmost occurrence of
each middle literal in order, which is exact when the wildcards are unconstrained); anything else
runs through a lazily built DFA over the pattern's positions. A consumer whose engine backtracks
(Python ``re``, JavaScript, PCRE) can do the same, or split the pattern on ``[\\s\\S]*?`` and
search each literal piece with a plain substring search.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

WILDCARD = "[\\s\\S]*?"
"""A dynamic part: any text, newlines included (lazy, so a backtracking engine tries short first)."""

BLANK_RUN = "[ \\t]*"
"""Indentation or line-end blanks that ``textwrap.dedent`` may keep or drop."""

# Python's str.strip() whitespace (str.isspace), spelled so that all three engines read it alike:
# escapes for the control and Latin-1 ones, the characters themselves above U+00FF (RE2 has no \u).
_SPACE_CHARS = "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)
DIGIT = "[0-9]"
"""One ASCII digit (an HTTP status the source does not name)."""

SPACE_RUN = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*"
"""Whitespace that ``str.strip`` may remove: exactly the characters ``str.isspace`` accepts."""

SYNTAX_CHARS = "^$\\.*+?()[]{}|"
"""The characters a literal escapes: ECMA-262's syntax characters. These and ``/`` are the only
ones a pattern may escape (``\\-``, ``\\ `` or ``\\#`` are errors under the ``u`` flag)."""

_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\v": "\\v"}
_ESCAPED_CONTROL = {v[1]: k for k, v in _CONTROL_ESCAPES.items()}

MIN_IDENTIFYING_CHARS = 4
"""A pattern with fewer mandatory letters and digits than this identifies no site on its own."""


def escape(text: str) -> str:
    """``text`` as a literal of the dialect: syntax characters escaped, control characters as escapes."""
    out = []
    for ch in text:
        if ch in SYNTAX_CHARS:
            out.append("\\" + ch)
        elif ch in _CONTROL_ESCAPES:
            out.append(_CONTROL_ESCAPES[ch])
        elif ch < " " or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        elif "\ud800" <= ch <= "\udfff":
            # A lone surrogate: no UTF-8 engine (RE2) can spell it, so it matches as a dynamic part.
            out.append(WILDCARD)
        else:
            out.append(ch)
    return "".join(out)


def _meta(text: str) -> str:
    # A regex (in the same portable dialect) matching ``text`` itself, for the token grammar below.
    return "".join("\\" + c if c in SYNTAX_CHARS else c for c in text)


_LITERAL_CLASS = "[^\\\\^$.*+?()\\[\\]{}|\\x00-\\x1f\\x7f]"
TOKEN_GRAMMAR = "|".join(
    [
        _LITERAL_CLASS,
        "\\\\[\\\\^$.*+?()\\[\\]{}|/nrtfv]",
        "\\\\x[0-9a-f]{2}",
        _meta("[\\s\\S]*") + "\\??",
        _meta(BLANK_RUN),
        _meta(DIGIT),
        _meta(SPACE_RUN),
        "\\(\\?:",
        "\\|",
        "\\)",
    ]
)
"""One token of the dialect, as a regex; the JSON Schema holds ``^(?:TOKEN)*$`` for the field."""

SCHEMA_PATTERN = f"^(?:{TOKEN_GRAMMAR})*$"
_TOKEN = re.compile(TOKEN_GRAMMAR)


class _Star:
    """A run of characters from one class (``any`` for a wildcard, or a set of blanks), or with
    ``repeats`` false exactly one character of the class."""

    __slots__ = ("any", "chars", "repeats")

    def __init__(self, chars: frozenset[str] | None, *, repeats: bool = True) -> None:
        self.chars = chars
        self.any = chars is None
        self.repeats = repeats

    def accepts(self, ch: str) -> bool:
        return self.chars is None or ch in self.chars


_ANY = _Star(None)
_BLANKS = _Star(frozenset(" \t"))
_SPACES = _Star(frozenset(_SPACE_CHARS))
_DIGIT = _Star(frozenset("0123456789"), repeats=False)

# A parsed pattern: a sequence of literal runs, class runs and choices (each a list of sequences).
_Item = str | _Star | list["_Seq"]
_Seq = list[_Item]


class PatternError(ValueError):
    """A pattern outside the portable dialect; the message says where."""


def _parse(pattern: str) -> _Seq:
    stack: list[list[_Seq]] = [[[]]]
    pos = 0
    while pos < len(pattern):
        m = _TOKEN.match(pattern, pos)
        if m is None:
            raise PatternError(f"offset {pos}: {pattern[pos : pos + 12]!r} is not in the portable dialect")
        tok = m.group()
        pos = m.end()
        branch = stack[-1][-1]
        if tok == "(?:":
            stack.append([[]])
        elif tok == "|":
            stack[-1].append([])
        elif tok == ")":
            if len(stack) == 1:
                raise PatternError(f"offset {pos - 1}: ')' closes no group")
            branches = stack.pop()
            stack[-1][-1].append(branches)
        elif tok.startswith("[\\s\\S]"):
            branch.append(_ANY)
        elif tok == BLANK_RUN:
            branch.append(_BLANKS)
        elif tok == SPACE_RUN:
            branch.append(_SPACES)
        elif tok == DIGIT:
            branch.append(_DIGIT)
        elif tok.startswith("\\x"):
            branch.append(chr(int(tok[2:], 16)))
        elif tok.startswith("\\"):
            branch.append(_ESCAPED_CONTROL.get(tok[1], tok[1]))
        else:
            branch.append(tok)
    if len(stack) > 1:
        raise PatternError(f"offset {len(pattern)}: a group opened with '(?:' is not closed")
    if len(stack[0]) > 1:
        return [stack[0]]  # top-level alternation
    return stack[0][0]


_TOKENS = re.compile(f"(?:{TOKEN_GRAMMAR})*")


@functools.lru_cache(maxsize=1 << 15)
def problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a pattern of the portable dialect, or ``None``. Linear in its length.

    Cached: two versions of a dataset (diff, nightly) share nearly all of their patterns.
    """
    if "(" not in pattern and ")" not in pattern and _TOKENS.fullmatch(pattern):
        return None  # tokens only, and no group to balance: the common case, at regex speed
    try:
        _parse(pattern)
    except PatternError as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- what a pattern pins down


def _mandatory_chars(seq: _Seq) -> int:
    total = 0
    for item in seq:
        if isinstance(item, str):
            total += sum(1 for c in item if c.isalnum())
        elif isinstance(item, list):
            total += min((_mandatory_chars(b) for b in item), default=0)
    return total


def identifying_chars(pattern: str) -> int:
    """Letters and digits every full match must contain (the fewest over a choice's options)."""
    return _mandatory_chars(_parse(pattern))


def identifies_nothing(pattern: str) -> bool:
    """A bare wildcard, or fewer than :data:`MIN_IDENTIFYING_CHARS` mandatory letters and digits.

    Such a pattern is honest (every rendering matches it) but a match on it says nothing about
    which site raised the error.
    """
    try:
        return identifying_chars(pattern) < MIN_IDENTIFYING_CHARS
    except PatternError:
        return True


# --------------------------------------------------------------------------- linear-time matching

_MAX_VARIANTS = 64


def _variants(seq: _Seq) -> list[list[str | _Star]] | None:
    out: list[list[str | _Star]] = [[]]
    for item in seq:
        if isinstance(item, list):
            options: list[list[str | _Star]] = []
            for branch in item:
                spelled = _variants(branch)
                if spelled is None:
                    return None
                options.extend(spelled)
            out = [o + a for o in out for a in options]
        else:
            out = [[*o, item] for o in out]
        if len(out) > _MAX_VARIANTS:
            return None
    return out


def _glob(tokens: Sequence[str | _Star]) -> tuple[str, ...] | None:
    """Literal pieces split on wildcards (``None`` if a class run stays), blanks beside a wildcard dropped."""
    pieces: list[str] = [""]
    for i, tok in enumerate(tokens):
        if isinstance(tok, str):
            pieces[-1] += tok
        elif tok.any:
            pieces.append("")
        elif not tok.repeats:
            return None
        else:
            beside = any(isinstance(t, _Star) and t.any for t in tokens[max(i - 1, 0) : i + 2])
            if not beside:
                return None
    return tuple(pieces)


def _glob_fullmatch(pieces: tuple[str, ...], text: str) -> bool:
    if len(pieces) == 1:
        return text == pieces[0]
    head, *middle, tail = pieces
    if not text.startswith(head):
        return False
    pos = len(head)
    end = len(text) - len(tail)
    if end < pos or not text.endswith(tail):
        return False
    for piece in middle:
        found = text.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


class _Automaton:
    """A DFA over the pattern's positions (Glushkov), built lazily as the text asks for states."""

    _MAX_CACHED = 20_000

    def __init__(self, seq: _Seq) -> None:
        self.atoms: list[str | _Star] = []
        self.follow: list[int] = []
        self.first, self.last, self.nullable = self._build(seq)
        self.by_char: dict[str, int] = {}
        self.class_atoms = [(i, a) for i, a in enumerate(self.atoms) if isinstance(a, _Star)]
        self.table: dict[tuple[int, str], int] = {}

    def _atom(self, atom: str | _Star) -> int:
        self.atoms.append(atom)
        self.follow.append(0)
        return len(self.atoms) - 1

    def _build(self, seq: _Seq) -> tuple[int, int, bool]:
        first, last, nullable = 0, 0, True
        for item in seq:
            parts: list[tuple[int, int, bool]] = []
            if isinstance(item, str):
                for ch in item:
                    bit = 1 << self._atom(ch)
                    parts.append((bit, bit, False))
            elif isinstance(item, _Star):
                p = self._atom(item)
                if item.repeats:
                    self.follow[p] |= 1 << p
                parts.append((1 << p, 1 << p, item.repeats))
            else:
                f = la = 0
                nul = False
                for branch in item:
                    bf, bl, bn = self._build(branch)
                    f, la, nul = f | bf, la | bl, nul or bn
                parts.append((f, la, nul))
            for pf, pl, pn in parts:
                for p in _bits(last):
                    self.follow[p] |= pf
                if nullable:
                    first |= pf
                last = pl | (last if pn else 0)
                nullable = nullable and pn
        return first, last, nullable

    def _mask(self, ch: str) -> int:
        mask = self.by_char.get(ch)
        if mask is None:
            mask = 0
            for i, atom in enumerate(self.atoms):
                if (atom == ch) if isinstance(atom, str) else atom.accepts(ch):
                    mask |= 1 << i
            self.by_char[ch] = mask
        return mask

    def fullmatch(self, text: str) -> bool:
        if not text:
            return self.nullable
        state = -1  # before the first character
        table = self.table
        for ch in text:
            key = (state, ch)
            nxt = table.get(key)
            if nxt is None:
                reach = self.first
                if state >= 0:
                    reach = 0
                    for p in _bits(state):
                        reach |= self.follow[p]
                nxt = reach & self._mask(ch)
                if len(table) > self._MAX_CACHED:
                    table.clear()
                table[key] = nxt
            if not nxt:
                return False
            state = nxt
        return bool(state & self.last)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass(frozen=True)
class Matcher:
    """Full-matches a pattern of the dialect against text in time linear in the text."""

    pattern: str
    _globs: tuple[tuple[str, ...], ...] | None
    _automaton: _Automaton | None

    def fullmatch(self, text: str) -> bool:
        if self._globs is not None:
            return any(_glob_fullmatch(g, text) for g in self._globs)
        assert self._automaton is not None
        return self._automaton.fullmatch(text)


@functools.lru_cache(maxsize=1 << 14)
def matcher_for(pattern: str) -> Matcher:
    """A linear-time matcher for ``pattern``; :class:`PatternError` outside the dialect."""
    seq = _parse(pattern)
    variants = _variants(seq)
    if variants is not None:
        globs = [_glob(v) for v in variants]
        if all(g is not None for g in globs):
            return Matcher(pattern, tuple(sorted({g for g in globs if g is not None})), None)
    return Matcher(pattern, None, _Automaton(seq))


def fullmatch(pattern: str, text: str) -> bool:
    """Whether ``pattern`` full-matches ``text`` (as ``re.fullmatch`` would), in linear time."""
    return matcher_for(pattern).fullmatch(text)
