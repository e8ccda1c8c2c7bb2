"""The portable pattern dialect: its checker, the schema's grammar of it, and the linear matcher."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.records import message_pattern as mp

# Pieces a pattern is made of, the troublesome ones included: bad escapes, lone quantifiers,
# unbalanced groups and classes, backreferences, inline flags, look-around, \Z.
PIECES = st.sampled_from(
    ["a", "Z", " ", "-", "#", "é", "\n", "{", "}", "\\{", "\\.", "\\/", "\\ ", "\\-", "\\é", "\\q", "\\1", "\\d",
     "\\Z", "\\", "\\n", "\\x1b", "\\x1B", "(", ")", "(?:", "|", "[", "]", "*", "+", "?", "^", "$", ".", "/",
     mp.WILDCARD, "[\\s\\S]*", mp.BLANK_RUN, mp.SPACE_RUN, mp.DIGIT, "(?s:.*)", "(?=x)", "(?>a)", "(?i)"]
)  # fmt: skip

# Pieces of the dialect only, for patterns the matcher must agree on with ``re``.
GOOD = st.sampled_from(
    ["a", "b", "ab", " ", "\\.", "\\(", "\\n", mp.WILDCARD, mp.BLANK_RUN, mp.SPACE_RUN, mp.DIGIT]
)
TEXT = st.text(alphabet=st.sampled_from("ab .(\n\t1\u3000x"), max_size=12)


def compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@pytest.mark.filterwarnings("ignore::FutureWarning")  # "possible nested set" from re, for "[["
@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join))
def test_checker_agrees_with_the_schema_grammar(pattern: str) -> None:
    portable = mp.problem(pattern) is None
    # The schema says: the token grammar, no raw newline, and format "regex" (it compiles).
    by_schema = bool(re.search(mp.SCHEMA_PATTERN, pattern)) and "\n" not in pattern and compiles(pattern)
    assert portable == by_schema
    if portable:
        assert compiles(pattern)


@st.composite
def dialect_patterns(draw: st.DrawFn) -> str:
    def seq(depth: int) -> str:
        out = []
        for _ in range(draw(st.integers(0, 5))):
            if depth < 2 and draw(st.integers(0, 5)) == 0:
                branches = [seq(depth + 1) for _ in range(draw(st.integers(1, 3)))]
                out.append("(?:" + "|".join(branches) + ")")
            else:
                out.append(draw(GOOD))
        return "".join(out)

    return seq(0)


@settings(max_examples=600, deadline=None)
@given(dialect_patterns(), st.lists(TEXT, min_size=1, max_size=6))
def test_linear_matcher_agrees_with_re(pattern: str, texts: list[str]) -> None:
    assert mp.problem(pattern) is None
    rx = re.compile(pattern)
    matcher = mp.matcher_for(pattern)
    for text in texts:
        assert matcher.fullmatch(text) == (rx.fullmatch(text) is not None), (pattern, text)


def test_escape_round_trips_every_character() -> None:
    text = "".join(chr(c) for c in range(0x80)) + "é€\u2028😀"
    pattern = mp.escape(text)
    assert mp.problem(pattern) is None
    assert re.fullmatch(pattern, text)
    assert mp.fullmatch(pattern, text)
    # Only syntax characters are escaped: "-", " ", "#", "&" stay as they are (errors under /u).
    assert mp.escape("a-b #&/") == "a-b #&/"


def test_python_only_syntax_is_refused_with_its_offset() -> None:
    assert mp.problem("ok (?s:.*)") == "offset 3: '(?s:.*)' is not in the portable dialect"
    assert mp.problem("a\\Z") is not None
    assert mp.problem("(?:a") is not None
    assert mp.problem("a)") is not None
    assert mp.problem("") is None


def test_hostile_text_is_matched_in_one_pass() -> None:
    # Literals in the wrong order: a backtracking engine retries each "slow " for every other one.
    pattern = (mp.WILDCARD + "slow ") * 4 + "pattern!"
    text = "slow " * 6000
    assert not mp.fullmatch(pattern, text)
    assert mp.fullmatch(pattern, text + "pattern!")
    # A choice between wildcards goes through the automaton: still one pass.
    choice = mp.WILDCARD + "(?:'a'|\"a\"), " + mp.WILDCARD + "x" + mp.BLANK_RUN + "y"
    assert not mp.fullmatch(choice, "'a', " * 6000)
    assert mp.fullmatch(choice, "'a', " * 6000 + "x \ty")


def test_patterns_that_identify_nothing() -> None:
    assert mp.identifies_nothing(mp.WILDCARD)
    assert mp.identifies_nothing("")
    assert mp.identifies_nothing(f"{mp.WILDCARD}: {mp.WILDCARD}")
    assert mp.identifies_nothing(f"\\({mp.WILDCARD}, {mp.WILDCARD}\\)")
    assert not mp.identifies_nothing(f"tp_size {mp.WILDCARD} must be positive")
    # A choice counts its shortest option.
    assert mp.identifies_nothing("(?:ab|abcdefgh)")
    assert mp.identifying_chars("(?:abcd|abcdefgh)") == 4
