"""The record model's messagePattern check: its fast path for plain patterns agrees with ``re``."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.records.model import _PLAIN_PATTERN, _compile_problem

# Pieces a pattern is made of, the troublesome ones included: bad escapes, lone quantifiers,
# unbalanced groups and classes, backreferences, inline flags in the wrong place.
PIECES = st.sampled_from(
    ["a", "Z", " ", "-", "#", "é", "\n", "{", "}", "\\{", "\\.", "\\ ", "\\é", "\\q", "\\1", "\\d", "\\",
     "(", ")", "[", "]", "*", "+", "?", "|", "^", "$", ".", "(?s:.*)", "(?s:.*", "(?=x)", "(?i)", "(?P<g>a)"]
)  # fmt: skip


def compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@pytest.mark.filterwarnings("ignore::FutureWarning")  # "possible nested set" from re, for "[["
@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join))
def test_check_agrees_with_re(pattern: str) -> None:
    assert (_compile_problem(pattern) is None) == compiles(pattern)
    if _PLAIN_PATTERN.fullmatch(pattern):
        assert compiles(pattern)


def test_plain_shape_covers_escaped_messages() -> None:
    message = "tp_size {x} must be > 0 (got [1, 2]) | see https://x.y/z?a=b#c"
    pattern = (
        re.escape("tp_size ") + "(?s:.*)" + re.escape(" must be > 0 (got [1, 2]) | see https://x.y/z?a=b#c")
    )
    assert _PLAIN_PATTERN.fullmatch(pattern)
    assert re.fullmatch(pattern, message.replace("{x}", "7"))
    assert _compile_problem("(unclosed") is not None
