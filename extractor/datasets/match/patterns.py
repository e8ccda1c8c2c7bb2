"""What a ``messagePattern`` pins down: the literal runs every full match holds, and how specific it is."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# ``re._parser`` is the stdlib's own regex parser (``sre_parse`` before 3.11); importing it through
# importlib avoids the deprecation warning of the old name and keeps the exact parse Python uses.
_sre: Any = importlib.import_module("re._parser")

WORD_RE = re.compile(r"\w+")
WS_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class PatternInfo:
    """What a ``messagePattern`` pins down: its mandatory literal runs and how specific it is."""

    runs: tuple[str, ...]
    literal_chars: int
    placeholders: int
    safe_words: frozenset[str]
    ignore_case: bool
    starts_with_run: bool = False  # the first run begins every full match
    ends_with_run: bool = False  # the last run ends every full match

    @property
    def specificity(self) -> float:
        """0 for a pure placeholder, near 1 for a long fully literal pattern."""
        if self.literal_chars == 0:
            return 0.0
        ratio = self.literal_chars / (self.literal_chars + 4 * self.placeholders)
        # Short literals ("failed", " != ") are raised from many sites: discount them.
        return ratio * min(1.0, (self.literal_chars + 4) / 24)


def analyse_pattern(pattern: str, *, fast: bool = True) -> PatternInfo:
    """Split a regex into the literal runs every full match must contain, in order.

    Patterns made only of escaped literals, ``(?s:.*)``-like wildcards, lookaheads and anchors
    (nearly all of an extracted dataset) are read by a small scanner; anything else goes through
    the stdlib's own regex parser, which gives the same answer several times slower.
    """
    walker = _Walker()
    ignore_case = False
    if not (fast and _scan_simple(pattern, walker)):
        try:
            parsed = _sre.parse(pattern)
        except Exception:  # a pattern re.compile accepted but the parser rejects: treat as opaque
            return PatternInfo((), 0, 1, frozenset(), False)
        walker = _Walker()
        walker.walk(parsed.data)
        ignore_case = bool(parsed.state.flags & re.IGNORECASE) or walker.ignore_case
    walker.flush(at_end=True)
    words: set[str] = set()
    for text, at_start, at_end in walker.runs:
        for m in WORD_RE.finditer(text):
            # A word touching a placeholder may continue into it at runtime ("batch" + "_size"),
            # so only words bounded by literal text or by the pattern's ends are safe anchors.
            if (m.start() > 0 or at_start) and (m.end() < len(text) or at_end) and len(m.group()) >= 2:
                words.add(m.group().lower())
    return PatternInfo(
        runs=tuple(r[0] for r in walker.runs),
        literal_chars=walker.literal_chars,
        placeholders=walker.placeholders,
        safe_words=frozenset(words),
        ignore_case=ignore_case,
        starts_with_run=bool(walker.runs) and walker.runs[0][1],
        ends_with_run=bool(walker.runs) and walker.runs[-1][2],
    )


class _Walker:
    """Collects mandatory literal runs of a parsed regex; anything optional breaks a run."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, bool, bool]] = []
        self.current: list[str] = []
        self.literal_chars = 0
        self.placeholders = 0
        self.ignore_case = False
        self._seen_any = False  # something (literal or not) came before the current run
        self._run_at_start = True

    def flush(self, *, at_end: bool = False) -> None:
        if self.current:
            self.runs.append(("".join(self.current), self._run_at_start, at_end))
            self.current = []

    def _break(self, placeholder: bool) -> None:
        self.flush()
        if placeholder:
            self.placeholders += 1
        self._seen_any = True

    def _literal(self, ch: str) -> None:
        self._literals(ch)

    def _literals(self, text: str) -> None:
        if not self.current:
            self._run_at_start = not self._seen_any
        self.current.append(text)
        self.literal_chars += len(text)
        self._seen_any = True

    def walk(self, items: Iterable[tuple[Any, Any]]) -> None:
        for op, av in items:
            name = str(op)
            if name == "LITERAL":
                self._literal(chr(av))
            elif name == "SUBPATTERN":
                _group, add_flags, _del_flags, sub = av
                if add_flags & re.IGNORECASE:
                    self.ignore_case = True
                self.walk(sub.data if hasattr(sub, "data") else sub)
            elif name == "ATOMIC_GROUP":
                self.walk(av.data if hasattr(av, "data") else av)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                if lo == hi == 1:
                    self.walk(sub.data if hasattr(sub, "data") else sub)
                else:
                    self._break(placeholder=True)
            elif name == "IN" and len(av) == 1 and str(av[0][0]) == "LITERAL":
                self._literal(chr(av[0][1]))  # "[.]" is a literal dot
            elif name in ("AT", "ASSERT", "ASSERT_NOT"):
                # ^, $, \b and lookarounds consume nothing: literal text on both sides is adjacent
                # in every match (extractors put fail-fast lookaheads in front of patterns).
                continue
            else:  # ANY, IN, NOT_LITERAL, BRANCH, GROUPREF, CATEGORY, ...
                self._break(placeholder=True)


_ESCAPED_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_SIMPLE_TOKEN = re.compile(
    r"""
    (?P<wild>\(\?s:\.[*+]\??\)|\[\\s\\S\][*+]\??|\.[*+]\??)  # (?s:.*) [\s\S]*? .* and kin
    | (?P<lit>[^.^$*+?{}\[\]\\|()]+)                               # plain text
    | \\(?P<esc>.)                                                  # one escaped character
    | (?P<look>\(\?[=!])                                            # a lookahead
    | (?P<zero>[\^$])
    """,
    re.VERBOSE | re.DOTALL,
)


def _scan_simple(pattern: str, walker: _Walker) -> bool:
    """Feed ``walker`` from a pattern of the common simple shapes; False for anything else."""
    i, n = 0, len(pattern)
    while i < n:
        m = _SIMPLE_TOKEN.match(pattern, i)
        if m is None:
            return False  # groups, alternation, classes, counted repeats: the real parser's job
        i = m.end()
        quantified = i < n and pattern[i] in "*+?{"
        kind = m.lastgroup
        if kind == "wild":
            if quantified:
                return False
            walker._break(placeholder=True)
        elif kind == "lit":
            text = m.group("lit")
            if quantified:
                return False  # the last character is optional or repeated
            walker._literals(text)
        elif kind == "esc":
            d = m.group("esc")
            if d in "AZbB":
                continue
            if d in "dDsSwW":
                while i < n and pattern[i] in "*+?":
                    i += 1
                if i < n and pattern[i] == "{":
                    return False
                walker._break(placeholder=True)
                continue
            if d.isalnum() or d == "_":
                if d not in _ESCAPED_CONTROL:
                    return False  # \1, \x41, \u00e9, \N{...}
                d = _ESCAPED_CONTROL[d]
            if quantified:
                return False
            walker._literals(d)
        elif kind == "look":
            end = _group_end(pattern, m.start())
            if end < 0 or (end < n and pattern[end] in "*+?{"):
                return False
            i = end  # a lookahead consumes nothing
        # "zero": ^ and $ consume nothing
    return True


def _group_end(pattern: str, start: int) -> int:
    """Index just after the ``)`` closing the group opened at ``start``; -1 if unbalanced."""
    depth, i, n = 0, start, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def runs_in_order(runs: Sequence[str], text_lower: str) -> bool:
    """Every run occurs in ``text_lower`` in order without overlap (a full match requires it)."""
    pos = 0
    for run in runs:
        found = text_lower.find(run, pos)
        if found < 0:
            return False
        pos = found + len(run)
    return True
