"""Sentences of prose the target writes (messages, help texts): split where a sentence ends, not
after an abbreviation such as "e.g." or "i.e." that a sentence goes on from."""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

_ENDS_RE = re.compile(r"(?<=[.!?])\s+")
_ENDS_OR_SEMICOLON_RE = re.compile(r"(?<=[.!?;])\s+")
# "(e.g. mooncake, simm)": the sentence carries on after the abbreviation's full stop.
_ABBREVIATION_RE = re.compile(r"(?:^|[\s(\[])(?:e\.g|i\.e|etc|vs|cf|approx|incl|resp|esp)\.$", re.I)


def split_sentences(text: str, *, semicolons: bool = False) -> list[str]:
    """``text`` cut after each ``.``, ``!`` or ``?`` (and ``;`` with ``semicolons``) that a space
    follows, except after an abbreviation."""
    out: list[str] = []
    for piece in (_ENDS_OR_SEMICOLON_RE if semicolons else _ENDS_RE).split(text):
        if out and _ABBREVIATION_RE.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out
