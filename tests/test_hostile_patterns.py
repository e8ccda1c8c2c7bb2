r"""Every messagePattern full-matches or rejects hostile 30,000-character text at once.

Patterns are matched against log lines and tracebacks nobody controls. A backtracking engine
runs a pattern of several ``[\s\S]*?`` wildcards and literals polynomially (n**k) on text that
holds the literals in the wrong order, so the project matches with its own linear matcher
(:mod:`extractor.records.message_pattern`); these tests feed such text, plus runs of one character, spaces, braces and
``1,``, to patterns built from generated templates and (with ``SGLANG_ERRORS_DATASET`` naming a
dataset) to every pattern of a real extraction. A match that overruns its time bound fails the
test instead of hanging it (:func:`tests.hostile.bounded_fullmatch`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from extractor.analysis.facts import Placeholder
from extractor.analysis.messages.parts import Choice
from extractor.analysis.messages.patterns import pattern_of
from extractor.engine.pipeline import analyse_file
from extractor.prose.knowledge import Knowledge
from extractor.records import message_pattern
from extractor.types import Parsed
from tests.hostile import HOSTILE_LENGTH, bounded_fullmatch, fuzz_settings, overruns

Part = str | Placeholder

# Literal pieces chosen to hurt: separators a wildcard can also match, regex metacharacters,
# braces (the template syntax), and words that repeat in real messages.
ADVERSARIAL = [" ", ",", "1,", "{", "}", ", ", ": ", " is ", " vs ", " at ", "(", ")", ".", "\n", "'", "a", "error", "\\", "*", "|"]  # fmt: skip
LITERALS = st.lists(st.sampled_from(ADVERSARIAL), min_size=1, max_size=3).map("".join) | st.text(
    min_size=1, max_size=6
)
PLACEHOLDERS = st.builds(
    Placeholder, st.sampled_from(["x", "y!r", "n:>4", "shape"]), st.sampled_from(["", "", "x="])
)
PARTS = st.lists(st.one_of(LITERALS, PLACEHOLDERS), min_size=1, max_size=14)
VALUES = st.lists(st.sampled_from(ADVERSARIAL), max_size=5).map("".join) | st.text(max_size=8)

# The shape of a real sglang message whose former pattern was cubic on its own literals.
NOT_AVAILABLE: list[Part] = [
    Placeholder("a"), " at ", Placeholder("b"), " is not available in ", Placeholder("c"), " seconds."
]  # fmt: skip


def render(parts: list[Part], values: list[str]) -> str:
    """One runtime rendering: each placeholder prints its prefix and one of ``values``."""
    out = []
    for k, part in enumerate(parts):
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, Choice) and part.options:
            option = part.options[k % len(part.options)]
            out.append(render(list(option), values[k:] + values[:k]))
        else:
            out.append(part.prefix + (values[k % len(values)] if values else ""))
    return "".join(out)


# --------------------------------------------------------------------------- generated templates


@fuzz_settings(default=40, long=1500)
@given(parts=PARTS, values=st.lists(VALUES, min_size=1, max_size=6))
@example(parts=NOT_AVAILABLE, values=["", " at ", " is not available in "])
@example(parts=[Placeholder("a"), "1,", Placeholder("b"), "1,", Placeholder("c"), "1,"], values=["1,"])
def test_pattern_fullmatches_every_rendering(parts: list[Part], values: list[str]) -> None:
    pattern = pattern_of(parts)
    text = render(parts, values)
    assert bounded_fullmatch(re.compile(pattern), text) is True, f"{pattern!r} rejects {text!r}"


@fuzz_settings(default=25, long=600)
@given(parts=PARTS)
@example(parts=NOT_AVAILABLE)
@example(parts=["kv ", Placeholder("a"), " vs ", Placeholder("b"), ", dim ", Placeholder("c"), " vs ", Placeholder("d")])  # fmt: skip
@example(parts=[Placeholder("a"), "x, (", Placeholder("b"), "a", Placeholder("c"), "x, (", Placeholder("d")])
@example(parts=[Placeholder(str(i)) if i % 2 else "{" for i in range(40)])
def test_pattern_resists_hostile_text(parts: list[Part]) -> None:
    pattern = pattern_of(parts)
    slow = [(text[:40], round(seconds, 2)) for text, seconds in overruns(pattern)]
    assert not slow, f"{pattern!r} overruns on {slow}"


@fuzz_settings(default=15, long=300)
@given(
    head=PARTS,
    options=st.lists(PARTS, min_size=2, max_size=4),
    tail=PARTS,
    values=st.lists(VALUES, min_size=1, max_size=4),
)
def test_choice_patterns_match_and_resist(
    head: list[Part], options: list[list[Part]], tail: list[Part], values: list[str]
) -> None:
    choice = Choice(source="kind", options=tuple(tuple(o) for o in options))
    parts: list[Part] = [*head, choice, *tail]
    pattern = pattern_of(parts)
    rx = re.compile(pattern)
    assert bounded_fullmatch(rx, render(parts, values)) is True, pattern
    slow = [text[:40] for text, _ in overruns(pattern)]
    assert not slow, f"{pattern!r} overruns on {slow}"


def test_literal_order_still_matters() -> None:
    """Every literal of the pattern must appear, in order, separators included."""
    rx = message_pattern.matcher_for(pattern_of(NOT_AVAILABLE))
    assert rx.fullmatch("gpu at 0 is not available in 30 seconds.")
    assert rx.fullmatch(" at  at  is not available in  is not available in  seconds. seconds.")
    assert not rx.fullmatch("0 is not available in gpu at 30 seconds.")
    assert not rx.fullmatch("gpu at 0 is not available in 30 seconds")
    assert not rx.fullmatch("gpu at 0 is not available 30 seconds.")
    hostile = " is not available in " * (HOSTILE_LENGTH // 21) + " at " * 100 + " seconds."
    assert bounded_fullmatch(rx, hostile) is False


# --------------------------------------------------------------------------- a real dataset


DATASET_ENV = "SGLANG_ERRORS_DATASET"


@pytest.mark.skipif(
    not os.environ.get(DATASET_ENV), reason=f"set {DATASET_ENV}=/path/to.jsonl to check a real dataset"
)
def test_every_dataset_pattern_resists_hostile_text() -> None:
    path = Path(os.environ[DATASET_ENV])
    patterns: dict[str, str] = {}
    with path.open("rb") as fh:
        for line in fh:
            if line.strip():
                record = orjson.loads(line)["record"]
                patterns.setdefault(record["messagePattern"], record["id"])
    assert patterns, f"{path} holds no records"
    slow = []
    for pattern, rid in sorted(patterns.items()):
        slow += [(rid, pattern[:120], text[:30], round(s, 2)) for text, s in overruns(pattern)]
    assert not slow, f"{len(slow)} overrun(s) among {len(patterns)} patterns: {slow[:10]}"


# --------------------------------------------------------------------------- whole messages from source

# Message shapes whose whitespace is decided at runtime (dedent, strip) carry their own regex
# pieces; these go through the real analysis so every kind of pattern piece is covered.
PIECE = st.sampled_from(["x", "first", " and ", "  ", ": ", "\\n", "1,", "{{", "}}", "  second "])
FIELD = st.sampled_from(["{a}", "{b!r}", "{c:>4}"])
MESSAGE_BODY = st.lists(st.one_of(PIECE, FIELD), min_size=1, max_size=8).map("".join)
WRAPS = [
    'textwrap.dedent(f"""\n        {body}\n          {body}\n        """)',
    'f"  {body}  ".strip()',
    'textwrap.dedent(f"""\\\n        {body}\n    """).strip()',
    'f" {body}\\n".rstrip()',
    "f'{body}'",
]


@fuzz_settings(default=25, long=800)
@given(body=MESSAGE_BODY, wrap=st.sampled_from(WRAPS))
@example(body="{a}  x  {b}", wrap='f"  {body}  ".strip()')
@example(body="first {a}\n          second {b} and {c}", wrap=WRAPS[0])
def test_patterns_from_source_resist_hostile_text(body: str, wrap: str) -> None:
    message = wrap.replace("{body}", body)
    source = f"import textwrap\n\n\ndef f(a, b, c):\n    raise ValueError({message})\n".encode()
    payload = analyse_file("generated.py", source, "o/r", Knowledge.empty())
    assert isinstance(payload, Parsed), payload
    (record,) = payload.records
    extra = [" \n" * (HOSTILE_LENGTH // 2), "\n" * HOSTILE_LENGTH, " " * (HOSTILE_LENGTH - 1) + "\n"]
    slow = [text[:40] for text, _ in overruns(record["messagePattern"], extra)]
    assert not slow, f"{record['messagePattern']!r} overruns on {slow}"
