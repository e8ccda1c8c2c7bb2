"""A message cut short (an issue title, a first line, a tail dropped with "…") against a pattern.

A pattern is read as its literal runs with placeholders between them (:mod:`.patterns`). Text is
a prefix of some rendering when the runs it reaches occur in it in order and the text ends in a
placeholder or part-way into the next run. The check is one ``find`` per run plus a bounded
look at the text's last characters, so it is linear in the text whatever the text holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extractor.datasets.match.patterns import WORD_RE

HEAD_CHARS = (20, 48)
"""A record is found by its rarest word within each of these many first literal characters: the
shorter survives nearly any cut, the longer is rarer."""
MAX_PARTIAL_RUN = 200
"""Longest stretch of a run the text may end part-way into (bounds the tail comparison)."""

_ELLIPSIS_RE = re.compile(r"(?:\s*(?:…|\.\.\.|\[\.\.\.\]|\(\.\.\.\)))+\s*$")


def strip_ellipsis(text: str) -> str | None:
    """The text without the "…" or "..." a user put where they cut it; None when it has none."""
    m = _ELLIPSIS_RE.search(text)
    if m is None or m.start() == 0:
        return None
    return text[: m.start()]


def prefix_cover(runs: Sequence[str], starts_with_run: bool, text: str) -> int:
    """Literal characters of ``runs`` that ``text`` covers when it is a cut-short rendering.

    0 when ``text`` reaches every run (a full or containing match, not a prefix one) and -1 when
    it is no prefix of any rendering. Runs and text are compared as given (the caller lower-cases
    and normalises both alike).
    """
    pos = 0
    covered = 0
    for k, run in enumerate(runs):
        found = text.find(run, pos)
        if found >= 0 and not (k == 0 and starts_with_run and found != 0):
            covered += len(run)
            pos = found + len(run)
            continue
        tail = text[pos:]
        if k == 0 and starts_with_run:
            # The whole text lies inside the first run: a message cut before its first value.
            return len(tail) if tail and run.startswith(tail) else -1
        return covered + _partial(run, tail)
    return 0


def _partial(run: str, tail: str) -> int:
    """Length of the longest end of ``tail`` that begins ``run`` (0: the cut is in a placeholder)."""
    if not tail or not run:
        return 0
    first = run[0]
    start = max(0, len(tail) - min(len(run), MAX_PARTIAL_RUN))
    j = tail.find(first, start)
    while j >= 0:
        if run.startswith(tail[j:]):
            return len(tail) - j
        j = tail.find(first, j + 1)
    return 0


def head_words(runs: Sequence[str], starts_with_run: bool, within: int) -> list[str]:
    """Words a cut-short rendering keeps: whole words within the pattern's first ``within`` characters."""
    words: list[str] = []
    seen = 0
    for k, run in enumerate(runs):
        for m in WORD_RE.finditer(run):
            if seen + m.end() > within:
                return words
            # A word touching a placeholder may continue into it at runtime.
            touches_start = m.start() == 0 and not (k == 0 and starts_with_run)
            if not touches_start and m.end() < len(run) and len(m.group()) >= 2:
                words.append(m.group())
        seen += len(run)
        if seen >= within:
            break
    return words
